import { describe, expect, it } from "@effect/vitest"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { ConfigProvider, Effect, Schema } from "effect"
import * as Clients from "../../src/model/Clients.ts"
import type { ModelRequest } from "../../src/model/Clients.ts"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import type { ScriptTurn } from "../../src/testkit/LoopbackServer.ts"
import * as Registry from "../../src/model/Registry.ts"

const SECRET = "sk-test-SECRET123"

const withEnv = (env: Record<string, string>) => Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

const addTool = {
  name: "add",
  description: "Adds two numbers",
  parameters: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
    additionalProperties: false
  }
}

const request = (model = "gpt-4o-mini"): ModelRequest => ({
  provider: "test",
  model,
  system: "You add numbers.",
  messages: [{ role: "user", content: "What is 1 + 2?" }],
  tools: [addTool]
})

interface Wire {
  readonly api: "openai-responses" | "openai-chat" | "anthropic-messages" | "google"
  readonly keyEnv: string
  readonly baseUrl: (server: LoopbackServer.LoopbackServer) => string
}

const wires: ReadonlyArray<Wire> = [
  { api: "openai-responses", keyEnv: "OPENAI_API_KEY", baseUrl: (s) => s.openAiBaseUrl },
  { api: "openai-chat", keyEnv: "OPENAI_API_KEY", baseUrl: (s) => s.openAiBaseUrl },
  { api: "anthropic-messages", keyEnv: "ANTHROPIC_API_KEY", baseUrl: (s) => s.anthropicBaseUrl },
  { api: "google", keyEnv: "GEMINI_API_KEY", baseUrl: (s) => s.googleBaseUrl }
]

/** Starts a loopback server with `turns` and calls generate against it with the key set. */
const callWith = (wire: Wire, turns: ReadonlyArray<ScriptTurn>, options: { stream?: boolean; req?: ModelRequest; timeoutMs?: number } = {}) =>
  Effect.gen(function*() {
    const server = yield* LoopbackServer.start(turns)
    const result = yield* Clients.generate(options.req ?? request(), {
      endpoint: { api: wire.api, baseUrl: wire.baseUrl(server), keyEnv: [wire.keyEnv] },
      stream: options.stream ?? false,
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {})
    }).pipe(Effect.either, withEnv({ [wire.keyEnv]: SECRET }))
    return { server, result }
  })

