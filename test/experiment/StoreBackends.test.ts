/**
 * The store's behaviour on both backends: the home's SQLite file and a Postgres database (a real
 * server of this file's own, test/support/postgres.ts). The same runs, the same reads.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { provider as ledger } from "../../providers/ledger/index.ts"
import type { Provider } from "../../src/evaluation/Provider.ts"
import { type Candidate, type Lane, makePlan, run, silent } from "../../src/experiment/Runner.ts"
import * as Store from "../../src/experiment/Store.ts"
import * as Postgres from "../support/postgres.ts"
import { tempDir } from "../support/tempDirs.ts"

class Server extends Context.Tag("test/PgServer")<Server, Postgres.PgServer>() {}

const roster = (p: Provider, name: string, prompt = ""): Candidate => ({
  def: { ...p.rosterDef(name), prompt },
  registryEntry: null,
  agentFor: (env) => p.scripted(name, env)
})

const settings = { parallel: 4, maxUsd: null, handlers: {}, progress: silent, settings: {} }

const backends = ["sqlite", "postgres"] as const
type Backend = (typeof backends)[number]

/** A fresh, empty store location on a backend: a new home, or a new database on the server. */
const freshLocation = (backend: Backend, name: string) =>
  Effect.map(Server, (server): Store.Location => ({
    home: tempDir("assay-store-"),
    store: backend === "postgres" ? server.database(name) : null
  }))

const runLanes = (at: Store.Location, lanes: ReadonlyArray<Lane>) =>
  Effect.gen(function*() {
    const plan = yield* makePlan(lanes, 1)
    return yield* run(plan, settings)
  }).pipe(Effect.provide(Store.layerAt(at)))

const withStore = <A, E>(at: Store.Location, f: (store: Store.Store) => Effect.Effect<A, E>) =>
  Effect.flatMap(Store.Store, f).pipe(Effect.provide(Store.layerAt(at)))

