/**
 * The live model clients behind `Model.layerLive`: OpenAI Responses, chat completions (any
 * OpenAI-compatible server), Anthropic messages and Gemini generateContent, each a small client of
 * our own over the `HttpClient` in context (provided once, from outside). Their decoders are
 * lenient, built once at module load, and read only what a ModelResponse needs: servers that call
 * themselves compatible leave out fields the vendors always send (@effect/ai-openai's generated
 * schema rejects a Responses body without `incomplete_details` or `metadata`), and @effect/ai
 * rebuilt its response schema on every call. A transport failure is `network`, never `decode`.
 * Keys are read only from the environment; no error message ever carries one.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Http from "node:http"
import * as Https from "node:https"
import { Config, Duration, Effect, Either, Layer, Option, Redacted, Schema, Scope } from "effect"
import * as Gemini from "./Gemini.ts"
import * as JsonText from "./JsonText.ts"
import {
  type FinishReason,
  type LiveOptions,
  ModelError,
  type ModelErrorReason,
  type ModelRequest,
  type ModelResponse,
  type ToolCall,
  type Usage
} from "./Model.ts"
import { type ApiType, type ProviderEntry, Registry } from "./Registry.ts"

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

/** An environment variable that may give the base URL, with the key variables that go with it. */
export interface BaseUrlSource {
  readonly name: string
  readonly keyEnv: ReadonlyArray<string>
}

/** Where a provider is reached. Not part of a request, so a recording does not depend on a port. */
export interface Endpoint {
  readonly api: ApiType
  /** explicit base URL; else from the environment (`baseUrlEnv`); else the registry's */
  readonly baseUrl?: string | undefined
  /** environment variables that may hold the key, first set one wins; empty for keyless servers */
  readonly keyEnv: ReadonlyArray<string>
  /** base URL when neither the explicit one nor the environment gives one */
  readonly defaultBaseUrl?: string | undefined
  /** a key is sent when one is set, and none is needed (keyless local servers) */
  readonly keyOptional?: boolean | undefined
  /**
   * where the environment may give the base URL, first set one wins, each with its own keys (a
   * key is only sent to the base URL it was set beside); default `<PROVIDER>_BASE_URL` with `keyEnv`
   */
  readonly baseUrlEnv?: ReadonlyArray<BaseUrlSource> | undefined
}

const builtinEndpoints: Readonly<Record<string, Endpoint>> = {
  openai: { api: "openai-responses", keyEnv: ["OPENAI_API_KEY"], defaultBaseUrl: "https://api.openai.com/v1" },
  anthropic: { api: "anthropic-messages", keyEnv: ["ANTHROPIC_API_KEY"], defaultBaseUrl: "https://api.anthropic.com" }
}

export const endpointOf = (provider: ProviderEntry): Endpoint => ({
  api: provider.api,
  keyEnv: provider.env,
  defaultBaseUrl: provider.base_url,
  keyOptional: provider.key_optional,
  baseUrlEnv: provider.base_url_env?.map((source) => ({ name: source.name, keyEnv: source.env }))
})

const baseUrlEnv = (provider: string): string => `${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_BASE_URL`

const optionalEnv = (name: string): Effect.Effect<Option.Option<string>> =>
  Config.option(Config.string(name)).pipe(
    Effect.map(Option.filter((value) => value.length > 0)),
    Effect.orElseSucceed(() => Option.none<string>())
  )

/** Reads the first key that is set among `names`. */
export const keyFromEnv = (names: ReadonlyArray<string>): Effect.Effect<Option.Option<{ readonly name: string; readonly key: Redacted.Redacted }>> =>
  Effect.gen(function*() {
    for (const name of names) {
      const value = yield* optionalEnv(name)
      if (Option.isSome(value)) return Option.some({ name, key: Redacted.make(value.value) })
    }
    return Option.none()
  })

const sourcesOf = (provider: string, endpoint: Endpoint): ReadonlyArray<BaseUrlSource> =>
  endpoint.baseUrlEnv ?? [{ name: baseUrlEnv(provider), keyEnv: endpoint.keyEnv }]

