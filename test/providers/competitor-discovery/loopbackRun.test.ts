/**
 * A model that searches, fetches and answers, run through the command against the loopback
 * server: the run is recorded and `assay replay` of it, with the server gone and no key, gives
 * the same verdict; with `--judge`, the judge model is asked for relevance through the run's
 * Model service; with `--faults`, fetches fail as injected faults (tool errors the model sees),
 * the quotes of the pages it could not read are ungrounded, and the replay agrees again.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { tasks } from "../../../providers/competitor-discovery/tasks.ts"
import * as Store from "../../../src/experiment/Store.ts"
import * as LoopbackServer from "../../../src/testkit/LoopbackServer.ts"
import type { Attempt } from "../../../src/schema/Attempt.ts"
import { fetchEffect, searchEffect } from "../../../src/world/FrozenWeb.ts"
import { drawFault } from "../../../src/world/WorldEffects.ts"
import { assay, tempDir } from "../../cli/support.ts"

const task = tasks.find((t) => t.id === "ledgerline")!
const sources = task.references.map((r) => r.gold.source)
const answer = {
  competitors: task.references.map((r) => ({ name: r.name, site: r.site, claim: r.gold.claim, quote: r.gold.quote, source: r.gold.source }))
}

/** Search, fetch both sources in one turn, answer: what a model that does the task well replies. */
const script: ReadonlyArray<LoopbackServer.ScriptTurn> = [
  { toolCalls: [{ name: "search", arguments: { query: task.goldQuery } }], usage: { input: 400, output: 20 } },
  { toolCalls: sources.map((url) => ({ name: "fetch", arguments: { url } })), usage: { input: 900, output: 30 } },
  { text: JSON.stringify(answer), usage: { input: 1500, output: 200 } }
]

const ALL_KINDS = ["rate-limit", "server-error", "timeout"] as const
const site = (e: { kind: string; key: string }) => `${e.kind}:${e.key}`
const webSites = [site(searchEffect(task.goldQuery)), ...sources.map((u) => site(fetchEffect(u)))]

/**
 * A seed at rate 0.5 under which the model's three calls meet no fault (so no retry waits) and
 * exactly one of the two fetches does: found by the same pure draw the faults layer makes.
 */
const seed = (() => {
  for (let s = 1; s < 10_000; s++) {
    const spec = { seed: s, rate: 0.5, kinds: ALL_KINDS }
    const model = [1, 2, 3].some((n) => drawFault(spec, "model/generate:agent", n, `competitor-discovery/${task.id}`) !== null)
    const web = webSites.map((w) => drawFault(spec, w, 1, `competitor-discovery/${task.id}`))
    if (!model && web[0] === null && web.slice(1).filter((f) => f !== null).length === 1) return { seed: s, faultedFetch: web.findIndex((f) => f !== null) - 1 }
  }
  throw new Error("no seed found")
})()

const runAgainstLoopback = (args: ReadonlyArray<string>, turns: ReadonlyArray<LoopbackServer.ScriptTurn> = script) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* LoopbackServer.start(turns)
        return yield* Effect.promise(() => assay(args, { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" }))
      })
    )
  )

/** The Attempts a run stored, read from its home in this process (no `report` subprocess). */
const attemptsOf = (home: string, stdout: string): Promise<ReadonlyArray<Attempt>> =>
  Effect.runPromise(
    Effect.flatMap(Store.Store, (store) => store.attemptsOfRun((JSON.parse(stdout) as { runId: string }).runId)).pipe(
      Effect.map((stored) => stored.map((s) => s.attempt)),
      Effect.provide(Store.layer(home)),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
    )
  )

