/**
 * `openai-chat:ANY-MODEL-ID`: any OpenAI-compatible server over chat completions. The base URL
 * is OPENAI_CHAT_BASE_URL (with OPENAI_CHAT_API_KEY), else OPENAI_BASE_URL (with OPENAI_API_KEY);
 * the key is optional, so keyless local servers work, and a key only goes to the base URL it was
 * set beside.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import * as Clients from "../../src/model/Clients.ts"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import * as Live from "../../src/model/Live.ts"
import * as Model from "../../src/model/Model.ts"
import * as Registry from "../../src/model/Registry.ts"

const withEnv = (env: Record<string, string>) => Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

const request = (model: string): Model.ModelRequest => ({
  provider: "openai-chat",
  model,
  system: "You add numbers.",
  messages: [{ role: "user", content: "What is 1 + 2?" }],
  tools: [{ name: "add", description: "adds", parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } }]
})

/** The live Model layer as the command builds it: Node's HTTP client and the shipped registry. */
const live = Live.layerNode.pipe(Layer.provide(Registry.layer))

const generate = (req: Model.ModelRequest) => Effect.flatMap(Model.Model, (model) => model.generate(req))

describe("openai-chat: any OpenAI-compatible server", () => {
  for (const stream of [false, true]) {
    it.scopedLive(`a model id the registry does not list is called over chat completions at OPENAI_BASE_URL${stream ? " (streaming)" : ""}`, () =>
      Effect.gen(function*() {
        const server = yield* LoopbackServer.start([
          { match: { model: "^meta-llama/Llama-3.1-8B-Instruct$" }, toolCalls: [{ id: "call_1", name: "add", arguments: { a: 1, b: 2 }, argumentsText: "{\"a\": 1.0, \"b\": 2}" }], usage: { input: 40, output: 8, cacheRead: 4 } }
        ])
        const response = yield* generate(request("meta-llama/Llama-3.1-8B-Instruct")).pipe(
          Effect.provide(Live.layerLiveWith({ stream }).pipe(Layer.provide(Clients.nodeHttpClient), Layer.provide(Registry.layer))),
          withEnv({ OPENAI_BASE_URL: server.openAiBaseUrl })
        )
        expect(response.toolCalls).toEqual([{ id: "call_1", name: "add", arguments: { a: 1, b: 2 }, argumentsText: "{\"a\": 1.0, \"b\": 2}" }])
        expect(response.usage).toEqual({ inputTokens: 40, outputTokens: 8, cacheReadTokens: 4, cacheWriteTokens: 0 })
        const [sent] = server.requests()
        expect(sent?.path).toBe("/v1/chat/completions")
        expect(sent?.stream).toBe(stream)
        // Keyless: no credential header at all.
        expect(sent?.headers["authorization"]).toBeUndefined()
      }))
  }

  it.scopedLive("OPENAI_API_KEY goes with OPENAI_BASE_URL", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([{ text: "3", repeat: true }])
      const response = yield* generate(request("anything")).pipe(
        Effect.provide(live),
        withEnv({ OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-or-v1-SECRETKEY" })
      )
      expect(response.text).toBe("3")
      expect(server.requests()[0]?.headers["authorization"]).toBe("[redacted]")
    }))

  it.scopedLive("OPENAI_CHAT_BASE_URL wins over OPENAI_BASE_URL, and OPENAI_API_KEY is not sent to it", () =>
    Effect.gen(function*() {
      const chat = yield* LoopbackServer.start([{ text: "from the chat server", repeat: true }])
      const other = yield* LoopbackServer.start([{ text: "from OPENAI_BASE_URL", repeat: true }])
      const env = { OPENAI_CHAT_BASE_URL: chat.openAiBaseUrl, OPENAI_BASE_URL: other.openAiBaseUrl, OPENAI_API_KEY: "sk-proj-OPENAIKEY" }
      const keyless = yield* generate(request("m")).pipe(Effect.provide(live), withEnv(env))
      expect(keyless.text).toBe("from the chat server")
      expect(chat.requests()[0]?.headers["authorization"]).toBeUndefined()
      expect(other.requests()).toEqual([])
      yield* generate(request("m")).pipe(Effect.provide(live), withEnv({ ...env, OPENAI_CHAT_API_KEY: "gsk_CHATKEY0123456789" }))
      expect(chat.requests()[1]?.headers["authorization"]).toBe("[redacted]")
    }))

  it.live("without a base URL the call fails before calling out, naming both variables", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(generate(request("m")).pipe(Effect.provide(live), withEnv({ OPENAI_API_KEY: "sk-test-KEY" })))
      expect(error).toMatchObject({ reason: "bad-request", status: null })
      expect(error.message).toContain("OPENAI_CHAT_BASE_URL or OPENAI_BASE_URL")
      expect(error.message).not.toContain("KEY")
    }))

  it.scopedLive("liveness: absent without a base URL, live when the endpoint answers, absent when it does not", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([])
      const of = (env: Record<string, string>) =>
        Clients.liveness({ probeTimeout: 1000 }).pipe(
          Effect.map((report) => report.find((l) => l.provider === "openai-chat")),
          withEnv(env),
          Effect.provide(Registry.layer)
        )
      expect(yield* of({})).toMatchObject({ status: "absent", reason: "no base URL: set OPENAI_CHAT_BASE_URL or OPENAI_BASE_URL" })
      expect(yield* of({ OPENAI_BASE_URL: server.openAiBaseUrl })).toMatchObject({ status: "live", reason: `endpoint ${server.openAiBaseUrl} answered` })
      // A key set is taken at its word: the endpoint is not asked.
      const asked = server.requests().length
      const keyed = yield* of({ OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test-SECRET123" })
      expect(keyed).toMatchObject({ status: "live", reason: `OPENAI_API_KEY is set (${server.openAiBaseUrl})` })
      expect(server.requests()).toHaveLength(asked)
      expect(JSON.stringify(keyed)).not.toContain("SECRET123")
      const down = yield* of({ OPENAI_CHAT_BASE_URL: "http://127.0.0.1:1/v1" })
      expect(down?.status).toBe("absent")
      expect(down?.reason).toContain("did not answer")
    }))
})
