/**
 * OpenAI's Responses API (`POST {base}/responses`, streaming or not), read leniently: only what a
 * ModelResponse needs, each field optional, as servers that call themselves compatible leave out
 * fields the vendor always sends.
 */
import { Effect, Either, Schema } from "effect"
import type { FinishReason, ModelError, ModelRequest, ToolCall } from "./Model.ts"
import {
  answeredFailure,
  bearer,
  bodyOfSuccess,
  type CallContext,
  decodeJson,
  modelError,
  noAnswer,
  openAiUsage,
  opt,
  postJson,
  sseData,
  toolCallOf,
  type Via
} from "./Wire.ts"

const ResponsesItem = Schema.Struct({
  type: Schema.String,
  id: opt(Schema.String),
  /** a message's content parts; read by hand, as servers differ in what a part holds */
  content: Schema.optional(Schema.Unknown),
  call_id: opt(Schema.String),
  name: opt(Schema.String),
  arguments: opt(Schema.String)
})
type ResponsesItem = typeof ResponsesItem.Type

const ResponsesFields = Schema.Struct({
  model: opt(Schema.String),
  status: opt(Schema.String),
  output: opt(Schema.Array(ResponsesItem)),
  /** the SDKs' convenience field, which a few servers send in place of message items */
  output_text: opt(Schema.String),
  usage: opt(Schema.Struct({
    input_tokens: opt(Schema.Number),
    output_tokens: opt(Schema.Number),
    input_tokens_details: opt(Schema.Struct({ cached_tokens: opt(Schema.Number) }))
  })),
  incomplete_details: opt(Schema.Struct({ reason: opt(Schema.String) })),
  error: opt(Schema.Struct({ code: opt(Schema.String), message: opt(Schema.String) }))
})

/** A Responses body says what came out (or why nothing did): `{"hello": "world"}` is not one. */
const ResponsesBody = ResponsesFields.pipe(
  Schema.filter((body) =>
    Array.isArray(body.output) || typeof body.output_text === "string" || (body.error !== undefined && body.error !== null) ||
    "a Responses body with output, output_text or error"
  )
)
type ResponsesBody = typeof ResponsesBody.Type

const ResponsesEvent = Schema.Struct({
  type: Schema.String,
  delta: Schema.optional(Schema.Unknown),
  item_id: opt(Schema.String),
  item: opt(ResponsesItem),
  response: opt(ResponsesFields),
  code: opt(Schema.String),
  message: opt(Schema.String)
})

// A body that plainly has the shape ResponsesBody reads is taken as it is: the schema's decoding
// of each response was ~0.1 ms of CPU per call. Anything else (an array where an object is read,
// a field of another type, no output) is decided by the schema, with its message.
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
const optOf = (check: (v: unknown) => boolean) => (v: unknown): boolean => v === undefined || v === null || check(v)
const optString = optOf((v) => typeof v === "string")
const optNumber = optOf((v) => typeof v === "number")
const plainItem = (v: unknown): boolean =>
  isObject(v) && typeof v["type"] === "string" && optString(v["id"]) && optString(v["call_id"]) && optString(v["name"]) && optString(v["arguments"])
const plainUsage = optOf((v) =>
  isObject(v) && optNumber(v["input_tokens"]) && optNumber(v["output_tokens"]) &&
  optOf((d) => isObject(d) && optNumber(d["cached_tokens"]))(v["input_tokens_details"])
)
const plainResponsesBody = (v: unknown): v is ResponsesBody =>
  isObject(v) && optString(v["model"]) && optString(v["status"]) && optString(v["output_text"]) &&
  optOf((o) => Array.isArray(o) && o.every(plainItem))(v["output"]) && plainUsage(v["usage"]) &&
  optOf((d) => isObject(d) && optString(d["reason"]))(v["incomplete_details"]) &&
  optOf((e) => isObject(e) && optString(e["code"]) && optString(e["message"]))(v["error"]) &&
  (Array.isArray(v["output"]) || typeof v["output_text"] === "string" || (v["error"] !== undefined && v["error"] !== null))
