/**
 * Model access as one effect: `generate(request)` turns plain JSON data into a model call and back.
 * OpenAI Responses and Anthropic messages go through @effect/ai's LanguageModel; OpenAI-compatible
 * servers that only have chat completions (Ollama, vLLM, LM Studio) use a small client of our own.
 * Keys are read only from the environment; no error message ever carries one.
 */
import { LanguageModel, Prompt, Tool, Toolkit } from "@effect/ai"
import type * as AiError from "@effect/ai/AiError"
import type * as Response from "@effect/ai/Response"
import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import type * as Generated from "@effect/ai-openai/Generated"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Config, Duration, Effect, Layer, Option, Redacted, Schema, Stream } from "effect"
import * as JsonText from "./JsonText.ts"
import * as Gemini from "./Gemini.ts"
import { type ApiType, type ProviderEntry, Registry } from "./Registry.ts"

// ---------------------------------------------------------------------------------------------
// Request and response: plain JSON data
// ---------------------------------------------------------------------------------------------

export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const ToolCall = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  /** the parsed JSON object the model passed (JavaScript numbers: `5.0` and `5` are one value) */
  arguments: JsonObject,
  /**
   * the arguments' JSON text as the server sent it: OpenAI Responses and chat completions
   * `arguments`, Anthropic's `input_json_delta` (streaming) or the `input` slice of its message
   * body. Python-semantics consumers read it to keep `5.0` (a float) apart from `5` (an int).
   */
  argumentsText: Schema.optional(Schema.String)
})
export type ToolCall = typeof ToolCall.Type

export const UserMessage = Schema.Struct({ role: Schema.Literal("user"), content: Schema.String })
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.NullOr(Schema.String),
  toolCalls: Schema.optional(Schema.Array(ToolCall))
})
export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  toolCallId: Schema.String,
  /** name of the tool that was called */
  name: Schema.String,
  /** the result as text; JSON text is passed on as JSON */
  content: Schema.String,
  isError: Schema.optional(Schema.Boolean)
})
export const Message = Schema.Union(UserMessage, AssistantMessage, ToolMessage)
export type Message = typeof Message.Type

export const ToolSpec = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  /** JSON schema of the arguments object */
  parameters: JsonObject
})
export type ToolSpec = typeof ToolSpec.Type

export const ModelRequest = Schema.Struct({
  provider: Schema.String,
  model: Schema.String,
  system: Schema.String,
  messages: Schema.Array(Message),
  tools: Schema.Array(ToolSpec),
  maxOutputTokens: Schema.optional(Schema.Number)
})
export type ModelRequest = typeof ModelRequest.Type

/** Disjoint counts: `inputTokens` excludes prompt tokens read from or written to a cache. */
export const Usage = Schema.Struct({
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  cacheReadTokens: Schema.Number,
  cacheWriteTokens: Schema.Number
})
export type Usage = typeof Usage.Type

export const FinishReason = Schema.Literal("stop", "tool-calls", "length", "content-filter", "error", "pause", "other", "unknown")
export type FinishReason = typeof FinishReason.Type

export const ModelResponse = Schema.Struct({
  text: Schema.NullOr(Schema.String),
  toolCalls: Schema.Array(ToolCall),
  usage: Usage,
  finishReason: FinishReason,
  /** the model id the server says answered */
  model: Schema.String
})
export type ModelResponse = typeof ModelResponse.Type

export const ModelErrorReason = Schema.Literal("rate-limit", "server-error", "timeout", "bad-request", "auth", "decode", "network")
export type ModelErrorReason = typeof ModelErrorReason.Type

export class ModelError extends Schema.TaggedError<ModelError>()("ModelError", {
  provider: Schema.String,
  model: Schema.String,
  reason: ModelErrorReason,
  /** HTTP status, null when no response came back */
  status: Schema.NullOr(Schema.Number),
  /** what the server or client said, with anything key-like removed */
  detail: Schema.String,
  /** from a `retry-after` header, when the server sent one */
  retryAfterSeconds: Schema.optional(Schema.Number)
}) {
  override get message() {
    const status = this.status === null ? "" : ` (HTTP ${this.status})`
    return `${this.reason} from ${this.provider}:${this.model}${status}: ${this.detail}`
  }
  /** rate limits, server errors, timeouts and network failures may pass when tried again */
  get retryable(): boolean {
    return this.reason === "rate-limit" || this.reason === "server-error" || this.reason === "timeout" || this.reason === "network"
  }
}

