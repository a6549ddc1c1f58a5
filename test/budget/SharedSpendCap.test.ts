/**
 * The wallet several workers share (`--max-usd` with `run --cluster`), on a real Postgres of this
 * file's own: reservations from several holders at once never pass the cap, and a holder that
 * dies (its heartbeat stops) has its reservations counted as spent at their worst case once they
 * are stale (its calls in flight may have been billed), the rest of the cap left to the others;
 * the report says so beside the ledger, and a later run of the experiment starts its cap from both.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Duration, Effect, Fiber, Layer } from "effect"
import { provider as ledger } from "../../providers/ledger/index.ts"
import * as SpendCap from "../../src/budget/SpendCap.ts"
import type { Json } from "../../src/content/Canonical.ts"
import { renderText } from "../../src/experiment/Report.ts"
import { type Candidate, makePlan, type Plan, run, silent, spentSoFar } from "../../src/experiment/Runner.ts"
import * as Store from "../../src/experiment/Store.ts"
import * as Model from "../../src/model/Model.ts"
import { modelAgent } from "../../src/model/ModelAgent.ts"
import * as Registry from "../../src/model/Registry.ts"
import { noLimits } from "../../src/schema/EnvironmentDef.ts"
import { assay, tempDir } from "../cli/support.ts"
import * as Postgres from "../support/postgres.ts"

class Server extends Context.Tag("test/PgServer")<Server, Postgres.PgServer>() {}

/** The SqlClient of a new, empty database on the test's server. */
const withDatabase = <A, E, R>(name: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(Server, (server) => Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.provide(Store.postgresClient(server.database(name)))))

const staleAfter = Duration.seconds(2)
const beat = Duration.millis(300)

/** gpt-4o-mini on the first three ledger tasks; every call answers "done" (1,000 + 1,000 tokens). */
const threeModelCells = Effect.gen(function*() {
  const model = yield* Registry.resolve("openai:gpt-4o-mini").pipe(Effect.provide(Registry.layer))
  const candidate: Candidate = {
    def: { name: "openai:gpt-4o-mini", kind: "llm", model: model.ref, actionSpace: "tools", prompt: "", limits: noLimits },
    registryEntry: model as unknown as Json,
    agentFor: () => Effect.succeed(modelAgent("openai:gpt-4o-mini", model))
  }
  const environments = (yield* ledger.environments).slice(0, 3)
  const plan = yield* makePlan([{ provider: ledger, environments, candidates: [candidate] }], 1)
  return { model, plan }
})

const scriptedModel = () => Model.scripted(() => ({ text: "done", usage: { inputTokens: 1000, outputTokens: 1000 } }))

/** The plan run here (no cluster) on a store, with prices known and a scripted model: what it sent and its report. */
const runHere = (plan: Plan, maxUsd: number | null, store: Layer.Layer<Store.Store, Store.StoreError>) =>
  Effect.gen(function*() {
    const model = scriptedModel()
    const outcome = yield* run(plan, { parallel: 1, maxUsd, handlers: {}, progress: silent, settings: { maxUsd } }).pipe(
      Effect.provide(store),
      Effect.provideService(Model.Model, model),
      Effect.provide(Registry.layer)
    )
    return { sent: model.requests(), report: outcome.report }
  })

