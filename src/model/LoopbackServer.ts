/**
 * A scripted model server on 127.0.0.1 for tests and demos. It speaks the OpenAI Responses, OpenAI
 * chat completions, Anthropic messages and Gemini generateContent wire formats, streaming and not,
 * and answers from a script of turns, reporting usage the way each real API does.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { readFile } from "node:fs/promises"
import { Effect, Schema, type Scope } from "effect"

// ---------------------------------------------------------------------------------------------
// Script
// ---------------------------------------------------------------------------------------------

export const WireApi = Schema.Literal("openai-responses", "openai-chat", "anthropic-messages", "google")
export type WireApi = typeof WireApi.Type

export const TurnMatch = Schema.Struct({
  /** regex tested against the model id the request names (unanchored: "gpt-4o-mini" matches "gpt-4o-mini-2024-07-18") */
  model: Schema.optional(Schema.String),
  /** regex tested against the system prompt (instructions / system / developer messages) */
  system: Schema.optional(Schema.String),
  /** regex tested against the text of the last user message that has text */
  lastUser: Schema.optional(Schema.String),
  /** only requests in this wire format */
  api: Schema.optional(WireApi)
})
export type TurnMatch = typeof TurnMatch.Type

export const ScriptToolCall = Schema.Struct({
  name: Schema.String,
  arguments: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  id: Schema.optional(Schema.String),
  /**
   * the arguments' JSON text, sent verbatim instead of `JSON.stringify(arguments)` (Responses and
   * chat completions `arguments`, Anthropic's `partial_json` and its message's `input`), e.g.
   * `{"x": 5.0}`; `arguments` should be what it parses to
   */
  argumentsText: Schema.optional(Schema.String)
})
export type ScriptToolCall = typeof ScriptToolCall.Type

/** Disjoint counts: `input` excludes cache reads and writes (Anthropic's convention). */
export const ScriptUsage = Schema.Struct({
  input: Schema.Number,
  output: Schema.Number,
  cacheRead: Schema.optional(Schema.Number),
  cacheWrite: Schema.optional(Schema.Number),
  /** how many of `output` are reasoning tokens (Gemini reports them beside its candidates count) */
  reasoning: Schema.optional(Schema.Number)
})
export type ScriptUsage = typeof ScriptUsage.Type

export const ScriptTurn = Schema.Struct({
  match: Schema.optional(TurnMatch),
  text: Schema.optional(Schema.String),
  toolCalls: Schema.optional(Schema.Array(ScriptToolCall)),
  usage: Schema.optional(ScriptUsage),
  /** a non-2xx status answers an error body in the API's format (429, 500, 401, ...) */
  status: Schema.optional(Schema.Number),
  headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  /** never consumed: answers every matching request from here on ("always answer this") */
  repeat: Schema.optional(Schema.Boolean),
  /** never consumed, and only answers when no other turn matches (a fallback wherever it stands) */
  default: Schema.optional(Schema.Boolean),
  /** wait before answering, to exercise timeouts */
  delayMs: Schema.optional(Schema.Number)
})
export type ScriptTurn = typeof ScriptTurn.Type

export const Script = Schema.Struct({ turns: Schema.Array(ScriptTurn) })
export type Script = typeof Script.Type

/** A script is `{ turns: [...] }` or just the array of turns. */
const ScriptInput = Schema.Union(Script, Schema.transform(Schema.Array(ScriptTurn), Script, {
  strict: true,
  decode: (turns) => ({ turns }),
  encode: (script) => script.turns
}))

export class LoopbackError extends Schema.TaggedError<LoopbackError>()("LoopbackError", {
  reason: Schema.Literal("script-unreadable", "script-invalid", "listen"),
  detail: Schema.String
}) {
  override get message() {
    return `loopback server ${this.reason}: ${this.detail}`
  }
}

export const decodeScript = (input: unknown): Effect.Effect<Script, LoopbackError> =>
  Schema.decodeUnknown(ScriptInput)(input).pipe(
    Effect.mapError((e) => new LoopbackError({ reason: "script-invalid", detail: e.message }))
  )

