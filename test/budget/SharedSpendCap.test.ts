/**
 * The wallet several workers share (`--max-usd` with `run --cluster`), on a real Postgres of this
 * file's own: reservations from several holders at once never pass the cap, and a holder that
 * dies (its heartbeat stops) has its reservations counted as spent at their worst case once they
 * are stale (its calls in flight may have been billed), the rest of the cap left to the others.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Duration, Effect, Fiber, Layer } from "effect"
import * as SpendCap from "../../src/budget/SpendCap.ts"
import * as Store from "../../src/experiment/Store.ts"
import * as Postgres from "../support/postgres.ts"

class Server extends Context.Tag("test/PgServer")<Server, Postgres.PgServer>() {}

/** The SqlClient of a new, empty database on the test's server. */
const withDatabase = <A, E, R>(name: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(Server, (server) => Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.provide(Store.postgresClient(server.database(name)))))

const staleAfter = Duration.seconds(2)
const beat = Duration.millis(300)

layer(Layer.scoped(Server, Postgres.start), { timeout: 60_000, excludeTestServices: true })("the shared wallet", (it) => {
  describe("--max-usd across workers", () => {
    it.scoped("three holders reserving at once take exactly the cap, no more; settling moves a hold to spend", () =>
      withDatabase("together", (sql) =>
        Effect.gen(function*() {
          const holders = ["a", "b", "c"]
          yield* Effect.forEach(holders, (h) => Effect.forkScoped(SpendCap.heartbeat(sql, h, beat)))
          const caps = yield* Effect.forEach(holders, (holder) => SpendCap.makeShared(sql, "run:1", 0.1, 0, { holder, staleAfter }))
          // 30 calls of $0.01 against a $0.10 cap: 10 fit; the rest wait for calls in flight to settle.
          const taken = yield* Effect.forEach(
            caps.flatMap((cap) => Array.from({ length: 10 }, () => cap)),
            (cap) => cap.reserve(0.01).pipe(Effect.timeout("1500 millis"), Effect.option),
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
          const refused = yield* Fiber.join(waiting).pipe(Effect.flip, Effect.timeout(Duration.sum(staleAfter, Duration.seconds(3))))
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
})
