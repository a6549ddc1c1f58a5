/**
 * Model access as a service, in the style of @effect/ai's `LanguageModel`: one `generate` from
 * plain request data to a plain response. The live layers (Live.ts) speak the wire formats over an
 * `HttpClient` provided once from outside; the scripted layer answers from a script in memory (no
 * socket); replay never reaches it (recorded calls are answered by the effect handler). Wrapping
 * layers (the experiment's spend cap, SpendCap.layer) take the inner service and return a new one.
 *
 * This module loads only `effect`: the request and response data live here, and the live
 * clients (Clients.ts, @effect/platform) load only through Live.ts, so a run or a test of
 * scripted candidates never pays their start-up.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { ModelMessage as Message, ToolCall, ToolSpec } from "../schema/Message.ts"

// ---------------------------------------------------------------------------------------------
// Request and response: plain JSON data
// ---------------------------------------------------------------------------------------------

// The tool call, the tool spec and the request's message form live in src/schema/Message.ts, the
// library's one home for them; re-exported here under the names model code uses.
export { AssistantMessage, JsonObject, ModelMessage as Message, ToolCall, ToolMessage, ToolSpec, UserMessage } from "../schema/Message.ts"

export const ModelRequest = Schema.Struct({
  provider: Schema.String,
  model: Schema.String,
  system: Schema.String,
  messages: Schema.Array(Message),
  tools: Schema.Array(ToolSpec),
  maxOutputTokens: Schema.optional(Schema.Number)
})
export type ModelRequest = typeof ModelRequest.Type

/**
 * What a request to a priced model asks for at most when it names no bound of its own (the
 * built-in agent's, a judge's, a simulated user's): it bounds the call's worst case, which the
 * spend cap reserves before the call is sent.
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 8192

/**
 * The output bound of a request that names none, to a model whose registry output limit is
 * `limitOutput`: that limit, at most DEFAULT_MAX_OUTPUT_TOKENS. A limit of 0 or less is unknown
 * (the registry's schema allows 0): the default then.
 */
export const defaultOutputBound = (limitOutput: number): number =>
  limitOutput > 0 ? Math.min(limitOutput, DEFAULT_MAX_OUTPUT_TOKENS) : DEFAULT_MAX_OUTPUT_TOKENS

/**
 * `request` as it is sent, and reserved for, to a model of this registry entry: bounded by
 * `defaultOutputBound` when it names no bound and the model is priced. A model of unknown price
 * (any id on a local server) keeps the server's default, which a small context may need.
 */
export const boundedRequest = (
  request: ModelRequest,
  entry: { readonly cost?: unknown; readonly limit: { readonly output: number } } | undefined
): ModelRequest =>
  request.maxOutputTokens !== undefined || entry === undefined || entry.cost === undefined
    ? request
    : { ...request, maxOutputTokens: defaultOutputBound(entry.limit.output) }

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

/**
 * Why a call failed. `network` is the infrastructure (connection refused, DNS, TLS, a reset
 * before an answer), never the model; `timeout` is no answer in time; `bad-request` and `auth`
 * are what a 4xx says; `decode` is a 2xx whose body is not the API's shape. `spend-cap` is a call
 * a wrapping layer (the experiment's spend cap) did not send: it could not cover its worst case.
 */
export const ModelErrorReason = Schema.Literal("rate-limit", "server-error", "timeout", "bad-request", "auth", "decode", "network", "spend-cap")
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
  retryAfterSeconds: Schema.optional(Schema.Number),
  /**
   * Whether the request's body was sent, where the client knows: `false` when it never left (no
   * connection made, a request the client could not make, a call not sent at all), `true` once it
   * was written, whatever came back. A vendor finishes and bills a request it received whether or
   * not the client waited: the spend cap charges a failure sent with no HTTP error status its
   * reservation. Absent: not said (read as not sent).
   */
  sent: Schema.optional(Schema.Boolean),
  /**
   * The usage a 2xx answer reported, when the body was read that far though its content could not
   * be used (tool-call arguments cut off at the output limit, a response that says it failed): the
   * call was billed for it, and the spend cap settles it at that cost.
   */
  usage: Schema.optional(Usage)
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

// ---------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------

export interface Model {
  /** A wrapping layer's refusal (the spend cap's) is a ModelError too, with its own reason. */
  readonly generate: (request: ModelRequest) => Effect.Effect<ModelResponse, ModelError>
}
export const Model = Context.GenericTag<Model>("assay/Model")

/**
 * One call through the Model service in context, for code whose type names no services (a
 * judge inside an evaluator): without one it fails with reason `bad-request`, saying so.
 */
export const generateInContext = (request: ModelRequest): Effect.Effect<ModelResponse, ModelError> =>
  Effect.flatMap(Effect.serviceOption(Model), (model) =>
    model._tag === "Some"
      ? model.value.generate(request)
      : Effect.fail(
        new ModelError({
          provider: request.provider,
          model: request.model,
          reason: "bad-request",
          status: null,
          sent: false,
          detail: "no Model service in context: provide one (Live.layerNode, Live.layerLive, Model.layerScripted)"
        })
      ))

// ---------------------------------------------------------------------------------------------
// Scripted: deterministic, in memory, no socket
// ---------------------------------------------------------------------------------------------

