/**
 * Running a finished experiment again is instant and changes nothing: the runner decides what to
 * keep and reports from the store's per-cell index and the figures it stored for the same set of
 * Attempts, never from the Attempt records, and what it reports equals what the full Attempts give.
 */
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import * as Sqlite from "../../src/experiment/Sqlite.ts"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { provider as ledger } from "../../providers/ledger/index.ts"
import type { Provider } from "../../src/evaluation/Provider.ts"
import type { Report } from "../../src/experiment/Report.ts"
import { type Candidate, type Lane, makePlan, run, silent } from "../../src/experiment/Runner.ts"
import { cellResults, comparisons, faultSummary, scorecards } from "../../src/experiment/Scorecards.ts"
import * as Store from "../../src/experiment/Store.ts"
import { type EnvironmentDef, withEffects } from "../../src/schema/EnvironmentDef.ts"
import { tempDir } from "../support/tempDirs.ts"

const roster = (p: Provider, name: string, prompt = ""): Candidate => ({
  def: { ...p.rosterDef(name), prompt },
  registryEntry: null,
  agentFor: (env) => p.scripted(name, env)
})

const environments = Effect.runSync(ledger.environments)
const faulty = (env: EnvironmentDef) =>
  withEffects(env, { admission: "all", faults: { seed: 11, rate: 0.3, only: null, kinds: ["rate-limit", "server-error", "timeout"] } })

const lanesOf = (envs: ReadonlyArray<EnvironmentDef>, echoPrompt = ""): ReadonlyArray<Lane> => [
  { provider: ledger, environments: envs, candidates: [roster(ledger, "gold"), roster(ledger, "echo", echoPrompt)] }
]

const runIn = (home: string, lanes: ReadonlyArray<Lane>, reps: number) =>
  Effect.gen(function*() {
    const plan = yield* makePlan(lanes, reps)
    return yield* run(plan, { parallel: 4, maxUsd: null, handlers: {}, progress: silent, settings: {} })
  }).pipe(Effect.provide(Store.layer(home)))

/** The report's figures computed afresh from the current Attempts, decoded in full from the store. */
const fromFullAttempts = (home: string, lanes: ReadonlyArray<Lane>, reps: number) =>
  Effect.gen(function*() {
    const plan = yield* makePlan(lanes, reps)
    const store = yield* Store.Store
    const stored = yield* store.latestAttempts(plan.cells.map((c) => c.key))
    const attempts = plan.cells.flatMap((c) => {
      const s = stored.get(Store.cellKeyOf(c.key))
      return s === undefined ? [] : [s.attempt]
    })
    const spec = plan.cells.find((c) => c.env.world.effects.faults !== null)?.env.world.effects.faults ?? null
    return {
      scorecards: scorecards(attempts),
      comparisons: comparisons(attempts),
      faults: faultSummary(attempts, spec),
      cellResults: cellResults(attempts)
    }
  }).pipe(Effect.provide(Store.layer(home)))

const figuresOf = (report: Report) => ({
  scorecards: report.scorecards,
  comparisons: report.comparisons,
  faults: report.faults,
  cellResults: report.cellResults
})

/** Runs SQL against a home's store file directly, as another program (or an older assay) would. */
const onStoreFile = (home: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, f).pipe(
    Effect.provide(Sqlite.layer({ filename: join(home, "assay.sqlite") })),
    Effect.orDie,
    Effect.scoped
  )