export const reasonOfStatus = (status: number): ModelErrorReason =>
  status === 429
    ? "rate-limit"
    : status === 401 || status === 403
    ? "auth"
    : status === 408
    ? "timeout"
    : status >= 500
    ? "server-error"
    : "bad-request"

// ---------------------------------------------------------------------------------------------
// Endpoints and keys
// ---------------------------------------------------------------------------------------------

/** Where a provider is reached. Not part of a request, so a recording does not depend on a port. */
export interface Endpoint {
  readonly api: ApiType
  /** explicit base URL; else `<PROVIDER>_BASE_URL` from the environment; else the registry's */
  readonly baseUrl?: string | undefined
  /** environment variables that may hold the key, first set one wins; empty for keyless servers */
  readonly keyEnv: ReadonlyArray<string>
  /** base URL when neither the explicit one nor the environment gives one */
  readonly defaultBaseUrl?: string | undefined
}

const builtinEndpoints: Readonly<Record<string, Endpoint>> = {
  openai: { api: "openai-responses", keyEnv: ["OPENAI_API_KEY"], defaultBaseUrl: "https://api.openai.com/v1" },
  anthropic: { api: "anthropic-messages", keyEnv: ["ANTHROPIC_API_KEY"], defaultBaseUrl: "https://api.anthropic.com" }
}

export const endpointOf = (provider: ProviderEntry): Endpoint => ({
  api: provider.api,
  keyEnv: provider.env,
  defaultBaseUrl: provider.base_url
})

const baseUrlEnv = (provider: string): string => `${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_BASE_URL`

const optionalEnv = (name: string): Effect.Effect<Option.Option<string>> =>
  Config.option(Config.string(name)).pipe(Effect.orElseSucceed(() => Option.none<string>()))

/** Reads the first key that is set among `names`. */
export const keyFromEnv = (names: ReadonlyArray<string>): Effect.Effect<Option.Option<{ readonly name: string; readonly key: Redacted.Redacted }>> =>
  Effect.gen(function*() {
    for (const name of names) {
      const value = yield* optionalEnv(name)
      if (Option.isSome(value) && value.value.length > 0) return Option.some({ name, key: Redacted.make(value.value) })
    }
    return Option.none()
  })

export const baseUrlOf = (provider: string, endpoint: Endpoint): Effect.Effect<Option.Option<string>> =>
  endpoint.baseUrl !== undefined
    ? Effect.succeed(Option.some(endpoint.baseUrl))
    : optionalEnv(baseUrlEnv(provider)).pipe(
      Effect.map((env) => Option.orElse(env, () => Option.fromNullable(endpoint.defaultBaseUrl)))
    )

/** The endpoint of a provider: the Registry's when one is in context, else the built-in openai and anthropic ones. */
export const endpointFor = (provider: string): Effect.Effect<Option.Option<Endpoint>> =>
  Effect.serviceOption(Registry).pipe(
    Effect.map((registry) => {
      const entry = Option.flatMapNullable(registry, (r) => r.file.providers[provider])
      return Option.isSome(entry) ? Option.some(endpointOf(entry.value)) : Option.fromNullable(builtinEndpoints[provider])
    })
  )

// ---------------------------------------------------------------------------------------------
// Keeping keys out of messages
// ---------------------------------------------------------------------------------------------

const keyLike = /\b(sk-(?:ant-|proj-)?[A-Za-z0-9_*-]{4,}|AIza[0-9A-Za-z_-]{10,})/g

/** Removes the given secrets and anything shaped like an API key from `text`. */
export const scrub = (text: string, secrets: ReadonlyArray<Redacted.Redacted>): string => {
  let out = text
  for (const secret of secrets) {
    const value = Redacted.value(secret)
    if (value.length >= 4) out = out.split(value).join("[redacted]")
  }
  return out.replace(keyLike, "[redacted]")
}

const errorMessageOfBody = (body: string | undefined): string | undefined => {
  if (body === undefined || body.length === 0) return undefined
  try {
    const parsed: unknown = JSON.parse(body)
    if (typeof parsed === "object" && parsed !== null && "error" in parsed) {
      const error = (parsed as { error: unknown }).error
      if (typeof error === "string") return error
      if (typeof error === "object" && error !== null && "message" in error) {
        const message = (error as { message: unknown }).message
        if (typeof message === "string") return message
      }
    }
  } catch {
    // Not JSON: the raw text (truncated) says more than nothing.
  }
  return body.slice(0, 300)
}