const decodeResponsesSchema = Schema.decodeUnknownEither(ResponsesBody)
const decodeResponsesBody = (u: unknown) => (plainResponsesBody(u) ? Either.right(u) : decodeResponsesSchema(u))
const decodeResponsesEvent = Schema.decodeUnknownEither(ResponsesEvent)

export const responsesBody = (request: ModelRequest, stream: boolean): Record<string, unknown> => {
  const input: Array<Record<string, unknown>> = []
  if (request.system.length > 0) input.push({ role: "system", content: request.system })
  for (const message of request.messages) {
    switch (message.role) {
      case "user":
        input.push({ role: "user", content: [{ type: "input_text", text: message.content }] })
        break
      case "assistant":
        if (message.content !== null && message.content.length > 0) {
          input.push({ role: "assistant", content: [{ type: "output_text", text: message.content }] })
        }
        for (const call of message.toolCalls ?? []) {
          // The model's own text when kept, so the history shows what it wrote.
          input.push({ type: "function_call", call_id: call.id, name: call.name, arguments: call.argumentsText ?? JSON.stringify(call.arguments) })
        }
        break
      case "tool":
        input.push({ type: "function_call_output", call_id: message.toolCallId, output: message.content })
        break
    }
  }
  return {
    model: request.model,
    input,
    ...(request.tools.length > 0
      ? {
        // strict: false so that any benchmark's JSON schema is accepted as given.
        tools: request.tools.map((t) => ({ type: "function", name: t.name, description: t.description, parameters: t.parameters, strict: false })),
        tool_choice: "auto"
      }
      : {}),
    ...(request.maxOutputTokens !== undefined ? { max_output_tokens: request.maxOutputTokens } : {}),
    ...(stream ? { stream: true } : {})
  }
}

/** The text parts of a message item (`output_text`, or `text` as some servers name them). */
const itemTexts = (item: ResponsesItem): Array<string> => {
  if (item.type !== "message") return []
  if (typeof item.content === "string") return [item.content]
  if (!Array.isArray(item.content)) return []
  const out: Array<string> = []
  for (const part of item.content as ReadonlyArray<unknown>) {
    if (typeof part !== "object" || part === null) continue
    const { text, type } = part as { text?: unknown; type?: unknown }
    if ((type === "output_text" || type === "text") && typeof text === "string") out.push(text)
  }
  return out
}

const responsesFinish = (body: ResponsesBody | undefined, hasToolCalls: boolean): FinishReason => {
  const incomplete = body?.incomplete_details?.reason
  if (incomplete !== undefined && incomplete !== null) {
    return incomplete === "max_output_tokens" ? "length" : incomplete === "content_filter" ? "content-filter" : "other"
  }
  if (hasToolCalls) return "tool-calls"
  return body?.status === "failed" ? "error" : "stop"
}

const responsesFailure = (ctx: CallContext, code: string | null | undefined, message: string | null | undefined): ModelError =>
  modelError(
    ctx,
    code !== undefined && code !== null && /rate.?limit/i.test(code) ? "rate-limit" : "server-error",
    null,
    `the response failed${code !== undefined && code !== null ? ` (${code})` : ""}: ${message ?? "no message"}`
  )

const callsOfItems = (ctx: CallContext, items: ReadonlyArray<ResponsesItem>): Effect.Effect<Array<ToolCall>, ModelError> =>
  Effect.forEach(
    items.filter((item) => item.type === "function_call"),
    (item, i) => toolCallOf(ctx, item.call_id ?? item.id ?? `call_${i}`, item.name ?? "", item.arguments ?? "")
  )

/** A body's usage, when it reports its token counts (an answer that cannot be used was billed for them). */
const reportedUsage = (usage: ResponsesBody["usage"]) =>
  typeof usage?.input_tokens === "number" && typeof usage.output_tokens === "number"
    ? openAiUsage(usage.input_tokens, usage.output_tokens, usage.input_tokens_details?.cached_tokens ?? 0)
    : undefined