describe("generate against the loopback server", () => {
  for (const wire of wires) {
    for (const stream of [false, true]) {
      const label = `${wire.api}${stream ? " (streaming)" : ""}`

      it.scopedLive(`${label}: a text reply comes back with the usage the server reported`, () =>
        Effect.gen(function*() {
          const cacheWrite = wire.api === "anthropic-messages" ? 5 : 0
          const { result, server } = yield* callWith(wire, [
            { text: "The answer is 3.", usage: { input: 42, output: 7, cacheRead: 11, cacheWrite } }
          ], { stream })
          if (result._tag === "Left") throw new Error(result.left.message)
          // OpenAI reports input_tokens including cached ones; the response's counts are disjoint.
          expect(result.right).toEqual({
            text: "The answer is 3.",
            toolCalls: [],
            usage: {
              inputTokens: 42,
              outputTokens: 7,
              cacheReadTokens: 11,
              cacheWriteTokens: cacheWrite
            },
            finishReason: "stop",
            model: "gpt-4o-mini"
          })
          expect(server.requests().map((r) => [r.api, r.stream])).toEqual([[wire.api, stream]])
        }))

      it.scopedLive(`${label}: a tool-call reply gives the call's id, name and JSON arguments`, () =>
        Effect.gen(function*() {
          const { result } = yield* callWith(wire, [
            { toolCalls: [{ id: "call_1", name: "add", arguments: { a: 1, b: 2 } }], usage: { input: 30, output: 9 } }
          ], { stream })
          if (result._tag === "Left") throw new Error(result.left.message)
          expect(result.right.text).toBeNull()
          expect(result.right.toolCalls).toEqual([{
            // Gemini gives calls no id: ours numbers them in the response.
            id: wire.api === "google" ? "call_0" : "call_1",
            name: "add",
            arguments: { a: 1, b: 2 },
            argumentsText: "{\"a\":1,\"b\":2}"
          }])
          expect(result.right.finishReason).toBe("tool-calls")
          expect(result.right.usage).toEqual({ inputTokens: 30, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 0 })
        }))

      it.scopedLive(`${label}: the arguments' text comes back as the server sent it, 1.0 apart from 1`, () =>
        Effect.gen(function*() {
          const argumentsText = "{\"a\": 1.0, \"b\": 2, \"note\": \"5.0\"}"
          const { result } = yield* callWith(wire, [
            { toolCalls: [{ id: "call_1", name: "add", arguments: { a: 1, b: 2, note: "5.0" }, argumentsText }] }
          ], { stream })
          if (result._tag === "Left") throw new Error(result.left.message)
          const [call] = result.right.toolCalls
          expect(call?.arguments).toEqual({ a: 1, b: 2, note: "5.0" })
          expect(call?.argumentsText).toBe(argumentsText)
          // The text is plain data in the response: it survives the JSON a recording stores.
          const roundTrip = Schema.decodeUnknownSync(Clients.ModelResponse)(JSON.parse(JSON.stringify(Schema.encodeSync(Clients.ModelResponse)(result.right))))
          expect(roundTrip.toolCalls[0]?.argumentsText).toBe(call?.argumentsText)
        }))
    }

    it.scopedLive(`${wire.api}: a 429 is a rate-limit ModelError with its status and retry-after`, () =>
      Effect.gen(function*() {
        const { result } = yield* callWith(wire, [
          { status: 429, text: "Rate limit reached", headers: { "retry-after": "7" } }
        ])
        if (result._tag === "Right") throw new Error("a 429 succeeded")
        expect(result.left).toMatchObject({ _tag: "ModelError", reason: "rate-limit", status: 429, retryAfterSeconds: 7 })
        expect(result.left.retryable).toBe(true)
      }))

    it.scopedLive(`${wire.api}: a 500 is a server-error ModelError`, () =>
      Effect.gen(function*() {
        const { result } = yield* callWith(wire, [{ status: 500, text: "boom" }])
        if (result._tag === "Right") throw new Error("a 500 succeeded")
        expect(result.left).toMatchObject({ reason: "server-error", status: 500 })
        expect(result.left.message).toContain("boom")
      }))

    it.scopedLive(`${wire.api}: the API key appears neither in an error message nor in the request log`, () =>
      Effect.gen(function*() {
        // Real servers echo (part of) a rejected key; the error must still not carry it.
        const { result, server } = yield* callWith(wire, [
          { status: 401, text: `Incorrect API key provided: ${SECRET}` },
          { text: "ok" }
        ])
        if (result._tag === "Right") throw new Error("a 401 succeeded")
        expect(result.left.reason).toBe("auth")
        expect(result.left.message).not.toContain("SECRET123")
        expect(JSON.stringify(result.left)).not.toContain("SECRET123")
        expect(String(result.left)).not.toContain("SECRET123")
        const log = server.requests()
        expect(JSON.stringify(log)).not.toContain("SECRET123")
        const credential = wire.api === "anthropic-messages" ? "x-api-key" : wire.api === "google" ? "x-goog-api-key" : "authorization"
        expect(log[0]?.headers[credential]).toBe("[redacted]")
      }))

    it.scopedLive(`${wire.api}: a conversation with tool calls and tool results reaches the server in its wire format`, () =>
      Effect.gen(function*() {
        const req: ModelRequest = {
          ...request(),
          messages: [
            { role: "user", content: "What is 1 + 2?" },
            { role: "assistant", content: null, toolCalls: [{ id: "call_1", name: "add", arguments: { a: 1, b: 2 } }] },
            { role: "tool", toolCallId: "call_1", name: "add", content: "{\"sum\":3}" }
          ]
        }
        const { result, server } = yield* callWith(wire, [{ match: { lastUser: "1 \\+ 2" }, text: "3" }], { req })
        if (result._tag === "Left") throw new Error(result.left.message)
        expect(result.right.text).toBe("3")
        const body = JSON.stringify(server.requests()[0]?.body)
        // Gemini pairs a result with its call by the function's name and place, not an id.
        if (wire.api !== "google") expect(body).toContain("call_1")
        expect(body).toContain("You add numbers.")
        expect(body).toContain("Adds two numbers")
        if (wire.api === "openai-responses") expect(body).toContain("\"type\":\"function_call_output\"")
        if (wire.api === "openai-chat") expect(body).toContain("\"role\":\"tool\"")
        if (wire.api === "anthropic-messages") expect(body).toContain("\"type\":\"tool_result\"")
        if (wire.api === "google") expect(body).toContain("\"functionResponse\":{\"name\":\"add\",\"response\":{\"sum\":3}}")
        expect(body).toContain("sum")
      }))
  }

  it.scopedLive("openai against a chat-only OpenAI-compatible server falls back to chat completions", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([{ text: "from chat", usage: { input: 8, output: 2 } }], { apis: ["openai-chat"] })
      const response = yield* Clients.generate({ ...request(), provider: "openai" }).pipe(
        withEnv({ OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: SECRET })
      )
      expect(response.text).toBe("from chat")
      expect(response.usage).toEqual({ inputTokens: 8, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 })
      expect(server.requests().map((r) => [r.path, r.status])).toEqual([["/v1/responses", 404], ["/v1/chat/completions", 200]])
    }))

  it.scopedLive("a 200 whose body is not the API's response shape is a decode ModelError", () =>
    Effect.gen(function*() {
      const junk = createServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ hello: "world" }))
      })
      const port = yield* Effect.acquireRelease(
        Effect.async<number>((resume) => {
          junk.listen(0, "127.0.0.1", () => resume(Effect.succeed((junk.address() as AddressInfo).port)))
        }),
        () => Effect.async<void>((resume) => {
          junk.closeAllConnections()
          junk.close(() => resume(Effect.void))
        })
      )
      for (const api of ["openai-responses", "openai-chat", "anthropic-messages"] as const) {
        const baseUrl = api === "anthropic-messages" ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/v1`
        const error = yield* Effect.flip(Clients.generate(request(), { endpoint: { api, baseUrl, keyEnv: [] } }))
        expect(error.reason, api).toBe("decode")
      }
    }))

  it.scopedLive("a server slower than the timeout gives a timeout ModelError", () =>
    Effect.gen(function*() {
      const wire = wires[0]
      if (wire === undefined) throw new Error("no wire")
      const { result } = yield* callWith(wire, [{ text: "late", delayMs: 1500 }], { timeoutMs: 200 })
      if (result._tag === "Right") throw new Error("a slow call succeeded")
      expect(result.left).toMatchObject({ reason: "timeout", status: null })
    }))

  it.live("an endpoint nobody listens on gives a network ModelError", () =>
    Effect.gen(function*() {
      for (const api of ["openai-responses", "openai-chat", "anthropic-messages"] as const) {
        const error = yield* Effect.flip(Clients.generate(request(), { endpoint: { api, baseUrl: "http://127.0.0.1:1/v1", keyEnv: [] } }))
        expect(error.reason).toBe("network")
      }
    }))

  it.live("a missing key fails with an auth ModelError naming the variable, without calling out", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Clients.generate({ ...request(), provider: "openai" }).pipe(withEnv({}))
      )
      expect(error).toMatchObject({ reason: "auth", status: null })
      expect(error.message).toContain("OPENAI_API_KEY")
    }))

  it.scopedLive("provider openai reads OPENAI_BASE_URL and OPENAI_API_KEY from the environment", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([{ match: { model: "gpt-4o-mini-2024-07-18" }, text: "hi", usage: { input: 3, output: 1 } }])
      const response = yield* Clients.generate({ ...request("gpt-4o-mini-2024-07-18"), provider: "openai" }).pipe(
        withEnv({ OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: SECRET })
      )
      expect(response.text).toBe("hi")
      expect(response.usage).toEqual({ inputTokens: 3, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 })
      expect(server.requests()[0]?.path).toBe("/v1/responses")
    }))

  it.scopedLive("provider anthropic reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY from the environment", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([{ text: "hi", usage: { input: 3, output: 1 }, repeat: true }])
      const response = yield* Clients.generate({ ...request("claude-haiku-4-5-20251001"), provider: "anthropic" }).pipe(
        withEnv({ ANTHROPIC_BASE_URL: server.anthropicBaseUrl, ANTHROPIC_API_KEY: SECRET })
      )
      expect(response.text).toBe("hi")
      expect(server.requests()[0]?.headers["anthropic-version"]).toBeDefined()
      // Given with /v1, as OpenAI's base URLs are, it means the same endpoint (not /v1/v1/messages).
      yield* Clients.generate({ ...request("claude-haiku-4-5-20251001"), provider: "anthropic" }).pipe(
        withEnv({ ANTHROPIC_BASE_URL: `${server.anthropicBaseUrl}/v1`, ANTHROPIC_API_KEY: SECRET })
      )
      expect(server.requests().map((r) => r.path)).toEqual(["/v1/messages", "/v1/messages"])
    }))

  it.scopedLive("with the Registry in context a keyless local provider (ollama) is called over chat completions", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([{ text: "local", usage: { input: 2, output: 1 } }])
      const response = yield* Clients.generate({ ...request("llama3.1:8b"), provider: "ollama" }).pipe(
        withEnv({ OLLAMA_BASE_URL: server.openAiBaseUrl }),
        Effect.provide(Registry.layer)
      )
      expect(response.text).toBe("local")
      expect(server.requests()[0]?.path).toBe("/v1/chat/completions")
    }))

  it("ModelRequest and ModelResponse are plain JSON data", () => {
    const response: Clients.ModelResponse = {
      text: null,
      toolCalls: [{ id: "c", name: "add", arguments: { a: 1 } }],
      usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
      finishReason: "tool-calls",
      model: "m"
    }
    expect(JSON.parse(JSON.stringify(response))).toEqual(response)
    expect(JSON.parse(JSON.stringify(request()))).toEqual(request())
  })
})

describe("liveness", () => {
  it.scopedLive("a provider is live when its key is set or its local endpoint answers, absent with a reason otherwise", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([])
      const report = yield* Clients.liveness({ probeTimeout: 1000 }).pipe(
        withEnv({ OPENAI_API_KEY: SECRET, OLLAMA_BASE_URL: server.openAiBaseUrl }),
        Effect.provide(Registry.layer)
      )
      const byProvider = Object.fromEntries(report.map((l) => [l.provider, l]))
      expect(byProvider["openai"]).toMatchObject({ status: "live", reason: "OPENAI_API_KEY is set (https://api.openai.com/v1)" })
      expect(byProvider["anthropic"]).toMatchObject({ status: "absent", reason: "ANTHROPIC_API_KEY not set" })
      expect(byProvider["ollama"]?.status).toBe("live")
      expect(byProvider["ollama"]?.models).toContain("llama3.1:8b")
      expect(byProvider["google"]).toMatchObject({ status: "absent", reason: "GEMINI_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY not set" })
      expect(JSON.stringify(report)).not.toContain("SECRET123")

      const down = yield* Clients.liveness({ probeTimeout: 1000 }).pipe(
        withEnv({ OLLAMA_BASE_URL: "http://127.0.0.1:1/v1" }),
        Effect.provide(Registry.layer)
      )
      const ollama = down.find((l) => l.provider === "ollama")
      expect(ollama?.status).toBe("absent")
      expect(ollama?.reason).toContain("did not answer")
    }))
})
