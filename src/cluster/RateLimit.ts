/**
 * `--rate PROVIDER=N/s` across a cluster's workers: @effect/experimental's RateLimiter over a
 * store kept in the cluster's Postgres (the library ships memory and Redis stores).
 *
 * What a user relies on is what the provider sees: at most N requests in every sliding 1 s
 * window of arrival times, whichever worker sent them. Fixed windows cannot promise that (the end
 * of one window and the start of the next reach the server together: 35 in 1 s at 20/s). So each
 * provider's calls are evenly spaced reservations (GCRA): a token bucket holding one token,
 * refilled continuously every `spacing`, with overflow, kept in one Postgres row updated in one
 * statement on the database's clock (the RateLimiterStore below). Each call takes the next slot,
 * max(now, previous slot + spacing), and sleeps until it (`pace`, ours: the library's limiter
 * sleeps too, but cannot tell a call that woke far too late to keep its slot).
 *
 * Why the spacing has headroom: a call reaches the server some time after its slot (the wait's
 * wake-up, the worker's event loop, the HTTP request), never before it. With slots `d` apart and
 * that lateness varying by at most J between calls, N + 1 arrivals within 1 s need N slots within
 * 1 s + J, so the bound holds when N·d ≥ 1 s + J. The spacing is (1 s + 150 ms) / N, costing 13%
 * of the rate: a call sent at most 75 ms past its slot (`wakeTolerance`, checked as it wakes)
 * leaves 75 ms for the way from the check to the server. A process's first call for a provider
 * takes longer on that way (its code runs for the first time, a connection opens: 50-90 ms seen
 * with three processes starting together, where later calls took 1-3 ms), so it reserves the slot
 * after its own too and leaves it empty: one spacing more for it, once per process.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import type * as SqlClient from "@effect/sql/SqlClient"
import { Duration, Effect, Layer, Schedule } from "effect"
import type { Model } from "../model/Model.ts"

export { parseRate } from "./rateSpec.ts"

/** How much later than its slot a call may reach the server and the per-second bound still hold. */
export const jitterHeadroom = Duration.millis(150)

/** The time between two calls' slots at `perSecond`, headroom included. */
export const spacingOf = (perSecond: number): Duration.Duration => Duration.millis((1000 + Duration.toMillis(jitterHeadroom)) / perSecond)

const storeError = (cause: unknown) => new RateLimiter.RateLimitStoreError({ message: "the rate limit's counter cannot be read", cause })

const now = "extract(epoch FROM clock_timestamp()) * 1000"

/**
 * The store's two tables. A worker makes them as it starts, under the cluster schema's lock
 * (concurrent CREATE TABLE races on Postgres's catalog); a driver without a cluster makes them here.
 */
export const makeTables = (sql: SqlClient.SqlClient) =>
  sql`CREATE TABLE IF NOT EXISTS rate_windows (key TEXT PRIMARY KEY, count INTEGER NOT NULL, expires_at DOUBLE PRECISION NOT NULL)`.pipe(
    Effect.zipRight(
      sql`CREATE TABLE IF NOT EXISTS rate_buckets (key TEXT PRIMARY KEY, tokens DOUBLE PRECISION NOT NULL, refilled_at DOUBLE PRECISION NOT NULL, answer DOUBLE PRECISION NOT NULL)`
    ),
    // Two processes making them at once without the lock (the tests' drivers): the loser retries.
    Effect.retry({ times: 3, schedule: Schedule.spaced(Duration.millis(100)) })
  )

