/**
 * Replaying a run from its recordings: a finished ledger run (gold, and a model candidate run
 * against the loopback server) replays with every verdict the same, no request made and $0
 * spent; a changed grader moves exactly the verdicts it changes, and the replay is stored as a
 * run `report` reads like any other.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { provider as ledger } from "../../providers/ledger/index.ts"
import type { Json } from "../../src/content/Canonical.ts"
import type { Provider } from "../../src/evaluation/Provider.ts"
import { replayRun } from "../../src/experiment/Replay.ts"
import { decodeJson } from "../../src/experiment/Report.ts"
import { type Candidate, type Lane, makePlan, run, silent } from "../../src/experiment/Runner.ts"
import * as Store from "../../src/experiment/Store.ts"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import * as Live from "../../src/model/Live.ts"
import * as Model from "../../src/model/Model.ts"
import { modelAgent } from "../../src/model/ModelAgent.ts"
import { modelHandler } from "../../src/model/ModelEffect.ts"
import * as Registry from "../../src/model/Registry.ts"
import { noLimits } from "../../src/schema/EnvironmentDef.ts"

const roster = (p: Provider, name: string): Candidate => ({ def: p.rosterDef(name), registryEntry: null, agentFor: (env) => p.scripted(name, env) })

/** On ledger-01 the model moves the money and says so; on the other tasks it answers at once. */
const script: ReadonlyArray<LoopbackServer.ScriptTurn> = [
  {
    match: { lastUser: "ACC-1001 to ACC-1002" },
    toolCalls: [{ name: "transfer", arguments: { from_account: "ACC-1001", to_account: "ACC-1002", amount: 50000, memo: "savings" } }],
    usage: { input: 480, output: 36 }
  },
  { text: "Moved 500.00 USD to ACC-1002.", usage: { input: 620, output: 14 } },
  { repeat: true, text: "Done.", usage: { input: 300, output: 5 } }
]

/** A finished run of gold and a model candidate on three ledger tasks, with the server that answered it. */
const recordedRun = (home: string) =>
  Effect.gen(function*() {
    const server = yield* LoopbackServer.start(script)
    const model = yield* Registry.resolve("openai:gpt-4o-mini").pipe(Effect.provide(Registry.layer))
    const modelCandidate: Candidate = {
      def: { name: "openai:gpt-4o-mini", kind: "llm", model: model.ref, actionSpace: "tools", prompt: "", limits: noLimits },
      registryEntry: model as unknown as Json,
      agentFor: () => Effect.succeed(modelAgent("openai:gpt-4o-mini", model))
    }
    const environments = (yield* ledger.environments).slice(0, 3)
    const lanes = (p: Provider): ReadonlyArray<Lane> => [{ provider: p, environments, candidates: [roster(p, "gold"), modelCandidate] }]
    const plan = yield* makePlan(lanes(ledger), 1)
    // The live model as a handler of the caller's own, over a Model service of the test's.
    const liveHandler = modelHandler(yield* Model.Model)
    const outcome = yield* run(plan, { parallel: 1, maxUsd: null, handlers: { "model/generate": liveHandler }, progress: silent, settings: { benchmarks: ["ledger"] } }).pipe(
      Effect.provide(Store.layer(home)),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["OPENAI_BASE_URL", server.openAiBaseUrl], ["OPENAI_API_KEY", "sk-test"]])))
    )
    return { server, outcome, lanes }
  }).pipe(Effect.provide(Live.layerNode))

const inHome = <A, E, R>(body: (home: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "assay-replay-"))),
    body,
    (home) => Effect.sync(() => rmSync(home, { recursive: true, force: true }))
  )

// The replay is given no key and no base URL: a model call would have nowhere to go.
const noConfig = Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))

