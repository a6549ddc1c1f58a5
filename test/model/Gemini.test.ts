import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import type { ModelRequest } from "../../src/model/Clients.ts"
import { bodyOf, GenerateContentResponse, responseFrom } from "../../src/model/Gemini.ts"

const decode = Schema.decodeUnknownSync(GenerateContentResponse)

describe("the Gemini wire format", () => {
  it("a conversation becomes Gemini turns: system instruction, merged sides, function calls with their signatures, tool results as objects", () => {
    const request: ModelRequest = {
      provider: "google",
      model: "gemini-2.5-flash",
      system: "Be brief.",
      messages: [
        { role: "user", content: "Balance of acct-1?" },
        {
          role: "assistant",
          content: "Looking.",
          toolCalls: [
            { id: "sig_0:c2lnbmF0dXJl", name: "get_balance", arguments: { account: "acct-1" } },
            { id: "call_1", name: "get_owner", arguments: { account: "acct-1" } }
          ]
        },
        { role: "tool", toolCallId: "sig_0:c2lnbmF0dXJl", name: "get_balance", content: "{\"balance\": 5.0}" },
        { role: "tool", toolCallId: "call_1", name: "get_owner", content: "Ada", isError: true }
      ],
      tools: [{ name: "get_balance", description: "Balance of an account", parameters: { type: "object", properties: { account: { type: "string" } }, additionalProperties: false } }],
      maxOutputTokens: 256
    }
    expect(bodyOf(request)).toEqual({
      systemInstruction: { parts: [{ text: "Be brief." }] },
      contents: [
        { role: "user", parts: [{ text: "Balance of acct-1?" }] },
        {
          role: "model",
          parts: [
            { text: "Looking." },
            { functionCall: { name: "get_balance", args: { account: "acct-1" } }, thoughtSignature: "c2lnbmF0dXJl" },
            { functionCall: { name: "get_owner", args: { account: "acct-1" } } }
          ]
        },
        {
          role: "user",
          parts: [
            { functionResponse: { name: "get_balance", response: { balance: 5 } } },
            { functionResponse: { name: "get_owner", response: { error: { result: "Ada" } } } }
          ]
        }
      ],
      // Full JSON Schema goes in parametersJsonSchema (`parameters` takes only an OpenAPI subset).
      tools: [{ functionDeclarations: [{ name: "get_balance", description: "Balance of an account", parametersJsonSchema: request.tools[0]!.parameters }] }],
      generationConfig: { maxOutputTokens: 256 }
    })
  })

  it("a response: text without thought summaries, calls keeping their signatures, disjoint token counts with thoughts as output", () => {
    const response = responseFrom(
      [
        decode({
          candidates: [{
            content: {
              role: "model",
              parts: [
                { text: "thinking about it", thought: true },
                { text: "Checking." },
                { functionCall: { name: "get_balance", args: { account: "acct-1" } }, thoughtSignature: "abc" }
              ]
            },
            finishReason: "STOP"
          }],
          usageMetadata: { promptTokenCount: 120, cachedContentTokenCount: 20, candidatesTokenCount: 15, thoughtsTokenCount: 40 },
          modelVersion: "gemini-2.5-flash-001"
        })
      ],
      "gemini-2.5-flash",
      (n) => (n === 0 ? "{\"account\": \"acct-1\"}" : undefined)
    )
    expect(response).toEqual({
      text: "Checking.",
      toolCalls: [{ id: "sig_0:abc", name: "get_balance", arguments: { account: "acct-1" }, argumentsText: "{\"account\": \"acct-1\"}" }],
      usage: { inputTokens: 100, outputTokens: 55, cacheReadTokens: 20, cacheWriteTokens: 0 },
      finishReason: "tool-calls",
      model: "gemini-2.5-flash-001"
    })
  })

  it("a stream's chunks join their text deltas; the last usage and finish reason count; a blocked prompt is a content filter", () => {
    const chunks = [
      { candidates: [{ content: { role: "model", parts: [{ text: "Hel" }] } }] },
      { candidates: [{ content: { role: "model", parts: [{ text: "lo." }] }, finishReason: "MAX_TOKENS" }], usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 2 } }
    ].map((c) => decode(c))
    expect(responseFrom(chunks, "gemini-2.5-flash")).toEqual({
      text: "Hello.",
      toolCalls: [],
      usage: { inputTokens: 9, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
      finishReason: "length",
      model: "gemini-2.5-flash"
    })
    expect(responseFrom([decode({ promptFeedback: { blockReason: "SAFETY" } })], "m").finishReason).toBe("content-filter")
  })
})
