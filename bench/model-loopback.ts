/**
 * Per-call overhead of `generate` against the loopback server, per wire API, streaming and not:
 * what the model layer itself costs when the model answers instantly.
 */
import { ConfigProvider, Effect, Layer } from "effect"
import * as Clients from "../src/model/Clients.ts"
import * as LoopbackServer from "../src/testkit/LoopbackServer.ts"

const calls = 200

export const run = async (): Promise<void> => {
  const program = Effect.gen(function*() {
    // One set of clients over one Node HTTP client for every call, as a run's Model service has.
    const clients = yield* Effect.provide(Clients.make(), yield* Layer.build(Clients.nodeHttpClient))
    const server = yield* LoopbackServer.start([
      { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }], text: "adding", repeat: true }
    ])
    const request: Clients.ModelRequest = {
      provider: "bench",
      model: "m",
      system: "You add numbers.",
      messages: [{ role: "user", content: "1 + 2?" }],
      tools: [{ name: "add", description: "adds", parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } }]
    }
    for (const api of ["openai-responses", "openai-chat", "anthropic-messages", "google"] as const) {
      for (const stream of [false, true]) {
        const endpoint = {
          api,
          baseUrl: api === "anthropic-messages" ? server.anthropicBaseUrl : api === "google" ? server.googleBaseUrl : server.openAiBaseUrl,
          keyEnv: ["BENCH_KEY"]
        }
        const once = clients.generate(request, { endpoint, stream })
        yield* once // warm-up
        const started = performance.now()
        yield* Effect.repeatN(once, calls - 1)
        const perCall = (performance.now() - started) / calls
        yield* Effect.log(`model/generate ${api}${stream ? " stream" : ""}: ${perCall.toFixed(2)} ms per call (${calls} calls)`)
      }
    }
  })
  await Effect.runPromise(
    Effect.scoped(program).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["BENCH_KEY", "bench"]]))))
  )
}
