/**
 * Paired faults behind the bridge: a harness CLI meets the built-in agent's faults, retried by the
 * same rule, metered the same way, and its Attempt replays to the same verdict. The CLI is
 * codex-standin.mjs (codex's config, a Responses tool loop, codex's retries), on ledger's tasks and
 * a coding-repair folder task; the model plays the task's gold replies.
 */
import { chmodSync, copyFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { provider as repair } from "../../providers/coding-repair/index.ts"
import { provider as ledger } from "../../providers/ledger/index.ts"
import type { AgentReply } from "../../src/evaluation/Conversation.ts"
import { evaluate } from "../../src/evaluation/evaluate.ts"
import type { Provider } from "../../src/evaluation/Provider.ts"
import { SYNC_TRIES } from "../../src/harness/bridge/Bridge.ts"
import { SESSION_ENDED_KIND } from "../../src/schema/Attempt.ts"
import { bridgedInvocation } from "../../src/harness/bridge/Invocations.ts"
import * as Model from "../../src/model/Model.ts"
import { MODEL_CALL_RETRIES, modelAgent } from "../../src/model/ModelAgent.ts"
import * as Registry from "../../src/model/Registry.ts"
import type { Attempt } from "../../src/schema/Attempt.ts"
import { type EnvironmentDef, type FaultSpec, type Limits, noLimits } from "../../src/schema/EnvironmentDef.ts"
import * as WE from "../../src/world/WorldEffects.ts"
import { tempDir } from "../support/tempDirs.ts"
import { noWorld, runBridged } from "./bridgeSupport.ts"

const MODEL = "openai:gpt-4o-mini"
const gpt = await Effect.runPromise(Effect.flatMap(Registry.Registry, (r) => r.resolve(MODEL)).pipe(Effect.provide(Registry.layer)))
const ledgerEnv = (await Effect.runPromise(ledger.environments))[0]!
const TRIES = MODEL_CALL_RETRIES + 1

interface StandinOptions {
  readonly files?: Readonly<Record<string, string>>
  readonly aux?: boolean
  readonly retries?: number
  readonly turns?: number
  readonly after?: boolean
}

const standin = fileURLToPath(new URL("./codex-standin.mjs", import.meta.url))

/** A folder holding the stand-in as `codex`, its options beside it (each test's own: no file shared). */
const standinDir = (options: StandinOptions = {}): string => {
  const dir = tempDir("assay-standin-")
  chmodSync(dir, 0o755)
  copyFileSync(standin, join(dir, "codex"))
  chmodSync(join(dir, "codex"), 0o755)
  writeFileSync(join(dir, "standin.json"), JSON.stringify(options))
  return dir
}

/** The gold replies of a task, in order, up to the one that answers in words. */
const goldReplies = (provider: Provider, env: EnvironmentDef): Promise<ReadonlyArray<AgentReply>> =>
  Effect.runPromise(Effect.gen(function*() {
    const gold = yield* provider.scripted("gold", env)
    const replies: Array<AgentReply> = []
    for (;;) {
      const reply = yield* Effect.provide(gold.reply({ system: "", messages: [], tools: [] }), noWorld).pipe(Effect.orDie)
      replies.push(reply)
      if (reply.toolCalls.length === 0 || replies.length > 40) return replies
    }
  }))

const ledgerGold = await goldReplies(ledger, ledgerEnv)

/** A model that plays the gold replies by how many times the agent has spoken; every side request gets a title. */
const goldModel = (replies: ReadonlyArray<AgentReply>): Model.ScriptedModel =>
  Model.scripted((request) => {
    if (request.tools.length === 0) return { text: "A title", usage: { inputTokens: 7, outputTokens: 3 } }
    const r = replies[request.messages.filter((m) => m.role === "assistant").length] ?? { text: "Done.", toolCalls: [] }
    return { text: r.text, toolCalls: r.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })), usage: { inputTokens: 100, outputTokens: 10 } }
  })

const withFaults = (env: EnvironmentDef, faults: FaultSpec, limits: Partial<Limits> = {}): EnvironmentDef => ({
  ...env,
  limits: { ...env.limits, ...limits },
  world: { ...env.world, effects: { ...env.world.effects, faults } }
})