/** Where a call goes and with which key, once the environment has been read. */
export interface Connection {
  readonly baseUrl: string
  /** which variable the base URL came from, when it came from the environment */
  readonly baseUrlFrom: Option.Option<string>
  readonly key: Option.Option<{ readonly name: string; readonly key: Redacted.Redacted }>
  /** the key variables that were looked at */
  readonly keyEnv: ReadonlyArray<string>
}

/** Why no call can be made: a needed key is missing, or nothing says where to send it. */
export type NotConnected =
  | { readonly reason: "auth"; readonly keyEnv: ReadonlyArray<string> }
  | { readonly reason: "bad-request"; readonly baseUrlEnv: ReadonlyArray<string> }

const notConnectedDetail = (provider: string, why: NotConnected): string =>
  why.reason === "auth" ? `no key: set ${why.keyEnv.join(" or ")}` : `no base URL for ${provider}: set ${why.baseUrlEnv.join(" or ")}`

/** Reads the base URL and the key of a provider's endpoint from the environment. */
export const connectionOf = (provider: string, endpoint: Endpoint): Effect.Effect<Either.Either<Connection, NotConnected>> =>
  Effect.gen(function*() {
    let found: { readonly baseUrl: string; readonly from: Option.Option<string>; readonly keyEnv: ReadonlyArray<string> } | undefined
    if (endpoint.baseUrl !== undefined) found = { baseUrl: endpoint.baseUrl, from: Option.none(), keyEnv: endpoint.keyEnv }
    const sources = sourcesOf(provider, endpoint)
    for (const source of sources) {
      if (found !== undefined) break
      const value = yield* optionalEnv(source.name)
      if (Option.isSome(value)) found = { baseUrl: value.value, from: Option.some(source.name), keyEnv: source.keyEnv }
    }
    if (found === undefined && endpoint.defaultBaseUrl !== undefined) {
      found = { baseUrl: endpoint.defaultBaseUrl, from: Option.none(), keyEnv: endpoint.keyEnv }
    }
    const keyEnv = found?.keyEnv ?? endpoint.keyEnv
    const key = yield* keyFromEnv(keyEnv)
    if (Option.isNone(key) && keyEnv.length > 0 && endpoint.keyOptional !== true) {
      return Either.left<NotConnected>({ reason: "auth", keyEnv })
    }
    if (found === undefined) {
      return Either.left<NotConnected>({ reason: "bad-request", baseUrlEnv: sources.map((s) => s.name) })
    }
    return Either.right<Connection>({ baseUrl: found.baseUrl.replace(/\/+$/, ""), baseUrlFrom: found.from, key, keyEnv })
  })

/** The endpoint of a provider in a registry, else the built-in openai and anthropic ones. */
const endpointIn = (registry: Option.Option<Registry>, provider: string): Option.Option<Endpoint> => {
  const entry = Option.flatMapNullable(registry, (r) => r.file.providers[provider])
  return Option.isSome(entry) ? Option.some(endpointOfEntry(entry.value)) : Option.fromNullable(builtinEndpoints[provider])
}

// One Endpoint per registry entry (entries are immutable data), so a call's connection can be
// remembered by its endpoint (`connectionFor`).
const endpoints = new WeakMap<ProviderEntry, Endpoint>()
const endpointOfEntry = (entry: ProviderEntry): Endpoint => {
  let endpoint = endpoints.get(entry)
  if (endpoint === undefined) endpoints.set(entry, endpoint = endpointOf(entry))
  return endpoint
}

// The ConfigProvider a program has unless it sets its own: it reads process.env.
const defaultConfigProvider = Effect.runSync(Effect.configProviderWith(Effect.succeed))

// Connections made under the default ConfigProvider, by endpoint and provider, with the values
// of every variable they were read from: reading them through Config on every call cost ~40-80 us
// of CPU per model call. A change of any of those variables reads the environment again.
const connections = new WeakMap<Endpoint, Map<string, { readonly seen: string; readonly connected: Either.Either<Connection, NotConnected> }>>()