export const loadScript = (path: string): Effect.Effect<Script, LoopbackError> =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (e) => new LoopbackError({ reason: "script-unreadable", detail: `${path}: ${String(e)}` })
  }).pipe(
    Effect.flatMap((text) =>
      Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: (e) => new LoopbackError({ reason: "script-invalid", detail: `${path}: ${String(e)}` })
      })
    ),
    Effect.flatMap(decodeScript)
  )

// ---------------------------------------------------------------------------------------------
// Request log
// ---------------------------------------------------------------------------------------------

export interface LoggedRequest {
  readonly method: string
  readonly path: string
  readonly api: WireApi | null
  /** header names lower-cased; credentials replaced by "[redacted]" */
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
  readonly stream: boolean
  /** index of the script turn that answered, null when none matched */
  readonly turn: number | null
  readonly status: number
  /** the usage this server reported for the request (disjoint counts as in the script), null if none */
  readonly usage: { readonly input: number; readonly output: number; readonly cacheRead: number; readonly cacheWrite: number } | null
}

const credentialHeaders = new Set([
  "authorization",
  "x-api-key",
  "api-key",
  "x-goog-api-key",
  "cookie",
  "proxy-authorization"
])

export const redactHeaders = (headers: IncomingMessage["headers"]): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    const lower = name.toLowerCase()
    out[lower] = credentialHeaders.has(lower) ? "[redacted]" : Array.isArray(value) ? value.join(", ") : value
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Reading requests
// ---------------------------------------------------------------------------------------------

type JsonObject = Record<string, unknown>

const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)
const asArray = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])
const asString = (u: unknown): string => (typeof u === "string" ? u : "")

/** Text of a content value in any of the three formats: a string or an array of text-ish parts. */
const textOf = (content: unknown): string => {
  if (typeof content === "string") return content
  return asArray(content)
    .map((part) => (isObject(part) && typeof part["text"] === "string" ? part["text"] : ""))
    .join("")
}

interface RequestView {
  readonly model: string
  readonly system: string
  readonly lastUser: string
  readonly stream: boolean
}

const lastText = (texts: ReadonlyArray<string>): string => [...texts].reverse().find((t) => t.length > 0) ?? ""

const viewOf = (api: WireApi, body: JsonObject, route: Route): RequestView => {
  const model = route.model ?? asString(body["model"])
  const stream = route.stream ?? body["stream"] === true
  if (api === "google") {
    const contents = asArray(body["contents"]).filter(isObject)
    const system = isObject(body["systemInstruction"]) ? textOf(body["systemInstruction"]["parts"]) : ""
    return { model, stream, system, lastUser: lastText(contents.filter((c) => c["role"] === "user").map((c) => textOf(c["parts"]))) }
  }
  if (api === "anthropic-messages") {
    const messages = asArray(body["messages"]).filter(isObject)
    return {
      model,
      stream,
      system: textOf(body["system"]),
      lastUser: lastText(messages.filter((m) => m["role"] === "user").map((m) => textOf(m["content"])))
    }
  }
  const items = asArray(api === "openai-chat" ? body["messages"] : body["input"]).filter(isObject)
  const systemItems = items.filter((m) => m["role"] === "system" || m["role"] === "developer")
  const system = [asString(body["instructions"]), ...systemItems.map((m) => textOf(m["content"]))]
    .filter((s) => s.length > 0)
    .join("\n")
  const userTexts = typeof body["input"] === "string" && api === "openai-responses"
    ? [body["input"]]
    : items.filter((m) => m["role"] === "user").map((m) => textOf(m["content"]))
  return { model, stream, system, lastUser: lastText(userTexts) }
}

const matches = (turn: ScriptTurn, api: WireApi, view: RequestView): boolean => {
  const m = turn.match
  if (m === undefined) return true
  if (m.api !== undefined && m.api !== api) return false
  if (m.model !== undefined && !new RegExp(m.model).test(view.model)) return false
  if (m.system !== undefined && !new RegExp(m.system).test(view.system)) return false
  if (m.lastUser !== undefined && !new RegExp(m.lastUser).test(view.lastUser)) return false
  return true
}

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------

