/**
 * The Gemini API's wire format (`POST {base}/models/{model}:generateContent`, and
 * `:streamGenerateContent?alt=sse`), as plain functions: the request body of a ModelRequest, and
 * a ModelResponse from the response (or the stream's chunks), and the call (`via`).
 *
 * Tool calls carry no id of Gemini's own; ours is `call_N`, or, when the model sent a thought
 * signature with the call, `sig_N:SIGNATURE`, so that the signature goes back with the call in
 * the next request as Gemini's thinking models require.
 */
import { Effect, Option, Redacted, Schema } from "effect"
import * as JsonText from "./JsonText.ts"
import type { FinishReason, Message, ModelRequest, ModelResponse, ToolCall, Usage } from "./Model.ts"
import { answeredFailure, bodyOfSuccess, decodeJson, noAnswer, postJson, sseData, type Via } from "./Wire.ts"

export const FunctionCall = Schema.Struct({
  name: Schema.String,
  args: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  id: Schema.optional(Schema.String)
})

export const Part = Schema.Struct({
  text: Schema.optional(Schema.String),
  /** a thought summary (asked for with includeThoughts), never the answer */
  thought: Schema.optional(Schema.Boolean),
  functionCall: Schema.optional(FunctionCall),
  thoughtSignature: Schema.optional(Schema.String)
})

export const UsageMetadata = Schema.Struct({
  /** includes the cached prompt tokens */
  promptTokenCount: Schema.optional(Schema.Number),
  candidatesTokenCount: Schema.optional(Schema.Number),
  cachedContentTokenCount: Schema.optional(Schema.Number),
  /** billed as output */
  thoughtsTokenCount: Schema.optional(Schema.Number),
  totalTokenCount: Schema.optional(Schema.Number)
})

/** One response, or one chunk of a stream (text parts are deltas there, function calls whole). */
export const GenerateContentResponse = Schema.Struct({
  candidates: Schema.optional(
    Schema.Array(
      Schema.Struct({
        content: Schema.optional(Schema.Struct({ role: Schema.optional(Schema.String), parts: Schema.optional(Schema.Array(Part)) })),
        finishReason: Schema.optional(Schema.String)
      })
    )
  ),
  usageMetadata: Schema.optional(UsageMetadata),
  modelVersion: Schema.optional(Schema.String),
  promptFeedback: Schema.optional(Schema.Struct({ blockReason: Schema.optional(Schema.String) }))
})
export type GenerateContentResponse = typeof GenerateContentResponse.Type

const SIGNED = /^sig_\d+:/

/** Our id of the `n`th tool call of a response. */
export const callId = (n: number, thoughtSignature: string | undefined): string =>
  thoughtSignature === undefined ? `call_${n}` : `sig_${n}:${thoughtSignature}`

const signatureOf = (id: string): string | undefined => (SIGNED.test(id) ? id.slice(id.indexOf(":") + 1) : undefined)

/** A tool's result as Gemini takes it: an object (JSON text that is an object is passed as is). */
const responseOf = (content: string, isError: boolean | undefined): Record<string, unknown> => {
  let value: unknown = content
  try {
    value = JSON.parse(content)
  } catch {
    // Plain text: passed on as the result's text.
  }
  const result = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { result: value }
  return isError === true ? { error: result } : result
}

type Content = { role: "user" | "model"; parts: Array<Record<string, unknown>> }

/** Consecutive messages of one side are one Gemini turn (tool results go back as the user's). */
const contentsOf = (messages: ReadonlyArray<Message>): Array<Content> => {
  const contents: Array<Content> = []
  const push = (role: Content["role"], part: Record<string, unknown>) => {
    const last = contents[contents.length - 1]
    if (last !== undefined && last.role === role) last.parts.push(part)
    else contents.push({ role, parts: [part] })
  }
  for (const m of messages) {
    switch (m.role) {
      case "user":
        push("user", { text: m.content })
        break
      case "assistant":
        if (m.content !== null && m.content.length > 0) push("model", { text: m.content })
        for (const call of m.toolCalls ?? []) {
          const signature = signatureOf(call.id)
          push("model", { functionCall: { name: call.name, args: call.arguments }, ...(signature !== undefined ? { thoughtSignature: signature } : {}) })
        }
        break
      case "tool":
        push("user", { functionResponse: { name: m.name, response: responseOf(m.content, m.isError) } })
        break
    }
  }
  return contents
}

/** The body of a generateContent request. */
export const bodyOf = (request: ModelRequest): Record<string, unknown> => ({
  ...(request.system.length > 0 ? { systemInstruction: { parts: [{ text: request.system }] } } : {}),
  contents: contentsOf(request.messages),
  ...(request.tools.length > 0
    ? { tools: [{ functionDeclarations: request.tools.map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.parameters })) }] }
    : {}),
  ...(request.maxOutputTokens !== undefined ? { generationConfig: { maxOutputTokens: request.maxOutputTokens } } : {})
})

