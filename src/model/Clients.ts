/**
 * The live model clients behind `Live.layerLive`: one `generate` that sends each request in the
 * wire format of its provider's endpoint (Registry `api`): OpenAI Responses (OpenAiResponses.ts),
 * chat completions (ChatCompletions.ts, any OpenAI-compatible server), Anthropic messages
 * (AnthropicMessages.ts) and Gemini generateContent (Gemini.ts), each a small client of our own
 * over the `HttpClient` in context (provided once, from outside; Wire.ts sends). Their decoders
 * are lenient, built once at module load, and read only what a ModelResponse needs: servers that
 * call themselves compatible leave out fields the vendors always send (@effect/ai-openai's
 * generated schema rejects a Responses body without `incomplete_details` or `metadata`), and
 * @effect/ai rebuilt its response schema on every call. Keys are read only from the environment
 * (Endpoint.ts); no error message ever carries one.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Duration, Effect, Either, Layer, Option } from "effect"
import * as AnthropicMessages from "./AnthropicMessages.ts"
import * as ChatCompletions from "./ChatCompletions.ts"
import { connectionFor, connectionOf, type Endpoint, endpointFor, endpointIn, endpointOf, notConnectedDetail } from "./Endpoint.ts"
import * as Gemini from "./Gemini.ts"
import type { ModelError, ModelRequest, ModelResponse } from "./Model.ts"
import * as OpenAiResponses from "./OpenAiResponses.ts"
import { type ApiType, Registry } from "./Registry.ts"
import { type CallContext, modelError, nodeHttpClient, sendOf, transportFailureOf, untraced, type Via } from "./Wire.ts"

// The request and response data live in Model.ts (which loads no client); re-exported for callers of this module.
export {
  AssistantMessage,
  FinishReason,
  JsonObject,
  Message,
  ModelError,
  ModelErrorReason,
  ModelRequest,
  ModelResponse,
  ToolCall,
  ToolMessage,
  ToolSpec,
  Usage,
  UserMessage
} from "./Model.ts"

export {
  type BaseUrlSource,
  type Connection,
  connectionOf,
  type Endpoint,
  endpointFor,
  endpointOf,
  keyFromEnv,
  type NotConnected
} from "./Endpoint.ts"
export { nodeHttpClient, reasonOfStatus, scrub, sseData, transportFailureOf } from "./Wire.ts"
export { responsesBody } from "./OpenAiResponses.ts"
export { chatBody } from "./ChatCompletions.ts"
export { anthropicBody } from "./AnthropicMessages.ts"

/** The call of each wire format. */
const wireFormats: Readonly<Record<ApiType, Via>> = {
  "openai-responses": OpenAiResponses.via,
  "openai-chat": ChatCompletions.via,
  "anthropic-messages": AnthropicMessages.via,
  google: Gemini.via
}

// ---------------------------------------------------------------------------------------------
// The live clients
// ---------------------------------------------------------------------------------------------

export interface GenerateOptions {
  /** where to send the call; default: the provider's endpoint from the Registry (when in context) or built in */
  readonly endpoint?: Endpoint | undefined
  /** use the streaming wire format (the response is still returned whole) */
  readonly stream?: boolean | undefined
  /** default 120 seconds */
  readonly timeout?: Duration.DurationInput | undefined
}

export interface LiveClients {
  /** One model call. Fails only with ModelError, whose message never contains a key. */
  readonly generate: (request: ModelRequest, options?: GenerateOptions) => Effect.Effect<ModelResponse, ModelError>
}

export interface LiveOptions {
  /** send every request in this wire format, whatever its endpoint's; default each endpoint's own */
  readonly api?: ApiType | undefined
  /** use the streaming wire formats (each response is still returned whole); default false */
  readonly stream?: boolean | undefined
  /** per call; default 120 seconds */
  readonly timeout?: Duration.DurationInput | undefined
}

