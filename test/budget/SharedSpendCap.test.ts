/**
 * The wallet several workers share (`--max-usd` with `run --cluster`), on a real Postgres of this
 * file's own: reservations from several holders at once never pass the cap, and a holder that
 * dies (its heartbeat stops) has its reservations freed for the others once they are stale.
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

    it.scoped("a holder that dies has its reservations freed for the others once its heartbeat is stale, not before", () =>
      withDatabase("dead", (sql) =>
        Effect.gen(function*() {
          const a = yield* SpendCap.makeShared(sql, "run:2", 0.1, 0, { holder: "a", staleAfter })
          const b = yield* SpendCap.makeShared(sql, "run:2", 0.1, 0, { holder: "b", staleAfter })
          const aBeats = yield* Effect.forkScoped(SpendCap.heartbeat(sql, "a", beat))
          yield* Effect.forkScoped(SpendCap.heartbeat(sql, "b", beat))
          yield* a.reserve(0.08)
          // b's call fits only without a's hold: while a lives it waits, past the staleness window.
          const waiting = yield* Effect.fork(b.reserve(0.05))
          yield* Effect.sleep(Duration.sum(staleAfter, Duration.seconds(1)))
          expect(yield* Fiber.poll(waiting)).toMatchObject({ _tag: "None" })
          // a dies: no more heartbeats, its call never settles.
          yield* Fiber.interrupt(aBeats)
          const started = Date.now()
          yield* Fiber.join(waiting).pipe(Effect.timeout(Duration.sum(staleAfter, Duration.seconds(3))))
          expect(Date.now() - started).toBeGreaterThanOrEqual(Duration.toMillis(staleAfter) - 2 * Duration.toMillis(beat))
          const state = yield* b.state
          expect(state.reservedUsd).toBeCloseTo(0.05, 9)
        })
      ))
  })
})
