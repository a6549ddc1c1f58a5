/**
 * One of several processes sharing a `--rate` limit, as workers do, without evaluating cells (so
 * the limit binds however loaded the machine is): `limitModel` over the Postgres store, wrapping
 * the live client a worker calls models with (Node's HTTP client, OPENAI_BASE_URL the recording
 * server); CALLS calls, CONCURRENCY at once, as fast as allowed. Prints `ready`, waits for a line,
 * and at the end prints `sent <json>`: the wall-clock times (ms) at which the limiter let each call go.
 * Run: node --import tsx test/cluster/rateDriver.ts URL CALLS CONCURRENCY PER_SECOND [fixed]
 * ("fixed": the fixed-window limiter `--rate` used before, to show the test catches it).
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { layerNode } from "../../src/model/Live.ts"
import { Model } from "../../src/model/Model.ts"
import * as Store from "../../src/experiment/Store.ts"
import * as RateLimit from "../../src/cluster/RateLimit.ts"

const [url, calls, concurrency, perSecond, mode] = process.argv.slice(2)

// When each call left the limiter, on the wall clock the server's arrival times are compared with.
const sent: Array<number> = []
const timed = (live: Model): Model => ({
  generate: (request) =>
    Effect.suspend(() => {
      sent.push(performance.timeOrigin + performance.now())
      return live.generate(request)
    })
})

// The limiter `--rate` used before: fixed 1 s windows of N.
const fixedWindow = (inner: Model, n: number) =>
  Effect.map(RateLimiter.makeWithRateLimiter, (withLimit): Model => ({
    generate: (request) =>
      inner.generate(request).pipe(
        withLimit({ key: `assay/rate/${request.provider}`, limit: n, window: "1 second", onExceeded: "delay", algorithm: "fixed-window" }),
        Effect.catchTag("RateLimiterError", (e) => Effect.die(e))
      )
  }))

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Built before the calls, as a worker builds its Model layer before it takes cells.
  const posting = timed(yield* Model)
  const n = Number(perSecond)
  const store = RateLimit.layerStoreSql(sql)
  const model = mode === "fixed"
    ? yield* fixedWindow(posting, n).pipe(Effect.provide(RateLimiter.layer.pipe(Layer.provide(store))))
    : yield* RateLimit.limitModel(posting, [{ provider: "openai", perSecond: n }]).pipe(Effect.provide(store))
  const request = { provider: "openai", model: "gpt-4o-mini", system: "", messages: [{ role: "user" as const, content: "hi" }], tools: [] }
  process.stdout.write("ready\n")
  // All drivers fire together: the test writes a line to each once every one is ready.
  yield* Effect.async<void>((resume) => {
    process.stdin.once("data", () => resume(Effect.void))
  })
  yield* Effect.forEach(Array.from({ length: Number(calls) }), () => model.generate(request), { concurrency: Number(concurrency), discard: true })
  process.stdout.write(`sent ${JSON.stringify(sent)}\n`)
})

Effect.runPromise(program.pipe(Effect.provide(Layer.merge(Store.postgresClient(url!), layerNode)), Effect.scoped)).then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`rate driver: ${String(e)}\n`)
    process.exit(1)
  }
)
