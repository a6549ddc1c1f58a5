import { existsSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import * as Sqlite from "../../src/experiment/Sqlite.ts"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { provider as ledger } from "../../providers/ledger/index.ts"
import type { Provider } from "../../src/evaluation/Provider.ts"
import { type Candidate, type Lane, makePlan, run, silent } from "../../src/experiment/Runner.ts"
import * as Store from "../../src/experiment/Store.ts"
import { tempDir } from "../support/tempDirs.ts"
import * as Model from "../../src/model/Model.ts"
import { modelAgent } from "../../src/model/ModelAgent.ts"
import * as Registry from "../../src/model/Registry.ts"
import { worstCaseUsd } from "../../src/budget/SpendCap.ts"
import type { Json } from "../../src/content/Canonical.ts"
import { noLimits } from "../../src/schema/EnvironmentDef.ts"

// Removed after this file (test/support/tempDirs.ts), whatever the test did.
const tempHome = () => tempDir("assay-test-")

const roster = (p: Provider, name: string, prompt = ""): Candidate => ({
  def: { ...p.rosterDef(name), prompt },
  registryEntry: null,
  agentFor: (env) => p.scripted(name, env)
})

const settings = { parallel: 2, maxUsd: null, handlers: {}, progress: silent, settings: {} }

const runLanes = (home: string, lanes: ReadonlyArray<Lane>, reps = 1) =>
  Effect.gen(function*() {
    const plan = yield* makePlan(lanes, reps)
    return yield* run(plan, settings)
  }).pipe(Effect.provide(Store.layer(home)))

describe("experiments", () => {
  it.effect("running the same experiment again runs no cell and keeps them all", () =>
    Effect.gen(function*() {
      const home = tempHome()
      const environments = yield* ledger.environments
      const lanes = [{ provider: ledger, environments, candidates: [roster(ledger, "gold"), roster(ledger, "echo")] }]
      const first = yield* runLanes(home, lanes)
      expect(first.report.cells).toMatchObject({ total: 40, ran: 40, kept: 0, stale: 0 })
      const second = yield* runLanes(home, lanes)
      expect(second.report.cells).toMatchObject({ total: 40, ran: 0, kept: 40, stale: 0 })
      expect(second.report.scorecards).toEqual(first.report.scorecards.map((s) => ({ ...s, wallSeconds: expect.any(Number) })))
      // Each run keeps its own results file, one line per Attempt it ran.
      const lines = readFileSync(join(home, "runs", first.report.runId, "results.jsonl"), "utf8").trim().split("\n")
      expect(lines).toHaveLength(40)
      rmSync(home, { recursive: true, force: true })
    }))

  it.effect("changing one candidate's prompt makes exactly its cells stale; old Attempts stay in the store", () =>
    Effect.gen(function*() {
      const home = tempHome()
      const environments = yield* ledger.environments
      const lane = (echoPrompt: string) => [{ provider: ledger, environments, candidates: [roster(ledger, "gold"), roster(ledger, "echo", echoPrompt)] }]
      const first = yield* runLanes(home, lane(""))
      const second = yield* runLanes(home, lane("Answer briefly."))
      expect(second.report.cells).toMatchObject({ total: 40, ran: 20, kept: 20, stale: 20 })
      const ranNow = yield* Effect.flatMap(Store.Store, (s) => s.attemptsOfRun(second.report.runId)).pipe(Effect.provide(Store.layer(home)))
      expect(new Set(ranNow.map((a) => a.attempt.candidate))).toEqual(new Set(["echo"]))
      const before = yield* Effect.flatMap(Store.Store, (s) => s.attemptsOfRun(first.report.runId)).pipe(Effect.provide(Store.layer(home)))
      expect(before).toHaveLength(40)
      rmSync(home, { recursive: true, force: true })
    }))

  it.effect("changing a tool's description makes stale the cells of candidates offered tools, and only those", () =>
    Effect.gen(function*() {
      const home = tempHome()
      const environments = yield* ledger.environments
      const textEcho: Candidate = {
        def: { ...ledger.rosterDef("echo"), name: "echo-text", actionSpace: "text" },
        registryEntry: null,
        agentFor: (env) => ledger.scripted("echo", env)
      }
      const changed: Provider = {
        ...ledger,
        capabilities: {
          ...ledger.capabilities,
          protocol: {
            ...ledger.capabilities.protocol,
            inputs: (env, agent) =>
              Effect.map(ledger.capabilities.protocol.inputs(env, agent), (inputs) => ({
                ...inputs,
                tools: inputs.tools.map((t) => (t.name === "transfer" ? { ...t, description: t.description + " Transfers are final." } : t))
              }))
          }
        }
      }
      yield* runLanes(home, [{ provider: ledger, environments, candidates: [roster(ledger, "gold"), textEcho] }])
      const second = yield* runLanes(home, [{ provider: changed, environments, candidates: [roster(changed, "gold"), textEcho] }])
      expect(second.report.cells).toMatchObject({ total: 40, ran: 20, kept: 20, stale: 20 })
      const ranNow = yield* Effect.flatMap(Store.Store, (s) => s.attemptsOfRun(second.report.runId)).pipe(Effect.provide(Store.layer(home)))
      expect(new Set(ranNow.map((a) => a.attempt.candidate))).toEqual(new Set(["gold"]))
      rmSync(home, { recursive: true, force: true })
    }))

  /** The gpt-4o-mini candidate on the first ten ledger tasks; every call answers "done" with 1,000 + 1,000 tokens. */
  const tenModelCells = Effect.gen(function*() {
    const model = yield* Registry.resolve("openai:gpt-4o-mini").pipe(Effect.provide(Registry.layer))
    const candidate: Candidate = {
      def: { name: "openai:gpt-4o-mini", kind: "llm", model: model.ref, actionSpace: "tools", prompt: "", limits: noLimits },
      registryEntry: model as unknown as Json,
      agentFor: () => Effect.succeed(modelAgent("openai:gpt-4o-mini", model))
    }
    const environments = (yield* ledger.environments).slice(0, 10)
    const plan = yield* makePlan([{ provider: ledger, environments, candidates: [candidate] }], 1)
    const scripted = Model.scripted(() => ({ text: "done", usage: { inputTokens: 1000, outputTokens: 1000 } }))
    return { model, plan, scripted, candidate, environments }
  })

  it.effect("no new cell starts once measured spend reaches --max-usd; the rest are recorded as skipped with the reason", () =>
    Effect.gen(function*() {
      const home = tempHome()
      // $0.00075 a call at gpt-4o-mini's list price. No Registry in the runner's context: no price
      // to reserve a worst case with, so what stops the run is the spend the Attempts measured.
      const { plan, scripted } = yield* tenModelCells
      const outcome = yield* run(plan, { ...settings, parallel: 1, maxUsd: 0.002 }).pipe(
        Effect.provide(Store.layer(home)),
        Effect.provideService(Model.Model, scripted)
      )
      // Three cells reach $0.00225 >= $0.002; the other seven never start, and never call the model.
      expect(outcome.report.cells).toMatchObject({ total: 10, ran: 3, skipped: 7 })
      expect(scripted.requests()).toHaveLength(3)
      expect(outcome.report.scorecards[0]!.costUsd).toBeCloseTo(3 * (1000 * 0.15 + 1000 * 0.6) / 1e6, 12)
      const skipped = yield* Effect.flatMap(Store.Store, (s) => s.skippedOfRun(outcome.report.runId)).pipe(Effect.provide(Store.layer(home)))
      expect(skipped).toHaveLength(7)
      expect(skipped.every((s) => s.reason.startsWith("spend cap"))).toBe(true)
      expect(outcome.complete).toBe(false)
      rmSync(home, { recursive: true, force: true })
    }))

  it.effect("--max-usd 0 spends nothing: the scripted candidates' cells run, a model's never start", () =>
    Effect.gen(function*() {
      const home = tempHome()
      const { candidate, environments: ten, scripted } = yield* tenModelCells
      const environments = ten.slice(0, 3)
      const plan = yield* makePlan([{ provider: ledger, environments, candidates: [roster(ledger, "gold"), roster(ledger, "echo"), candidate] }], 1)
      const outcome = yield* run(plan, { ...settings, parallel: 1, maxUsd: 0 }).pipe(
        Effect.provide(Store.layer(home)),
        Effect.provideService(Model.Model, scripted)
      )
      expect(outcome.report.cells).toMatchObject({ total: 9, ran: 6, skipped: 3 })
      expect(scripted.requests()).toHaveLength(0)
      expect(outcome.report.scorecards.find((c) => c.candidate === "gold")).toMatchObject({ n: 3, meanReward: 1 })
      const skipped = yield* Effect.flatMap(Store.Store, (s) => s.skippedOfRun(outcome.report.runId)).pipe(Effect.provide(Store.layer(home)))
      expect(skipped.map((s) => s.reason)).toEqual(Array(3).fill("spend cap: $0.0000 of $0 spent by the experiment (runs and their judging)"))
      rmSync(home, { recursive: true, force: true })
    }))

  it.effect("with prices known, a call whose worst case the cap cannot cover is never sent: the spend stays under --max-usd", () =>
    Effect.gen(function*() {
      const home = tempHome()
      const { model, plan, scripted } = yield* tenModelCells
      const maxUsd = 0.007
      const outcome = yield* run(plan, { ...settings, parallel: 1, maxUsd }).pipe(
        Effect.provide(Store.layer(home)),
        Effect.provideService(Model.Model, scripted),
        Effect.provide(Registry.layer)
      )
      // What the cap should have let through: each call reserves its worst case first, then costs $0.00075.
      const sent = scripted.requests()
      let spent = 0
      let expected = 0
      for (const request of [...sent, ...Array(10).fill(sent[0])]) {
        if (spent + worstCaseUsd(request, model.model)! > maxUsd) break
        spent += (1000 * 0.15 + 1000 * 0.6) / 1e6
        expected++
      }
      expect(expected).toBeGreaterThan(0)
      expect(expected).toBeLessThan(10)
      expect(sent).toHaveLength(expected)
      expect(outcome.report.cells).toMatchObject({ total: 10, ran: expected, skipped: 10 - expected })
      expect(outcome.report.scorecards[0]!.costUsd).toBeLessThanOrEqual(maxUsd)
      const skipped = yield* Effect.flatMap(Store.Store, (s) => s.skippedOfRun(outcome.report.runId)).pipe(Effect.provide(Store.layer(home)))
      expect(skipped.every((s) => s.reason.includes("spend cap"))).toBe(true)
      rmSync(home, { recursive: true, force: true })
    }))

  it.effect("the spend cap counts what judging cost: a judge at $0.30 a cell stops a gold run under a $1 cap after four cells", () =>
    Effect.gen(function*() {
      const home = tempHome()
      const judged: Provider = {
        ...ledger,
        capabilities: {
          ...ledger.capabilities,
          evaluator: {
            ...ledger.capabilities.evaluator,
            evaluate: (ctx) =>
              Effect.map(ledger.capabilities.evaluator.evaluate(ctx), (grade) => ({ ...grade, judging: { calls: 1, inputTokens: 100, outputTokens: 10, costUsd: 0.3 } }))
          }
        }
      }
      const environments = (yield* ledger.environments).slice(0, 6)
      const plan = yield* makePlan([{ provider: judged, environments, candidates: [roster(judged, "gold")] }], 1)
      const outcome = yield* run(plan, { ...settings, parallel: 1, maxUsd: 1 }).pipe(Effect.provide(Store.layer(home)))
      // The gold calls cost nothing; $0.90 after three cells, $1.20 after the fourth.
      expect(outcome.report.cells).toMatchObject({ total: 6, ran: 4, skipped: 2 })
      expect(outcome.report.scorecards[0]!.judging).toMatchObject({ calls: 4, costUsd: expect.closeTo(1.2, 12) })
    }))

  it.effect("a home is created on first use and its store reopens", () =>
    Effect.gen(function*() {
      const home = join(tempHome(), "nested", "home")
      const environments = (yield* ledger.environments).slice(0, 2)
      yield* runLanes(home, [{ provider: ledger, environments, candidates: [roster(ledger, "gold")] }])
      expect(existsSync(join(home, "assay.sqlite"))).toBe(true)
      const again = yield* runLanes(home, [{ provider: ledger, environments, candidates: [roster(ledger, "gold")] }])
      expect(again.report.cells.kept).toBe(2)
    }))

  it.effect("a home made before assay kept how Attempts ended still reads them: a cell whose last Attempt faulted runs again", () =>
    Effect.gen(function*() {
      const home = tempHome()
      const environments = yield* ledger.environments
      const lanes = [{ provider: ledger, environments: environments.slice(0, 3), candidates: [roster(ledger, "gold")] }]
      yield* runLanes(home, lanes)
      // Back to the first layout: no `ended` column, its migration not applied; one Attempt faulted.
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE attempts SET record = json_set(record, '$.verdict.ended', json('{"reason":"fault","detail":"server-error"}')) WHERE seq = 2`
        yield* sql`ALTER TABLE attempts DROP COLUMN ended`
        yield* sql`DROP TABLE spend`
        yield* sql`DELETE FROM effect_sql_migrations WHERE migration_id >= 2`
      }).pipe(Effect.provide(Sqlite.layer({ filename: join(home, "assay.sqlite") })), Effect.orDie, Effect.scoped)
      const again = yield* runLanes(home, lanes)
      expect(again.report.cells).toMatchObject({ total: 3, kept: 2, ran: 1 })
      expect(again.report.notes).toContain("1 cells whose last Attempt said nothing of the candidate (an outage, or the benchmark's own failure) ran again")
      expect(again.attempts.every((a) => a.verdict.reward === 1)).toBe(true)
      const third = yield* runLanes(home, lanes)
      expect(third.report.cells).toMatchObject({ total: 3, kept: 3, ran: 0 })
    }))

  it.effect("a protocol that presents other inputs than it declared makes the run incomplete, and its cells stay stale", () =>
    Effect.gen(function*() {
      const home = tempHome()
      const environments = (yield* ledger.environments).slice(0, 2)
      const extra = { name: "ledger_extra", description: "not declared", parameters: { type: "object", properties: {} } }
      const sneaky: Provider = {
        ...ledger,
        capabilities: {
          ...ledger.capabilities,
          protocol: { ...ledger.capabilities.protocol, run: (ctx) => ledger.capabilities.protocol.run({ ...ctx, inputs: { ...ctx.inputs, tools: [...ctx.inputs.tools, extra] } }) }
        }
      }
      const lanes = [{ provider: sneaky, environments, candidates: [roster(sneaky, "gold")] }]
      const first = yield* runLanes(home, lanes)
      expect(first.unpredicted).toHaveLength(2)
      expect(first.complete).toBe(false)
      expect(first.report.warnings).toContain("2 cells ran with inputs other than predicted: the result is incomplete")
      const again = yield* runLanes(home, lanes)
      expect(again.report.cells).toMatchObject({ total: 2, stale: 2, ran: 2 })
    }))
})
