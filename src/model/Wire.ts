/**
 * What the four wire formats' clients share: sending one JSON POST and reading the whole answer
 * (over Node's agents directly, or any platform's HttpClient), telling a transport failure
 * (`network`) from a server's answer, keeping keys out of every message, and the small decoders
 * each format uses. A transport failure is `network`, never `decode`.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Http from "node:http"
import * as Https from "node:https"
import { Duration, Effect, Either, Layer, Option, Redacted, Schema } from "effect"
import type { Connection } from "./Endpoint.ts"
import { ModelError, type ModelErrorReason, type ModelRequest, type ModelResponse, type ToolCall, type Usage } from "./Model.ts"

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

export const errorMessageOfBody = (body: string | undefined): string | undefined => {
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

export const retryAfterOf = (headers: Readonly<Record<string, string | undefined>>): number | undefined => {
  const value = headers["retry-after"]
  if (value === undefined) return undefined
  const seconds = Number(value)
  return Number.isFinite(seconds) ? seconds : undefined
}

export interface CallContext {
  readonly provider: string
  readonly model: string
  readonly secrets: ReadonlyArray<Redacted.Redacted>
}

/** What a client knows of a failure beyond its reason and status (see ModelError). */
export interface FailureFacts {
  readonly retryAfterSeconds?: number | undefined
  readonly sent?: boolean | undefined
}

export const modelError = (
  ctx: CallContext,
  reason: ModelErrorReason,
  status: number | null,
  detail: string,
  facts: FailureFacts = {}
): ModelError =>
  new ModelError({
    provider: ctx.provider,
    model: ctx.model,
    reason,
    status,
    detail: scrub(detail, ctx.secrets),
    ...(facts.retryAfterSeconds !== undefined ? { retryAfterSeconds: facts.retryAfterSeconds } : {}),
    ...(facts.sent !== undefined ? { sent: facts.sent } : {})
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

// Codes of a connection that was never made (refused, unresolved, unroutable, a failed TLS
// handshake): no request body can have left.
const unconnectedCode = /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EAI_NONAME|EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL|ERR_TLS_[A-Z_]+|ERR_SSL_[A-Z0-9_]+|CERT_[A-Z_]+|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_[A-Z_]+|HOSTNAME_MISMATCH)$/

/** Whether an error (or one of its causes) carries the code of a connection that was never made. */
const neverConnected = (error: unknown): boolean => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    const code = "code" in current ? (current as { code: unknown }).code : undefined
    if (typeof code === "string") return unconnectedCode.test(code)
    current = "cause" in current ? (current as { cause: unknown }).cause : undefined
  }
  return false
}

/**
 * A request that got no response: the network unless the request itself could not be made. An
 * HttpClient does not say whether the body had left when the transport failed: it counts as sent
 * unless the connection was never made.
 */
export const requestFailure = (ctx: CallContext, error: HttpClientError.HttpClientError): ModelError => {
  if (error._tag === "RequestError") {
    const where = `${error.request.method} ${error.request.url}`
    if (error.reason === "Transport") {
      return modelError(ctx, "network", null, `cannot reach ${where}: ${transportFailureOf(error.cause) ?? error.description ?? "transport failure"}`, {
        sent: !neverConnected(error.cause)
      })
    }
    return modelError(ctx, "bad-request", null, `${where}: ${error.message}`, { sent: false })
  }
  const transport = transportFailureOf(error)
  return transport !== undefined
    ? modelError(ctx, "network", error.response.status, `the connection failed while reading the response: ${transport}`, { sent: true })
    : modelError(ctx, "decode", error.response.status, error.message, { sent: true })
}

// ---------------------------------------------------------------------------------------------
// Shared by our own clients
// ---------------------------------------------------------------------------------------------

/** What one call has read of its answer: whether a 2xx body came back, and the usage it reported. */
export interface Answer {
  body: boolean
  usage: Usage | undefined
}

export const noAnswer = (): Answer => ({ body: false, usage: undefined })