const envNamesOf = (provider: string, endpoint: Endpoint): Array<string> => {
  const names: Array<string> = [...endpoint.keyEnv]
  for (const source of sourcesOf(provider, endpoint)) names.push(source.name, ...source.keyEnv)
  return names
}

/** `connectionOf`, remembered while the environment variables it read are unchanged. */
const connectionFor = (provider: string, endpoint: Endpoint): Effect.Effect<Either.Either<Connection, NotConnected>> =>
  Effect.configProviderWith((config) => {
    if (config !== defaultConfigProvider) return connectionOf(provider, endpoint)
    const seen = envNamesOf(provider, endpoint).map((name) => process.env[name] ?? "").join("\u0000")
    let byProvider = connections.get(endpoint)
    const known = byProvider?.get(provider)
    if (known !== undefined && known.seen === seen) return Effect.succeed(known.connected)
    if (byProvider === undefined) connections.set(endpoint, byProvider = new Map())
    const remember = byProvider
    return Effect.tap(connectionOf(provider, endpoint), (connected) => {
      remember.set(provider, { seen, connected })
    })
  })

/** The endpoint of a provider: the Registry's when one is in context, else the built-in openai and anthropic ones. */
export const endpointFor = (provider: string): Effect.Effect<Option.Option<Endpoint>> =>
  Effect.map(Effect.serviceOption(Registry), (registry) => endpointIn(registry, provider))

// ---------------------------------------------------------------------------------------------
// Keeping keys out of messages
// ---------------------------------------------------------------------------------------------

const keyLike = /\b(sk-(?:ant-|proj-|or-)?[A-Za-z0-9_*-]{4,}|AIza[0-9A-Za-z_-]{10,}|gsk_[A-Za-z0-9]{10,})/g

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

const retryAfterOf = (headers: Readonly<Record<string, string | undefined>>): number | undefined => {
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

// ---------------------------------------------------------------------------------------------
// Infrastructure is not the model
// ---------------------------------------------------------------------------------------------

// Node's system errors (ECONNREFUSED, ECONNRESET, ENOTFOUND, EAI_AGAIN, ETIMEDOUT, EPROTO, ...),
// undici's, and OpenSSL's certificate and handshake failures.
const transportCode = /^(E[A-Z0-9_]+|UND_ERR_[A-Z_]+|ERR_TLS_[A-Z_]+|ERR_SSL_[A-Z0-9_]+|ERR_STREAM_PREMATURE_CLOSE|CERT_[A-Z_]+|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_[A-Z_]+|HOSTNAME_MISMATCH)$/
const transportMessage = /socket hang up|^aborted$|premature close|other side closed|connection (?:reset|refused)/i

/**
 * What went wrong on the wire, when an error (or one of its causes) is a transport failure: a
 * connection refused, a name that does not resolve, a TLS handshake that fails, a socket reset.
 */
export const transportFailureOf = (error: unknown): string | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    const code = "code" in current ? (current as { code: unknown }).code : undefined
    const message = "message" in current ? (current as { message: unknown }).message : undefined
    const text = typeof message === "string" ? message : ""
    if (typeof code === "string" && transportCode.test(code)) return text.includes(code) ? text : `${code}: ${text}`
    if (transportMessage.test(text)) return text
    current = "cause" in current ? (current as { cause: unknown }).cause : undefined
  }
  return undefined
}

/** A request that got no response: the network unless the request itself could not be made. */
const requestFailure = (ctx: CallContext, error: HttpClientError.HttpClientError): ModelError => {
  if (error._tag === "RequestError") {
    const where = `${error.request.method} ${error.request.url}`
    if (error.reason === "Transport") {
      return modelError(ctx, "network", null, `cannot reach ${where}: ${transportFailureOf(error.cause) ?? error.description ?? "transport failure"}`)
    }
    return modelError(ctx, "bad-request", null, `${where}: ${error.message}`)
  }
  const transport = transportFailureOf(error)
  return transport !== undefined
    ? modelError(ctx, "network", error.response.status, `the connection failed while reading the response: ${transport}`)
    : modelError(ctx, "decode", error.response.status, error.message)
}