export const usageOf = (u: typeof UsageMetadata.Type | undefined): Usage => {
  const cached = u?.cachedContentTokenCount ?? 0
  return {
    inputTokens: Math.max(0, (u?.promptTokenCount ?? 0) - cached),
    outputTokens: (u?.candidatesTokenCount ?? 0) + (u?.thoughtsTokenCount ?? 0),
    cacheReadTokens: cached,
    cacheWriteTokens: 0
  }
}

export const finishOf = (reason: string | undefined, calls: boolean): FinishReason => {
  switch (reason) {
    case undefined:
      return calls ? "tool-calls" : "unknown"
    case "STOP":
      return calls ? "tool-calls" : "stop"
    case "MAX_TOKENS":
      return "length"
    case "SAFETY":
    case "RECITATION":
    case "BLOCKLIST":
    case "PROHIBITED_CONTENT":
    case "SPII":
    case "IMAGE_SAFETY":
      return "content-filter"
    case "MALFORMED_FUNCTION_CALL":
    case "UNEXPECTED_TOOL_CALL":
      return "error"
    default:
      return "other"
  }
}

/**
 * One ModelResponse from a response or a stream's chunks, in order: the first candidate's text
 * (thought summaries left out), its function calls, the last usage and finish reason seen.
 * `argumentsText` gives a call's arguments as the server wrote them, where the caller found them.
 */
export const responseFrom = (
  chunks: ReadonlyArray<GenerateContentResponse>,
  requestModel: string,
  argumentsText: (n: number) => string | undefined = () => undefined
): ModelResponse => {
  const text: Array<string> = []
  const toolCalls: Array<ToolCall> = []
  let usage: typeof UsageMetadata.Type | undefined
  let finish: string | undefined
  let model: string | undefined
  for (const chunk of chunks) {
    if (chunk.usageMetadata !== undefined) usage = chunk.usageMetadata
    model = chunk.modelVersion ?? model
    const candidate = chunk.candidates?.[0]
    if (candidate?.finishReason !== undefined) finish = candidate.finishReason
    if (candidate === undefined && chunk.promptFeedback?.blockReason !== undefined) finish = "PROHIBITED_CONTENT"
    for (const part of candidate?.content?.parts ?? []) {
      if (part.functionCall !== undefined) {
        const n = toolCalls.length
        const raw = argumentsText(n)
        toolCalls.push({
          id: callId(n, part.thoughtSignature),
          name: part.functionCall.name,
          arguments: part.functionCall.args ?? {},
          ...(raw !== undefined ? { argumentsText: raw } : {})
        })
      } else if (part.text !== undefined && part.thought !== true) {
        text.push(part.text)
      }
    }
  }
  const joined = text.join("")
  return {
    text: joined.length > 0 ? joined : null,
    toolCalls,
    usage: usageOf(usage),
    finishReason: finishOf(finish, toolCalls.length > 0),
    model: model ?? requestModel
  }
}

// ---------------------------------------------------------------------------------------------
// The call
// ---------------------------------------------------------------------------------------------

const decodeGemini = Schema.decodeUnknownEither(GenerateContentResponse)

/** Each function call's `args` as written in one response (or stream chunk) text, in order. */
const geminiArgumentTexts = (text: string): Array<string | undefined> => {
  const out: Array<string | undefined> = []
  const candidate = JsonText.items(JsonText.member(JsonText.locate(text), "candidates"))[0]
  for (const part of JsonText.items(JsonText.member(JsonText.member(candidate, "content"), "parts"))) {
    const call = JsonText.member(part, "functionCall")
    if (call === undefined) continue
    const args = JsonText.member(call, "args")
    out.push(args === undefined ? undefined : text.slice(args.start, args.end))
  }
  return out
}

export const via: Via = (ctx, send, request, connection, stream, timeout) => {
  // A body that does not decode was still answered (and billed): its usage cannot be read.
  const answer = noAnswer()
  return Effect.gen(function*() {
    const method = stream ? "streamGenerateContent?alt=sse" : "generateContent"
    const key: Record<string, string> = Option.isSome(connection.key) ? { "x-goog-api-key": Redacted.value(connection.key.value.key) } : {}
    const body = yield* bodyOfSuccess(ctx, send, postJson(`${connection.baseUrl}/models/${encodeURIComponent(request.model)}:${method}`, bodyOf(request), key), timeout)
    answer.body = true
    // Function calls come whole (never split across chunks): their args' text is in one chunk.
    const texts = stream ? sseData(body) : [body]
    const chunks = yield* Effect.forEach(texts, (t) => decodeJson(ctx, decodeGemini, t))
    const argumentTexts = texts.flatMap(geminiArgumentTexts)
    return responseFrom(chunks, request.model, (n) => argumentTexts[n])
  }).pipe(Effect.mapError(answeredFailure(answer)))
}

