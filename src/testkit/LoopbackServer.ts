/**
 * A scripted model server on 127.0.0.1 for tests and demos. It speaks the OpenAI Responses, OpenAI
 * chat completions, Anthropic messages and Gemini generateContent wire formats, streaming and not,
 * and answers from a script of turns, reporting usage the way each real API does.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { readFile } from "node:fs/promises"
import { Effect, Schema, type Scope } from "effect"
import {
  type Answer,
  asArray,
  asString,
  errorBody,
  type Ids,
  isObject,
  type JsonObject,
  readBody,
  type Route,
  routeOf,
  sendAnswer,
  sendJson,
  textOf,
  tokensOf,
  WireApi
} from "../model/WireServe.ts"

export { WireApi } from "../model/WireServe.ts"

// ---------------------------------------------------------------------------------------------
// Script
// ---------------------------------------------------------------------------------------------

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
    sendAnswer(res, api, body, view.stream, answer, ids, extra)
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