describe("running a finished experiment again", () => {
  it.effect("keeps every cell and reports what the full Attempts give: scorecards, comparisons, faults and cells", () =>
    Effect.gen(function*() {
      const home = tempDir()
      const lanes = lanesOf([...environments.slice(0, 4), ...environments.slice(4, 8).map(faulty)])
      const first = yield* runIn(home, lanes, 3)
      expect(first.report.cells).toMatchObject({ total: 48, ran: 48, kept: 0 })
      expect(first.report.faults?.candidates.some((c) => c.injected > 0)).toBe(true)
      const expected = yield* fromFullAttempts(home, lanes, 3)
      expect(figuresOf(first.report)).toEqual(expected)
      // Twice: the first run again stores nothing new, the second reads the figures it stored.
      for (let i = 0; i < 2; i++) {
        const again = yield* runIn(home, lanes, 3)
        expect(again.report.cells).toMatchObject({ total: 48, ran: 0, kept: 48, stale: 0 })
        expect(figuresOf(again.report)).toEqual(expected)
        expect(again.attempts).toHaveLength(0)
        expect(again.cells).toHaveLength(48)
      }
    }))

  it.effect("decodes no Attempt record: it runs and reports the same with every record unreadable", () =>
    Effect.gen(function*() {
      const home = tempDir()
      const lanes = lanesOf(environments.slice(0, 5))
      const first = yield* runIn(home, lanes, 2)
      yield* onStoreFile(home, (sql) => sql`UPDATE attempts SET record = 'not an Attempt'`)
      const again = yield* runIn(home, lanes, 2)
      expect(again.report.cells).toMatchObject({ total: 20, ran: 0, kept: 20 })
      expect(figuresOf(again.report)).toEqual(figuresOf(first.report))
    }))

  it.effect("a cell that runs again makes new figures, equal to those of the full Attempts; the old ones are not read", () =>
    Effect.gen(function*() {
      const home = tempDir()
      const envs = environments.slice(0, 6)
      yield* runIn(home, lanesOf(envs), 2)
      // A figure stored under the old set would now be wrong: a changed prompt makes echo's cells stale.
      const changed = lanesOf(envs, "Answer briefly.")
      const second = yield* runIn(home, changed, 2)
      expect(second.report.cells).toMatchObject({ total: 24, ran: 12, kept: 12, stale: 12 })
      expect(figuresOf(second.report)).toEqual(yield* fromFullAttempts(home, changed, 2))
      const third = yield* runIn(home, changed, 2)
      expect(third.report.cells).toMatchObject({ ran: 0, kept: 24 })
      expect(figuresOf(third.report)).toEqual(figuresOf(second.report))
    }))

  it.effect("the figures of an unchanged set of Attempts come from the store: they are not computed again", () =>
    Effect.gen(function*() {
      const home = tempDir()
      const lanes = lanesOf(environments.slice(0, 3))
      yield* runIn(home, lanes, 2)
      // Marked by hand: had the scorecards been computed again, the mark would be gone.
      yield* onStoreFile(home, (sql) => sql`UPDATE derived SET value = json_set(value, '$.scorecards[0].wallSeconds', 1234.5)`)
      const again = yield* runIn(home, lanes, 2)
      expect(again.report.scorecards[0]?.wallSeconds).toBe(1234.5)
      // Unreadable figures are computed again, not trusted.
      yield* onStoreFile(home, (sql) => sql`UPDATE derived SET value = '{"scorecards": 3}'`)
      const recomputed = yield* runIn(home, lanes, 2)
      expect(figuresOf(recomputed.report)).toEqual(yield* fromFullAttempts(home, lanes, 2))
    }))

  it.effect("a home whose index is missing or behind (an older assay wrote to it) is indexed from its records", () =>
    Effect.gen(function*() {
      const home = tempDir()
      const lanes = lanesOf(environments.slice(0, 4))
      const first = yield* runIn(home, lanes, 2)
      // Behind: the newest Attempts were written without their index rows.
      yield* onStoreFile(home, (sql) => sql`DELETE FROM cells WHERE seq > (SELECT MAX(seq) - 5 FROM attempts)`)
      const behind = yield* runIn(home, lanes, 2)
      expect(behind.report.cells).toMatchObject({ total: 16, ran: 0, kept: 16 })
      expect(figuresOf(behind.report)).toEqual(figuresOf(first.report))
      // Missing: a store from before the index, its migration not applied.
      yield* onStoreFile(home, (sql) =>
        Effect.all([sql`DROP TABLE cells`, sql`DROP TABLE derived`, sql`DROP INDEX spend_run`, sql`DELETE FROM effect_sql_migrations WHERE migration_id >= 4`]))
      const rebuilt = yield* runIn(home, lanes, 2)
      expect(rebuilt.report.cells).toMatchObject({ total: 16, ran: 0, kept: 16 })
      expect(figuresOf(rebuilt.report)).toEqual(figuresOf(first.report))
    }))
})
