/**
 * Chat completions (`POST {base}/chat/completions`, streaming or not): the wire format of any
 * OpenAI-compatible server (Ollama, vLLM, LM Studio, OpenRouter), read leniently.
 */
import { Effect, Schema } from "effect"
import type { FinishReason, ModelRequest, ToolCall, Usage } from "./Model.ts"
import { answeredFailure, bearer, bodyOfSuccess, decodeJson, noAnswer, openAiUsage, opt, postJson, sseData, toolCallOf, type Via } from "./Wire.ts"

const ChatUsage = Schema.Struct({
  prompt_tokens: opt(Schema.Number),
  completion_tokens: opt(Schema.Number),
  prompt_tokens_details: opt(Schema.Struct({ cached_tokens: opt(Schema.Number) }))
})

const ChatToolCall = Schema.Struct({
  id: opt(Schema.String),
  function: Schema.Struct({ name: Schema.String, arguments: opt(Schema.String) })
})

const ChatCompletion = Schema.Struct({
  model: opt(Schema.String),
  choices: Schema.Array(Schema.Struct({
    message: Schema.Struct({
      content: opt(Schema.String),
      tool_calls: opt(Schema.Array(ChatToolCall))
    }),
    finish_reason: opt(Schema.String)
  })),
  usage: opt(ChatUsage)
})

const ChatChunk = Schema.Struct({
  model: opt(Schema.String),
  choices: Schema.optional(Schema.Array(Schema.Struct({
    delta: opt(Schema.Struct({
      content: opt(Schema.String),
      tool_calls: opt(Schema.Array(Schema.Struct({
        index: Schema.optional(Schema.Number),
        id: opt(Schema.String),
        function: opt(Schema.Struct({
          name: opt(Schema.String),
          arguments: opt(Schema.String)
        }))
      })))
    })),
    finish_reason: opt(Schema.String)
  }))),
  usage: opt(ChatUsage)
})

const decodeChatCompletion = Schema.decodeUnknownEither(ChatCompletion)
const decodeChatChunk = Schema.decodeUnknownEither(ChatChunk)

export const chatBody = (request: ModelRequest, stream: boolean): Record<string, unknown> => {
  const messages: Array<Record<string, unknown>> = []
  if (request.system.length > 0) messages.push({ role: "system", content: request.system })
  for (const message of request.messages) {
    switch (message.role) {
      case "user":
        messages.push({ role: "user", content: message.content })
        break
      case "assistant":
        messages.push({
          role: "assistant",
          content: message.content,
          ...(message.toolCalls !== undefined && message.toolCalls.length > 0
            ? {
              tool_calls: message.toolCalls.map((c) => ({
                id: c.id,
                type: "function",
                // The model's own text when kept, so the history shows what it wrote.
                function: { name: c.name, arguments: c.argumentsText ?? JSON.stringify(c.arguments) }
              }))
            }
            : {})
        })
        break
      case "tool":
        messages.push({ role: "tool", tool_call_id: message.toolCallId, content: message.content })
        break
    }
  }
  return {
    model: request.model,
    messages,
    ...(request.tools.length > 0
      ? {
        tools: request.tools.map((t) => ({
          type: "function",
          function: { name: t.name, description: t.description, parameters: t.parameters }
        }))
      }
      : {}),
    ...(request.maxOutputTokens !== undefined ? { max_tokens: request.maxOutputTokens } : {}),
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {})
  }
}

const chatFinish = (reason: string | null | undefined, hasToolCalls: boolean): FinishReason => {
  switch (reason) {
    case "stop":
      return hasToolCalls ? "tool-calls" : "stop"
    case "tool_calls":
    case "function_call":
      return "tool-calls"
    case "length":
      return "length"
    case "content_filter":
      return "content-filter"
    case null:
    case undefined:
      return hasToolCalls ? "tool-calls" : "unknown"
    default:
      return "other"
  }
}

const chatUsageOf = (usage: typeof ChatUsage.Type | null | undefined): Usage =>
  openAiUsage(usage?.prompt_tokens ?? 0, usage?.completion_tokens ?? 0, usage?.prompt_tokens_details?.cached_tokens ?? 0)

/** A body's usage, when it reports its token counts (an answer that cannot be used was billed for them). */
const reportedUsage = (usage: typeof ChatUsage.Type | null | undefined): Usage | undefined =>
  typeof usage?.prompt_tokens === "number" && typeof usage.completion_tokens === "number" ? chatUsageOf(usage) : undefined

export const via: Via = (ctx, send, request, connection, stream, timeout) => {
  const answer = noAnswer()
  return Effect.gen(function*() {
    const body = yield* bodyOfSuccess(ctx, send, postJson(`${connection.baseUrl}/chat/completions`, chatBody(request, stream), bearer(connection)), timeout)
    answer.body = true
    if (!stream) {
      const completion = yield* decodeJson(ctx, decodeChatCompletion, body)
      answer.usage = reportedUsage(completion.usage)
      const choice = completion.choices[0]
      const toolCalls: Array<ToolCall> = []
      for (const [i, call] of (choice?.message.tool_calls ?? []).entries()) {
        toolCalls.push(yield* toolCallOf(ctx, call.id ?? `call_${i}`, call.function.name, call.function.arguments ?? ""))
      }
      const content = choice?.message.content ?? null
      return {
        text: content !== null && content.length > 0 ? content : null,
        toolCalls,
        usage: chatUsageOf(completion.usage),
        finishReason: chatFinish(choice?.finish_reason, toolCalls.length > 0),
        model: completion.model ?? request.model
      }
    }
    // The stream is assembled once the body has ended: the caller wants one response, not deltas.
    const text: Array<string> = []
    const calls = new Map<number, { id: string; name: string; args: Array<string> }>()
    let finish: string | null | undefined
    let usage: typeof ChatUsage.Type | null | undefined
    let model: string | undefined
    for (const data of sseData(body)) {
      const chunk = yield* decodeJson(ctx, decodeChatChunk, data)
      model = chunk.model ?? model
      if (chunk.usage !== undefined && chunk.usage !== null) {
        usage = chunk.usage
        answer.usage = reportedUsage(usage)
      }
      for (const choice of chunk.choices ?? []) {
        if (choice.finish_reason !== undefined && choice.finish_reason !== null) finish = choice.finish_reason
        const delta = choice.delta
        if (delta === undefined || delta === null) continue
        if (typeof delta.content === "string") text.push(delta.content)
        for (const part of delta.tool_calls ?? []) {
          const index = part.index ?? 0
          const call = calls.get(index) ?? { id: "", name: "", args: [] }
          if (typeof part.id === "string" && part.id.length > 0) call.id = part.id
          if (typeof part.function?.name === "string" && part.function.name.length > 0) call.name = part.function.name
          if (typeof part.function?.arguments === "string") call.args.push(part.function.arguments)
          calls.set(index, call)
        }
      }
    }
    const toolCalls: Array<ToolCall> = []
    for (const [index, call] of [...calls.entries()].sort(([a], [b]) => a - b)) {
      toolCalls.push(yield* toolCallOf(ctx, call.id.length > 0 ? call.id : `call_${index}`, call.name, call.args.join("")))
    }
    const joined = text.join("")
    return {
      text: joined.length > 0 ? joined : null,
      toolCalls,
      usage: chatUsageOf(usage),
      finishReason: chatFinish(finish, toolCalls.length > 0),
      model: model ?? request.model
    }
  }).pipe(Effect.mapError(answeredFailure(answer)))
}