const retryAfterOf = (headers: Readonly<Record<string, string>>): number | undefined => {
  const value = headers["retry-after"]
  if (value === undefined) return undefined
  const seconds = Number(value)
  return Number.isFinite(seconds) ? seconds : undefined
}

interface CallContext {
  readonly provider: string
  readonly model: string
  readonly secrets: ReadonlyArray<Redacted.Redacted>
}

const modelError = (
  ctx: CallContext,
  reason: ModelErrorReason,
  status: number | null,
  detail: string,
  retryAfterSeconds?: number
): ModelError =>
  new ModelError({
    provider: ctx.provider,
    model: ctx.model,
    reason,
    status,
    detail: scrub(detail, ctx.secrets),
    ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {})
  })

const fromAiError = (ctx: CallContext, error: AiError.AiError): ModelError => {
  switch (error._tag) {
    case "HttpResponseError": {
      const status = error.response.status
      if (error.reason !== "StatusCode" && status >= 200 && status < 300) {
        return modelError(ctx, "decode", status, error.description ?? error.reason)
      }
      return modelError(
        ctx,
        reasonOfStatus(status),
        status,
        errorMessageOfBody(error.body) ?? error.description ?? error.reason,
        retryAfterOf(error.response.headers)
      )
    }
    case "HttpRequestError":
      return modelError(ctx, error.reason === "Transport" ? "network" : "bad-request", null, error.description ?? error.reason)
    case "MalformedOutput":
      return modelError(ctx, "decode", null, error.description ?? "malformed output")
    case "MalformedInput":
      return modelError(ctx, "bad-request", null, error.description ?? "malformed input")
    case "UnknownError":
      return modelError(ctx, "network", null, error.description ?? "unknown error")
  }
}

// ---------------------------------------------------------------------------------------------
// @effect/ai clients (OpenAI Responses, Anthropic messages)
// ---------------------------------------------------------------------------------------------

/** Arguments are any JSON object; the model sees the tool's own JSON schema through the annotation. */
const toolOf = (spec: ToolSpec) =>
  Tool.make(spec.name, { description: spec.description }).setParameters(
    Schema.Struct({}, Schema.Record({ key: Schema.String, value: Schema.Unknown })).annotations({
      jsonSchema: spec.parameters
    })
  )

/** Tool results that are JSON text go on as JSON, so the provider's JSON encoding gives the same text back. */
const resultOf = (content: string): unknown => {
  try {
    return JSON.parse(content) as unknown
  } catch {
    return content
  }
}

export const promptOf = (request: ModelRequest): Prompt.Prompt => {
  const messages: Array<Prompt.MessageEncoded> = []
  if (request.system.length > 0) messages.push({ role: "system", content: request.system })
  for (const message of request.messages) {
    switch (message.role) {
      case "user":
        messages.push({ role: "user", content: [{ type: "text", text: message.content }] })
        break
      case "assistant":
        messages.push({
          role: "assistant",
          content: [
            ...(message.content !== null && message.content.length > 0 ? [{ type: "text" as const, text: message.content }] : []),
            ...(message.toolCalls ?? []).map((call) => ({
              type: "tool-call" as const,
              id: call.id,
              name: call.name,
              params: call.arguments,
              providerExecuted: false
            }))
          ]
        })
        break
      case "tool":
        messages.push({
          role: "tool",
          content: [{
            type: "tool-result",
            id: message.toolCallId,
            name: message.name,
            isFailure: message.isError ?? false,
            result: resultOf(message.content),
            providerExecuted: false
          }]
        })
        break
    }
  }
  return Prompt.make(messages)
}

interface Collected {
  text: Array<string>
  toolCalls: Array<ToolCall>
  /** streamed argument text by tool call id (Anthropic's input_json_delta, OpenAI's argument deltas) */
  paramsText: Map<string, string>
  /** arguments text by call id, as the OpenAI Responses function_call items (or Anthropic's tool_use inputs) carried it */
  wireArguments: Map<string, string>
  finish: Response.FinishPart | undefined
  model: string | undefined
}