// ---------------------------------------------------------------------------------------------
// Shared by our own clients
// ---------------------------------------------------------------------------------------------

const parseArguments = (ctx: CallContext, name: string, text: string): Effect.Effect<Record<string, unknown>, ModelError> =>
  Effect.try({
    try: () => {
      const parsed: unknown = text.trim().length === 0 ? {} : JSON.parse(text)
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not a JSON object")
      return parsed as Record<string, unknown>
    },
    catch: (e) => modelError(ctx, "decode", null, `arguments of tool call ${name} are not a JSON object: ${String(e)}`)
  })

/** A tool call from its arguments' text: the parsed arguments, and the text as the model wrote it (when not blank). */
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

/** A JSON body decoded with `decode` (built once per schema, at module load). */
const decodeJson = <A>(ctx: CallContext, decode: (u: unknown) => Either.Either<A, { readonly message: string }>, text: string): Effect.Effect<A, ModelError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return Effect.fail(modelError(ctx, "decode", 200, `response is not JSON: ${String(e)}`))
  }
  return Either.match(decode(json), {
    onLeft: (e) => Effect.fail(modelError(ctx, "decode", 200, e.message)),
    onRight: Effect.succeed
  })
}

// Trace headers (b3, traceparent) are of no use to a model provider.
const untraced = (client: HttpClient.HttpClient): HttpClient.HttpClient => HttpClient.withTracerPropagation(client, false)

/** One POST of a JSON body, as each client makes it. */
interface Post {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** the JSON text */
  readonly body: string
}

/** What came back: the status, the headers (lower-case names) and the whole body as text. */
interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: string
}

/**
 * Sends a POST and reads the whole answer within `timeout`. A transport failure is `network`, no
 * answer in time is `timeout`; any status is a Reply.
 */
type Send = (ctx: CallContext, post: Post, timeout: Duration.Duration) => Effect.Effect<Reply, ModelError>

const timedOut = (ctx: CallContext, timeout: Duration.Duration): ModelError =>
  modelError(ctx, "timeout", null, `no answer within ${Duration.format(timeout)}`)

/** A Send over an HttpClient of the caller's (any platform's). */
const sendOver = (client: HttpClient.HttpClient): Send => (ctx, post, timeout) => {
  const httpRequest = HttpClientRequest.post(post.url).pipe(
    HttpClientRequest.setHeaders(post.headers),
    HttpClientRequest.bodyText(post.body, "application/json")
  )
  return Effect.gen(function*() {
    const response = yield* client.execute(httpRequest).pipe(Effect.mapError((e) => requestFailure(ctx, e)))
    const body = yield* response.text.pipe(Effect.mapError((e) => requestFailure(ctx, e)))
    return { status: response.status, headers: response.headers, body } satisfies Reply
  }).pipe(Effect.timeoutFail({ duration: timeout, onTimeout: () => timedOut(ctx, timeout) }))
}

/** The http and https agents the command's calls go through. */
interface Agents {
  readonly http: Http.Agent
  readonly https: Https.Agent
}

/**
 * A Send straight over Node's http/https with keep-alive agents: one callback-driven request per
 * call, resumed once with the whole body. Per call this is a fraction of the CPU of the same
 * request through @effect/platform's HttpClient (request and response objects, a fiber per body
 * direction, an abort signal, a timeout fiber), which at --parallel 1000 is time the slots wait on.
 * Failures are told as `requestFailure` tells the HttpClient's.
 */