interface Answer {
  readonly text: string | null
  readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: JsonObject; readonly argumentsText: string }>
  readonly usage: { readonly input: number; readonly output: number; readonly cacheRead: number; readonly cacheWrite: number; readonly reasoning: number }
  readonly model: string
}

/** Deterministic stand-in for a tokenizer: one token per four characters. */
const tokensOf = (chars: number): number => Math.max(1, Math.ceil(chars / 4))

interface Ids {
  next: (prefix: string) => string
}

const answerOf = (turn: ScriptTurn, view: RequestView, rawBody: string, ids: Ids, api: WireApi): Answer => {
  const callPrefix = api === "anthropic-messages" ? "toolu" : api === "google" ? "gcall" : "call"
  const toolCalls = (turn.toolCalls ?? []).map((call) => ({
    id: call.id ?? ids.next(callPrefix),
    name: call.name,
    arguments: call.arguments as JsonObject,
    argumentsText: call.argumentsText ?? JSON.stringify(call.arguments)
  }))
  const text = turn.text ?? null
  const outChars = (text ?? "").length + toolCalls.reduce((n, c) => n + c.name.length + c.argumentsText.length, 0)
  const usage = turn.usage === undefined
    ? { input: tokensOf(rawBody.length), output: tokensOf(outChars), cacheRead: 0, cacheWrite: 0, reasoning: 0 }
    : {
      input: turn.usage.input,
      output: turn.usage.output,
      cacheRead: turn.usage.cacheRead ?? 0,
      cacheWrite: turn.usage.cacheWrite ?? 0,
      reasoning: Math.min(turn.usage.reasoning ?? 0, turn.usage.output)
    }
  return { text, toolCalls, usage, model: view.model.length > 0 ? view.model : "loopback" }
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000)

// OpenAI has no cache-write charge: written tokens are ordinary input there.
const openAiUsage = (a: Answer) => {
  const input = a.usage.input + a.usage.cacheRead + a.usage.cacheWrite
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: a.usage.cacheRead },
    output_tokens: a.usage.output,
    output_tokens_details: { reasoning_tokens: a.usage.reasoning },
    total_tokens: input + a.usage.output
  }
}

const chatUsage = (a: Answer) => {
  const prompt = a.usage.input + a.usage.cacheRead + a.usage.cacheWrite
  return {
    prompt_tokens: prompt,
    completion_tokens: a.usage.output,
    total_tokens: prompt + a.usage.output,
    prompt_tokens_details: { cached_tokens: a.usage.cacheRead },
    completion_tokens_details: { reasoning_tokens: a.usage.reasoning }
  }
}

const anthropicUsage = (a: Answer, outputTokens: number) => ({
  input_tokens: a.usage.input,
  cache_creation_input_tokens: a.usage.cacheWrite,
  cache_read_input_tokens: a.usage.cacheRead,
  output_tokens: outputTokens
})

const responsesItems = (a: Answer, ids: Ids) => {
  const items: Array<JsonObject> = []
  if (a.text !== null) {
    items.push({
      type: "message",
      id: ids.next("msg"),
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: a.text, annotations: [], logprobs: [] }]
    })
  }
  for (const call of a.toolCalls) {
    items.push({
      type: "function_call",
      id: ids.next("fc"),
      call_id: call.id,
      name: call.name,
      arguments: call.argumentsText,
      status: "completed"
    })
  }
  return items
}

const responsesEnvelope = (
  a: Answer,
  body: JsonObject,
  id: string,
  createdAt: number,
  status: "in_progress" | "completed",
  output: ReadonlyArray<JsonObject>
) => ({
  id,
  object: "response",
  created_at: createdAt,
  status,
  model: a.model,
  output,
  error: null,
  incomplete_details: null,
  instructions: typeof body["instructions"] === "string" ? body["instructions"] : null,
  max_output_tokens: typeof body["max_output_tokens"] === "number" ? body["max_output_tokens"] : null,
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  store: false,
  temperature: 1,
  text: { format: { type: "text" } },
  tool_choice: body["tool_choice"] ?? "auto",
  tools: asArray(body["tools"]),
  top_p: 1,
  truncation: "disabled",
  usage: status === "completed" ? openAiUsage(a) : null,
  user: null,
  metadata: {}
})

