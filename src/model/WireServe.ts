/**
 * The server side of the four model wire APIs (OpenAI Responses, OpenAI chat completions,
 * Anthropic messages, Gemini generateContent): routing a request by its path, and writing an
 * answer (JSON or SSE, usage as each real API reports it) or an error body. The loopback test
 * server and the harness bridge's model proxy both answer clients with these.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Schema } from "effect"

export const WireApi = Schema.Literal("openai-responses", "openai-chat", "anthropic-messages", "google")
export type WireApi = typeof WireApi.Type

export type JsonObject = Record<string, unknown>

export const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)
export const asArray = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])
export const asString = (u: unknown): string => (typeof u === "string" ? u : "")

/** Text of a content value in any of the three formats: a string or an array of text-ish parts. */
export const textOf = (content: unknown): string => {
  if (typeof content === "string") return content
  return asArray(content)
    .map((part) => (isObject(part) && typeof part["text"] === "string" ? part["text"] : ""))
    .join("")
}

export interface Answer {
  readonly text: string | null
  readonly toolCalls: ReadonlyArray<{
    readonly id: string
    readonly name: string
    readonly arguments: JsonObject
    readonly argumentsText: string
    /** a Responses tool of a `namespace` group (codex's MCP tools): `name` is then the bare name */
    readonly namespace?: string
  }>
  readonly usage: { readonly input: number; readonly output: number; readonly cacheRead: number; readonly cacheWrite: number; readonly reasoning: number }
  readonly model: string
}

/** Deterministic stand-in for a tokenizer: one token per four characters. */
export const tokensOf = (chars: number): number => Math.max(1, Math.ceil(chars / 4))

export interface Ids {
  next: (prefix: string) => string
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000)

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

export const responsesItems = (a: Answer, ids: Ids) => {
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
      ...(call.namespace !== undefined ? { namespace: call.namespace } : {}),
      arguments: call.argumentsText,
      status: "completed"
    })
  }
  return items
}

export const responsesEnvelope = (
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
export const responsesEvents = (a: Answer, body: JsonObject, ids: Ids): Array<JsonObject> => {
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
export const chunksOf = (text: string): Array<string> => {
  if (text.length === 0) return []
  const size = Math.max(1, Math.ceil(text.length / 3))
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

export const chatCompletion = (a: Answer, ids: Ids) => ({
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
export const chatChunks = (a: Answer, body: JsonObject, ids: Ids): Array<JsonObject> => {
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
export const anthropicMessageText = (a: Answer, ids: Ids): string => {
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
export const anthropicEvents = (a: Answer, ids: Ids): Array<JsonObject> => {
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

export const geminiResponseText = (a: Answer): string => geminiChunkText(a, geminiPartsText(a.text, a.toolCalls), true)

/** A Gemini stream: the text in pieces, then the calls (whole) with the finish reason and usage. */
export const geminiStream = (a: Answer): Array<string> => [
  ...chunksOf(a.text ?? "").slice(0, -1).map((piece) => geminiChunkText(a, geminiPartsText(piece, []), false)),
  geminiChunkText(a, geminiPartsText(chunksOf(a.text ?? "").at(-1) ?? null, a.toolCalls), true)
]

export const errorBody = (api: WireApi | null, status: number, message: string): JsonObject => {
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


export interface Route {
  readonly api: WireApi | null
  readonly model?: string
  readonly stream?: boolean
}

const geminiPath = /^(?:\/v1beta|\/v1)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/

export const routeOf = (method: string, path: string): Route => {
  if (method !== "POST") return { api: null }
  if (path === "/v1/responses" || path === "/responses") return { api: "openai-responses" }
  if (path === "/v1/chat/completions" || path === "/chat/completions") return { api: "openai-chat" }
  if (path === "/v1/messages") return { api: "anthropic-messages" }
  const gemini = geminiPath.exec(path)
  if (gemini !== null) return { api: "google", model: decodeURIComponent(gemini[1] ?? ""), stream: gemini[2] === "streamGenerateContent" }
  return { api: null }
}

export const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

export const sendJsonText = (res: ServerResponse, status: number, text: string, headers: Record<string, string>): void => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(text)
}

export const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void =>
  sendJsonText(res, status, JSON.stringify(body), headers)

export const sendSse = (res: ServerResponse, events: ReadonlyArray<JsonObject>, named: boolean, done: boolean, headers: Record<string, string>): void => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers })
  for (const event of events) {
    const prefix = named ? `event: ${asString(event["type"])}\n` : ""
    res.write(`${prefix}data: ${JSON.stringify(event)}\n\n`)
  }
  if (done) res.write("data: [DONE]\n\n")
  res.end()
}


/** Writes an answer in the API's format: JSON, or the API's stream (SSE) when the request asked for one. */
export const sendAnswer = (
  res: ServerResponse,
  api: WireApi,
  body: JsonObject,
  stream: boolean,
  a: Answer,
  ids: Ids,
  headers: Record<string, string>
): void => {
  switch (api) {
    case "openai-responses":
      if (stream) return sendSse(res, responsesEvents(a, body, ids), true, false, headers)
      return sendJson(res, 200, responsesEnvelope(a, body, ids.next("resp"), nowSeconds(), "completed", responsesItems(a, ids)), headers)
    case "openai-chat":
      if (stream) return sendSse(res, chatChunks(a, body, ids), false, true, headers)
      return sendJson(res, 200, chatCompletion(a, ids), headers)
    case "anthropic-messages":
      if (stream) return sendSse(res, anthropicEvents(a, ids), true, false, headers)
      return sendJsonText(res, 200, anthropicMessageText(a, ids), headers)
    case "google":
      if (stream) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers })
        for (const chunk of geminiStream(a)) res.write(`data: ${chunk}\r\n\r\n`)
        res.end()
        return
      }
      return sendJsonText(res, 200, geminiResponseText(a), headers)
  }
}