/**
 * A failure once a 2xx body came back (it does not decode, a tool call's arguments are cut off at
 * the output limit, the response says it failed): the server answered the call, and billed it. It
 * was sent, and carries the usage the body reported when that could be read (the spend cap
 * settles it at that cost; without it, at its reservation).
 */
export const answeredFailure = (answer: Answer) => (e: ModelError): ModelError =>
  !answer.body ? e : new ModelError({
    provider: e.provider,
    model: e.model,
    reason: e.reason,
    status: e.status,
    detail: e.detail,
    ...(e.retryAfterSeconds !== undefined ? { retryAfterSeconds: e.retryAfterSeconds } : {}),
    sent: true,
    ...(answer.usage !== undefined ? { usage: answer.usage } : {})
  })

export const parseArguments = (ctx: CallContext, name: string, text: string): Effect.Effect<Record<string, unknown>, ModelError> =>
  Effect.try({
    try: () => {
      const parsed: unknown = text.trim().length === 0 ? {} : JSON.parse(text)
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not a JSON object")
      return parsed as Record<string, unknown>
    },
    catch: (e) => modelError(ctx, "decode", null, `arguments of tool call ${name} are not a JSON object: ${String(e)}`)
  })

/** A tool call from its arguments' text: the parsed arguments, and the text as the model wrote it (when not blank). */
export const toolCallOf = (ctx: CallContext, id: string, name: string, text: string): Effect.Effect<ToolCall, ModelError> =>
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
export const decodeJson = <A>(ctx: CallContext, decode: (u: unknown) => Either.Either<A, { readonly message: string }>, text: string): Effect.Effect<A, ModelError> => {
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
export const untraced = (client: HttpClient.HttpClient): HttpClient.HttpClient => HttpClient.withTracerPropagation(client, false)

/** One POST of a JSON body, as each client makes it. */
export interface Post {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** the JSON text */
  readonly body: string
}

/** What came back: the status, the headers (lower-case names) and the whole body as text. */
export interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: string
}

/**
 * Sends a POST and reads the whole answer within `timeout`. A transport failure is `network`, no
 * answer in time is `timeout`; any status is a Reply.
 */
export type Send = (ctx: CallContext, post: Post, timeout: Duration.Duration) => Effect.Effect<Reply, ModelError>

/** No answer in time; `sent`: whether the request's body had been written by then. */
export const timedOut = (ctx: CallContext, timeout: Duration.Duration, sent: boolean): ModelError =>
  modelError(ctx, "timeout", null, `no answer within ${Duration.format(timeout)}`, { sent })

/** A Send over an HttpClient of the caller's (any platform's). */
export const sendOver = (client: HttpClient.HttpClient): Send => (ctx, post, timeout) => {
  const httpRequest = HttpClientRequest.post(post.url).pipe(
    HttpClientRequest.setHeaders(post.headers),
    HttpClientRequest.bodyText(post.body, "application/json")
  )
  return Effect.gen(function*() {
    const response = yield* client.execute(httpRequest).pipe(Effect.mapError((e) => requestFailure(ctx, e)))
    const body = yield* response.text.pipe(Effect.mapError((e) => requestFailure(ctx, e)))
    return { status: response.status, headers: response.headers, body } satisfies Reply
  }).pipe(
    // Whether the body had left is not known here: a timeout counts as sent.
    Effect.timeoutFail({ duration: timeout, onTimeout: () => timedOut(ctx, timeout, true) })
  )
}