/** The SSE events of a Responses stream, in the order the real API sends them. */
const responsesEvents = (a: Answer, body: JsonObject, ids: Ids): Array<JsonObject> => {
  const id = ids.next("resp")
  const createdAt = nowSeconds()
  const items = responsesItems(a, ids)
  const events: Array<JsonObject> = []
  events.push({ type: "response.created", response: responsesEnvelope(a, body, id, createdAt, "in_progress", []) })
  events.push({ type: "response.in_progress", response: responsesEnvelope(a, body, id, createdAt, "in_progress", []) })
  items.forEach((item, outputIndex) => {
    const itemId = asString(item["id"])
    if (item["type"] === "message") {
      const text = a.text ?? ""
      events.push({
        type: "response.output_item.added",
        output_index: outputIndex,
        item: { ...item, status: "in_progress", content: [] }
      })
      const emptyPart = { type: "output_text", text: "", annotations: [] }
      events.push({ type: "response.content_part.added", item_id: itemId, output_index: outputIndex, content_index: 0, part: emptyPart })
      for (const delta of chunksOf(text)) {
        events.push({ type: "response.output_text.delta", item_id: itemId, output_index: outputIndex, content_index: 0, delta, logprobs: [] })
      }
      events.push({ type: "response.output_text.done", item_id: itemId, output_index: outputIndex, content_index: 0, text, logprobs: [] })
      events.push({
        type: "response.content_part.done",
        item_id: itemId,
        output_index: outputIndex,
        content_index: 0,
        part: { ...emptyPart, text }
      })
    } else {
      const args = asString(item["arguments"])
      events.push({
        type: "response.output_item.added",
        output_index: outputIndex,
        item: { ...item, arguments: "", status: "in_progress" }
      })
      for (const delta of chunksOf(args)) {
        events.push({ type: "response.function_call_arguments.delta", item_id: itemId, output_index: outputIndex, delta })
      }
      events.push({ type: "response.function_call_arguments.done", item_id: itemId, output_index: outputIndex, arguments: args })
    }
    events.push({ type: "response.output_item.done", output_index: outputIndex, item })
  })
  events.push({ type: "response.completed", response: responsesEnvelope(a, body, id, createdAt, "completed", items) })
  return events.map((event, sequence) => ({ ...event, sequence_number: sequence }))
}

/** Splits text into a few deltas so that clients really reassemble a stream. */
const chunksOf = (text: string): Array<string> => {
  if (text.length === 0) return []
  const size = Math.max(1, Math.ceil(text.length / 3))
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

const chatCompletion = (a: Answer, ids: Ids) => ({
  id: ids.next("chatcmpl"),
  object: "chat.completion",
  created: nowSeconds(),
  model: a.model,
  choices: [{
    index: 0,
    message: {
      role: "assistant",
      content: a.text,
      ...(a.toolCalls.length > 0
        ? {
          tool_calls: a.toolCalls.map((c) => ({
            id: c.id,
            type: "function",
            function: { name: c.name, arguments: c.argumentsText }
          }))
        }
        : {})
    },
    logprobs: null,
    finish_reason: a.toolCalls.length > 0 ? "tool_calls" : "stop"
  }],
  usage: chatUsage(a)
})

/** Chat completion chunks; the usage chunk only when the request asked for it, as OpenAI does. */
const chatChunks = (a: Answer, body: JsonObject, ids: Ids): Array<JsonObject> => {
  const id = ids.next("chatcmpl")
  const created = nowSeconds()
  const chunk = (delta: JsonObject, finish: string | null): JsonObject => ({
    id,
    object: "chat.completion.chunk",
    created,
    model: a.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }]
  })
  const chunks: Array<JsonObject> = [chunk({ role: "assistant", content: "" }, null)]
  for (const delta of chunksOf(a.text ?? "")) chunks.push(chunk({ content: delta }, null))
  a.toolCalls.forEach((call, index) => {
    chunks.push(chunk({
      tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }]
    }, null))
    for (const delta of chunksOf(call.argumentsText)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: delta } }] }, null))
    }
  })
  chunks.push(chunk({}, a.toolCalls.length > 0 ? "tool_calls" : "stop"))
  const options = body["stream_options"]
  if (isObject(options) && options["include_usage"] === true) {
    chunks.push({ id, object: "chat.completion.chunk", created, model: a.model, choices: [], usage: chatUsage(a) })
  }
  return chunks
}