const sendNode = (agents: Agents): Send => (ctx, post, timeout) =>
  Effect.async<Reply, ModelError>((resume) => {
    const where = `POST ${post.url}`
    let settled = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const settle = (result: Effect.Effect<Reply, ModelError>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(result)
    }
    let url: URL
    try {
      url = new URL(post.url)
    } catch (e) {
      settled = true
      resume(Effect.fail(modelError(ctx, "bad-request", null, `${where}: ${String(e)}`)))
      return
    }
    const body = Buffer.from(post.body)
    const headers = { ...post.headers, "content-type": "application/json", "content-length": String(body.length) }
    const https = url.protocol === "https:"
    if (!https && url.protocol !== "http:") {
      settled = true
      resume(Effect.fail(modelError(ctx, "bad-request", null, `${where}: unsupported protocol ${url.protocol}`)))
      return
    }
    const onResponse = (res: Http.IncomingMessage) => {
      const status = res.statusCode ?? 0
      const chunks: Array<Buffer> = []
      const failed = (e: unknown) => {
        const transport = transportFailureOf(e)
        settle(Effect.fail(
          transport !== undefined
            ? modelError(ctx, "network", status, `the connection failed while reading the response: ${transport}`)
            : modelError(ctx, "decode", status, String(e))
        ))
      }
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("error", failed)
      res.on("end", () => {
        const retryAfter = res.headers["retry-after"]
        settle(Effect.succeed({
          status,
          headers: { "retry-after": Array.isArray(retryAfter) ? retryAfter[0] : retryAfter },
          body: Buffer.concat(chunks).toString("utf8")
        }))
      })
      res.on("close", () => {
        if (!res.complete) failed(Object.assign(new Error("aborted"), { code: "ECONNRESET" }))
      })
    }
    let req: Http.ClientRequest
    try {
      req = https
        ? Https.request(url, { method: "POST", agent: agents.https, headers }, onResponse)
        : Http.request(url, { method: "POST", agent: agents.http, headers }, onResponse)
    } catch (e) {
      // Node refuses a request it cannot write (a header value with a newline) before sending it.
      settled = true
      resume(Effect.fail(modelError(ctx, "bad-request", null, `${where}: ${String(e)}`)))
      return
    }
    req.on("error", (e) => settle(Effect.fail(modelError(ctx, "network", null, `cannot reach ${where}: ${transportFailureOf(e) ?? "transport failure"}`))))
    // setTimeout fires at once for a delay past 2^31 - 1 ms (or an infinite one): no timer then.
    const ms = Duration.toMillis(timeout)
    timer = ms <= 2 ** 31 - 1
      ? setTimeout(() => {
        settle(Effect.fail(timedOut(ctx, timeout)))
        req.destroy()
      }, ms)
      : undefined
    req.end(body)
    return Effect.sync(() => {
      settled = true
      clearTimeout(timer)
      req.destroy()
    })
  })

// The HttpClients made by `nodeHttpClient`, with the agents they send through: a client from
// there is used as a Send over those agents directly.
const nodeAgents = new WeakMap<HttpClient.HttpClient, Agents>()

const sendOf = (client: HttpClient.HttpClient): Send => {
  const agents = nodeAgents.get(client)
  return agents !== undefined ? sendNode(agents) : sendOver(untraced(client))
}

/** Sends a request and reads the whole body; a non-2xx status is a ModelError saying what the server said. */
const bodyOfSuccess = (ctx: CallContext, send: Send, post: Post, timeout: Duration.Duration): Effect.Effect<string, ModelError> =>
  Effect.flatMap(send(ctx, post, timeout), (reply) => {
    if (reply.status >= 200 && reply.status < 300) return Effect.succeed(reply.body)
    const said = errorMessageOfBody(reply.body) ?? "(no body)"
    return Effect.fail(modelError(
      ctx,
      reasonOfStatus(reply.status),
      reply.status,
      `HTTP ${reply.status} from POST ${post.url}: ${said}`,
      retryAfterOf(reply.headers)
    ))
  })

const postJson = (url: string, body: unknown, headers: Readonly<Record<string, string>> = {}): Post => ({
  url,
  headers: { accept: "application/json", ...headers },
  body: JSON.stringify(body)
})

const bearer = (connection: Connection): Record<string, string> =>
  Option.isSome(connection.key) ? { authorization: `Bearer ${Redacted.value(connection.key.value.key)}` } : {}

const openAiUsage = (input: number, output: number, cached: number): Usage => ({
  // OpenAI counts cached prompt tokens inside the input tokens; ours are disjoint.
  inputTokens: input - cached,
  outputTokens: output,
  cacheReadTokens: cached,
  cacheWriteTokens: 0
})