const makeWith = (defaults: LiveOptions, registry: Option.Option<Registry>): Effect.Effect<LiveClients, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = sendOf(yield* HttpClient.HttpClient)

    const generate = (request: ModelRequest, options: GenerateOptions = {}): Effect.Effect<ModelResponse, ModelError> =>
      Effect.gen(function*() {
        const base: CallContext = { provider: request.provider, model: request.model, secrets: [] }
        const endpoint = options.endpoint ??
          Option.getOrUndefined(Option.isSome(registry) ? endpointIn(registry, request.provider) : yield* endpointFor(request.provider))
        if (endpoint === undefined) {
          return yield* modelError(base, "bad-request", null, `unknown provider "${request.provider}": not in the registry and no endpoint given`, { sent: false })
        }
        const connected = yield* connectionFor(request.provider, endpoint)
        if (Either.isLeft(connected)) return yield* modelError(base, connected.left.reason, null, notConnectedDetail(request.provider, connected.left), { sent: false })
        const connection = connected.right
        const ctx: CallContext = { ...base, secrets: Option.isSome(connection.key) ? [connection.key.value.key] : [] }
        const stream = options.stream ?? defaults.stream ?? false
        // Each request is bounded by the timeout (the Send's own timer), not the call by a fiber of its own.
        const timeout = Duration.decode(options.timeout ?? defaults.timeout ?? Duration.seconds(120))
        const api = defaults.api ?? endpoint.api
        return yield* api !== "openai-responses"
          ? wireFormats[api](ctx, http, request, connection, stream, timeout)
          : OpenAiResponses.via(ctx, http, request, connection, stream, timeout).pipe(
            // Many OpenAI-compatible servers (Ollama, vLLM, LM Studio) have no /responses: use chat completions there.
            Effect.catchIf(
              (e) => e.status === 404 || e.status === 405,
              () => ChatCompletions.via(ctx, http, request, connection, stream, timeout)
            )
          )
      })
    return { generate }
  })

/**
 * The live clients over the HttpClient in context. Endpoints come from the Registry in context
 * here when there is one, else from the one where a call is made. With `api`, every request is
 * sent in that wire format, whatever its endpoint's.
 */
export const make = (options: LiveOptions = {}): Effect.Effect<LiveClients, never, HttpClient.HttpClient> =>
  Effect.flatMap(Effect.serviceOption(Registry), (registry) => makeWith(options, registry))

/**
 * One model call over clients of its own (Node's HTTP client, closed once the call is done): for
 * a test or a one-off. A run uses the `Model` service (`Live.layerNode`, or `Live.layerLive`
 * over your own HttpClient), which keeps one HTTP client for all its calls.
 */
export const generate = (request: ModelRequest, options: GenerateOptions = {}): Effect.Effect<ModelResponse, ModelError> =>
  Effect.scoped(Effect.flatMap(Layer.build(nodeHttpClient), (http) =>
    Effect.flatMap(Effect.provide(makeWith({}, Option.none()), http), (clients) => clients.generate(request, options))))

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

const probe = (client: HttpClient.HttpClient, baseUrl: string, timeout: Duration.DurationInput): Effect.Effect<Option.Option<string>> =>
  client.get(`${baseUrl}/models`).pipe(
    Effect.map((response) => (response.status < 500 ? Option.none<string>() : Option.some(`HTTP ${response.status}`))),
    Effect.timeoutFail({ duration: timeout, onTimeout: () => "timed out" }),
    Effect.catchAll((e) => Effect.succeed(Option.some(typeof e === "string" ? e : transportFailureOf(e) ?? e.message)))
  )

/**
 * Which registry providers can be called now: a key is set, or (keyless providers, and those
 * whose key is optional, when none is set) the endpoint answers GET {base}/models. Absent ones
 * say why.
 */
export const liveness = (options: { readonly probeTimeout?: Duration.DurationInput } = {}): Effect.Effect<ReadonlyArray<Liveness>, never, Registry> =>
  Effect.gen(function*() {
    const registry = yield* Registry
    const client = untraced(yield* HttpClient.HttpClient)
    return yield* Effect.forEach(registry.providers, (provider) =>
      Effect.gen(function*() {
        const models = Object.keys(provider.models)
        const result = (status: "live" | "absent", reason: string): Liveness => ({ provider: provider.id, api: provider.api, status, reason, models })
        const connected = yield* connectionOf(provider.id, endpointOf(provider))
        if (Either.isLeft(connected)) {
          const why = connected.left
          return result("absent", why.reason === "auth" ? `${why.keyEnv.join(" or ")} not set` : `no base URL: set ${why.baseUrlEnv.join(" or ")}`)
        }
        const { baseUrl, key } = connected.right
        // A key set is taken at its word (no call before the run); only keyless endpoints are asked.
        if (Option.isSome(key)) return result("live", `${key.value.name} is set (${baseUrl})`)
        const failure = yield* probe(client, baseUrl, options.probeTimeout ?? Duration.seconds(2))
        return Option.match(failure, {
          onNone: () => result("live", `endpoint ${baseUrl} answered`),
          onSome: (why) => result("absent", `endpoint ${baseUrl} did not answer: ${why}`)
        })
      }), { concurrency: "unbounded" })
  }).pipe(Effect.provide(NodeHttpClient.layer))