const anthropicContent = (a: Answer): Array<JsonObject> => [
  ...(a.text !== null ? [{ type: "text", text: a.text }] : []),
  ...a.toolCalls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.arguments }))
]

const anthropicStop = (a: Answer): string => (a.toolCalls.length > 0 ? "tool_use" : "end_turn")

const anthropicMessage = (a: Answer, ids: Ids) => ({
  id: ids.next("msg"),
  type: "message",
  role: "assistant",
  model: a.model,
  content: anthropicContent(a),
  stop_reason: anthropicStop(a),
  stop_sequence: null,
  usage: anthropicUsage(a, a.usage.output)
})

/** The message as JSON text, each tool_use `input` written as its call's arguments text (`5.0` stays `5.0`). */
const anthropicMessageText = (a: Answer, ids: Ids): string => {
  let text = JSON.stringify(anthropicMessage(a, ids))
  let from = 0
  for (const call of a.toolCalls) {
    const parsed = `"input":${JSON.stringify(call.arguments)}`
    const at = text.indexOf(parsed, from)
    if (at < 0) continue
    const raw = `"input":${call.argumentsText}`
    text = text.slice(0, at) + raw + text.slice(at + parsed.length)
    from = at + raw.length
  }
  return text
}

/** Anthropic stream events: input usage in message_start, cumulative output usage in message_delta. */
const anthropicEvents = (a: Answer, ids: Ids): Array<JsonObject> => {
  const events: Array<JsonObject> = [{
    type: "message_start",
    message: {
      id: ids.next("msg"),
      type: "message",
      role: "assistant",
      model: a.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: anthropicUsage(a, Math.min(1, a.usage.output))
    }
  }]
  anthropicContent(a).forEach((block, index) => {
    if (block["type"] === "text") {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } })
      for (const text of chunksOf(asString(block["text"]))) {
        events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text } })
      }
    } else {
      events.push({ type: "content_block_start", index, content_block: { ...block, input: {} } })
      const text = a.toolCalls.find((c) => c.id === block["id"])?.argumentsText ?? JSON.stringify(block["input"])
      for (const partial_json of chunksOf(text)) {
        events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } })
      }
    }
    events.push({ type: "content_block_stop", index })
  })
  events.push({
    type: "message_delta",
    delta: { stop_reason: anthropicStop(a), stop_sequence: null },
    usage: { output_tokens: a.usage.output }
  })
  events.push({ type: "message_stop" })
  return events
}

// Gemini: promptTokenCount includes the cached tokens; there is no cache-write count; thoughts are
// counted beside the candidates, not among them.
const geminiUsage = (a: Answer) => {
  const prompt = a.usage.input + a.usage.cacheRead + a.usage.cacheWrite
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: a.usage.output - a.usage.reasoning,
    cachedContentTokenCount: a.usage.cacheRead,
    ...(a.usage.reasoning > 0 ? { thoughtsTokenCount: a.usage.reasoning } : {}),
    totalTokenCount: prompt + a.usage.output
  }
}

/** Gemini parts as JSON text: a call's args are written as the script gives them (`5.0` stays `5.0`). */
const geminiPartsText = (text: string | null, calls: Answer["toolCalls"]): string =>
  `[${[
    ...(text !== null && text.length > 0 ? [JSON.stringify({ text })] : []),
    ...calls.map((c) => `{"functionCall":{"name":${JSON.stringify(c.name)},"args":${c.argumentsText}}}`)
  ].join(",")}]`