/** The http and https agents the command's calls go through. */
export interface Agents {
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
export const sendNode = (agents: Agents): Send => (ctx, post, timeout) =>
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
      resume(Effect.fail(modelError(ctx, "bad-request", null, `${where}: ${String(e)}`, { sent: false })))
      return
    }
    const body = Buffer.from(post.body)
    const headers = { ...post.headers, "content-type": "application/json", "content-length": String(body.length) }
    const https = url.protocol === "https:"
    if (!https && url.protocol !== "http:") {
      settled = true
      resume(Effect.fail(modelError(ctx, "bad-request", null, `${where}: unsupported protocol ${url.protocol}`, { sent: false })))
      return
    }
    const onResponse = (res: Http.IncomingMessage) => {
      const status = res.statusCode ?? 0
      const chunks: Array<Buffer> = []
      const failed = (e: unknown) => {
        const transport = transportFailureOf(e)
        settle(Effect.fail(
          transport !== undefined
            ? modelError(ctx, "network", status, `the connection failed while reading the response: ${transport}`, { sent: true })
            : modelError(ctx, "decode", status, String(e), { sent: true })
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
      resume(Effect.fail(modelError(ctx, "bad-request", null, `${where}: ${String(e)}`, { sent: false })))
      return
    }
    // Sent: the whole body handed to a connection that was made (TLS accepts a write before its
    // handshake, which may then fail). From then on the server may have the request, and bill it,
    // whatever becomes of the answer. A kept-alive connection reused was made before.
    let connected = false
    let finished = false
    req.on("socket", (socket) => {
      if (req.reusedSocket) connected = true
      else {
        socket.once(https ? "secureConnect" : "connect", () => {
          connected = true
        })
      }
    })
    req.on("finish", () => {
      finished = true
    })
    const sent = () => connected && finished
    req.on("error", (e) => settle(Effect.fail(modelError(ctx, "network", null, `cannot reach ${where}: ${transportFailureOf(e) ?? "transport failure"}`, { sent: sent() }))))
    // setTimeout fires at once for a delay past 2^31 - 1 ms (or an infinite one): no timer then.
    const ms = Duration.toMillis(timeout)
    timer = ms <= 2 ** 31 - 1
      ? setTimeout(() => {
        settle(Effect.fail(timedOut(ctx, timeout, sent())))
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

export const sendOf = (client: HttpClient.HttpClient): Send => {
  const agents = nodeAgents.get(client)
  return agents !== undefined ? sendNode(agents) : sendOver(untraced(client))
}

/** Sends a request and reads the whole body; a non-2xx status is a ModelError saying what the server said. */
export const bodyOfSuccess = (ctx: CallContext, send: Send, post: Post, timeout: Duration.Duration): Effect.Effect<string, ModelError> =>
  Effect.flatMap(send(ctx, post, timeout), (reply) => {
    if (reply.status >= 200 && reply.status < 300) return Effect.succeed(reply.body)
    const said = errorMessageOfBody(reply.body) ?? "(no body)"
    return Effect.fail(modelError(
      ctx,
      reasonOfStatus(reply.status),
      reply.status,
      `HTTP ${reply.status} from POST ${post.url}: ${said}`,
      { retryAfterSeconds: retryAfterOf(reply.headers), sent: true }
    ))
  })

export const postJson = (url: string, body: unknown, headers: Readonly<Record<string, string>> = {}): Post => ({
  url,
  headers: { accept: "application/json", ...headers },
  body: JSON.stringify(body)
})

export const bearer = (connection: Connection): Record<string, string> =>
  Option.isSome(connection.key) ? { authorization: `Bearer ${Redacted.value(connection.key.value.key)}` } : {}

export const openAiUsage = (input: number, output: number, cached: number): Usage => ({
  // OpenAI counts cached prompt tokens inside the input tokens; ours are disjoint.
  inputTokens: input - cached,
  outputTokens: output,
  cacheReadTokens: cached,
  cacheWriteTokens: 0
})

// Only what we read, each optional: OpenAI-compatible servers leave out incomplete_details,
// metadata, usage details and more, and @effect/ai-openai's generated schema requires them.
export const opt = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))

/**
 * One wire format's call: the request in its body, sent with `send` to the connection's base URL,
 * its answer (whole, or a stream's events) read back into a ModelResponse.
 */
export type Via = (
  ctx: CallContext,
  send: Send,
  request: ModelRequest,
  connection: Connection,
  stream: boolean,
  timeout: Duration.Duration
) => Effect.Effect<ModelResponse, ModelError>

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