/** The first draws of a site for a task: `F` a fault, `.` none. */
const pattern = (spec: FaultSpec, env: EnvironmentDef, site: string, n: number): string =>
  Array.from({ length: n }, (_, i) => (WE.drawFault(spec, site, i + 1, `${env.benchmark}/${env.task}`) === null ? "." : "F")).join("")

const AGENT = "model/generate:agent"
const AUX = "model/generate:agent-aux"

/**
 * A fault spec whose draws at each site begin as given (the first seed that gives them); the side
 * requests' site draws none at first unless given, so a test of the agent's turns meets none there.
 */
const faultsFor = (base: Omit<FaultSpec, "seed">, env: EnvironmentDef, prefixes: Readonly<Record<string, string>>): FaultSpec => {
  const wanted: Record<string, string> = { [AUX]: ".".repeat(TRIES), ...prefixes }
  for (let seed = 1; seed < 1_000_000; seed++) {
    if (Object.entries(wanted).every(([site, prefix]) => pattern({ ...base, seed }, env, site, prefix.length) === prefix)) return { ...base, seed }
  }
  throw new Error(`no seed draws ${JSON.stringify(wanted)}`)
}

const builtIn = (provider: Provider, env: EnvironmentDef, model: Model.Model, replay?: Attempt["recording"]): Promise<Attempt> =>
  Effect.runPromise(evaluate(env, {
    capabilities: provider.capabilities,
    agentDef: { name: MODEL, kind: "llm", model: gpt.ref, actionSpace: "tools", prompt: "", limits: noLimits },
    agent: modelAgent(MODEL, gpt),
    repetition: 0,
    model,
    ...(replay !== undefined ? { replay } : {})
  }))

/**
 * harness:codex as the runner makes it (bridgedCandidate), the stand-in for codex; given a
 * recording, its replay (no CLI). `stderr` collects what the CLI printed.
 */
const harness = (
  provider: Provider,
  env: EnvironmentDef,
  model: Model.Model,
  options: { readonly dir?: string; readonly replay?: Attempt["recording"]; readonly stderr?: Array<string> } = {}
): Promise<Attempt> =>
  Effect.runPromise(runBridged(provider, env, "codex", model, options.replay, {
    modelName: MODEL,
    binDirs: [options.dir ?? standinDir()],
    onStderr: (line) => options.stderr?.push(line),
    timeoutSeconds: 100
  }))

const ending = (a: Attempt) => ({ ended: a.verdict.ended?.reason ?? null, reward: a.verdict.reward, faults: a.faults })
const statusesOf = (lines: ReadonlyArray<string>) => lines.flatMap((l) => /^status (\d+)$/.exec(l)?.[1] ?? [])

describe("a harness CLI meets the built-in agent's retry rule", { timeout: 120_000 }, () => {
  it("codex is told to make no retries of its own: assay's proxy retries", () => {
    const invocation = bridgedInvocation("codex", {
      prompt: "p", model: "m", proxyUrl: "http://127.0.0.1:1", mcpUrl: "http://127.0.0.1:1/mcp", apiKey: "k",
      workDir: "/w", stateDir: "/s", resume: false, sessionId: "s", ownTools: false
    })
    expect(invocation.files[0]!.content).toMatch(/^request_max_retries = 0$/m)
  })

  it("a turn whose every try faults ends the harness's cell as that fault, as the built-in agent's, even for a CLI that retries on its own", async () => {
    const spec = faultsFor({ rate: 0.5, only: ["model/generate"], kinds: ["rate-limit"] }, ledgerEnv, { [AGENT]: "F".repeat(TRIES) + "....." })
    const env = withFaults(ledgerEnv, spec)
    const a = await builtIn(ledger, env, goldModel(ledgerGold))
    // A CLI whose own retries cannot be turned off: its retry after the fault is answered, never
    // made, so it meets no draw of its own (the same faults, as many).
    const h = await harness(ledger, env, goldModel(ledgerGold), { dir: standinDir({ retries: 4 }) })
    expect(ending(a)).toMatchObject({ ended: "fault", reward: 0 })
    expect(a.faults).toHaveLength(TRIES)
    expect(ending(h)).toEqual(ending(a))
    // One model call (its tries), metered as the built-in agent's.
    expect({ calls: h.usage.calls, retries: h.usage.retries }).toEqual({ calls: a.usage.calls, retries: a.usage.retries })
  })

  it("a fault the retries get past is never seen by the CLI: one metered call with its retries, as the built-in agent's", async () => {
    const spec = faultsFor({ rate: 0.5, only: ["model/generate"], kinds: ["server-error"] }, ledgerEnv, { [AGENT]: "FF......" })
    const env = withFaults(ledgerEnv, spec)
    const a = await builtIn(ledger, env, goldModel(ledgerGold))
    const stderr: Array<string> = []
    const h = await harness(ledger, env, goldModel(ledgerGold), { stderr })
    expect(ending(a)).toMatchObject({ ended: null, reward: 1 })
    expect(ending(h)).toEqual(ending(a))
    expect({ calls: h.usage.calls, retries: h.usage.retries }).toEqual({ calls: a.usage.calls, retries: a.usage.retries })
    expect(h.usage.retries).toBe(2)
    // The CLI's requests, one per gold turn, each answered: it saw no fault.
    expect(statusesOf(stderr)).toEqual(ledgerGold.map(() => "200"))
  })

  it("under a calls limit of one per gold turn, a retried fault ends neither cell", async () => {
    const spec = faultsFor({ rate: 0.5, only: ["model/generate"], kinds: ["server-error"] }, ledgerEnv, { [AGENT]: "F......" })
    const env = withFaults(ledgerEnv, spec, { calls: ledgerGold.length })
    const a = await builtIn(ledger, env, goldModel(ledgerGold))
    const h = await harness(ledger, env, goldModel(ledgerGold))
    expect(ending(a)).toMatchObject({ ended: null, reward: 1 })
    expect(ending(h)).toEqual(ending(a))
  })
})

