/**
 * Agent CLIs as candidates of the benchmarks through the bridge, run for real (the pinned CLIs in
 * tools/harnesses): a scripted model behind the proxy plays each task's gold answer (its tool
 * calls, its final text), so a CLI that passes the model's calls to the benchmark's tools over MCP
 * and its words back scores what the gold candidate scores; a model that does nothing useful
 * scores 0.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { loadBenchmark } from "../../src/cli/benchmarks.ts"
import { evaluate } from "../../src/evaluation/evaluate.ts"
import type * as Model from "../../src/model/Model.ts"
import { clis, goldModel, idleModel, noWorld, runBridged } from "./bridgeSupport.ts"

const toolContents = (messages: ReadonlyArray<{ readonly role: string; readonly content?: string | null }>): ReadonlyArray<string> =>
  messages.flatMap((m) => (m.role === "tool" && typeof m.content === "string" ? [m.content] : []))

interface Case {
  readonly benchmark: string
  readonly tasks: ReadonlyArray<string>
}

const cases: ReadonlyArray<Case> = [
  { benchmark: "tau2-retail", tasks: ["0", "1", "70"] },
  // One call; several calls to several functions in one turn (what multiple_ and parallel_ each
  // test alone); no call at all. The CLIs' minutes of CPU are the CI's largest single cost.
  { benchmark: "bfcl", tasks: ["simple_python_0", "parallel_multiple_0", "irrelevance_0"] },
  { benchmark: "bird", tasks: ["000-debit_card_specializing"] },
  { benchmark: "contract-review", tasks: ["americasshoppingmall-hosting"] },
  { benchmark: "competitor-discovery", tasks: ["rosterly"] }
]

const load = async (c: Case) => {
  const provider = await Effect.runPromise(loadBenchmark(c.benchmark))
  const envs = await Effect.runPromise(provider.environments)
  return { provider, envs: c.tasks.map((t) => envs.find((e) => e.task === t)!) }
}

const loaded = await Promise.all(cases.map(load))

describe.each(clis)("harness:%s through the bridge", { timeout: 900_000 }, (harness) => {
  it("scores the gold candidate's reward on tau2-retail, BFCL, BIRD, contract review and competitor discovery when the model plays gold; 0 when it does nothing", async () => {
    const cells = loaded.flatMap(({ envs, provider }) => envs.map((env) => ({ provider, env })))
    const results = await Effect.runPromise(
      Effect.forEach(cells, ({ env, provider }) =>
        Effect.gen(function*() {
          const gold = yield* provider.scripted("gold", env)
          const reference = yield* evaluate(env, { capabilities: provider.capabilities, agentDef: provider.rosterDef("gold"), agent: gold, repetition: 0 })
          const bridged = yield* runBridged(provider, env, harness, goldModel(yield* provider.scripted("gold", env)))
          return { task: `${env.benchmark}/${env.task}`, reference: reference.verdict.reward, bridged: bridged.verdict, recording: bridged.recording, transcript: bridged.output }
        }), { concurrency: 3 })
    )
    for (const r of results) {
      expect(r.reference, r.task).toBe(1)
      expect({ task: r.task, reward: r.bridged.reward, ended: r.bridged.ended }).toEqual({ task: r.task, reward: 1, ended: null })
      // The CLI's turns were model calls of the agent through the Attempt's stack.
      const turns = r.recording.filter((e) => e.kind === "model/generate" && e.key === "agent")
      expect(turns.length, r.task).toBeGreaterThan(0)
      if (r.task.startsWith("tau2")) {
        // What the tools answered reached the CLI over MCP: its next request to the model carries each
        // result (as the CLI words it: codex adds the wall time, gemini marks it untrusted).
        const results = toolContents((r.transcript as { transcript: ReadonlyArray<{ role: string; content?: string }> }).transcript)
        const seen = turns.flatMap((t) => toolContents((t.request as Model.ModelRequest).messages))
        expect(results.length, r.task).toBeGreaterThan(0)
        for (const content of results) expect(seen.some((c) => c.includes(content)), `${r.task}: ${content.slice(0, 80)}`).toBe(true)
      }
    }

    const idle = await Effect.runPromise(
      Effect.forEach([loaded[0]!, loaded[1]!], ({ envs, provider }) => runBridged(provider, envs[0]!, harness, idleModel), { concurrency: 2 })
    )
    for (const a of idle) expect({ task: a.task, reward: a.verdict.reward }).toEqual({ task: a.task, reward: 0 })
  })
})

// tau2's other three domains, one task each, with one CLI: the conversation (the user simulator
// behind the same scripted model) and each domain's tools and evaluator through the bridge.
// Each domain's first task whose gold play acts (an agent's tool call, or a user's action asked
// for), not one answered in words alone.
const domains = await Promise.all(["tau2-airline", "tau2-telecom", "tau2-banking"].map(async (benchmark) => {
  const provider = await Effect.runPromise(loadBenchmark(benchmark))
  const envs = await Effect.runPromise(provider.environments)
  const acts = (env: (typeof envs)[number]) =>
    Effect.runPromise(Effect.gen(function*() {
      const first = yield* (yield* provider.scripted("gold", env)).reply({ system: "", messages: [], tools: [] }).pipe(Effect.provide(noWorld), Effect.orDie)
      return first.toolCalls.length > 0 || (first.text ?? "").startsWith("Please go ahead with")
    }))
  for (const env of envs) if (await acts(env)) return { provider, env }
  throw new Error(`${benchmark}: no task whose gold play acts`)
}))

describe("harness:claude on tau2-airline, tau2-telecom and tau2-banking", { timeout: 900_000 }, () => {
  it("scores the gold candidate's reward on one task of each when the model plays gold", async () => {
    const results = await Effect.runPromise(
      Effect.forEach(domains, ({ env, provider }) =>
        Effect.gen(function*() {
          const gold = yield* provider.scripted("gold", env)
          const reference = yield* evaluate(env, { capabilities: provider.capabilities, agentDef: provider.rosterDef("gold"), agent: gold, repetition: 0 })
          const bridged = yield* runBridged(provider, env, "claude", goldModel(yield* provider.scripted("gold", env)))
          const calls = bridged.recording.filter((e) => e.kind.startsWith("tool/")).length
          return { task: `${env.benchmark}/${env.task}`, reference: reference.verdict.reward, reward: bridged.verdict.reward, ended: bridged.verdict.ended, calls }
        }), { concurrency: 3 })
    )
    // Each made tool calls (the agent's through the CLI, or the user's), and scored as gold does.
    for (const r of results) expect(r).toEqual({ task: r.task, reference: 1, reward: 1, ended: null, calls: expect.any(Number) })
    for (const r of results) expect(r.calls, r.task).toBeGreaterThan(0)
  })
})
