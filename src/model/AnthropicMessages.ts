/**
 * Anthropic's Messages API (`POST {base}/v1/messages`, streaming or not), read leniently.
 */
import { Effect, Option, Redacted, Schema } from "effect"
import { DEFAULT_MAX_OUTPUT_TOKENS, type FinishReason, type ModelError, type ModelRequest, type ToolCall, type Usage } from "./Model.ts"
import { answeredFailure, bodyOfSuccess, type CallContext, decodeJson, modelError, noAnswer, opt, postJson, sseData, toolCallOf, type Via } from "./Wire.ts"
import * as JsonText from "./JsonText.ts"

const AnthropicUsage = Schema.Struct({
  input_tokens: opt(Schema.Number),
  output_tokens: opt(Schema.Number),
  cache_read_input_tokens: opt(Schema.Number),
  cache_creation_input_tokens: opt(Schema.Number)
})
type AnthropicUsage = typeof AnthropicUsage.Type

const AnthropicBlock = Schema.Struct({
  type: Schema.String,
  text: opt(Schema.String),
  id: opt(Schema.String),
  name: opt(Schema.String),
  input: Schema.optional(Schema.Unknown)
})

const AnthropicMessage = Schema.Struct({
  model: opt(Schema.String),
  content: Schema.Array(AnthropicBlock),
  stop_reason: opt(Schema.String),
  usage: opt(AnthropicUsage)
})

const AnthropicEvent = Schema.Struct({
  type: Schema.String,
  index: opt(Schema.Number),
  message: opt(Schema.Struct({ model: opt(Schema.String), usage: opt(AnthropicUsage) })),
  content_block: opt(AnthropicBlock),
  delta: opt(Schema.Struct({
    type: opt(Schema.String),
    text: opt(Schema.String),
    partial_json: opt(Schema.String),
    stop_reason: opt(Schema.String)
  })),
  usage: opt(AnthropicUsage),
  error: opt(Schema.Struct({ type: opt(Schema.String), message: opt(Schema.String) }))
})

const decodeAnthropicMessage = Schema.decodeUnknownEither(AnthropicMessage)
const decodeAnthropicEvent = Schema.decodeUnknownEither(AnthropicEvent)

const ANTHROPIC_VERSION = "2023-06-01"

/** Anthropic's base URL is the origin (its SDK appends /v1/messages); one given with /v1, as OpenAI's are, means the same. */
const withoutVersion = (baseUrl: string): string => baseUrl.replace(/\/v1\/?$/, "")

export const anthropicBody = (request: ModelRequest, stream: boolean): Record<string, unknown> => {
  const messages: Array<{ role: "user" | "assistant"; content: Array<Record<string, unknown>> }> = []
  // Turns alternate: tool results (and a user message after them) join the user turn before them.
  const push = (role: "user" | "assistant", blocks: Array<Record<string, unknown>>) => {
    const last = messages.at(-1)
    if (last !== undefined && last.role === role) last.content.push(...blocks)
    else messages.push({ role, content: blocks })
  }
  for (const message of request.messages) {
    switch (message.role) {
      case "user":
        push("user", [{ type: "text", text: message.content }])
        break
      case "assistant":
        push("assistant", [
          ...(message.content !== null && message.content.length > 0 ? [{ type: "text", text: message.content }] : []),
          ...(message.toolCalls ?? []).map((call) => ({ type: "tool_use", id: call.id, name: call.name, input: call.arguments }))
        ])
        break
      case "tool":
        push("user", [{ type: "tool_result", tool_use_id: message.toolCallId, content: message.content, is_error: message.isError ?? false }])
        break
    }
  }
  return {
    model: request.model,
    // Required here: a request that names no bound (to a model of unknown limit) gets the default one.
    max_tokens: request.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
    ...(request.system.length > 0 ? { system: [{ type: "text", text: request.system }] } : {}),
    messages,
    ...(request.tools.length > 0
      ? {
        tools: request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })),
        tool_choice: { type: "auto" }
      }
      : {}),
    ...(stream ? { stream: true } : {})
  }
}

const anthropicFinish = (reason: string | null | undefined, hasToolCalls: boolean): FinishReason => {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return hasToolCalls ? "tool-calls" : "stop"
    case "tool_use":
      return "tool-calls"
    case "max_tokens":
      return "length"
    case "pause_turn":
      return "pause"
    case "refusal":
      return "content-filter"
    case null:
    case undefined:
      return hasToolCalls ? "tool-calls" : "unknown"
    default:
      return "other"
  }
}

/** Anthropic's input_tokens already excludes cache reads and writes: its counts are disjoint, as ours. */
const anthropicUsageOf = (usage: AnthropicUsage | null | undefined): Usage => ({
  inputTokens: usage?.input_tokens ?? 0,
  outputTokens: usage?.output_tokens ?? 0,
  cacheReadTokens: usage?.cache_read_input_tokens ?? 0,
  cacheWriteTokens: usage?.cache_creation_input_tokens ?? 0
})

const anthropicFailure = (ctx: CallContext, type: string | null | undefined, message: string | null | undefined): ModelError =>
  modelError(
    ctx,
    type === "rate_limit_error" ? "rate-limit" : type === "overloaded_error" || type === "api_error" || type === undefined || type === null ? "server-error" : "bad-request",
    null,
    `the stream failed${type !== undefined && type !== null ? ` (${type})` : ""}: ${message ?? "no message"}`
  )