describe("replaying a run", () => {
  it.scopedLive("every verdict is the same, no request reaches the server and the replay spends $0", () =>
    inHome((home) =>
      Effect.gen(function*() {
        const { server, outcome, lanes } = yield* recordedRun(home)
        const modelCalls = server.requests().filter((r) => r.api !== null).length
        expect(modelCalls).toBe(4)
        expect(outcome.attempts.find((a) => a.candidate === "openai:gpt-4o-mini" && a.task === "ledger-01")?.verdict.reward).toBe(1)
        const result = yield* replayRun(outcome.report.runId, { lanes: lanes(ledger) }).pipe(Effect.provide(Store.layer(home)), noConfig)
        expect(result).toMatchObject({ runId: null, replayedFrom: outcome.report.runId, replayed: 6, same: 6, differ: [], missing: [], notReplayable: [], spendUsd: 0 })
        // Recorded costs are shown as recorded.
        const recorded = outcome.attempts.reduce((usd, a) => usd + (a.usage.costUsd ?? 0), 0)
        expect(recorded).toBeGreaterThan(0)
        expect(result.recordedCostUsd).toBeCloseTo(recorded, 12)
        // The server, still listening, saw no request during the replay.
        expect(server.requests()).toHaveLength(modelCalls)
        // Nothing new to store: the home has only the recorded run.
        const latest = yield* Effect.flatMap(Store.Store, (s) => s.latestRun).pipe(Effect.provide(Store.layer(home)))
        expect(latest?.id).toBe(outcome.report.runId)
      })
    ), 60_000)

  it.scopedLive("a changed grader reports exactly the cells whose verdict moved, and stores the replay as a run of its own", () =>
    inHome((home) =>
      Effect.gen(function*() {
        const { server, outcome, lanes } = yield* recordedRun(home)
        const before = server.requests().length
        // The new grader also wants every ledger-02 memo in upper case: nobody passes it.
        const stricter: Provider = {
          ...ledger,
          capabilities: {
            ...ledger.capabilities,
            evaluator: {
              ...ledger.capabilities.evaluator,
              evaluate: (ctx) =>
                Effect.map(ledger.capabilities.evaluator.evaluate(ctx), (grade) =>
                  ctx.env.task === "ledger-02" ? { ...grade, reward: 0, checks: { ...grade.checks, "memo-case": false } } : grade)
            }
          }
        }
        const result = yield* replayRun(outcome.report.runId, { lanes: lanes(stricter) }).pipe(Effect.provide(Store.layer(home)), noConfig)
        expect(server.requests()).toHaveLength(before)
        expect(result.replayed).toBe(6)
        expect(result.same).toBe(4)
        expect(result.differ.map((d) => [d.task, d.candidate, d.repetition])).toEqual([
          ["ledger-02", "gold", 0],
          ["ledger-02", "openai:gpt-4o-mini", 0]
        ])
        const goldWas = outcome.attempts.find((a) => a.candidate === "gold" && a.task === "ledger-02")!
        expect(result.differ[0]).toMatchObject({
          was: { reward: 1, checks: goldWas.verdict.checks, ended: null },
          now: { reward: 0, checks: { ...goldWas.verdict.checks, "memo-case": false }, ended: null }
        })
        expect(result.spendUsd).toBe(0)

        // The replay is a run of its own: its Attempts, and a report `report` reads.
        expect(result.runId).not.toBeNull()
        const stored = yield* Effect.gen(function*() {
          const store = yield* Store.Store
          const record = yield* store.getRun(result.runId!)
          return { record, attempts: yield* store.attemptsOfRun(result.runId!) }
        }).pipe(Effect.provide(Store.layer(home)))
        expect(stored.record.experimentId).toBe(outcome.report.experimentId)
        expect(stored.record.settings).toMatchObject({ benchmarks: ["ledger"], replayOf: outcome.report.runId })
        expect(stored.attempts).toHaveLength(6)
        const report = yield* decodeJson(JSON.stringify(stored.record.summary))
        expect(report.runId).toBe(result.runId)
        expect(report.cells).toMatchObject({ total: 6, ran: 6, skipped: 0 })
        const goldCard = report.scorecards.find((s) => s.candidate === "gold" && s.stratum === null)!
        expect(goldCard.meanReward).toBeCloseTo(2 / 3, 12)
        expect(goldCard.failures).toEqual({ "memo-case": 1 })
        // Costs as recorded: the model's card costs what its calls cost when they ran.
        const modelCard = report.scorecards.find((s) => s.candidate === "openai:gpt-4o-mini" && s.stratum === null)!
        const recorded = outcome.report.scorecards.find((s) => s.candidate === "openai:gpt-4o-mini" && s.stratum === null)!
        expect(modelCard.costUsd).toBeCloseTo(recorded.costUsd ?? Number.NaN, 12)
        expect(modelCard.tokens).toEqual(recorded.tokens)
        expect(report.notes?.[0]).toContain("the replay spent $0")
      })
    ), 60_000)

  it.effect("an Attempt graded by a live judge is named as not replayable rather than judged again", () =>
    inHome((home) =>
      Effect.gen(function*() {
        // A grader that asks a judge (outside WorldEffects, so no recording answers it).
        let judgeCalls = 0
        const judged: Provider = {
          ...ledger,
          capabilities: {
            ...ledger.capabilities,
            evaluator: {
              ...ledger.capabilities.evaluator,
              evaluate: (ctx) =>
                Effect.map(ledger.capabilities.evaluator.evaluate(ctx), (grade) => {
                  judgeCalls++
                  return { ...grade, trust: "judge" as const, judging: { calls: 1, inputTokens: 100, outputTokens: 10, costUsd: 0.001 } }
                })
            }
          }
        }
        const lanes: ReadonlyArray<Lane> = [{ provider: judged, environments: (yield* ledger.environments).slice(0, 2), candidates: [roster(judged, "gold")] }]
        const { report } = yield* Effect.flatMap(makePlan(lanes, 1), (plan) =>
          run(plan, { parallel: 1, maxUsd: null, handlers: {}, progress: silent, settings: {} })).pipe(Effect.provide(Store.layer(home)))
        expect(judgeCalls).toBe(2)
        const result = yield* replayRun(report.runId, { lanes }).pipe(Effect.provide(Store.layer(home)))
        expect(judgeCalls).toBe(2)
        expect(result).toMatchObject({ replayed: 0, same: 0, differ: [], missing: [] })
        expect(result.notReplayable.map((n) => n.task)).toEqual(["ledger-01", "ledger-02"])
        expect(result.notReplayable[0]?.reason).toContain("graded by a live judge")
      })
    ))

  it.scopedLive("an Attempt whose environment cannot be rebuilt is named, not replayed", () =>
    inHome((home) =>
      Effect.gen(function*() {
        const { outcome, lanes } = yield* recordedRun(home)
        const [lane] = lanes(ledger)
        const fewer: ReadonlyArray<Lane> = [{ ...lane!, environments: lane!.environments.filter((e) => e.task !== "ledger-03") }]
        const result = yield* replayRun(outcome.report.runId, { lanes: fewer }).pipe(Effect.provide(Store.layer(home)), noConfig)
        expect(result.same).toBe(4)
        expect(result.notReplayable.map((n) => [n.task, n.candidate])).toEqual([["ledger-03", "gold"], ["ledger-03", "openai:gpt-4o-mini"]])
        expect(result.notReplayable[0]?.reason).toMatch(/no environment with its id .* ledger task ledger-03/)
      })
    ), 60_000)
})