const usageOf = (api: ApiType, finish: Response.FinishPart | undefined): Usage => {
  const input = finish?.usage.inputTokens ?? 0
  const cached = finish?.usage.cachedInputTokens ?? 0
  if (api === "anthropic-messages") {
    // Anthropic's input_tokens already excludes cache reads and writes; writes are only in its raw usage.
    const raw = finish?.metadata["anthropic"]?.["usage"]
    const written = typeof raw === "object" && raw !== null && "cache_creation_input_tokens" in raw
      ? Number((raw as { cache_creation_input_tokens: unknown }).cache_creation_input_tokens ?? 0)
      : 0
    return { inputTokens: input, outputTokens: finish?.usage.outputTokens ?? 0, cacheReadTokens: cached, cacheWriteTokens: written }
  }
  // OpenAI's input_tokens includes the cached ones.
  return { inputTokens: input - cached, outputTokens: finish?.usage.outputTokens ?? 0, cacheReadTokens: cached, cacheWriteTokens: 0 }
}

const collectPart = (acc: Collected, part: Response.AnyPart): void => {
  switch (part.type) {
    case "text":
      acc.text.push(part.text)
      break
    case "text-delta":
      acc.text.push(part.delta)
      break
    case "tool-call":
      if (!part.providerExecuted) {
        const text = acc.wireArguments.get(part.id) ?? acc.paramsText.get(part.id)
        acc.toolCalls.push({
          id: part.id,
          name: part.name,
          arguments: part.params as Record<string, unknown>,
          ...(text !== undefined && text.length > 0 ? { argumentsText: text } : {})
        })
      }
      break
    case "tool-params-delta":
      acc.paramsText.set(part.id, (acc.paramsText.get(part.id) ?? "") + part.delta)
      break
    case "finish":
      acc.finish = part
      break
    case "response-metadata":
      if (Option.isSome(part.modelId)) acc.model = part.modelId.value
      break
    default:
      break
  }
}

const responseOf = (api: ApiType, request: ModelRequest, acc: Collected): ModelResponse => {
  const text = acc.text.join("")
  return {
    text: text.length > 0 ? text : null,
    toolCalls: acc.toolCalls,
    usage: usageOf(api, acc.finish),
    finishReason: acc.finish?.reason ?? "unknown",
    model: acc.model ?? request.model
  }
}

const keepFunctionCall = (into: Map<string, string>, item: typeof Generated.OutputItem.Type): void => {
  if (item.type === "function_call") into.set(item.call_id, item.arguments)
}

/**
 * OpenAI's client with the function_call items' `arguments` text kept by call id. @effect/ai's
 * OpenAiLanguageModel hands on only the parsed params; the decoded response (or stream event)
 * it reads from still has the text, so the service is wrapped rather than the HTTP body re-read.
 */
const openAiClientKeepingArguments = (
  options: Parameters<typeof OpenAiClient.make>[0],
  into: Map<string, string>
): Layer.Layer<OpenAiClient.OpenAiClient, never, HttpClient.HttpClient> =>
  Layer.scoped(
    OpenAiClient.OpenAiClient,
    Effect.map(OpenAiClient.make(options), (client) =>
      OpenAiClient.OpenAiClient.of({
        ...client,
        createResponse: (request) =>
          Effect.tap(client.createResponse(request), (response) => {
            for (const item of response.output) keepFunctionCall(into, item)
          }),
        createResponseStream: (request) =>
          Stream.tap(client.createResponseStream(request), (event) =>
            Effect.sync(() => {
              if (event.type === "response.output_item.done") keepFunctionCall(into, event.item)
            }))
      }))
  )

/**
 * Keeps the text of each `tool_use` block's `input` in a (non-streamed) Anthropic message body, by
 * id. The decoded message has `input` as an object already, where `5.0` is `5`; the body has it
 * as the server wrote it. Node's client caches the body text, so @effect/ai reads the same body.
 */
const keepingToolUseInputs = (client: HttpClient.HttpClient, into: Map<string, string>): HttpClient.HttpClient =>
  HttpClient.tap(client, (response) =>
    response.status < 200 || response.status >= 300
      ? Effect.void
      : Effect.map(response.text, (body) => {
        for (const block of JsonText.items(JsonText.member(JsonText.locate(body), "content"))) {
          const id = JsonText.stringOf(JsonText.member(block, "id"))
          const input = JsonText.member(block, "input")
          if (JsonText.stringOf(JsonText.member(block, "type")) === "tool_use" && id !== undefined && input !== undefined) {
            into.set(id, body.slice(input.start, input.end))
          }
        }
      }))

