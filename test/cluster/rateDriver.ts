/**
 * One of several processes sharing a `--rate` limit, as workers do, without evaluating cells (so
 * the limit binds however loaded the machine is): `limitModel` over the Postgres store, wrapping a
 * Model that POSTs to the recording server; CALLS calls, CONCURRENCY at once, as fast as allowed.
 * Run: node --import tsx test/cluster/rateDriver.ts URL BASE_URL CALLS CONCURRENCY PER_SECOND [fixed]
 * ("fixed": the fixed-window limiter `--rate` used before, to show the test catches it).
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { type Model, ModelError } from "../../src/model/Model.ts"
import * as Store from "../../src/experiment/Store.ts"
import * as RateLimit from "../../src/cluster/RateLimit.ts"

const [url, baseUrl, calls, concurrency, perSecond, mode] = process.argv.slice(2)

const posting: Model = {
  generate: (request) =>
    Effect.tryPromise({
      try: () => fetch(`${baseUrl}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: request.model, messages: [{ role: "user", content: "hi" }] }) }).then((r) => r.text()),
      catch: (e) => new ModelError({ provider: request.provider, model: request.model, reason: "network", status: null, detail: String(e) })
    }).pipe(Effect.as({ text: "ok", toolCalls: [], usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }, finishReason: "stop" as const, model: request.model }))
}

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
  const n = Number(perSecond)
  const store = RateLimit.layerStoreSql(sql)
  const model = mode === "fixed"
    ? yield* fixedWindow(posting, n).pipe(Effect.provide(RateLimiter.layer.pipe(Layer.provide(store))))
    : yield* RateLimit.limitModel(posting, [{ provider: "openai", perSecond: n }]).pipe(Effect.provide(store))
  const request = { provider: "openai", model: "gpt-4o-mini", system: "", messages: [], tools: [] }
  process.stdout.write("ready\n")
  // All drivers fire together: the test writes a line to each once every one is ready.
  yield* Effect.async<void>((resume) => {
    process.stdin.once("data", () => resume(Effect.void))
  })
  yield* Effect.forEach(Array.from({ length: Number(calls) }), () => model.generate(request), { concurrency: Number(concurrency), discard: true })
})

Effect.runPromise(program.pipe(Effect.provide(Store.postgresClient(url!)), Effect.scoped)).then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`rate driver: ${String(e)}\n`)
    process.exit(1)
  }
)
