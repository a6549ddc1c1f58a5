/**
 * `--rate PROVIDER=N/s` across a cluster's workers: @effect/experimental's RateLimiter over a
 * store kept in the cluster's Postgres (the library ships memory and Redis stores). The window
 * counter is one row per key, updated in one statement with the database's clock, so every
 * worker counts against the same window whatever its own clock says.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import type * as SqlClient from "@effect/sql/SqlClient"
import { Duration, Effect, Layer } from "effect"
import type { Model } from "../model/Model.ts"

export { parseRate } from "./rateSpec.ts"

const storeError = (cause: unknown) => new RateLimiter.RateLimitStoreError({ message: "the rate limit's counter cannot be read", cause })

/** A RateLimiterStore in SQL (Postgres): fixed windows; token buckets are not kept here. */
export const layerStoreSql = (sql: SqlClient.SqlClient): Layer.Layer<RateLimiter.RateLimiterStore> =>
  Layer.effect(
    RateLimiter.RateLimiterStore,
    Effect.gen(function*() {
      yield* sql`CREATE TABLE IF NOT EXISTS rate_windows (key TEXT PRIMARY KEY, count INTEGER NOT NULL, expires_at DOUBLE PRECISION NOT NULL)`.pipe(
        Effect.retry({ times: 3 }),
        Effect.orDie
      )
      return RateLimiter.RateLimiterStore.of({
        fixedWindow: (options) => {
          const refill = Duration.toMillis(options.refillRate) * options.tokens
          // As the memory store: an expired window starts again at now; each token pushes the
          // window's end by one refill interval.
          return sql<{ count: number; ttl: number }>`
            WITH now AS (SELECT extract(epoch FROM clock_timestamp()) * 1000 AS ms)
            INSERT INTO rate_windows (key, count, expires_at) SELECT ${options.key}, ${options.tokens}, now.ms + ${refill} FROM now
            ON CONFLICT (key) DO UPDATE SET
              count = CASE WHEN rate_windows.expires_at <= (SELECT ms FROM now) THEN ${options.tokens} ELSE rate_windows.count + ${options.tokens} END,
              expires_at = CASE WHEN rate_windows.expires_at <= (SELECT ms FROM now) THEN (SELECT ms FROM now) + ${refill} ELSE rate_windows.expires_at + ${refill} END
            RETURNING count, expires_at - (SELECT ms FROM now) AS ttl`.pipe(
            Effect.map((rows) => [Number(rows[0]!.count), Number(rows[0]!.ttl)] as const),
            Effect.mapError(storeError)
          )
        },
        tokenBucket: () => Effect.fail(new RateLimiter.RateLimitStoreError({ message: "token buckets are not kept in the SQL store: use a fixed window" }))
      })
    })
  )

/**
 * The Model service with each provider's calls limited to N a second across every worker; calls
 * over the limit wait for their window (never fail).
 */
export const limitModel = (inner: Model, rates: ReadonlyArray<{ readonly provider: string; readonly perSecond: number }>) =>
  Effect.gen(function*() {
    const withLimit = yield* RateLimiter.makeWithRateLimiter
    const byProvider = new Map(rates.map((r) => [r.provider, r.perSecond]))
    const limited: Model = {
      generate: (request) => {
        const perSecond = byProvider.get(request.provider)
        if (perSecond === undefined) return inner.generate(request)
        return inner.generate(request).pipe(
          withLimit({ key: `assay/rate/${request.provider}`, limit: perSecond, window: "1 second", onExceeded: "delay", algorithm: "fixed-window" }),
          // The counter's database is the cluster's: a store that cannot be read is a defect, not a model failure.
          Effect.catchTag("RateLimiterError", (e) => Effect.die(e))
        )
      }
    }
    return limited
  })