/** A RateLimiterStore in SQL (Postgres): token buckets with fractional tokens, and fixed windows. */
export const layerStoreSql = (sql: SqlClient.SqlClient): Layer.Layer<RateLimiter.RateLimiterStore> =>
  Layer.effect(
    RateLimiter.RateLimiterStore,
    Effect.gen(function*() {
      yield* makeTables(sql).pipe(Effect.orDie)
      return RateLimiter.RateLimiterStore.of({
        fixedWindow: (options) => {
          const refill = Duration.toMillis(options.refillRate) * options.tokens
          // As the memory store: an expired window starts again at now; each token pushes the
          // window's end by one refill interval.
          return sql<{ count: number; ttl: number }>`
            WITH now AS (SELECT ${sql.literal(now)} AS ms)
            INSERT INTO rate_windows (key, count, expires_at) SELECT ${options.key}, ${options.tokens}, now.ms + ${refill} FROM now
            ON CONFLICT (key) DO UPDATE SET
              count = CASE WHEN rate_windows.expires_at <= (SELECT ms FROM now) THEN ${options.tokens} ELSE rate_windows.count + ${options.tokens} END,
              expires_at = CASE WHEN rate_windows.expires_at <= (SELECT ms FROM now) THEN (SELECT ms FROM now) + ${refill} ELSE rate_windows.expires_at + ${refill} END
            RETURNING count, expires_at - (SELECT ms FROM now) AS ttl`.pipe(
            Effect.map((rows) => [Number(rows[0]!.count), Number(rows[0]!.ttl)] as const),
            Effect.mapError(storeError)
          )
        },
        // Continuous refill (the memory store rounds refills down to whole tokens, which lets two
        // delayed calls land closer than one refill apart). `answer` is the count after this
        // take, returned whether or not it was applied; with overflow, -k means k refills to wait.
        tokenBucket: (options) => {
          const refill = Duration.toMillis(options.refillRate)
          const refilled = sql.literal(`LEAST(${Number(options.limit)}, rate_buckets.tokens + ((SELECT ms FROM now) - rate_buckets.refilled_at) / ${Number(refill)})`)
          const take = Number(options.tokens)
          return sql<{ answer: number }>`
            WITH now AS (SELECT ${sql.literal(now)} AS ms)
            INSERT INTO rate_buckets (key, tokens, refilled_at, answer) SELECT ${options.key}, ${options.limit - take}, now.ms, ${options.limit - take} FROM now
            ON CONFLICT (key) DO UPDATE SET
              answer = ${refilled} - ${take},
              tokens = CASE WHEN ${options.allowOverflow} OR ${refilled} - ${take} >= 0 THEN ${refilled} - ${take} ELSE ${refilled} END,
              refilled_at = (SELECT ms FROM now)
            RETURNING answer`.pipe(
            Effect.map((rows) => Number(rows[0]!.answer)),
            Effect.mapError(storeError)
          )
        }
      })
    })
  )

/** How late past its slot a call may wake and still be sent on it; later, it takes a new slot. */
export const wakeTolerance = Duration.millis(75)

/**
 * Waits for the next slot of `key`, `spacing` apart across every worker. A reservation is one
 * statement (the store's token bucket of one token, with overflow: a deficit of k tokens is k
 * spacings to wait). A process starved of CPU (seen at load 40 on 2 cores) wakes from many waits
 * at once, up to a second late, and would send a burst: so a call that wakes more than
 * `wakeTolerance` past the latest its slot can be (the reservation's send time + its wait) gives
 * that slot up and reserves again. The slot given up stays empty, which only slows the calls.
 */
export const pace = (store: RateLimiter.RateLimiterStore["Type"], key: string, spacing: Duration.Duration, options: { readonly emptyAfter?: boolean } = {}) => {
  const spacingMs = Duration.toMillis(spacing)
  const tolerance = Duration.toMillis(wakeTolerance)
  // With `emptyAfter` the call takes two slots at once and is sent on the first: the bucket's
  // answer after two tokens is one token short of the first's.
  const tokens = options.emptyAfter === true ? 2 : 1
  const attempt: Effect.Effect<void, RateLimiter.RateLimiterError> = Effect.gen(function*() {
    const sent = performance.now()
    const remaining = (yield* store.tokenBucket({ key, tokens, limit: 1, refillRate: spacing, allowOverflow: true })) + tokens - 1
    const waitMs = remaining >= 0 ? 0 : -remaining * spacingMs
    if (waitMs > 0) yield* Effect.sleep(Duration.millis(waitMs))
    if (performance.now() - (sent + waitMs) > tolerance) return yield* attempt
  })
  return attempt
}

/**
 * The Model service with each provider's calls spaced so that at most N reach the server in any
 * 1 s, across every worker; calls wait for their slot (never fail). The first call for each
 * provider leaves the slot after its own empty (see above).
 */
export const limitModel = (inner: Model, rates: ReadonlyArray<{ readonly provider: string; readonly perSecond: number }>) =>
  Effect.gen(function*() {
    const store = yield* RateLimiter.RateLimiterStore
    const byProvider = new Map(rates.map((r) => [r.provider, spacingOf(r.perSecond)]))
    const called = new Set<string>()
    const limited: Model = {
      generate: (request) => {
        const spacing = byProvider.get(request.provider)
        if (spacing === undefined) return inner.generate(request)
        const first = !called.has(request.provider)
        called.add(request.provider)
        return pace(store, `assay/rate/${request.provider}`, spacing, { emptyAfter: first }).pipe(
          // The counter's database is the cluster's: a store that cannot be read is a defect, not a model failure.
          Effect.orDie,
          Effect.zipRight(inner.generate(request))
        )
      }
    }
    return limited
  })