// Trace headers (b3, traceparent) are of no use to a model provider.
const untraced = (client: HttpClient.HttpClient): HttpClient.HttpClient => HttpClient.withTracerPropagation(client, false)

const viaLanguageModel = (
  api: "openai-responses" | "anthropic-messages",
  request: ModelRequest,
  baseUrl: string,
  key: Option.Option<Redacted.Redacted>,
  stream: boolean
): Effect.Effect<ModelResponse, AiError.AiError> => {
  const tools = request.tools.map(toolOf)
  const toolkit = Toolkit.make(...tools)
  // Tool calls go back to the caller (the agent loop), so the handler is never invoked.
  const withHandler: Toolkit.WithHandler<Record<string, Tool.Any>> = {
    tools: toolkit.tools,
    handle: (name) => Effect.dieMessage(`tool ${String(name)} is resolved by the caller, not by @effect/ai`)
  }
  const options = {
    prompt: promptOf(request),
    toolkit: withHandler,
    disableToolCallResolution: true
  } as const
  const acc: Collected = { text: [], toolCalls: [], paramsText: new Map(), wireArguments: new Map(), finish: undefined, model: undefined }
  const call: Effect.Effect<void, AiError.AiError, LanguageModel.LanguageModel> = stream
    ? LanguageModel.streamText(options).pipe(
      Stream.runForEach((part) => Effect.sync(() => collectPart(acc, part)))
    )
    : LanguageModel.generateText(options).pipe(
      Effect.map((response) => response.content.forEach((part) => collectPart(acc, part)))
    )
  const apiKey = Option.getOrUndefined(key)
  const model = api === "openai-responses"
    ? OpenAiLanguageModel.layer({
      model: request.model,
      // strict: false so that any benchmark's JSON schema is accepted as given.
      config: { strict: false, ...(request.maxOutputTokens !== undefined ? { max_output_tokens: request.maxOutputTokens } : {}) }
    }).pipe(Layer.provide(openAiClientKeepingArguments(
      { apiUrl: baseUrl, transformClient: untraced, ...(apiKey !== undefined ? { apiKey } : {}) },
      acc.wireArguments
    )))
    : AnthropicLanguageModel.layer({
      model: request.model,
      config: { max_tokens: request.maxOutputTokens ?? 4096 }
    }).pipe(Layer.provide(AnthropicClient.layer({
      apiUrl: baseUrl,
      // A streamed body must stay a stream: there the input_json_delta parts give the text.
      transformClient: stream ? untraced : (client) => keepingToolUseInputs(untraced(client), acc.wireArguments),
      ...(apiKey !== undefined ? { apiKey } : {})
    })))
  return call.pipe(
    Effect.map(() => responseOf(api, request, acc)),
    Effect.provide(model.pipe(Layer.provide(NodeHttpClient.layer)))
  )
}

// ---------------------------------------------------------------------------------------------
// Chat completions (OpenAI-compatible servers)
// ---------------------------------------------------------------------------------------------

const ChatUsage = Schema.Struct({
  prompt_tokens: Schema.Number,
  completion_tokens: Schema.Number,
  prompt_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({ cached_tokens: Schema.optional(Schema.NullOr(Schema.Number)) })))
})

const ChatToolCall = Schema.Struct({
  id: Schema.String,
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
})

const ChatCompletion = Schema.Struct({
  model: Schema.optional(Schema.String),
  choices: Schema.Array(Schema.Struct({
    message: Schema.Struct({
      content: Schema.optional(Schema.NullOr(Schema.String)),
      tool_calls: Schema.optional(Schema.NullOr(Schema.Array(ChatToolCall)))
    }),
    finish_reason: Schema.optional(Schema.NullOr(Schema.String))
  })),
  usage: Schema.optional(Schema.NullOr(ChatUsage))
})