export const via: Via = (ctx, send, request, connection, stream, timeout) => {
  const answer = noAnswer()
  return Effect.gen(function*() {
    const body = yield* bodyOfSuccess(ctx, send, postJson(`${connection.baseUrl}/responses`, responsesBody(request, stream), bearer(connection)), timeout)
    answer.body = true
    if (!stream) {
      const response = yield* decodeJson(ctx, decodeResponsesBody, body)
      answer.usage = reportedUsage(response.usage)
      if (response.status === "failed" || (response.error !== undefined && response.error !== null)) {
        return yield* responsesFailure(ctx, response.error?.code, response.error?.message)
      }
      const output = response.output ?? []
      const toolCalls = yield* callsOfItems(ctx, output)
      const text = output.flatMap(itemTexts).join("") || (response.output_text ?? "")
      return {
        text: text.length > 0 ? text : null,
        toolCalls,
        usage: openAiUsage(response.usage?.input_tokens ?? 0, response.usage?.output_tokens ?? 0, response.usage?.input_tokens_details?.cached_tokens ?? 0),
        finishReason: responsesFinish(response, toolCalls.length > 0),
        model: response.model ?? request.model
      }
    }
    // The stream is assembled once the body has ended: the caller wants one response, not deltas.
    const deltas: Array<string> = []
    const doneItems: Array<ResponsesItem> = []
    // function calls announced (output_item.added) and their argument deltas, by item id, for servers that send no .done
    const pending = new Map<string, { item: ResponsesItem; args: Array<string> }>()
    let final: ResponsesBody | undefined
    let model: string | undefined
    for (const data of sseData(body)) {
      const event = yield* decodeJson(ctx, decodeResponsesEvent, data)
      if (event.response?.model) model = event.response.model
      switch (event.type) {
        case "response.output_text.delta":
          if (typeof event.delta === "string") deltas.push(event.delta)
          break
        case "response.output_item.added":
          if (event.item?.type === "function_call") pending.set(event.item.id ?? event.item.call_id ?? `item_${pending.size}`, { item: event.item, args: [] })
          break
        case "response.function_call_arguments.delta": {
          const open = event.item_id !== undefined && event.item_id !== null ? pending.get(event.item_id) : undefined
          if (open !== undefined && typeof event.delta === "string") open.args.push(event.delta)
          break
        }
        case "response.output_item.done":
          if (event.item !== undefined && event.item !== null) doneItems.push(event.item)
          break
        case "response.completed":
        case "response.incomplete":
          final = event.response ?? undefined
          answer.usage = reportedUsage(final?.usage)
          break
        case "response.failed":
          answer.usage = reportedUsage(event.response?.usage)
          return yield* responsesFailure(ctx, event.response?.error?.code, event.response?.error?.message)
        case "error":
          return yield* responsesFailure(ctx, event.code, event.message)
        default:
          // Reasoning summaries, refusals, keep-alives, ...: nothing a ModelResponse carries.
          break
      }
    }
    const finalOutput = final?.output ?? []
    // Whole items are what the server settled on; deltas and announced calls only stand in for missing ones.
    const callItems = doneItems.some((i) => i.type === "function_call")
      ? doneItems
      : finalOutput.some((i) => i.type === "function_call")
      ? finalOutput
      : [...pending.values()].map(({ args, item }) => ({ ...item, arguments: item.arguments || args.join("") }))
    const toolCalls = yield* callsOfItems(ctx, callItems)
    const text = deltas.join("") || doneItems.flatMap(itemTexts).join("") || finalOutput.flatMap(itemTexts).join("") || (final?.output_text ?? "")
    return {
      text: text.length > 0 ? text : null,
      toolCalls,
      usage: openAiUsage(final?.usage?.input_tokens ?? 0, final?.usage?.output_tokens ?? 0, final?.usage?.input_tokens_details?.cached_tokens ?? 0),
      finishReason: final === undefined ? (toolCalls.length > 0 ? "tool-calls" : "unknown") : responsesFinish(final, toolCalls.length > 0),
      model: model ?? request.model
    }
  }).pipe(Effect.mapError(answeredFailure(answer)))
}