/** The text of each `tool_use` block's `input` in a message body, by id: the decoded object has `5.0` as `5`. */
const toolUseInputTexts = (body: string): Map<string, string> => {
  const out = new Map<string, string>()
  for (const block of JsonText.items(JsonText.member(JsonText.locate(body), "content"))) {
    const id = JsonText.stringOf(JsonText.member(block, "id"))
    const input = JsonText.member(block, "input")
    if (JsonText.stringOf(JsonText.member(block, "type")) === "tool_use" && id !== undefined && input !== undefined) {
      out.set(id, body.slice(input.start, input.end))
    }
  }
  return out
}

/** A body's usage, when it reports its token counts (an answer that cannot be used was billed for them). */
const reportedUsage = (usage: AnthropicUsage | null | undefined): Usage | undefined =>
  typeof usage?.input_tokens === "number" && typeof usage.output_tokens === "number" ? anthropicUsageOf(usage) : undefined

export const via: Via = (ctx, send, request, connection, stream, timeout) => {
  const answer = noAnswer()
  return Effect.gen(function*() {
    const headers: Record<string, string> = {
      "anthropic-version": ANTHROPIC_VERSION,
      ...(Option.isSome(connection.key) ? { "x-api-key": Redacted.value(connection.key.value.key) } : {})
    }
    const body = yield* bodyOfSuccess(ctx, send, postJson(`${withoutVersion(connection.baseUrl)}/v1/messages`, anthropicBody(request, stream), headers), timeout)
    answer.body = true
    if (!stream) {
      const message = yield* decodeJson(ctx, decodeAnthropicMessage, body)
      answer.usage = reportedUsage(message.usage)
      const inputTexts = toolUseInputTexts(body)
      const text: Array<string> = []
      const toolCalls: Array<ToolCall> = []
      for (const [i, block] of message.content.entries()) {
        if (block.type === "text" && typeof block.text === "string") text.push(block.text)
        if (block.type === "tool_use") {
          const id = block.id ?? `toolu_${i}`
          const name = block.name ?? ""
          const written = inputTexts.get(id)
          toolCalls.push(yield* toolCallOf(ctx, id, name, written ?? JSON.stringify(block.input ?? {})))
        }
      }
      const joined = text.join("")
      return {
        text: joined.length > 0 ? joined : null,
        toolCalls,
        usage: anthropicUsageOf(message.usage),
        finishReason: anthropicFinish(message.stop_reason, toolCalls.length > 0),
        model: message.model ?? request.model
      }
    }
    // The stream is assembled once the body has ended: the caller wants one response, not deltas.
    const text: Array<string> = []
    const blocks = new Map<number, { id: string; name: string; json: Array<string>; input: unknown }>()
    let usage: AnthropicUsage = {}
    let stop: string | null | undefined
    let model: string | undefined
    for (const data of sseData(body)) {
      const event = yield* decodeJson(ctx, decodeAnthropicEvent, data)
      switch (event.type) {
        case "message_start":
          model = event.message?.model ?? model
          usage = { ...usage, ...withoutNulls(event.message?.usage) }
          break
        case "content_block_start":
          if (event.content_block?.type === "tool_use") {
            blocks.set(event.index ?? blocks.size, { id: event.content_block.id ?? "", name: event.content_block.name ?? "", json: [], input: event.content_block.input })
          } else if (event.content_block?.type === "text" && typeof event.content_block.text === "string") {
            text.push(event.content_block.text)
          }
          break
        case "content_block_delta":
          if (event.delta?.type === "text_delta" && typeof event.delta.text === "string") text.push(event.delta.text)
          if (event.delta?.type === "input_json_delta" && typeof event.delta.partial_json === "string") {
            blocks.get(event.index ?? 0)?.json.push(event.delta.partial_json)
          }
          break
        case "message_delta":
          stop = event.delta?.stop_reason ?? stop
          // message_delta's counts are cumulative: they replace message_start's where given.
          usage = { ...usage, ...withoutNulls(event.usage) }
          // Only the final counts are what the call was billed (message_start's output is a start).
          answer.usage = reportedUsage(usage)
          break
        case "error":
          return yield* anthropicFailure(ctx, event.error?.type, event.error?.message)
        default:
          // ping, content_block_stop, message_stop, thinking deltas: nothing a ModelResponse carries.
          break
      }
    }
    const toolCalls: Array<ToolCall> = []
    for (const [index, block] of [...blocks.entries()].sort(([a], [b]) => a - b)) {
      const streamed = block.json.join("")
      const startInput = typeof block.input === "object" && block.input !== null && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : ""
      toolCalls.push(yield* toolCallOf(ctx, block.id.length > 0 ? block.id : `toolu_${index}`, block.name, streamed.length > 0 ? streamed : startInput))
    }
    const joined = text.join("")
    return {
      text: joined.length > 0 ? joined : null,
      toolCalls,
      usage: anthropicUsageOf(usage),
      finishReason: anthropicFinish(stop, toolCalls.length > 0),
      model: model ?? request.model
    }
  }).pipe(Effect.mapError(answeredFailure(answer)))
}

const withoutNulls = (usage: AnthropicUsage | null | undefined): AnthropicUsage =>
  Object.fromEntries(Object.entries(usage ?? {}).filter(([, v]) => v !== null && v !== undefined)) as AnthropicUsage