const ChatChunk = Schema.Struct({
  model: Schema.optional(Schema.String),
  choices: Schema.Array(Schema.Struct({
    delta: Schema.optional(Schema.NullOr(Schema.Struct({
      content: Schema.optional(Schema.NullOr(Schema.String)),
      tool_calls: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
        index: Schema.Number,
        id: Schema.optional(Schema.NullOr(Schema.String)),
        function: Schema.optional(Schema.Struct({
          name: Schema.optional(Schema.NullOr(Schema.String)),
          arguments: Schema.optional(Schema.NullOr(Schema.String))
        }))
      }))))
    }))),
    finish_reason: Schema.optional(Schema.NullOr(Schema.String))
  })),
  usage: Schema.optional(Schema.NullOr(ChatUsage))
})

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

const chatUsageOf = (usage: typeof ChatUsage.Type | null | undefined): Usage => {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0
  return {
    inputTokens: (usage?.prompt_tokens ?? 0) - cached,
    outputTokens: usage?.completion_tokens ?? 0,
    cacheReadTokens: cached,
    cacheWriteTokens: 0
  }
}

const parseArguments = (ctx: CallContext, name: string, text: string): Effect.Effect<Record<string, unknown>, ModelError> =>
  Effect.try({
    try: () => {
      const parsed: unknown = text.trim().length === 0 ? {} : JSON.parse(text)
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not a JSON object")
      return parsed as Record<string, unknown>
    },
    catch: (e) => modelError(ctx, "decode", null, `arguments of tool call ${name} are not a JSON object: ${String(e)}`)
  })

/** A chat completions tool call: the parsed arguments, and their text as the model wrote it (when not blank). */
const toolCallOf = (ctx: CallContext, id: string, name: string, text: string): Effect.Effect<ToolCall, ModelError> =>
  Effect.map(parseArguments(ctx, name, text), (args) => ({
    id,
    name,
    arguments: args,
    ...(text.trim().length > 0 ? { argumentsText: text } : {})
  }))

/** The `data:` payloads of a server-sent-events body, without the final [DONE]. */
export const sseData = (body: string): Array<string> =>
  body
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n")
    )
    .filter((data) => data.length > 0 && data !== "[DONE]")

const decodeJson = <A, I>(ctx: CallContext, schema: Schema.Schema<A, I>, text: string): Effect.Effect<A, ModelError> =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (e) => modelError(ctx, "decode", 200, `response is not JSON: ${String(e)}`)
  }).pipe(
    Effect.flatMap(Schema.decodeUnknown(schema)),
    Effect.mapError((e) => (e instanceof ModelError ? e : modelError(ctx, "decode", 200, e.message)))
  )

/** Sends a request and reads the whole body; a non-2xx status is a ModelError saying what the server said. */
const bodyOfSuccess = (
  ctx: CallContext,
  client: HttpClient.HttpClient,
  httpRequest: HttpClientRequest.HttpClientRequest
): Effect.Effect<string, ModelError> =>
  Effect.gen(function*() {
    const response = yield* client.execute(httpRequest).pipe(
      Effect.mapError((e) => modelError(ctx, e._tag === "RequestError" && e.reason === "Transport" ? "network" : "bad-request", null, e.message))
    )
    const body = yield* response.text.pipe(
      Effect.mapError((e) => modelError(ctx, "network", response.status, `reading the body failed: ${e.message}`))
    )
    if (response.status < 200 || response.status >= 300) {
      return yield* modelError(ctx, reasonOfStatus(response.status), response.status, errorMessageOfBody(body) ?? `HTTP ${response.status}`, retryAfterOf(response.headers))
    }
    return body
  })