export interface ScriptedToolCall {
  /** default `call_<i>` (i: the call's place in the response) */
  readonly id?: string | undefined
  readonly name: string
  /** default: `argumentsText` parsed, else `{}` */
  readonly arguments?: Readonly<Record<string, unknown>> | undefined
  /** kept exactly as given; default `JSON.stringify(arguments)`, as a wire client keeps what the server sent */
  readonly argumentsText?: string | undefined
}

/** A reply to script: everything optional; a ModelResponse is one too. */
export interface ScriptedReply {
  readonly text?: string | null | undefined
  readonly toolCalls?: ReadonlyArray<ScriptedToolCall> | undefined
  /** missing counts are 0 */
  readonly usage?: Partial<Usage> | undefined
  /** default `tool-calls` when there are tool calls, else `stop` */
  readonly finishReason?: FinishReason | undefined
  /** default the requested model id (or `scripted` without a request) */
  readonly model?: string | undefined
}

export type ScriptedTurn = ScriptedReply | ModelError

/**
 * A script: turns played in order (call n gets turn n), or a function of the request and `n`,
 * the number of calls before this one (0 for the first), which may also return an effect (to
 * delay, or to fail with a ModelError).
 */
export type Respond =
  | ReadonlyArray<ScriptedTurn>
  | ((request: ModelRequest, n: number) => ScriptedTurn | Effect.Effect<ScriptedReply, ModelError>)

/** The ModelResponse a scripted reply stands for. */
export const scriptedResponse = (reply: ScriptedReply, request?: ModelRequest): ModelResponse => {
  const toolCalls = (reply.toolCalls ?? []).map((call, i): ToolCall => {
    const args = call.arguments ?? (call.argumentsText !== undefined ? parseObject(call.argumentsText) : {})
    return {
      id: call.id ?? `call_${i}`,
      name: call.name,
      arguments: args,
      argumentsText: call.argumentsText ?? JSON.stringify(args)
    }
  })
  const text = reply.text ?? null
  return {
    text,
    toolCalls,
    usage: {
      inputTokens: reply.usage?.inputTokens ?? 0,
      outputTokens: reply.usage?.outputTokens ?? 0,
      cacheReadTokens: reply.usage?.cacheReadTokens ?? 0,
      cacheWriteTokens: reply.usage?.cacheWriteTokens ?? 0
    },
    finishReason: reply.finishReason ?? (toolCalls.length > 0 ? "tool-calls" : "stop"),
    model: reply.model ?? request?.model ?? "scripted"
  }
}

const parseObject = (text: string): Record<string, unknown> => {
  const parsed: unknown = JSON.parse(text)
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`scripted argumentsText is not a JSON object: ${text}`)
  }
  return parsed as Record<string, unknown>
}

/** A scripted failure: what a server or the network would have made of a call. */
export const scriptedError = (
  reason: ModelErrorReason,
  options: {
    readonly detail?: string
    readonly status?: number | null
    readonly retryAfterSeconds?: number
    readonly provider?: string
    readonly model?: string
    /** whether the request had been sent (see ModelError) */
    readonly sent?: boolean
    /** the usage the answer reported (see ModelError) */
    readonly usage?: Usage
  } = {}
): ModelError =>
  new ModelError({
    provider: options.provider ?? "scripted",
    model: options.model ?? "scripted",
    reason,
    status: options.status ?? null,
    detail: options.detail ?? `scripted ${reason}`,
    ...(options.retryAfterSeconds !== undefined ? { retryAfterSeconds: options.retryAfterSeconds } : {}),
    ...(options.sent !== undefined ? { sent: options.sent } : {}),
    ...(options.usage !== undefined ? { usage: options.usage } : {})
  })

/** A scripted model, with the requests it was sent (in order) for a test to look at. */
export interface ScriptedModel extends Model {
  readonly requests: () => ReadonlyArray<ModelRequest>
}

/** A scripted model service; each one counts its own calls. */
export const scripted = (respond: Respond): ScriptedModel => {
  const seen: Array<ModelRequest> = []
  const turnOf = (request: ModelRequest, n: number): ScriptedTurn | Effect.Effect<ScriptedReply, ModelError> => {
    if (typeof respond === "function") return respond(request, n)
    const turn = respond[n]
    if (turn === undefined) {
      // A test bug, not a model failure: a defect, so no agent or verdict can absorb it.
      throw new Error(`the scripted model has ${respond.length} turn(s); call #${n + 1} (${request.provider}:${request.model}) has none`)
    }
    return turn
  }
  return {
    requests: () => seen.slice(),
    generate: (request) =>
      Effect.suspend(() => {
        const n = seen.length
        seen.push(request)
        const turn = turnOf(request, n)
        if (turn instanceof ModelError) return Effect.fail(turn)
        if (Effect.isEffect(turn)) return Effect.map(turn, (reply) => scriptedResponse(reply, request))
        return Effect.succeed(scriptedResponse(turn, request))
      })
  }
}

/** The scripted model as a layer: no socket, no clients loaded. */
export const layerScripted = (respond: Respond): Layer.Layer<Model> => Layer.sync(Model, () => scripted(respond))
