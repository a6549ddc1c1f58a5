/**
 * The model is a service you can swap: the scripted layer answers from memory (no socket), the
 * live layer speaks the wire formats over whatever HttpClient it is given, once.
 */
import { HttpClient, HttpClientResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer } from "effect"
import * as Live from "../../src/model/Live.ts"
import * as Model from "../../src/model/Model.ts"
import { costOf } from "../../src/model/Cost.ts"
import * as Registry from "../../src/model/Registry.ts"

const request = (content = "What is 1 + 2?", provider = "openai", model = "gpt-4o-mini-2024-07-18"): Model.ModelRequest => ({
  provider,
  model,
  system: "You add numbers.",
  messages: [{ role: "user", content }],
  tools: [{ name: "add", description: "adds", parameters: { type: "object" } }]
})

const generate = (req: Model.ModelRequest) => Effect.flatMap(Model.Model, (model) => model.generate(req))

describe("Model.layerScripted", () => {
  it.effect("plays its turns in order, filling in ids, argumentsText, usage and the finish reason", () =>
    Effect.gen(function*() {
      const first = yield* generate(request())
      const second = yield* generate(request("thanks"))
      expect(first).toEqual({
        text: null,
        toolCalls: [{ id: "call_0", name: "add", arguments: { a: 1, b: 2 }, argumentsText: "{\"a\":1,\"b\":2}" }],
        usage: { inputTokens: 120, outputTokens: 14, cacheReadTokens: 0, cacheWriteTokens: 0 },
        finishReason: "tool-calls",
        model: "gpt-4o-mini-2024-07-18"
      })
      expect(second).toMatchObject({ text: "3", toolCalls: [], finishReason: "stop" })
    }).pipe(Effect.provide(Model.layerScripted([
      { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }], usage: { inputTokens: 120, outputTokens: 14 } },
      { text: "3" }
    ]))))

  it.effect("a tool call's argumentsText passes through unchanged (5.0 stays 5.0)", () =>
    Effect.gen(function*() {
      const response = yield* generate(request())
      expect(response.toolCalls[0]).toEqual({ id: "c1", name: "add", arguments: { a: 5, b: 2 }, argumentsText: "{\"a\": 5.0, \"b\":2}" })
    }).pipe(Effect.provide(Model.layerScripted([{ toolCalls: [{ id: "c1", name: "add", argumentsText: "{\"a\": 5.0, \"b\":2}" }] }]))))

  it.effect("fixed usage makes costs exact at list price", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.Registry
      const entry = yield* registry.resolve("openai:gpt-4o-mini")
      const response = yield* generate(request())
      // gpt-4o-mini: $0.15 in, $0.60 out, $0.075 cached, per million tokens
      expect(costOf(entry.model, response.usage)).toBeCloseTo((1_000_000 * 0.15 + 500_000 * 0.6 + 200_000 * 0.075) / 1_000_000, 10)
    }).pipe(
      Effect.provide(Model.layerScripted([Model.scriptedResponse({ text: "ok", usage: { inputTokens: 1_000_000, outputTokens: 500_000, cacheReadTokens: 200_000 } })])),
      Effect.provide(Registry.layer)
    ))

  it.effect("a function script sees each request and how many calls came before it", () =>
    Effect.gen(function*() {
      const seen: Array<[string, number]> = []
      const layer = Model.layerScripted((req, n) => {
        const last = req.messages.at(-1)
        seen.push([last?.role === "user" ? last.content : "", n])
        return { text: `reply ${n}` }
      })
      const replies = yield* Effect.forEach(["a", "b", "c"], (c) => generate(request(c))).pipe(Effect.provide(layer))
      expect(replies.map((r) => r.text)).toEqual(["reply 0", "reply 1", "reply 2"])
      expect(seen).toEqual([["a", 0], ["b", 1], ["c", 2]])
    }))

  it.effect("a scripted ModelError fails the call with it; an effect may fail or answer", () =>
    Effect.gen(function*() {
      const layer = Model.layerScripted((_req, n) =>
        n === 0
          ? Model.scriptedError("rate-limit", { status: 429, retryAfterSeconds: 2 })
          : n === 1
          ? Effect.fail(Model.scriptedError("network"))
          : Effect.succeed({ text: "finally" })
      )
      const results = yield* Effect.forEach([1, 2, 3], () => Effect.either(generate(request()))).pipe(Effect.provide(layer))
      expect(results[0]?._tag === "Left" && results[0].left).toMatchObject({ reason: "rate-limit", status: 429, retryAfterSeconds: 2 })
      expect(results[0]?._tag === "Left" && results[0].left.retryable).toBe(true)
      expect(results[1]?._tag === "Left" && results[1].left.reason).toBe("network")
      expect(results[2]?._tag === "Right" && results[2].right.text).toBe("finally")
    }))

  it.effect("a call past the end of the script is a defect naming the call, not a model failure", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Effect.zipRight(generate(request()), generate(request())).pipe(Effect.provide(Model.layerScripted([{ text: "only one" }]))))
      expect(Exit.isFailure(exit) && Exit.isFailure(exit) && exit.cause._tag).toBe("Die")
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("call #2")
    }))

  it.effect("Model.scripted keeps the requests it was sent, and each layer build counts from 0", () =>
    Effect.gen(function*() {
      const model = Model.scripted([{ text: "one" }, { text: "two" }])
      yield* model.generate(request("first"))
      yield* model.generate(request("second"))
      expect(model.requests().map((r) => r.messages[0])).toEqual([{ role: "user", content: "first" }, { role: "user", content: "second" }])
      const layer = Model.layerScripted([{ text: "again" }])
      expect((yield* generate(request()).pipe(Effect.provide(layer))).text).toBe("again")
      expect((yield* generate(request()).pipe(Effect.provide(layer))).text).toBe("again")
    }))
})

describe("Live.layerLive", () => {
  it.effect("speaks the wire over the HttpClient it is given, taken once for all its calls (no socket here)", () =>
    Effect.gen(function*() {
      const sent: Array<{ url: string; body: unknown }> = []
      let clientsTaken = 0
      const fake = HttpClient.make((req) =>
        Effect.sync(() => {
          const body = req.body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(req.body.body)) as unknown : null
          sent.push({ url: req.url, body })
          const answer = { output: [{ type: "message", content: [{ type: "output_text", text: `answer ${sent.length}` }] }], usage: { input_tokens: 7, output_tokens: 2 } }
          return HttpClientResponse.fromWeb(req, new Response(JSON.stringify(answer), { status: 200, headers: { "content-type": "application/json" } }))
        })
      )
      const httpLayer = Layer.effect(HttpClient.HttpClient, Effect.sync(() => {
        clientsTaken++
        return fake
      }))
      const layer = Live.layerLive.pipe(Layer.provide(httpLayer))
      const texts = yield* Effect.forEach([1, 2, 3], () => generate(request()).pipe(Effect.map((r) => r.text))).pipe(
        Effect.provide(layer),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["OPENAI_API_KEY", "sk-test-KEY"], ["OPENAI_BASE_URL", "http://model.test/v1"]])))
      )
      expect(texts).toEqual(["answer 1", "answer 2", "answer 3"])
      expect(clientsTaken).toBe(1)
      expect(sent.map((s) => s.url)).toEqual(Array(3).fill("http://model.test/v1/responses"))
      expect(sent[0]?.body).toMatchObject({ model: "gpt-4o-mini-2024-07-18", input: [{ role: "system" }, { role: "user" }] })
    }))
})