const viaChatCompletions = (
  ctx: CallContext,
  request: ModelRequest,
  baseUrl: string,
  key: Option.Option<Redacted.Redacted>,
  stream: boolean
): Effect.Effect<ModelResponse, ModelError> =>
  Effect.gen(function*() {
    const client = untraced(yield* HttpClient.HttpClient)
    let httpRequest = HttpClientRequest.post(`${baseUrl.replace(/\/$/, "")}/chat/completions`).pipe(
      HttpClientRequest.acceptJson,
      HttpClientRequest.bodyUnsafeJson(chatBody(request, stream))
    )
    if (Option.isSome(key)) httpRequest = HttpClientRequest.bearerToken(httpRequest, key.value)
    const body = yield* bodyOfSuccess(ctx, client, httpRequest)
    if (!stream) {
      const completion = yield* decodeJson(ctx, ChatCompletion, body)
      const choice = completion.choices[0]
      const toolCalls: Array<ToolCall> = []
      for (const call of choice?.message.tool_calls ?? []) {
        toolCalls.push(yield* toolCallOf(ctx, call.id, call.function.name, call.function.arguments))
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
      const chunk = yield* decodeJson(ctx, ChatChunk, data)
      model = chunk.model ?? model
      if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage
      for (const choice of chunk.choices) {
        if (choice.finish_reason !== undefined && choice.finish_reason !== null) finish = choice.finish_reason
        const delta = choice.delta
        if (delta === undefined || delta === null) continue
        if (typeof delta.content === "string") text.push(delta.content)
        for (const part of delta.tool_calls ?? []) {
          const call = calls.get(part.index) ?? { id: "", name: "", args: [] }
          if (typeof part.id === "string" && part.id.length > 0) call.id = part.id
          if (typeof part.function?.name === "string" && part.function.name.length > 0) call.name = part.function.name
          if (typeof part.function?.arguments === "string") call.args.push(part.function.arguments)
          calls.set(part.index, call)
        }
      }
    }
    const toolCalls: Array<ToolCall> = []
    for (const [, call] of [...calls.entries()].sort(([a], [b]) => a - b)) {
      toolCalls.push(yield* toolCallOf(ctx, call.id, call.name, call.args.join("")))
    }
    const joined = text.join("")
    return {
      text: joined.length > 0 ? joined : null,
      toolCalls,
      usage: chatUsageOf(usage),
      finishReason: chatFinish(finish, toolCalls.length > 0),
      model: model ?? request.model
    }
  }).pipe(Effect.provide(NodeHttpClient.layer))

// ---------------------------------------------------------------------------------------------
// Gemini (generateContent)
// ---------------------------------------------------------------------------------------------

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

const viaGemini = (
  ctx: CallContext,
  request: ModelRequest,
  baseUrl: string,
  key: Option.Option<Redacted.Redacted>,
  stream: boolean
): Effect.Effect<ModelResponse, ModelError> =>
  Effect.gen(function*() {
    const client = untraced(yield* HttpClient.HttpClient)
    const method = stream ? "streamGenerateContent?alt=sse" : "generateContent"
    let httpRequest = HttpClientRequest.post(`${baseUrl.replace(/\/$/, "")}/models/${encodeURIComponent(request.model)}:${method}`).pipe(
      HttpClientRequest.acceptJson,
      HttpClientRequest.bodyUnsafeJson(Gemini.bodyOf(request))
    )
    if (Option.isSome(key)) httpRequest = HttpClientRequest.setHeader(httpRequest, "x-goog-api-key", Redacted.value(key.value))
    const body = yield* bodyOfSuccess(ctx, client, httpRequest)
    // Function calls come whole (never split across chunks): their args' text is in one chunk.
    const texts = stream ? sseData(body) : [body]
    const chunks = yield* Effect.forEach(texts, (t) => decodeJson(ctx, Gemini.GenerateContentResponse, t))
    const argumentTexts = texts.flatMap(geminiArgumentTexts)
    return Gemini.responseFrom(chunks, request.model, (n) => argumentTexts[n])
  }).pipe(Effect.provide(NodeHttpClient.layer))

// ---------------------------------------------------------------------------------------------
// generate
// ---------------------------------------------------------------------------------------------

export interface GenerateOptions {
  /** where to send the call; default: the provider's endpoint from the Registry (when in context) or built in */
  readonly endpoint?: Endpoint | undefined
  /** use the streaming wire format (the response is still returned whole) */
  readonly stream?: boolean | undefined
  /** default 120 seconds */
  readonly timeout?: Duration.DurationInput | undefined
}

/** One model call. Fails only with ModelError, whose message never contains a key. */
export const generate = (request: ModelRequest, options: GenerateOptions = {}): Effect.Effect<ModelResponse, ModelError> =>
  Effect.gen(function*() {
    const base: CallContext = { provider: request.provider, model: request.model, secrets: [] }
    const endpoint = options.endpoint ?? Option.getOrUndefined(yield* endpointFor(request.provider))
    if (endpoint === undefined) {
      return yield* modelError(base, "bad-request", null, `unknown provider "${request.provider}": not in the registry and no endpoint given`)
    }
    const key = yield* keyFromEnv(endpoint.keyEnv)
    const ctx: CallContext = { ...base, secrets: Option.isSome(key) ? [key.value.key] : [] }
    if (endpoint.keyEnv.length > 0 && Option.isNone(key)) {
      return yield* modelError(ctx, "auth", null, `no key: set ${endpoint.keyEnv.join(" or ")}`)
    }
    const baseUrl = yield* baseUrlOf(request.provider, endpoint)
    if (Option.isNone(baseUrl)) {
      return yield* modelError(ctx, "bad-request", null, `no base URL for ${request.provider}: set ${baseUrlEnv(request.provider)}`)
    }
    const stream = options.stream ?? false
    const apiKey = Option.map(key, (k) => k.key)
    const call: Effect.Effect<ModelResponse, ModelError> = endpoint.api === "openai-chat"
      ? viaChatCompletions(ctx, request, baseUrl.value, apiKey, stream)
      : endpoint.api === "google"
      ? viaGemini(ctx, request, baseUrl.value, apiKey, stream)
      : viaLanguageModel(endpoint.api, request, baseUrl.value, apiKey, stream).pipe(
        Effect.catchAll((e) => Effect.fail(fromAiError(ctx, e))),
        // Many OpenAI-compatible servers (Ollama, vLLM, LM Studio) have no /responses: use chat completions there.
        Effect.catchIf(
          (e) => endpoint.api === "openai-responses" && (e.status === 404 || e.status === 405),
          () => viaChatCompletions(ctx, request, baseUrl.value, apiKey, stream)
        )
      )
    const timeout = options.timeout ?? Duration.seconds(120)
    return yield* call.pipe(
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () => modelError(ctx, "timeout", null, `no answer within ${Duration.format(timeout)}`)
      })
    )
  })