describe("competitor-discovery with a model, through the command", () => {
  it("a loopback model that searches, fetches and answers scores 1; the replay with no server agrees, at $0", async () => {
    const home = tempDir()
    const ran = await runAgainstLoopback(["run", "--benchmark", "competitor-discovery", "--task", task.id, "--model", "openai:gpt-4o-mini", "--no-judge", "--home", home, "--yes", "--json"])
    expect(ran.code, ran.stderr).toBe(0)
    const [attempt] = await attemptsOf(home, ran.stdout)
    expect(attempt).toMatchObject({ task: task.id, verdict: { reward: 1, ended: null }, faults: [] })
    // The search and both fetches are the Attempt's recorded http/request effects, beside the model's calls.
    expect(attempt!.recording.filter((r) => r.kind === "http/request").map((r) => r.key)).toEqual(webSites.map((w) => w.slice("http/request:".length)))
    const replay = await assay(["replay", "--home", home, "--json"])
    expect(replay.code, replay.stderr).toBe(0)
    expect(JSON.parse(replay.stdout)).toMatchObject({ replayedFrom: JSON.parse(ran.stdout).runId, replayed: 1, same: 1, differ: [], missing: [], spendUsd: 0 })
  }, 240_000)

  it("with --judge, relevance is asked of the judge model once per Attempt: one entry rejected loses exactly 0.3/2", async () => {
    const home = tempDir()
    // The agent's turns answer only the agent's requests; the judge's reply only the judge's.
    const agentTurns = script.map((t) => ({ ...t, match: { system: "^You research a software market" } }))
    const judgeTurn: LoopbackServer.ScriptTurn = {
      match: { system: "^You check a list of products" },
      text: JSON.stringify({ results: [{ entry: 1, reasoning: "same buyers", competitor: true }, { entry: 2, reasoning: "another job", competitor: false }] }),
      usage: { input: 300, output: 40 }
    }
    const ran = await runAgainstLoopback(
      ["run", "--benchmark", "competitor-discovery", "--task", task.id, "--model", "openai:gpt-4o-mini", "--judge", "openai:gpt-4o-mini", "--home", home, "--yes", "--json"],
      [...agentTurns, judgeTurn]
    )
    expect(ran.code, ran.stderr).toBe(0)
    const [attempt] = await attemptsOf(home, ran.stdout)
    expect(attempt!.verdict).toMatchObject({ trust: "judge", notEvaluated: [], checks: { answer: true, recall: true, grounding: true, relevance: false } })
    expect(attempt!.verdict.reward).toBeCloseTo(0.4 + 0.3 + 0.3 * 0.5, 12)
    expect(attempt!.judging).toMatchObject({ calls: 1, inputTokens: 300, outputTokens: 40 })
  }, 240_000)

  it("with --faults, a fetch fails as an injected fault: its quote is ungrounded, the rest stands, and the replay agrees", async () => {
    const home = tempDir()
    const ran = await runAgainstLoopback([
      "run", "--benchmark", "competitor-discovery", "--task", task.id, "--model", "openai:gpt-4o-mini", "--no-judge",
      "--faults", `${seed.seed}:0.5`, "--home", home, "--yes", "--json"
    ])
    expect(ran.code, ran.stderr).toBe(0)
    const [attempt] = await attemptsOf(home, ran.stdout)
    const faulted = fetchEffect(sources[seed.faultedFetch]!).key
    expect(attempt!.faults.map((f) => f.key)).toEqual([`http/request:${faulted}`])
    // The model read the fault as a tool error and went on to its answer.
    const tools = (attempt!.output as { transcript: ReadonlyArray<{ role: string; content: string }> }).transcript.filter((m) => m.role === "tool")
    expect(tools.map((m) => m.content)).toContainEqual(expect.stringMatching(new RegExp(`^Error: [a-z-]+ injected on http/request ${faulted.replace(".", "\\.")} #1$`)))
    // Recall 1, one of two quotes grounded, renormalised without a judge.
    expect(attempt!.verdict.ended).toBeNull()
    expect(attempt!.verdict.reward).toBeCloseTo((0.4 * 1 + 0.3 * 0.5) / 0.7, 12)
    const replay = await assay(["replay", "--home", home, "--json"])
    expect(replay.code, replay.stderr).toBe(0)
    expect(JSON.parse(replay.stdout)).toMatchObject({ replayed: 1, same: 1, differ: [], missing: [] })
  }, 240_000)
})
