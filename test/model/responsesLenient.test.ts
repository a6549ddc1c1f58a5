/**
 * A Responses body as OpenAI-compatible servers send it: no incomplete_details, no metadata, no
 * usage details, message items with output_text parts only. Such a body is an answer, not a
 * "malformed output"; the arguments' text still comes back as the server wrote it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Clients from "../../src/model/Clients.ts"
import type { ModelRequest } from "../../src/model/Model.ts"
import { httpServer, json, sse } from "./servers.ts"

const request: ModelRequest = {
  provider: "local",
  model: "qwen3-8b",
  system: "be brief",
  messages: [{ role: "user", content: "add 1.0 and 2" }],
  tools: [{ name: "add", description: "adds", parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } }]
}

/** Answers every POST /v1/responses with `answer` (a JSON body, or SSE events when `stream`). */
const callWith = (answer: unknown, stream = false) =>
  Effect.gen(function*() {
    const bodies: Array<unknown> = []
    const port = yield* httpServer((req, res, body) => {
      bodies.push(JSON.parse(body))
      if (req.url !== "/v1/responses") return json(res, 404, { error: { message: "no route" } })
      if (stream) sse(res, answer as ReadonlyArray<unknown>)
      else json(res, 200, answer)
    })
    const response = yield* Clients.generate(request, {
      endpoint: { api: "openai-responses", baseUrl: `http://127.0.0.1:${port}/v1`, keyEnv: [] },
      stream
    })
    return { response, bodies }
  })

describe("the Responses decoder takes bodies without the optional fields", () => {
  it.scopedLive("a body of one message item with an output_text part, and nothing else", () =>
    Effect.gen(function*() {
      const { response } = yield* callWith({ output: [{ type: "message", content: [{ type: "output_text", text: "3" }] }] })
      expect(response).toEqual({
        text: "3",
        toolCalls: [],
        usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
        finishReason: "stop",
        model: "qwen3-8b"
      })
    }))

  it.scopedLive("usage without details, nulls where OpenAI has objects, and unknown fields", () =>
    Effect.gen(function*() {
      const { response } = yield* callWith({
        id: "resp_1",
        model: "qwen3-8b-instruct",
        status: "completed",
        incomplete_details: null,
        metadata: null,
        reasoning: { effort: null },
        extra_field_of_this_server: [1, 2],
        output: [
          { type: "reasoning", id: "rs_1", summary: [], content: [{ type: "reasoning_text", text: "thinking" }] },
          { type: "message", role: "assistant", content: [{ type: "output_text", text: "It is 3." }] }
        ],
        usage: { input_tokens: 20, output_tokens: 4 }
      })
      expect(response.text).toBe("It is 3.")
      expect(response.model).toBe("qwen3-8b-instruct")
      expect(response.usage).toEqual({ inputTokens: 20, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 0 })
    }))

  it.scopedLive("a function_call item with only call_id, name and arguments keeps the arguments' text", () =>
    Effect.gen(function*() {
      const { response } = yield* callWith({
        output: [{ type: "function_call", call_id: "call_7", name: "add", arguments: "{\"a\": 1.0, \"b\": 2}" }],
        usage: { input_tokens: 30, output_tokens: 9, input_tokens_details: { cached_tokens: 10 } }
      })
      expect(response.toolCalls).toEqual([{ id: "call_7", name: "add", arguments: { a: 1, b: 2 }, argumentsText: "{\"a\": 1.0, \"b\": 2}" }])
      expect(response.finishReason).toBe("tool-calls")
      // OpenAI's input_tokens include the cached ones; ours are disjoint.
      expect(response.usage).toEqual({ inputTokens: 20, outputTokens: 9, cacheReadTokens: 10, cacheWriteTokens: 0 })
    }))

  it.scopedLive("a body with the SDKs' output_text field and an empty output", () =>
    Effect.gen(function*() {
      const { response } = yield* callWith({ output: [], output_text: "3" })
      expect(response.text).toBe("3")
    }))

  it.scopedLive("incomplete_details says why a response stopped short", () =>
    Effect.gen(function*() {
      const { response } = yield* callWith({
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" },
        output: [{ type: "message", content: [{ type: "output_text", text: "The answer is" }] }]
      })
      expect(response.finishReason).toBe("length")
    }))

  it.scopedLive("a failed response is a ModelError saying why, not a decode failure", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(callWith({ status: "failed", output: [], error: { code: "server_error", message: "the GPU fell over" } }))
      expect(error).toMatchObject({ _tag: "ModelError", reason: "server-error" })
      expect(error.message).toContain("the GPU fell over")
    }))

  it.scopedLive("a 200 whose body has neither output nor output_text is a decode ModelError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(callWith({ id: "resp_1", object: "response" }))
      expect(error).toMatchObject({ reason: "decode", status: 200 })
    }))

  it.scopedLive("a stream of only text deltas and a completed event whose response has usage alone", () =>
    Effect.gen(function*() {
      const { response } = yield* callWith([
        { type: "response.output_text.delta", delta: "It is " },
        { type: "response.output_text.delta", delta: "3." },
        { type: "response.completed", response: { usage: { input_tokens: 12, output_tokens: 3 } } }
      ], true)
      expect(response).toEqual({
        text: "It is 3.",
        toolCalls: [],
        usage: { inputTokens: 12, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 },
        finishReason: "stop",
        model: "qwen3-8b"
      })
    }))

  it.scopedLive("a stream's function call from a minimal output_item.done keeps the arguments' text", () =>
    Effect.gen(function*() {
      const { response } = yield* callWith([
        { type: "response.created", response: { model: "qwen3-8b-instruct", output: [] } },
        { type: "response.output_item.done", item: { type: "function_call", call_id: "call_1", name: "add", arguments: "{\"a\":1.0,\"b\":2}" } },
        { type: "response.completed", response: { output: [], usage: { input_tokens: 5, output_tokens: 2 } } }
      ], true)
      expect(response.toolCalls).toEqual([{ id: "call_1", name: "add", arguments: { a: 1, b: 2 }, argumentsText: "{\"a\":1.0,\"b\":2}" }])
      expect(response.model).toBe("qwen3-8b-instruct")
      expect(response.finishReason).toBe("tool-calls")
    }))

  it.scopedLive("a stream that announces a call and streams its arguments, without a done item, still gives the call", () =>
    Effect.gen(function*() {
      const { response } = yield* callWith([
        { type: "response.output_item.added", item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "add", arguments: "" } },
        { type: "response.function_call_arguments.delta", item_id: "fc_1", delta: "{\"a\": 1.0," },
        { type: "response.function_call_arguments.delta", item_id: "fc_1", delta: " \"b\": 2}" },
        { type: "response.completed", response: {} }
      ], true)
      expect(response.toolCalls).toEqual([{ id: "call_1", name: "add", arguments: { a: 1, b: 2 }, argumentsText: "{\"a\": 1.0, \"b\": 2}" }])
    }))

  it.scopedLive("the request is a plain Responses body: system message, input_text, function tools with strict false", () =>
    Effect.gen(function*() {
      const { bodies } = yield* callWith({ output: [] })
      expect(bodies[0]).toEqual({
        model: "qwen3-8b",
        input: [
          { role: "system", content: "be brief" },
          { role: "user", content: [{ type: "input_text", text: "add 1.0 and 2" }] }
        ],
        tools: [{ type: "function", name: "add", description: "adds", parameters: request.tools[0]?.parameters, strict: false }],
        tool_choice: "auto"
      })
    }))
})