layer(Layer.scoped(Server, Postgres.start), { timeout: 60_000, excludeTestServices: true })("the shared wallet", (it) => {
  describe("--max-usd across workers", () => {
    it.scoped("three holders reserving at once take exactly the cap, no more; settling moves a hold to spend", () =>
      withDatabase("together", (sql) =>
        Effect.gen(function*() {
          const holders = ["a", "b", "c"]
          yield* Effect.forEach(holders, (h) => Effect.forkScoped(SpendCap.heartbeat(sql, h, beat)))
          // No hold here may go stale: a heartbeat late on a loaded machine would free the first call's hold.
          const caps = yield* Effect.forEach(holders, (holder) => SpendCap.makeShared(sql, "run:1", 0.1, 0, { holder, staleAfter: Duration.seconds(120) }))
          // Until a call has settled, one is in flight across the workers: the others wait for it.
          yield* caps[0]!.reserve(0.01)
          const second = yield* caps[1]!.reserve(0.01).pipe(Effect.timeout("700 millis"), Effect.option)
          expect(second._tag).toBe("None")
          yield* caps[0]!.settle(0.01, 0)
          // 30 calls of $0.01 against a $0.10 cap: 10 fit; the rest wait for calls in flight to settle.
          const taken = yield* Effect.forEach(
            caps.flatMap((cap) => Array.from({ length: 10 }, () => cap)),
            // Long enough for a reservation that fits to be answered by a busy Postgres; the rest wait it out.
            (cap) => cap.reserve(0.01).pipe(Effect.timeout("5 seconds"), Effect.option),
            { concurrency: "unbounded" }
          )
          expect(taken.filter((t) => t._tag === "Some")).toHaveLength(10)
          const full = yield* caps[0]!.state
          expect(full.reservedUsd).toBeCloseTo(0.1, 9)
          expect(full.spentUsd).toBe(0)
          // One call settles at $0.004: its $0.01 hold goes, $0.004 is spent.
          const settler = caps[Math.floor(taken.findIndex((t) => t._tag === "Some") / 10)]!
          yield* settler.settle(0.01, 0.004)
          const after = yield* caps[1]!.state
          expect(after.spentUsd).toBeCloseTo(0.004, 9)
          expect(after.reservedUsd).toBeCloseTo(0.09, 9)
          // A call that could never fit is refused at once, not left waiting.
          const refused = yield* Effect.flip(caps[2]!.reserve(0.2))
          expect(refused._tag).toBe("SpendCapReached")
        })
      ))

    it.scoped("a call that cost 2.5 times its reservation on one worker: charged in full, and every worker's later holds are 2.5 times their worst case", () =>
      withDatabase("overshoot", (sql) =>
        Effect.gen(function*() {
          yield* Effect.forkScoped(SpendCap.heartbeat(sql, "a", beat))
          yield* Effect.forkScoped(SpendCap.heartbeat(sql, "b", beat))
          const a = yield* SpendCap.makeShared(sql, "run:9", 0.1, 0, { holder: "a", staleAfter: Duration.seconds(120) })
          const b = yield* SpendCap.makeShared(sql, "run:9", 0.1, 0, { holder: "b", staleAfter: Duration.seconds(120) })
          // The first call goes alone; it overshoots.
          yield* a.reserve(0.01)
          yield* a.settle(0.01, 0.025, { provider: "p", model: "m" })
          expect((yield* a.state).spentUsd).toBeCloseTo(0.025, 9)
          // $0.075 left: three holds of 2.5 x $0.01, where seven would have fitted at face value.
          const taken = yield* Effect.forEach(
            Array.from({ length: 7 }),
            // A hold that fits is answered at once, but a busy Postgres may take seconds; the rest wait it out.
            () => b.reserve(0.01).pipe(Effect.timeout("5 seconds"), Effect.option),
            { concurrency: "unbounded" }
          )
          expect(taken.filter((t) => t._tag === "Some")).toHaveLength(3)
          const full = yield* b.state
          expect(full.reservedUsd).toBeCloseTo(0.075, 9)
          expect(full.overshootFactor).toBeCloseTo(2.5, 9)
          // Settling releases what the hold took, not its face value.
          yield* b.settle(0.01, 0.01)
          const after = yield* b.state
          expect(after.reservedUsd).toBeCloseTo(0.05, 9)
          expect(after.spentUsd).toBeCloseTo(0.035, 9)
        })
      ))

    it.scoped("a holder that dies has its reservations counted as spent at their worst case once its heartbeat is stale, not before; the rest of the cap stays usable", () =>
      withDatabase("dead", (sql) =>
        Effect.gen(function*() {
          const a = yield* SpendCap.makeShared(sql, "run:2", 0.1, 0, { holder: "a", staleAfter })
          const b = yield* SpendCap.makeShared(sql, "run:2", 0.1, 0, { holder: "b", staleAfter })
          const aBeats = yield* Effect.forkScoped(SpendCap.heartbeat(sql, "a", beat))
          yield* Effect.forkScoped(SpendCap.heartbeat(sql, "b", beat))
          yield* a.reserve(0.08)
          // $0.05 fits the cap only if a's call costs less than its worst case: while a lives, b waits.
          const waiting = yield* Effect.fork(b.reserve(0.05))
          yield* Effect.sleep(Duration.sum(staleAfter, Duration.seconds(1)))
          expect(yield* Fiber.poll(waiting)).toMatchObject({ _tag: "None" })
          // a dies: no more heartbeats, its call never settles (it may have been answered and billed).
          yield* Fiber.interrupt(aBeats)
          const started = Date.now()
          // Refused about staleAfter after a's last beat; the bound is wide because on a loaded
          // machine (CI, many test files at once) b's polls came late and 5 s was not enough.
          const refused = yield* Fiber.join(waiting).pipe(Effect.flip, Effect.timeout(Duration.sum(staleAfter, Duration.seconds(20))))
          expect(Date.now() - started).toBeGreaterThanOrEqual(Duration.toMillis(staleAfter) - 2 * Duration.toMillis(beat))
          // a's $0.08 now counts as spent, so $0.05 can never fit: refused, not freed to run.
          expect(refused._tag).toBe("SpendCapReached")
          const state = yield* b.state
          expect(state.spentUsd).toBeCloseTo(0.08, 9)
          expect(state.unsettledUsd).toBeCloseTo(0.08, 9)
          expect(state.reservedUsd).toBe(0)
          // What is left of the cap is still b's to use.
          yield* b.reserve(0.02)
          expect((yield* b.state).reservedUsd).toBeCloseTo(0.02, 9)
        })
      ))
  })

  describe("a dead worker's unsettled worst case, after the run", () => {
    it.scoped("the run's summary and `assay report` say it beside the ledger; a resumed run's cap starts from ledger + unsettled and refuses a call that fits only without it", () =>
      Effect.gen(function*() {
        const { model, plan } = yield* threeModelCells
        // A call's worst case here, from what the run sends with no cap (a home of its own).
        const pilot = yield* runHere(plan, null, Store.layer(tempDir("assay-pilot-")))
        expect(pilot.sent.length).toBeGreaterThan(0)
        const worst = Math.max(...pilot.sent.map((r) => SpendCap.worstCaseUsd(r, model.model)!))
        // One call fits the cap, but not once a dead worker's call of that worst case counts.
        const capUsd = 1.5 * worst
        const control = yield* runHere(plan, capUsd, Store.layer(tempDir("assay-control-")))
        expect(control.sent.length).toBeGreaterThan(0)

        const server = yield* Server
        const url = server.database("unsettled")
        const home = tempDir("assay-unsettled-")
        const store = Store.layerPostgres(url, home)
        // A cluster run whose only worker reserved one call's worst case and died with it in
        // flight (never settled, no heartbeat): its cells never came back.
        const first = yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          let died = false
          return yield* run(plan, {
            parallel: 1,
            maxUsd: capUsd,
            handlers: {},
            progress: silent,
            settings: { maxUsd: capUsd },
            dispatch: (_cell, { runId }) =>
              Effect.gen(function*() {
                if (!died) {
                  died = true
                  const wallet = yield* SpendCap.makeShared(sql, SpendCap.walletIdOfRun(runId), capUsd, 0, { holder: "worker-that-died" })
                  yield* Effect.orDie(wallet.reserve(worst))
                }
                return null
              })
          }).pipe(Effect.provide(store))
        }).pipe(Effect.provide(Store.postgresClient(url)))
        const line = `$0.0000 this run (0 calls) recorded in the ledger, plus up to $${worst.toFixed(4)} unsettled (calls in flight when a run or worker was killed)`
        expect(first.report.spend).toMatchObject({ runUsd: 0, experimentUsd: 0 })
        expect(first.report.spend?.unsettledUsd).toBeCloseTo(worst, 12)
        expect(renderText(first.report)).toContain(line)
        // `assay report`, a later process, reads the same from the store.
        const json = yield* Effect.promise(() => assay(["report", first.report.runId, "--store", url, "--home", home, "--json"]))
        expect(json.code).toBe(0)
        const reported = JSON.parse(json.stdout) as { spend: { unsettledUsd: number; experimentUnsettledUsd: number } }
        expect(reported.spend.unsettledUsd).toBeCloseTo(worst, 12)
        expect(reported.spend.experimentUnsettledUsd).toBeCloseTo(worst, 12)
        const text = yield* Effect.promise(() => assay(["report", first.report.runId, "--store", url, "--home", home]))
        expect(text.stdout).toContain(line)

        // The same experiment run again under the same cap: it starts from $0 in the ledger plus
        // the dead worker's worst case, so the call the control run sent is not sent.
        const resumed = yield* runHere(plan, capUsd, store)
        expect(resumed.sent).toHaveLength(0)
        expect(resumed.report.cells).toMatchObject({ total: plan.cells.length, ran: 0, skipped: plan.cells.length })
        expect(resumed.report.skipped?.every((s) => s.reason.includes("spend cap"))).toBe(true)
        expect(resumed.report.spend?.unsettledUsd).toBe(0)
        expect(resumed.report.spend?.experimentUnsettledUsd).toBeCloseTo(worst, 12)
        expect(renderText(resumed.report)).toContain(`$0.0000 for the experiment, plus up to $${worst.toFixed(4)} unsettled`)
      }))

    it.scoped("a run stopped before it finished: a later run counts its dead worker's stale hold, not a live worker's call in flight; once it has finished every hold left counts", () =>
      Effect.gen(function*() {
        const url = (yield* Server).database("stopped")
        const experimentId = "sha256:stopped"
        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const store = yield* Store.Store
          const runId = yield* store.startRun(experimentId, {})
          const walletId = SpendCap.walletIdOfRun(runId)
          yield* Effect.orDie((yield* SpendCap.makeShared(sql, walletId, 1, 0, { holder: "dead" })).reserve(0.03))
          yield* Effect.orDie((yield* SpendCap.makeShared(sql, walletId, 1, 0, { holder: "alive" })).reserve(0.02))
          // The dead worker's last heartbeat, a minute ago (well past the 15 s a hold may go unstamped).
          yield* sql`UPDATE wallet_holds SET heartbeat_at = clock_timestamp() - interval '1 minute' WHERE holder = 'dead'`
          expect(yield* spentSoFar(experimentId)).toBeCloseTo(0.03, 12)
          yield* store.finishRun(runId, {})
          expect(yield* spentSoFar(experimentId)).toBeCloseTo(0.05, 12)
          expect(Array.from(yield* store.unsettledOf(experimentId))).toEqual([[runId, expect.closeTo(0.05, 12)]])
        }).pipe(Effect.provide(Layer.merge(Store.layerPostgres(url, tempDir("assay-stopped-")), Store.postgresClient(url))))
      }))

    it.scoped("a run on one machine has none: the report says nothing of it and its JSON carries 0", () =>
      Effect.gen(function*() {
        const { plan } = yield* threeModelCells
        const local = yield* runHere(plan, 1, Store.layer(tempDir("assay-local-")))
        expect(local.report.spend).toMatchObject({ unsettledUsd: 0, experimentUnsettledUsd: 0 })
        expect(renderText(local.report)).not.toContain("unsettled")
      }))
  })
})