// ---------------------------------------------------------------------------------------------
// Liveness
// ---------------------------------------------------------------------------------------------

export interface Liveness {
  readonly provider: string
  readonly api: ApiType
  readonly status: "live" | "absent"
  readonly reason: string
  /** the provider's registry models */
  readonly models: ReadonlyArray<string>
}

const probe = (baseUrl: string, timeout: Duration.DurationInput): Effect.Effect<Option.Option<string>> =>
  HttpClient.get(`${baseUrl.replace(/\/$/, "")}/models`).pipe(
    Effect.flatMap((response) =>
      response.status < 500 ? Effect.succeed(Option.none<string>()) : Effect.succeed(Option.some(`HTTP ${response.status}`))
    ),
    Effect.timeoutFail({ duration: timeout, onTimeout: () => "timed out" }),
    Effect.catchAll((e) => Effect.succeed(Option.some(typeof e === "string" ? e : e.message))),
    Effect.scoped,
    Effect.provide(NodeHttpClient.layer)
  )

/**
 * Which registry providers can be called now: a key is set, or (keyless providers) the endpoint
 * answers GET {base}/models. Absent ones say why.
 */
export const liveness = (options: { readonly probeTimeout?: Duration.DurationInput } = {}): Effect.Effect<ReadonlyArray<Liveness>, never, Registry> =>
  Effect.gen(function*() {
    const registry = yield* Registry
    return yield* Effect.forEach(registry.providers, (provider) =>
      Effect.gen(function*() {
        const models = Object.keys(provider.models)
        const result = (status: "live" | "absent", reason: string): Liveness => ({ provider: provider.id, api: provider.api, status, reason, models })
        const endpoint = endpointOf(provider)
        const baseUrl = yield* baseUrlOf(provider.id, endpoint)
        if (provider.env.length > 0) {
          const key = yield* keyFromEnv(provider.env)
          if (Option.isNone(key)) return result("absent", `${provider.env.join(" or ")} not set`)
          const where = Option.match(baseUrl, { onNone: () => "", onSome: (url) => ` (${url})` })
          return result("live", `${key.value.name} is set${where}`)
        }
        if (Option.isNone(baseUrl)) return result("absent", `no base URL: set ${baseUrlEnv(provider.id)}`)
        const failure = yield* probe(baseUrl.value, options.probeTimeout ?? Duration.seconds(2))
        return Option.match(failure, {
          onNone: () => result("live", `endpoint ${baseUrl.value} answered`),
          onSome: (why) => result("absent", `endpoint ${baseUrl.value} did not answer: ${why}`)
        })
      }), { concurrency: "unbounded" })
  })

