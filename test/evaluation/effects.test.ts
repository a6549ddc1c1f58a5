/**
 * Effects of whole Attempts on the ledger benchmark: faults met by candidates, record and replay,
 * read-only admission, all through `evaluate`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as Agents from "../../src/evaluation/Agent.ts"
import type { Agent } from "../../src/evaluation/Agent.ts"
import type { Capabilities } from "../../src/evaluation/Capabilities.ts"
import type { Message, ToolCall } from "../../src/evaluation/Conversation.ts"
import { evaluate } from "../../src/evaluation/evaluate.ts"
import type { Attempt } from "../../src/schema/Attempt.ts"
import * as AttemptSchema from "../../src/schema/Attempt.ts"
import { type EffectsSpec, type EnvironmentDef, withEffects } from "../../src/schema/EnvironmentDef.ts"
import * as World from "../../src/world/World.ts"
import * as WE from "../../src/world/WorldEffects.ts"
import { provider } from "../../providers/ledger/index.ts"
import { initialTables } from "../../providers/ledger/tasks.ts"

const environments = Effect.runSync(provider.environments)
const envOf = (task: string): EnvironmentDef => environments.find((e) => e.task === task)!

const faulty = (env: EnvironmentDef, seed: number, rate: number): EnvironmentDef =>
  withEffects(env, { admission: "all", faults: { seed, rate, only: null, kinds: ["rate-limit", "server-error", "timeout"] } })

const run = (env: EnvironmentDef, agent: Agent, options: { replay?: Attempt["recording"]; capabilities?: Capabilities } = {}) =>
  evaluate(env, {
    capabilities: options.capabilities ?? provider.capabilities,
    agentDef: provider.rosterDef(agent.name === "echo" ? "echo" : "gold"),
    agent,
    repetition: 0,
    ...(options.replay ? { replay: options.replay } : {})
  })

const gold = (env: EnvironmentDef) => Effect.flatMap(provider.scripted("gold", env), (agent) => run(env, agent))

/** The gold tool calls of a task, read from a fault-free gold Attempt's transcript. */
const goldCalls = (attempt: Attempt): ReadonlyArray<ToolCall> =>
  (attempt.output as { transcript: ReadonlyArray<Message> }).transcript.flatMap((m) => (m.role === "assistant" ? m.toolCalls : []))

const toolMessages = (attempt: Attempt) =>
  (attempt.output as { transcript: ReadonlyArray<Message> }).transcript.filter((m): m is Extract<Message, { role: "tool" }> => m.role === "tool")

describe("faults are paired across candidates", () => {
  it.effect("two different candidates making the same tool calls meet faults at the same effect occurrences", () =>
    Effect.gen(function*() {
      let met = 0
      for (const base of environments) {
        const calls = goldCalls(yield* gold(base))
        if (calls.length === 0) continue
        const env = faulty(base, 7, 0.3)
        // One call per turn, as gold plays it.
        const a = yield* gold(env)
        // All calls in one turn, with calls of a key gold never makes (a tool the ledger lacks) interleaved and another final answer.
        const extra: ToolCall = { id: "x", name: "exchange_rates", arguments: { currency: "EUR" } }
        const b = yield* run(
          env,
          Agents.scripted("other", [{ text: "Working on it.", toolCalls: calls.flatMap((c, i) => [{ ...c, id: `b-${i}` }, { ...extra, id: `x-${i}` }]) }], "All done.")
        )
        const onGoldCalls = b.faults.filter((f) => f.key !== "tool/read:exchange_rates")
        expect(onGoldCalls).toEqual(a.faults)
        // The interleaved calls meet exactly the draws for their own key.
        const extraFaults = b.faults.filter((f) => f.key === "tool/read:exchange_rates").map((f) => f.occurrence)
        const drawn = calls.map((_, i) => i + 1).filter((n) => WE.drawFault(env.world.effects.faults!, "tool/read:exchange_rates", n, `${env.benchmark}/${env.task}`) !== null)
        expect(extraFaults).toEqual(drawn)
        met += a.faults.length
      }
      // Seed 7 at rate 0.3 over the ledger's 40-odd gold calls: some faults are met.
      expect(met).toBeGreaterThan(3)
    }))

  it.effect("a fault at rate 0 is never met, and gold scores 1 on every task", () =>
    Effect.gen(function*() {
      for (const base of environments) {
        const attempt = yield* gold(faulty(base, 7, 0))
        expect(attempt.faults).toEqual([])
        expect(attempt.verdict.reward).toBe(1)
      }
    }))

  it.effect("the same seed gives the same faults and the same verdicts on a second run", () =>
    Effect.gen(function*() {
      for (const base of environments) {
        const env = faulty(base, 11, 0.3)
        const [first, second] = [yield* gold(env), yield* gold(env)]
        expect(second.faults).toEqual(first.faults)
        expect(second.verdict).toEqual(first.verdict)
        expect(second.finalWorld).toBe(first.finalWorld)
      }
    }))
})