const geminiChunkText = (a: Answer, parts: string, last: boolean): string =>
  `{"candidates":[{"content":{"role":"model","parts":${parts}}${last ? `,"finishReason":"STOP","index":0` : ""}}]${
    last ? `,"usageMetadata":${JSON.stringify(geminiUsage(a))}` : ""
  },"modelVersion":${JSON.stringify(a.model)}}`

const geminiResponseText = (a: Answer): string => geminiChunkText(a, geminiPartsText(a.text, a.toolCalls), true)

/** A Gemini stream: the text in pieces, then the calls (whole) with the finish reason and usage. */
const geminiStream = (a: Answer): Array<string> => [
  ...chunksOf(a.text ?? "").slice(0, -1).map((piece) => geminiChunkText(a, geminiPartsText(piece, []), false)),
  geminiChunkText(a, geminiPartsText(chunksOf(a.text ?? "").at(-1) ?? null, a.toolCalls), true)
]

const errorBody = (api: WireApi | null, status: number, message: string): JsonObject => {
  if (api === "google") {
    const code = status === 429
      ? "RESOURCE_EXHAUSTED"
      : status === 401
      ? "UNAUTHENTICATED"
      : status === 403
      ? "PERMISSION_DENIED"
      : status === 503
      ? "UNAVAILABLE"
      : status >= 500
      ? "INTERNAL"
      : "INVALID_ARGUMENT"
    return { error: { code: status, message, status: code } }
  }
  if (api === "anthropic-messages") {
    const type = status === 429
      ? "rate_limit_error"
      : status === 401
      ? "authentication_error"
      : status === 403
      ? "permission_error"
      : status === 529
      ? "overloaded_error"
      : status >= 500
      ? "api_error"
      : "invalid_request_error"
    return { type: "error", error: { type, message } }
  }
  const type = status === 429
    ? "rate_limit_exceeded"
    : status === 401
    ? "invalid_api_key"
    : status >= 500
    ? "server_error"
    : "invalid_request_error"
  return { error: { message, type, param: null, code: type } }
}

// ---------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------

export interface LoopbackServer {
  /** http://127.0.0.1:PORT */
  readonly url: string
  readonly port: number
  /** base URL for OpenAI clients (`OPENAI_BASE_URL`): url + "/v1" */
  readonly openAiBaseUrl: string
  /** base URL for Anthropic clients (`ANTHROPIC_BASE_URL`): url */
  readonly anthropicBaseUrl: string
  /** base URL for Gemini clients (`GOOGLE_BASE_URL`): url + "/v1beta" */
  readonly googleBaseUrl: string
  /** requests received so far, credentials redacted */
  readonly requests: () => ReadonlyArray<LoggedRequest>
  /** the requests logged after the first `from` (no copy of the whole log: a bench polls it) */
  readonly requestsFrom: (from: number) => ReadonlyArray<LoggedRequest>
  /** indices of the non-repeating turns not yet consumed */
  readonly pendingTurns: () => ReadonlyArray<number>
  /** requests received whose delayed answer is not yet due (a test kills a client mid-call by it) */
  readonly delayed: () => number
}

/** What the path says of a request: Gemini names the model and streaming there. */
interface Route {
  readonly api: WireApi | null
  readonly model?: string
  readonly stream?: boolean
}

const geminiPath = /^(?:\/v1beta|\/v1)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/

const routeOf = (method: string, path: string): Route => {
  if (method !== "POST") return { api: null }
  if (path === "/v1/responses" || path === "/responses") return { api: "openai-responses" }
  if (path === "/v1/chat/completions" || path === "/chat/completions") return { api: "openai-chat" }
  if (path === "/v1/messages") return { api: "anthropic-messages" }
  const gemini = geminiPath.exec(path)
  if (gemini !== null) return { api: "google", model: decodeURIComponent(gemini[1] ?? ""), stream: gemini[2] === "streamGenerateContent" }
  return { api: null }
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const sendJsonText = (res: ServerResponse, status: number, text: string, headers: Record<string, string>): void => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(text)
}