describe("a harness Attempt replays to its live verdict", { timeout: 120_000 }, () => {
  it("one that ended on a fault (its last turn's tries all faulted, none recorded) replays as that fault", async () => {
    const spec = faultsFor({ rate: 0.5, only: ["model/generate"], kinds: ["timeout"] }, ledgerEnv, { [AGENT]: "." + "F".repeat(TRIES + 1) })
    const env = withFaults(ledgerEnv, spec)
    const live = await harness(ledger, env, goldModel(ledgerGold))
    const again = await harness(ledger, env, Model.scripted(() => Effect.die("a replay asks no model")), { replay: live.recording })
    expect(ending(live)).toMatchObject({ ended: "fault", reward: 0 })
    expect(ending(again)).toEqual(ending(live))
    expect(again.recording.filter((r) => "error" in r.outcome)).toEqual([])
    // The recording says which call ended the session; the replay's recording is the live one.
    expect(live.recording.filter((r) => r.kind === SESSION_ENDED_KIND).map((r) => r.key)).toEqual([AGENT])
    expect(again.recording).toEqual(live.recording)
    // A recording made before the bridge said how a session ended replays as it did then (its end worked out from the draws).
    const older = await harness(ledger, env, Model.scripted(() => Effect.die("a replay asks no model")), { replay: live.recording.filter((r) => r.kind !== SESSION_ENDED_KIND) })
    expect(ending(older)).toEqual(ending(live))
  })

  it("one whose CLI stopped without replying replays as protocol-failed, asking the recording for nothing it lacks", async () => {
    const spec = faultsFor({ rate: 0.5, only: ["model/generate"], kinds: ["timeout"] }, ledgerEnv, { [AGENT]: "F......" })
    const env = withFaults(ledgerEnv, spec)
    const live = await harness(ledger, env, goldModel(ledgerGold), { dir: standinDir({ turns: 1 }) })
    const again = await harness(ledger, env, Model.scripted(() => Effect.die("a replay asks no model")), { replay: live.recording })
    expect(ending(live)).toMatchObject({ ended: "protocol-failed" })
    expect(ending(again)).toEqual(ending(live))
    expect(again.recording.filter((r) => "error" in r.outcome)).toEqual([])
  })

  it("a folder task's write back, faulted and written again live, is written again on replay: the same world and reward", async () => {
    const env0 = (await Effect.runPromise(repair.environments)).find((e) => e.task.startsWith("js-"))!
    const files = Object.fromEntries((await goldReplies(repair, env0))[0]!.toolCalls
      .filter((c) => c.name === "write_file")
      .map((c) => [String(c.arguments["path"]), String(c.arguments["content"])]))
    const spec = faultsFor({ rate: 0.5, only: ["tool/write"], kinds: ["server-error"] }, env0, { "tool/write:workspace-sync": "F" + ".".repeat(Object.keys(files).length + 2) })
    const env = withFaults(env0, spec)
    // The CLI fixes the bug with its own file tool, then says so.
    const fixed = Model.scripted(() => ({ text: "Fixed.", usage: { inputTokens: 10, outputTokens: 2 } }))
    const live = await harness(repair, env, fixed, { dir: standinDir({ files }) })
    const again = await harness(repair, env, Model.scripted(() => Effect.die("a replay asks no model")), { replay: live.recording })
    expect(live.verdict.reward).toBe(1)
    expect(live.faults.map((f) => f.key)).toEqual(["tool/write:workspace-sync"])
    expect({ reward: again.verdict.reward, world: again.finalWorld, faults: again.faults }).toEqual({ reward: live.verdict.reward, world: live.finalWorld, faults: live.faults })
  })

  it("one whose CLI stopped on its own replays as that, even where its next turn's tries would all have faulted", async () => {
    // The CLI makes one turn and exits; had it asked again, every try of that turn would fault.
    const spec = faultsFor({ rate: 0.5, only: ["model/generate"], kinds: ["timeout"] }, ledgerEnv, { [AGENT]: "." + "F".repeat(TRIES) })
    const env = withFaults(ledgerEnv, spec)
    const live = await harness(ledger, env, goldModel(ledgerGold), { dir: standinDir({ turns: 1 }) })
    const again = await harness(ledger, env, Model.scripted(() => Effect.die("a replay asks no model")), { replay: live.recording })
    expect(ending(live)).toEqual({ ended: "protocol-failed", reward: 0, faults: [] })
    expect(ending(again)).toEqual(ending(live))
    expect(again.recording).toEqual(live.recording)
  })

  it("one whose CLI never asked the model (it did not start) ends as an unreachable CLI, no verdict on the model, and replays as that", async () => {
    const live = await harness(ledger, ledgerEnv, goldModel(ledgerGold), { dir: standinDir({ turns: 0 }) })
    const again = await harness(ledger, ledgerEnv, Model.scripted(() => Effect.die("a replay asks no model")), { replay: live.recording })
    // A fault, so the cell is not counted against the candidate; its site is the CLI's start.
    expect(live.verdict.ended).toMatchObject({ reason: "fault", fault: "unreachable", injected: false })
    expect(live.recording.filter((r) => r.kind === SESSION_ENDED_KIND).map((r) => r.key)).toEqual(["cli"])
    expect(ending(again)).toEqual(ending(live))
    expect(again.verdict.ended).toEqual(live.verdict.ended)
    expect(again.recording).toEqual(live.recording)
  })

  it("a folder task whose write back faults on every try ends as that fault, and replays as that fault", async () => {
    const env0 = (await Effect.runPromise(repair.environments)).find((e) => e.task.startsWith("js-"))!
    const files = Object.fromEntries((await goldReplies(repair, env0))[0]!.toolCalls
      .filter((c) => c.name === "write_file")
      .map((c) => [String(c.arguments["path"]), String(c.arguments["content"])]))
    // Every try of the first file's write back faults.
    const spec = faultsFor({ rate: 0.5, only: ["tool/write"], kinds: ["server-error"] }, env0, { "tool/write:workspace-sync": "F".repeat(SYNC_TRIES) })
    const env = withFaults(env0, spec)
    const fixed = Model.scripted(() => ({ text: "Fixed.", usage: { inputTokens: 10, outputTokens: 2 } }))
    const live = await harness(repair, env, fixed, { dir: standinDir({ files }) })
    const again = await harness(repair, env, Model.scripted(() => Effect.die("a replay asks no model")), { replay: live.recording })
    expect(ending(live)).toMatchObject({ ended: "fault", reward: 0 })
    expect(live.faults.map((f) => f.key)).toEqual(Array(SYNC_TRIES).fill("tool/write:workspace-sync"))
    expect({ ...ending(again), world: again.finalWorld }).toEqual({ ...ending(live), world: live.finalWorld })
    expect(again.recording).toEqual(live.recording)
  })

  it("one that ended at its calls limit replays as that", async () => {
    const env = { ...ledgerEnv, limits: { ...ledgerEnv.limits, calls: 1 } }
    const a = await builtIn(ledger, env, goldModel(ledgerGold))
    const live = await harness(ledger, env, goldModel(ledgerGold))
    const again = await harness(ledger, env, Model.scripted(() => Effect.die("a replay asks no model")), { replay: live.recording })
    expect(ending(a)).toMatchObject({ ended: "budget-exceeded", reward: 0 })
    expect(ending(live)).toEqual(ending(a))
    expect(ending(again)).toEqual(ending(live))
  })
})