// ---------------------------------------------------------------------------------------------
// OpenAI Responses (POST {base}/responses), lenient
// ---------------------------------------------------------------------------------------------

// Only what we read, each optional: OpenAI-compatible servers leave out incomplete_details,
// metadata, usage details and more, and @effect/ai-openai's generated schema requires them.
const opt = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))

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

const viaResponses = (
  ctx: CallContext,
  send: Send,
  request: ModelRequest,
  connection: Connection,
  stream: boolean,
  timeout: Duration.Duration
): Effect.Effect<ModelResponse, ModelError> =>
  Effect.gen(function*() {
    const body = yield* bodyOfSuccess(ctx, send, postJson(`${connection.baseUrl}/responses`, responsesBody(request, stream), bearer(connection)), timeout)
    if (!stream) {
      const response = yield* decodeJson(ctx, decodeResponsesBody, body)
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
          break
        case "response.failed":
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
  })

// ---------------------------------------------------------------------------------------------
// Chat completions (any OpenAI-compatible server)
// ---------------------------------------------------------------------------------------------

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

const viaChatCompletions = (
  ctx: CallContext,
  send: Send,
  request: ModelRequest,
  connection: Connection,
  stream: boolean,
  timeout: Duration.Duration
): Effect.Effect<ModelResponse, ModelError> =>
  Effect.gen(function*() {
    const body = yield* bodyOfSuccess(ctx, send, postJson(`${connection.baseUrl}/chat/completions`, chatBody(request, stream), bearer(connection)), timeout)
    if (!stream) {
      const completion = yield* decodeJson(ctx, decodeChatCompletion, body)
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
      if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage
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
  })

// ---------------------------------------------------------------------------------------------
// Gemini (generateContent)
// ---------------------------------------------------------------------------------------------

const decodeGemini = Schema.decodeUnknownEither(Gemini.GenerateContentResponse)

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
  send: Send,
  request: ModelRequest,
  connection: Connection,
  stream: boolean,
  timeout: Duration.Duration
): Effect.Effect<ModelResponse, ModelError> =>
  Effect.gen(function*() {
    const method = stream ? "streamGenerateContent?alt=sse" : "generateContent"
    const key: Record<string, string> = Option.isSome(connection.key) ? { "x-goog-api-key": Redacted.value(connection.key.value.key) } : {}
    const body = yield* bodyOfSuccess(ctx, send, postJson(`${connection.baseUrl}/models/${encodeURIComponent(request.model)}:${method}`, Gemini.bodyOf(request), key), timeout)
    // Function calls come whole (never split across chunks): their args' text is in one chunk.
    const texts = stream ? sseData(body) : [body]
    const chunks = yield* Effect.forEach(texts, (t) => decodeJson(ctx, decodeGemini, t))
    const argumentTexts = texts.flatMap(geminiArgumentTexts)
    return Gemini.responseFrom(chunks, request.model, (n) => argumentTexts[n])
  })

// ---------------------------------------------------------------------------------------------
// Anthropic messages (POST {base}/v1/messages)
// ---------------------------------------------------------------------------------------------

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
    max_tokens: request.maxOutputTokens ?? 4096,
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

const viaAnthropic = (
  ctx: CallContext,
  send: Send,
  request: ModelRequest,
  connection: Connection,
  stream: boolean,
  timeout: Duration.Duration
): Effect.Effect<ModelResponse, ModelError> =>
  Effect.gen(function*() {
    const headers: Record<string, string> = {
      "anthropic-version": ANTHROPIC_VERSION,
      ...(Option.isSome(connection.key) ? { "x-api-key": Redacted.value(connection.key.value.key) } : {})
    }
    const body = yield* bodyOfSuccess(ctx, send, postJson(`${connection.baseUrl}/v1/messages`, anthropicBody(request, stream), headers), timeout)
    if (!stream) {
      const message = yield* decodeJson(ctx, decodeAnthropicMessage, body)
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
  })

const withoutNulls = (usage: AnthropicUsage | null | undefined): AnthropicUsage =>
  Object.fromEntries(Object.entries(usage ?? {}).filter(([, v]) => v !== null && v !== undefined)) as AnthropicUsage

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

const makeWith = (defaults: LiveOptions, registry: Option.Option<Registry>): Effect.Effect<LiveClients, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = sendOf(yield* HttpClient.HttpClient)

    const generate = (request: ModelRequest, options: GenerateOptions = {}): Effect.Effect<ModelResponse, ModelError> =>
      Effect.gen(function*() {
        const base: CallContext = { provider: request.provider, model: request.model, secrets: [] }
        const endpoint = options.endpoint ??
          Option.getOrUndefined(Option.isSome(registry) ? endpointIn(registry, request.provider) : yield* endpointFor(request.provider))
        if (endpoint === undefined) {
          return yield* modelError(base, "bad-request", null, `unknown provider "${request.provider}": not in the registry and no endpoint given`)
        }
        const connected = yield* connectionFor(request.provider, endpoint)
        if (Either.isLeft(connected)) return yield* modelError(base, connected.left.reason, null, notConnectedDetail(request.provider, connected.left))
        const connection = connected.right
        const ctx: CallContext = { ...base, secrets: Option.isSome(connection.key) ? [connection.key.value.key] : [] }
        const stream = options.stream ?? defaults.stream ?? false
        // Each request is bounded by the timeout (the Send's own timer), not the call by a fiber of its own.
        const timeout = Duration.decode(options.timeout ?? defaults.timeout ?? Duration.seconds(120))
        return yield* endpoint.api === "openai-chat"
          ? viaChatCompletions(ctx, http, request, connection, stream, timeout)
          : endpoint.api === "google"
          ? viaGemini(ctx, http, request, connection, stream, timeout)
          : endpoint.api === "anthropic-messages"
          ? viaAnthropic(ctx, http, request, connection, stream, timeout)
          : viaResponses(ctx, http, request, connection, stream, timeout).pipe(
            // Many OpenAI-compatible servers (Ollama, vLLM, LM Studio) have no /responses: use chat completions there.
            Effect.catchIf(
              (e) => e.status === 404 || e.status === 405,
              () => viaChatCompletions(ctx, http, request, connection, stream, timeout)
            )
          )
      })
    return { generate }
  })

