/**
 * The worker's watch over its database, on the test clock: one line per change of state, probes
 * spaced by a capped exponential backoff, and a typed failure once the outage passes its limit.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Logger, TestClock } from "effect"
import * as Outage from "../../src/cluster/Outage.ts"

/** A database that is down between `from` and `to` (seconds on the test clock), counting probes. */
const database = (from: number, to: number) => {
  const probes: Array<number> = []
  const probe = Effect.flatMap(TestClock.currentTimeMillis, (now) => {
    probes.push(now / 1000)
    return now / 1000 >= from && now / 1000 < to ? Effect.fail(new Error("connect ECONNREFUSED 127.0.0.1:5432")) : Effect.void
  })
  return { probe, probes }
}

describe("the worker's database watch", () => {
  it.effect("a ten-minute outage: lost, retrying and back, once each; probes back off to one every 15 s", () =>
    Effect.gen(function*() {
      const db = database(10, 610)
      const lines: Array<string> = []
      const watch = Outage.make(db.probe, { maxOutage: null, say: (line) => Effect.sync(() => lines.push(line)) })
      const fiber = yield* Effect.fork(watch.run)
      yield* TestClock.adjust(Duration.seconds(11))
      expect(watch.down()).toBe(true)
      yield* TestClock.adjust(Duration.seconds(700))
      expect(watch.down()).toBe(false)
      yield* Fiber.interrupt(fiber)
      expect(lines).toHaveLength(3)
      expect(lines[0]).toContain("lost its database (connect ECONNREFUSED 127.0.0.1:5432)")
      expect(lines[1]).toContain("retrying")
      expect(lines[2]).toMatch(/back after 60\d\.\d s/)
      const during = db.probes.filter((t) => t >= 10 && t < 610)
      // 0.5, 1, 2, 4, 8 s, then every 15 s: about 45 probes in 600 s, not one per failure of every part.
      expect(during.length).toBeLessThanOrEqual(50)
      const gaps = during.slice(1).map((t, i) => t - during[i]!)
      expect(Math.max(...gaps)).toBeLessThanOrEqual(15)
      expect(gaps.slice(0, 5)).toEqual([0.5, 1, 2, 4, 8])
    }))

  it.effect("an outage longer than its limit fails with reason database-gone, naming the limit", () =>
    Effect.gen(function*() {
      const db = database(0, Infinity)
      const watch = Outage.make(db.probe, { maxOutage: Duration.seconds(60), say: () => Effect.void })
      const fiber = yield* Effect.fork(Effect.flip(watch.run))
      yield* TestClock.adjust(Duration.seconds(120))
      const error = yield* Fiber.join(fiber)
      expect(error.reason).toBe("database-gone")
      expect(error.message).toContain("more than 60 s")
    }))

  it.effect("the quiet logger: warnings as one line with no stack, a repeat within a minute dropped, nothing while the database is gone", () =>
    Effect.gen(function*() {
      const written: Array<string> = []
      let down = false
      const logger = Outage.quietLogger({ down: () => down }, (line) => written.push(line))
      const log = (effect: Effect.Effect<void>) => Effect.provide(effect, Logger.replace(Logger.defaultLogger, logger))
      yield* log(Effect.logWarning("could not publish", new Error("connect ECONNREFUSED\n    at Socket.connect (net.js:1:1)")))
      yield* log(Effect.logWarning("could not publish", new Error("connect ECONNREFUSED\n    at Socket.connect (net.js:1:1)")))
      yield* log(Effect.logInfo("Listening on: 0.0.0.0:1234"))
      down = true
      yield* log(Effect.logError("shard lock lost"))
      expect(written).toEqual(["assay: worker warn: could not publish: connect ECONNREFUSED\n"])
    }))
})
