/**
 * A 2xx answer whose content cannot be used (tool-call arguments cut off at the output limit, a
 * body that is not the API's shape) was still answered, and billed: the client's ModelError says
 * it was sent, and carries the usage the body reported when that could be read, so the spend cap
 * settles it at that cost (test/budget/SpendCapFailures.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import type { ServerResponse } from "node:http"
import { Effect } from "effect"
import * as Clients from "../../src/model/Clients.ts"
import type { ModelRequest } from "../../src/model/Model.ts"
import { httpServer, json, sse } from "./servers.ts"

const request: ModelRequest = {
  provider: "test",
  model: "m",
  system: "",
  messages: [{ role: "user", content: "weather in Paris?" }],
  tools: [{ name: "lookup", description: "d", parameters: { type: "object", properties: { city: { type: "string" } } } }],
  maxOutputTokens: 1000
}
const cut = "{\"city\": \"Par"
const billed = { inputTokens: 2000, outputTokens: 1000, cacheReadTokens: 0, cacheWriteTokens: 0 }

type Api = "openai-responses" | "openai-chat" | "anthropic-messages"

/** Each wire format's answer whose one tool call's arguments were cut off at the output limit, with its usage. */
const truncated: Record<Api, (res: ServerResponse, stream: boolean) => void> = {
  "openai-responses": (res, stream) => {
    const item = { type: "function_call", id: "fc_1", call_id: "call_1", name: "lookup", arguments: cut, status: "incomplete" }
    const response = { model: "m", status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output: [item], usage: { input_tokens: 2000, output_tokens: 1000 } }
    if (stream) sse(res, [{ type: "response.output_item.done", item }, { type: "response.incomplete", response }])
    else json(res, 200, response)
  },
  "openai-chat": (res, stream) => {
    const usage = { prompt_tokens: 2000, completion_tokens: 1000 }
    const call = { id: "call_1", type: "function", function: { name: "lookup", arguments: cut } }
    if (stream) {
      sse(res, [
        { model: "m", choices: [{ delta: { tool_calls: [{ index: 0, ...call }] } }] },
        { model: "m", choices: [{ delta: {}, finish_reason: "length" }] },
        { model: "m", choices: [], usage }
      ])
    } else json(res, 200, { model: "m", choices: [{ message: { content: null, tool_calls: [call] }, finish_reason: "length" }], usage })
  },
  "anthropic-messages": (res, stream) => {
    if (stream) {
      sse(res, [
        { type: "message_start", message: { model: "m", usage: { input_tokens: 2000, output_tokens: 1 } } },
        { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "lookup", input: {} } },
        { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: cut } },
        { type: "message_delta", delta: { stop_reason: "max_tokens" }, usage: { output_tokens: 1000 } },
        { type: "message_stop" }
      ])
    } else {
      // A server that passes the cut-off arguments on as text where the input object belongs.
      json(res, 200, { model: "m", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input: cut }], stop_reason: "max_tokens", usage: { input_tokens: 2000, output_tokens: 1000 } })
    }
  }
}

const baseUrl = (api: Api | "google", port: number) =>
  api === "anthropic-messages" ? `http://127.0.0.1:${port}` : api === "google" ? `http://127.0.0.1:${port}/v1beta` : `http://127.0.0.1:${port}/v1`

const failureOf = (api: Api | "google", port: number, stream: boolean) =>
  Effect.flip(Clients.generate(request, { endpoint: { api, baseUrl: baseUrl(api, port), keyEnv: [] }, stream, timeout: 10_000 }))

describe("a 2xx answer that cannot be used", () => {
  for (const api of ["openai-responses", "openai-chat", "anthropic-messages"] as const) {
    for (const stream of [false, true]) {
      it.scopedLive(`${api}${stream ? " (streaming)" : ""}: tool-call arguments cut off at the output limit are a decode ModelError that was sent, with the usage the answer reported`, () =>
        Effect.gen(function*() {
          const port = yield* httpServer((_req, res) => truncated[api](res, stream))
          const error = yield* failureOf(api, port, stream)
          expect(error).toMatchObject({ reason: "decode", sent: true, usage: billed })
        }))
    }
  }

  it.scopedLive("a 2xx body that is not the API's shape was sent, and its usage cannot be read", () =>
    Effect.gen(function*() {
      const port = yield* httpServer((_req, res) => json(res, 200, { candidates: "none", usageMetadata: { promptTokenCount: 5 } }))
      const error = yield* failureOf("google", port, false)
      expect(error).toMatchObject({ reason: "decode", status: 200, sent: true })
      expect(error.usage).toBeUndefined()
    }))

  it.scopedLive("an Anthropic stream that fails before its final usage says so was sent, its usage unknown (the output so far is not what was billed)", () =>
    Effect.gen(function*() {
      const port = yield* httpServer((_req, res) =>
        sse(res, [
          { type: "message_start", message: { model: "m", usage: { input_tokens: 2000, output_tokens: 1 } } },
          { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }
        ])
      )
      const error = yield* failureOf("anthropic-messages", port, true)
      expect(error).toMatchObject({ reason: "server-error", sent: true })
      expect(error.usage).toBeUndefined()
    }))
})