/**
 * The live clients over the HttpClient in context. Endpoints come from the Registry in context
 * here when there is one, else from the one where a call is made.
 */
export const make = (options: LiveOptions = {}): Effect.Effect<LiveClients, never, HttpClient.HttpClient> =>
  Effect.flatMap(Effect.serviceOption(Registry), (registry) => makeWith(options, registry))

/**
 * Node's HTTP client with one keep-alive agent: a run reuses its connections instead of a
 * handshake per call. Up to 4,096 idle connections are kept (Node keeps 256 by default), so the
 * next wave of --parallel 1000 calls opens none. The live clients over this client send through
 * its agents directly (`sendNode`).
 */
export const nodeHttpClient: Layer.Layer<HttpClient.HttpClient> = Layer.effect(
  HttpClient.HttpClient,
  Effect.gen(function*() {
    const agent = yield* NodeHttpClient.HttpAgent
    const client = yield* NodeHttpClient.make
    nodeAgents.set(client, { http: agent.http, https: agent.https })
    return client
  })
).pipe(Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: true, maxFreeSockets: 4096 })))

// One set of clients for the process, for callers that have no Model layer: built on the first
// call, with no Registry of its own (each call's context gives it), and never closed.
const shared: Effect.Effect<LiveClients> = Effect.runSync(Effect.cached(
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(nodeHttpClient, scope)
    return yield* makeWith({}, Option.none()).pipe(Effect.provide(context))
  })
))

/**
 * One model call through the process's shared live clients (Node's HTTP client). Prefer the
 * `Model` service (`Model.layerNode`, or `Model.layerLive` over your own HttpClient).
 */
export const generate = (request: ModelRequest, options: GenerateOptions = {}): Effect.Effect<ModelResponse, ModelError> =>
  Effect.flatMap(shared, (clients) => clients.generate(request, options))

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