describe("a CLI that has answered", { timeout: 120_000 }, () => {
  it("is refused a request it makes after its answer, never made, so it ends then rather than wait on it (qwen waited 120 s on a task with no tools)", async () => {
    const stderr: Array<string> = []
    const model = goldModel(ledgerGold)
    const live = await harness(ledger, ledgerEnv, model, { dir: standinDir({ after: true }), stderr })
    expect(ending(live)).toEqual({ ended: null, reward: 1, faults: [] })
    // Its turns reached the model; the request after its answer did not, and it heard a refusal.
    expect(model.requests()).toHaveLength(ledgerGold.length)
    expect(statusesOf(stderr)).toEqual([...Array(ledgerGold.length).fill("200"), "400"])
  })
})

describe("a harness's side requests are its model calls", { timeout: 120_000 }, () => {
  it("a side request (no tools) is metered into the Attempt's usage, its retries too, and replays", async () => {
    const spec = faultsFor({ rate: 0.5, only: ["model/generate"], kinds: ["rate-limit"] }, ledgerEnv, { [AUX]: "F.", [AGENT]: "......" })
    const env = withFaults(ledgerEnv, spec)
    const model = goldModel(ledgerGold)
    const live = await harness(ledger, env, model, { dir: standinDir({ aux: true }) })
    const aux = live.recording.filter((r) => r.key === "agent-aux")
    expect(aux).toHaveLength(1)
    expect(live.usage.calls).toBe(model.requests().length)
    expect(live.usage.inputTokens).toBe(live.cliUsage?.assay.inputTokens)
    // The side request's fault is retried, and counted as the agent's retries are.
    expect(live.faults.map((f) => f.key)).toEqual([AUX])
    expect(live.usage.retries).toBe(1)
    const again = await harness(ledger, env, Model.scripted(() => Effect.die("a replay asks no model")), { replay: live.recording })
    expect(ending(again)).toEqual(ending(live))
  })

  it("a side request whose every try faults ends the Attempt as that fault, live and replayed", async () => {
    const spec = faultsFor({ rate: 0.5, only: ["model/generate"], kinds: ["server-error"] }, ledgerEnv, { [AUX]: "F".repeat(TRIES), [AGENT]: "......" })
    const env = withFaults(ledgerEnv, spec)
    const live = await harness(ledger, env, goldModel(ledgerGold), { dir: standinDir({ aux: true }) })
    expect(ending(live)).toMatchObject({ ended: "fault", reward: 0 })
    expect(live.faults.map((f) => f.key)).toEqual(Array(TRIES).fill(AUX))
    const again = await harness(ledger, env, Model.scripted(() => Effect.die("a replay asks no model")), { replay: live.recording })
    expect(ending(again)).toEqual(ending(live))
  })

  it("a side request the spend cap refuses ends the cell there, as the built-in agent's refused call does: the CLI asks nothing more", async () => {
    // The cap covers the first call and refuses every call after it (a run whose cap ran out).
    const capped = () => {
      let refused = 0
      const gold = goldModel(ledgerGold)
      const model = Model.scripted((request, n) => {
        if (n === 0) return gold.generate(request)
        refused++
        return Model.scriptedError("spend-cap", { detail: "spend cap: not sent", sent: false })
      })
      return { model, refused: () => refused }
    }
    const a = capped()
    const builtInAttempt = await builtIn(ledger, ledgerEnv, a.model)
    const h = capped()
    const live = await harness(ledger, ledgerEnv, h.model, { dir: standinDir({ aux: true }) })
    expect(ending(builtInAttempt)).toMatchObject({ ended: "spend-cap", reward: 0 })
    expect(a.refused()).toBe(1)
    // The side request (the CLI's second call) is refused: the cell ends on it, its turn after is never asked.
    expect(ending(live)).toEqual(ending(builtInAttempt))
    expect(h.model.requests().map((r) => r.tools.length === 0 ? "aux" : "turn")).toEqual(["turn", "aux"])
    expect(h.refused()).toBe(1)
  })
})