const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void =>
  sendJsonText(res, status, JSON.stringify(body), headers)

const sendSse = (res: ServerResponse, events: ReadonlyArray<JsonObject>, named: boolean, done: boolean, headers: Record<string, string>): void => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers })
  for (const event of events) {
    const prefix = named ? `event: ${asString(event["type"])}\n` : ""
    res.write(`${prefix}data: ${JSON.stringify(event)}\n\n`)
  }
  if (done) res.write("data: [DONE]\n\n")
  res.end()
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Builds the node:http server answering `script`; not listening yet. */
export interface StartOptions {
  /** port to listen on; 0 (the default) picks a free one */
  readonly port?: number
  /** wire APIs served; the others answer 404 as a server without them would (e.g. chat-only Ollama) */
  readonly apis?: ReadonlyArray<WireApi>
}

export const makeServer = (script: Script, options: StartOptions = {}): { server: Server; handle: Omit<LoopbackServer, "url" | "port" | "openAiBaseUrl" | "anthropicBaseUrl" | "googleBaseUrl"> } => {
  const log: Array<LoggedRequest> = []
  const consumed = new Set<number>()
  const counters = new Map<string, number>()
  const ids: Ids = {
    next: (prefix) => {
      const n = (counters.get(prefix) ?? 0) + 1
      counters.set(prefix, n)
      return `${prefix}_loopback${String(n).padStart(4, "0")}`
    }
  }
  const models = [...new Set(script.turns.flatMap((t) => (t.match?.model !== undefined ? [t.match.model] : [])))]

  let delayed = 0
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? "GET"
    const path = (req.url ?? "/").split("?")[0] ?? "/"
    const headers = redactHeaders(req.headers)
    const raw = await readBody(req)
    const route = routeOf(method, path)
    const routed = route.api
    const api = routed !== null && (options.apis === undefined || options.apis.includes(routed)) ? routed : null
    const record = (entry: Omit<LoggedRequest, "method" | "path" | "headers" | "api" | "usage">, usage: LoggedRequest["usage"] = null) =>
      log.push({ method, path, headers, api, ...entry, usage })

    if (api === null) {
      if (method === "HEAD" || (method === "GET" && path === "/")) {
        record({ body: null, stream: false, turn: null, status: 200 })
        res.writeHead(200).end()
      } else if (method === "POST" && path === "/v1/messages/count_tokens") {
        // Claude Code may count tokens before it sends; the same stand-in count as for default usage.
        record({ body: raw, stream: false, turn: null, status: 200 })
        sendJson(res, 200, { input_tokens: tokensOf(raw.length) }, {})
      } else if (method === "GET" && (path === "/v1/models" || path === "/models")) {
        record({ body: null, stream: false, turn: null, status: 200 })
        sendJson(res, 200, { object: "list", data: (models.length > 0 ? models : ["loopback"]).map((id) => ({ id, object: "model", created: 0, owned_by: "loopback" })) }, {})
      } else {
        record({ body: raw.length > 0 ? raw : null, stream: false, turn: null, status: 404 })
        sendJson(res, 404, errorBody(null, 404, `no route ${method} ${path}`), {})
      }
      return
    }

    let body: JsonObject
    try {
      const parsed: unknown = JSON.parse(raw)
      if (!isObject(parsed)) throw new Error("body is not a JSON object")
      body = parsed
    } catch (e) {
      record({ body: raw, stream: false, turn: null, status: 400 })
      sendJson(res, 400, errorBody(api, 400, `invalid JSON body: ${String(e)}`), {})
      return
    }
    const view = viewOf(api, body, route)
    const eligible = (turn: ScriptTurn, i: number) => !consumed.has(i) && matches(turn, api, view)
    const first = script.turns.findIndex((turn, i) => turn.default !== true && eligible(turn, i))
    const index = first >= 0 ? first : script.turns.findIndex((turn, i) => turn.default === true && eligible(turn, i))
    const turn = script.turns[index]
    if (turn === undefined) {
      // A test that runs out of script is a test bug: answer 400 so no client retries it.
      record({ body, stream: view.stream, turn: null, status: 400 })
      sendJson(res, 400, errorBody(api, 400, `loopback script has no turn for model=${view.model} lastUser=${JSON.stringify(view.lastUser.slice(0, 80))}`), {})
      return
    }
    if (turn.repeat !== true && turn.default !== true) consumed.add(index)
    if (turn.delayMs !== undefined) {
      delayed++
      await sleep(turn.delayMs).finally(() => delayed--)
    }
    // A client that went away while the answer was delayed (killed) is not answered: what the
    // server answered is what a client can have been billed for.
    if (req.socket.destroyed) {
      record({ body, stream: view.stream, turn: index, status: 499 })
      return
    }
    const status = turn.status ?? 200
    const extra = turn.headers ?? {}
    if (status < 200 || status >= 300) {
      record({ body, stream: view.stream, turn: index, status })
      sendJson(res, status, errorBody(api, status, turn.text ?? `scripted status ${status}`), extra)
      return
    }
    const answer = answerOf(turn, view, raw, ids, api)
    const { cacheRead, cacheWrite, input, output } = answer.usage
    record({ body, stream: view.stream, turn: index, status }, { input, output, cacheRead, cacheWrite })
    switch (api) {
      case "openai-responses":
        if (view.stream) sendSse(res, responsesEvents(answer, body, ids), true, false, extra)
        else {
          const output = responsesItems(answer, ids)
          sendJson(res, 200, responsesEnvelope(answer, body, ids.next("resp"), nowSeconds(), "completed", output), extra)
        }
        return
      case "openai-chat":
        if (view.stream) sendSse(res, chatChunks(answer, body, ids), false, true, extra)
        else sendJson(res, 200, chatCompletion(answer, ids), extra)
        return
      case "anthropic-messages":
        if (view.stream) sendSse(res, anthropicEvents(answer, ids), true, false, extra)
        else sendJsonText(res, 200, anthropicMessageText(answer, ids), extra)
        return
      case "google":
        if (view.stream) {
          res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...extra })
          for (const chunk of geminiStream(answer)) res.write(`data: ${chunk}\r\n\r\n`)
          res.end()
        } else sendJsonText(res, 200, geminiResponseText(answer), extra)
        return
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      // A bug in the loopback server itself: answer 500 rather than hang the client.
      if (!res.headersSent) sendJson(res, 500, errorBody(null, 500, `loopback server error: ${String(e)}`), {})
      else res.end()
    })
  })
  return {
    server,
    handle: {
      requests: () => [...log],
      requestsFrom: (from) => log.slice(from),
      delayed: () => delayed,
      pendingTurns: () =>
        script.turns.flatMap((t, i) => (t.repeat !== true && t.default !== true && !consumed.has(i) ? [i] : []))
    }
  }
}

/**
 * Starts the server on 127.0.0.1 for the enclosing scope and closes it when the scope closes.
 * `script` is a Script value, a bare array of turns, or the path of a JSON file holding either.
 */
export const start = (
  script: Script | ReadonlyArray<ScriptTurn> | string,
  options: StartOptions = {}
): Effect.Effect<LoopbackServer, LoopbackError, Scope.Scope> =>
  Effect.gen(function*() {
    const decoded = typeof script === "string" ? yield* loadScript(script) : yield* decodeScript(script)
    const { handle, server } = makeServer(decoded, options)
    return yield* Effect.acquireRelease(
      Effect.async<LoopbackServer, LoopbackError>((resume) => {
        server.once("error", (e) => resume(Effect.fail(new LoopbackError({ reason: "listen", detail: String(e) }))))
        server.listen(options.port ?? 0, "127.0.0.1", () => {
          const port = (server.address() as AddressInfo).port
          const url = `http://127.0.0.1:${port}`
          resume(Effect.succeed({ ...handle, url, port, openAiBaseUrl: `${url}/v1`, anthropicBaseUrl: url, googleBaseUrl: `${url}/v1beta` }))
        })
      }),
      () =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
  })