describe("a faulted effect", () => {
  it.effect("surfaces to the protocol as a tool error, and the Attempt is kept with its verdict", () =>
    Effect.gen(function*() {
      const env = faulty(envOf("ledger-02"), 3, 1)
      const attempt = yield* gold(env)
      // Rate 1: every tool call faults; the agent sees each as a tool error and the loop goes on.
      const tools = toolMessages(attempt)
      expect(tools.map((m) => m.error)).toEqual([true, true])
      for (const m of tools) expect(m.content).toMatch(/^Error: (rate-limit|server-error|timeout) injected on tool\/(read|write) /)
      expect(attempt.faults.map((f) => [f.key, f.occurrence])).toEqual([["tool/read:find_accounts", 1], ["tool/write:deposit", 1]])
      expect(attempt.verdict.ended).toBeNull()
      expect(attempt.verdict.checks).toEqual({ world: false })
      expect(attempt.verdict.reward).toBe(0)
      expect(attempt.finalWorld).toBe(World.digest(World.make(initialTables)))
      // Faults are injected outside the recording: nothing reached the handler.
      expect(attempt.recording).toEqual([])
      // The whole Attempt is portable data.
      expect(Schema.decodeUnknownSync(AttemptSchema.Attempt)(JSON.parse(JSON.stringify(attempt)))).toEqual(attempt)
    }))
})

describe("record then replay", () => {
  /** The ledger's capabilities with tools that must never run: a replay is answered by the recording. */
  const noLiveTools: Capabilities = {
    ...provider.capabilities,
    worldSetup: {
      ...provider.capabilities.worldSetup,
      setup: (env) =>
        Effect.map(provider.capabilities.worldSetup.setup(env), (setup) => ({
          ...setup,
          tools: setup.tools.map((t) => ({
            ...t,
            run: () => {
              throw new Error(`live tool ${t.spec.name} ran during a replay`)
            }
          }))
        }))
    }
  }

  const same = (live: Attempt, replayed: Attempt) => {
    expect(replayed.output).toEqual(live.output)
    expect(replayed.verdict).toEqual(live.verdict)
    expect(replayed.finalWorld).toBe(live.finalWorld)
    expect(replayed.faults).toEqual(live.faults)
    expect(replayed.receipt).toEqual(live.receipt)
  }

  it.effect("an Attempt recorded live replays with no live handler: same transcript, verdict and final world", () =>
    Effect.gen(function*() {
      for (const spec of [{ admission: "all", faults: null }, { admission: "all", faults: { seed: 5, rate: 0.3, only: null, kinds: ["timeout"] } }] satisfies ReadonlyArray<EffectsSpec>) {
        for (const base of environments) {
          const env = withEffects(base, spec)
          const live = yield* gold(env)
          // Through JSON lines and back, as a fixture would be stored.
          const recording = live.recording.map((r) => JSON.stringify(r)).join("\n").split("\n").filter((l) => l.length > 0)
            .map((l) => JSON.parse(l) as Attempt["recording"][number])
          const replayed = yield* Effect.flatMap(provider.scripted("gold", env), (agent) =>
            run(env, agent, { replay: recording, capabilities: noLiveTools }))
          same(live, replayed)
        }
      }
    }))

  it.effect("a replay meeting an effect missing from the recording ends the Attempt naming the effect and its occurrence", () =>
    Effect.gen(function*() {
      const env = envOf("ledger-20")
      const live = yield* gold(env)
      expect(live.recording.map((r) => `${r.key}#${r.occurrence}`)).toEqual(["find_accounts#1", "deposit#1", "deposit#2"])
      const replayed = yield* Effect.flatMap(provider.scripted("gold", env), (agent) =>
        run(env, agent, { replay: live.recording.slice(0, 2), capabilities: noLiveTools }))
      expect(replayed.verdict.ended?.reason).toBe("protocol-failed")
      expect(replayed.verdict.ended?.detail).toContain("replay-missing")
      expect(replayed.verdict.ended?.detail).toContain("tool/write deposit")
      expect(replayed.verdict.ended?.detail).toContain("#2")
      expect(replayed.verdict.reward).toBe(0)
      // Nothing before the failure is lost: the first deposit's reply is in the transcript.
      expect(toolMessages(replayed).map((m) => m.name)).toEqual(["find_accounts", "deposit"])
    }))

  it.effect("a candidate that departs from the recorded calls is caught, not answered with another call's result", () =>
    Effect.gen(function*() {
      const env = envOf("ledger-01")
      const live = yield* gold(env)
      const other = Agents.scripted("other", [{ text: null, toolCalls: [{ id: "1", name: "transfer", arguments: { from_account: "ACC-1001", to_account: "ACC-1002", amount: 1, memo: "savings" } }] }])
      const replayed = yield* run(env, other, { replay: live.recording, capabilities: noLiveTools })
      expect(replayed.verdict.ended?.detail).toContain("replay-mismatch")
    }))
})

describe("read-only admission", () => {
  it.effect("a write is refused and seen by the agent as a tool error; reads pass; the world is unchanged", () =>
    Effect.gen(function*() {
      const env = withEffects(envOf("ledger-08"), { admission: "read-only", faults: null })
      const attempt = yield* gold(env)
      const tools = toolMessages(attempt)
      expect(tools.map((m) => [m.name, m.error])).toEqual([["find_accounts", false], ["set_frozen", true], ["deposit", true]])
      expect(tools[0]!.content).toBe(JSON.stringify(["ACC-1006"]))
      expect(tools[1]!.content).toBe("Error: tool/write set_frozen refused (read-only)")
      expect(attempt.finalWorld).toBe(World.digest(World.make(initialTables)))
      expect(attempt.verdict.ended).toBeNull()
      expect(attempt.verdict.checks).toEqual({ world: false })
      expect(attempt.recording.map((r) => r.kind)).toEqual(["tool/read"])
    }))

  it.effect("a question task needs only reads, so gold still scores 1 under read-only admission", () =>
    Effect.gen(function*() {
      const attempt = yield* gold(withEffects(envOf("ledger-06"), { admission: "read-only", faults: null }))
      expect(attempt.verdict.reward).toBe(1)
    }))
})