layer(Layer.scoped(Server, Postgres.start), { timeout: 60_000 })("the store", (it) => {
  for (const backend of backends) {
    describe(backend, () => {
      it.effect("running the same experiment again runs no cell, keeps them all and reports the same scorecards", () =>
        Effect.gen(function*() {
          const at = yield* freshLocation(backend, "again")
          const environments = yield* ledger.environments
          const lanes = [{ provider: ledger, environments, candidates: [roster(ledger, "gold"), roster(ledger, "echo")] }]
          const first = yield* runLanes(at, lanes)
          expect(first.report.cells).toMatchObject({ total: 40, ran: 40, kept: 0, stale: 0 })
          const second = yield* runLanes(at, lanes)
          expect(second.report.cells).toMatchObject({ total: 40, ran: 0, kept: 40, stale: 0 })
          expect(second.report.scorecards).toEqual(first.report.scorecards.map((s) => ({ ...s, wallSeconds: expect.any(Number) })))
          const stored = yield* withStore(at, (s) => s.attemptsOfRun(first.report.runId))
          expect(stored).toHaveLength(40)
          // What was stored decodes to what the run made.
          const byCell = (xs: ReadonlyArray<{ environmentId: string; candidate: string }>) => xs.map((x) => `${x.environmentId}|${x.candidate}`).sort()
          expect(byCell(stored.map((s) => s.attempt))).toEqual(byCell(first.attempts))
          expect(stored.map((s) => s.attempt.verdict.reward).sort()).toEqual(first.attempts.map((a) => a.verdict.reward).sort())
        }))

      it.effect("changing one candidate's prompt makes exactly its cells stale; the old Attempts stay", () =>
        Effect.gen(function*() {
          const at = yield* freshLocation(backend, "stale")
          const environments = (yield* ledger.environments).slice(0, 5)
          const lanes = (echoPrompt: string) => [{ provider: ledger, environments, candidates: [roster(ledger, "gold"), roster(ledger, "echo", echoPrompt)] }]
          const first = yield* runLanes(at, lanes(""))
          const second = yield* runLanes(at, lanes("Answer briefly."))
          expect(second.report.cells).toMatchObject({ total: 10, ran: 5, kept: 5, stale: 5 })
          const ranNow = yield* withStore(at, (s) => s.attemptsOfRun(second.report.runId))
          expect(new Set(ranNow.map((a) => a.attempt.candidate))).toEqual(new Set(["echo"]))
          expect(yield* withStore(at, (s) => s.attemptsOfRun(first.report.runId))).toHaveLength(10)
          // The index holds each cell's newest Attempt: the echo cells point at the second run.
          const plan = yield* makePlan(lanes("Answer briefly."), 1)
          const latest = yield* withStore(at, (s) => s.latestCells(plan.cells.map((c) => c.key)))
          expect([...latest.values()].filter((c) => c.runId === second.report.runId)).toHaveLength(5)
          const full = yield* withStore(at, (s) => s.latestAttempts(plan.cells.map((c) => c.key)))
          expect([...full.values()].map((a) => a.attempt.candidate).sort()).toEqual([...Array(5).fill("echo"), ...Array(5).fill("gold")])
        }))

      it.effect("runs, notes, skipped cells, spend and derived figures read back as written", () =>
        Effect.gen(function*() {
          const at = yield* freshLocation(backend, "records")
          const environments = (yield* ledger.environments).slice(0, 1)
          const plan = yield* makePlan([{ provider: ledger, environments, candidates: [roster(ledger, "gold")] }], 1)
          const cell = plan.cells[0]!.key
          yield* withStore(at, (s) =>
            Effect.gen(function*() {
              expect(yield* s.latestRun).toBeNull()
              const id = yield* s.putExperiment(plan.experiment)
              expect(yield* s.putExperiment(plan.experiment)).toBe(id)
              expect(yield* s.getExperiment(id)).toEqual(plan.experiment)
              const a = yield* s.startRun(id, { parallel: 1 })
              const b = yield* s.startRun(id, { parallel: 2 })
              expect((yield* s.latestRun)?.id).toBe(b)
              yield* s.finishRun(a, { done: true })
              expect(yield* s.getRun(a)).toMatchObject({ id: a, experimentId: id, settings: { parallel: 1 }, summary: { done: true } })
              expect((yield* Effect.flip(s.getRun("r-0000000000000000"))).reason).toBe("unknown-run")
              for (const n of [3, 1, 2]) yield* s.putNote(a, "estimate", { n })
              expect(yield* s.notesOfRun(a, "estimate")).toEqual([{ n: 3 }, { n: 1 }, { n: 2 }])
              yield* s.putNote(b, "estimate", { n: 9 })
              expect(yield* s.latestNote(id, "estimate")).toEqual({ n: 9 })
              yield* s.putSkipped(a, cell, "spend cap: $1 of $1")
              expect(yield* s.skippedOfRun(a)).toEqual([{ ...cell, reason: "spend cap: $1 of $1" }])
              const row = { provider: "openai", model: "gpt-4o-mini", inputTokens: 1000, outputTokens: 1000, cacheReadTokens: 10, cacheWriteTokens: 0 }
              yield* s.putSpend(a, id, cell, { ...row, costUsd: 0.00075 })
              yield* s.putSpend(a, id, cell, { ...row, costUsd: 0.000123456789 })
              yield* s.putSpend(b, id, cell, { ...row, costUsd: null })
              // Doubles, not Postgres's 4-byte REAL: a dollar figure reads back to the last digit.
              expect(yield* s.spendOf({ runId: a })).toEqual({ calls: 2, knownUsd: 0.00075 + 0.000123456789, unknownCalls: 0, inputTokens: 2020, outputTokens: 2000 })
              expect(yield* s.spendOf({ experimentId: id })).toMatchObject({ calls: 3, unknownCalls: 1 })
              expect(yield* s.derived("k")).toBeNull()
              yield* s.putDerived("k", "one")
              yield* s.putDerived("k", "two")
              expect(yield* s.derived("k")).toBe("two")
            }))
        }))

      it.effect("a batch stores each Attempt and spend row as putAttempt and putSpend do, a cell given twice keeping the later", () =>
        Effect.gen(function*() {
          const environments = (yield* ledger.environments).slice(0, 3)
          const lanes = [{ provider: ledger, environments, candidates: [roster(ledger, "gold"), roster(ledger, "echo")] }]
          const made = yield* runLanes(yield* freshLocation(backend, "batch-source"), lanes)
          const attempts = made.attempts
          expect(attempts).toHaveLength(6)
          const plan = yield* makePlan(lanes, 1)
          const keys = plan.cells.map((c) => c.key)
          const keyOf = (a: (typeof attempts)[number]) => Store.cellKeyOf({ environmentId: a.environmentId, candidate: a.candidate, repetition: a.repetition })
          const row = { provider: "openai", model: "gpt-4o-mini", inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 }
          // One at a time into one store, as one batch into another: the same ids and index.
          const single = yield* freshLocation(backend, "batch-single")
          const batched = yield* freshLocation(backend, "batch-many")
          const one = yield* withStore(single, (s) =>
            Effect.gen(function*() {
              const run = yield* s.startRun(plan.experimentId, {})
              for (const k of keys) yield* s.putSpend(run, plan.experimentId, k, { ...row, costUsd: 0.001 })
              const ids: Array<string> = []
              for (const a of attempts) ids.push(yield* s.putAttempt(run, a))
              return { ids, latest: yield* s.latestCells(keys), spend: yield* s.spendOf({ runId: run }) }
            }))
          const many = yield* withStore(batched, (s) =>
            Effect.gen(function*() {
              const runId = yield* s.startRun(plan.experimentId, {})
              const ids = yield* s.putBatch({
                spend: keys.map((cell) => ({ runId, experimentId: plan.experimentId, cell, spend: { ...row, costUsd: 0.001 } })),
                attempts: attempts.map((attempt) => ({ runId, attempt }))
              })
              return { ids, latest: yield* s.latestCells(keys), spend: yield* s.spendOf({ runId }), runId }
            }))
          expect(many.ids).toEqual(one.ids)
          expect(many.spend).toEqual(one.spend)
          expect(many.spend.calls).toBe(6)
          const view = (m: ReadonlyMap<string, Store.StoredCell>) => [...m].map(([k, c]) => [k, c.id, c.inputsId, c.summary]).sort()
          expect(view(many.latest)).toEqual(view(one.latest))
          expect(new Set([...many.latest.values()].map((c) => c.id))).toEqual(new Set(many.ids))
          // A batch naming one cell twice: both stored, the later one is the cell's newest.
          const again = { ...attempts[0]!, startedAt: "2030-01-01T00:00:00.000Z" }
          const twice = yield* withStore(batched, (s) =>
            Effect.gen(function*() {
              const ids = yield* s.putBatch({ spend: [], attempts: [{ runId: many.runId, attempt: attempts[0]! }, { runId: many.runId, attempt: again }] })
              return { ids, latest: yield* s.latestCells([keys.find((k) => Store.cellKeyOf(k) === keyOf(again))!]), stored: yield* s.attemptsOfRun(many.runId) }
            }))
          expect(twice.ids[0]).toBe(many.ids[0])
          expect(twice.ids[1]).not.toBe(twice.ids[0])
          expect([...twice.latest.values()][0]!.id).toBe(twice.ids[1])
          expect(twice.stored).toHaveLength(8)
        }))
    })
  }

  it.effect("SQLite and Postgres report the same experiment alike", () =>
    Effect.gen(function*() {
      const environments = yield* ledger.environments
      const lanes = [{ provider: ledger, environments, candidates: [roster(ledger, "gold"), roster(ledger, "echo")] }]
      const onSqlite = yield* runLanes(yield* freshLocation("sqlite", "alike"), lanes)
      const onPostgres = yield* runLanes(yield* freshLocation("postgres", "alike"), lanes)
      expect(onPostgres.report.experimentId).toBe(onSqlite.report.experimentId)
      expect(onPostgres.report.scorecards).toEqual(onSqlite.report.scorecards.map((s) => ({ ...s, wallSeconds: expect.any(Number) })))
      expect(onPostgres.cells).toEqual(onSqlite.cells)
    }))

  it.effect("workers opening a fresh Postgres store at once migrate it once", () =>
    Effect.gen(function*() {
      const at = yield* freshLocation("postgres", "race")
      const opened = yield* Effect.all(
        Array.from({ length: 4 }, () => withStore(at, (s) => s.latestRun)),
        { concurrency: "unbounded" }
      )
      expect(opened).toEqual([null, null, null, null])
    }))

  it.effect("a Postgres store that cannot be reached fails with a line naming it, its password hidden", () =>
    Effect.gen(function*() {
      const server = yield* Server
      const error = yield* Effect.flip(withStore({ home: tempDir("assay-store-"), store: `postgres://assay:sekrit@127.0.0.1:${server.port}/no_such_db` }, (s) => s.latestRun))
      expect(error.reason).toBe("open")
      expect(error.message).toContain("127.0.0.1")
      expect(error.message).not.toContain("sekrit")
    }))
})
