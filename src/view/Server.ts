/**
 * `assay view`: the viewer's HTTP server (@effect/platform's HttpRouter on the Node server of
 * @effect/platform-node: no web framework, since a handful of GET routes need none). Pages and
 * the JSON API behind them read the store afresh on every request, so a run that is writing is
 * seen as it goes without restarting the viewer. The store is opened read-only: viewing changes
 * nothing.
 */
import { spawn } from "node:child_process"
import { randomBytes, timingSafeEqual } from "node:crypto"
import { createServer, type Server } from "node:http"
import { hostname, networkInterfaces } from "node:os"
import { type HttpApp, HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, Schema } from "effect"
import { encodeJson } from "../experiment/Report.ts"
import * as Store from "../experiment/Store.ts"
import { Attempt } from "../schema/Attempt.ts"
import { attemptOf, cellsOf, compare, listRuns, pairOf, progressOf, reportOf, runBrief, siblingsOf } from "./Data.ts"
import { attemptPage, comparePage, errorPage, liveScript, pairPage, redact, runPage, runsPage } from "./Pages.ts"
import { viewScript } from "./Script.ts"

export interface ViewOptions {
  readonly at: Store.Location
  readonly host: string
  /** 0: any free port (the address is told through `onListening`). */
  readonly port: number
  /**
   * Told the viewer's address once it listens, e.g. `http://127.0.0.1:4173`, and, off loopback,
   * the token a browser must bring once (`/?token=…`): printed once, asked for by the page.
   */
  readonly onListening: (url: string, token: string | null) => Effect.Effect<void>
}

/** The viewer cannot listen where it was asked (the port is taken, the host is not this machine's). */
export class ViewError extends Schema.TaggedError<ViewError>()("ViewError", { host: Schema.String, port: Schema.Number, detail: Schema.String }) {
  override get message() {
    return `cannot serve on ${this.host}:${this.port}: ${this.detail}`
  }
}

/** Whether a host name or address is this machine's loopback, which only local processes reach. */
export const isLoopback = (host: string): boolean => host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host)

const noStore = { "cache-control": "no-store" }

const htmlResponse = (body: string, status = 200) => HttpServerResponse.html(body).pipe(HttpServerResponse.setStatus(status), HttpServerResponse.setHeaders(noStore))

const jsonText = (text: string, status = 200) =>
  HttpServerResponse.text(text, { contentType: "application/json; charset=utf-8", status, headers: noStore })

const jsonResponse = (value: unknown, status = 200) => jsonText(JSON.stringify(redact(value), null, 2), status)

// ---------------------------------------------------------------------------------------------
// Who may read: the Host a request names, the token off loopback, and bounds on what is asked and answered

/** The longest request target (path and query) served: a comparison of a few runs fits many times over. */
export const MAX_TARGET = 2048
/** The most runs and candidates one comparison puts side by side (its pairs grow as their square). */
export const MAX_COMPARED_RUNS = 8
export const MAX_COMPARED_CANDIDATES = 16
/** The largest answer sent: a bigger one is refused with 413 naming the command that prints it. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024

/** The cookie a browser keeps the viewer's token in, once it brought it as `?token=`. */
const TOKEN_COOKIE = "assay_view_token"

const any = (host: string) => host === "0.0.0.0" || host === "::" || host === "[::]"

/** A host as it appears in a Host header: an IPv6 address in brackets, names in lower case. */
const hostForm = (host: string) => (host.includes(":") && !host.startsWith("[") ? `[${host}]` : host).toLowerCase()

/**
 * The Host headers that name this viewer: the loopback names and the address it serves, each with
 * its port; served on every interface, also this machine's name and each interface's address. A
 * page whose name was rebound to 127.0.0.1 sends its own name, and is refused.
 */
export const allowedHosts = (served: string, port: number): ReadonlySet<string> => {
  const names = new Set(["localhost", "127.0.0.1", "[::1]", hostForm(served)])
  if (any(served)) {
    names.add(hostname().toLowerCase())
    for (const addresses of Object.values(networkInterfaces())) for (const a of addresses ?? []) names.add(hostForm(a.address))
  }
  const out = new Set<string>()
  for (const name of names) {
    out.add(`${name}:${port}`)
    if (port === 80) out.add(name)
  }
  return out
}

const sameToken = (given: string, token: string) => {
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** What the viewer answers a browser that has no token yet: a page that asks for it. */
const tokenPage = (wrong: boolean) =>
  `<!doctype html><meta charset="utf-8"><title>assay view: token</title>
<body style="font-family: system-ui, sans-serif; margin: 3em">
<p>This viewer is served off loopback: enter the token <code>assay view</code> printed when it started.${wrong ? " <strong>That token is not this viewer's.</strong>" : ""}</p>
<form method="get" action="/"><input name="token" size="40" autofocus autocomplete="off"> <button>Open</button></form>
</body>`

/** One line for a refusal: `{ "error" }` under /api/, plain text elsewhere. */
const refusal = (path: string, status: number, line: string) =>
  path.startsWith("/api/")
    ? jsonText(JSON.stringify({ error: line }) + "\n", status)
    : HttpServerResponse.text(`${line}\n`, { status, headers: noStore })

interface Guard {
  readonly served: string
  /** Null on loopback: only this machine's processes reach it, and the Host check is enough. */
  readonly token: string | null
}

/**
 * The app behind the checks: a request whose Host is not this viewer's is refused (403), one
 * whose target is longer than MAX_TARGET too (414); off loopback, one without the token asks
 * for it (401), and `?token=` sets the cookie and sends the browser on without it in the address.
 * An answer over MAX_RESPONSE_BYTES is replaced by a 413 that names the command that prints it.
 */
export const guarded = <E, R>(inner: HttpApp.Default<E, R>, guard: Guard) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const server = yield* HttpServer.HttpServer
    const port = server.address._tag === "TcpAddress" ? server.address.port : 0
    const path = request.url.split("?")[0] ?? "/"
    const host = (request.headers["host"] ?? "").toLowerCase()
    if (!allowedHosts(guard.served, port).has(host)) {
      return refusal(path, 403, `this viewer answers requests for its own address only, not for Host ${JSON.stringify(host.slice(0, 100))}`)
    }
    if (request.url.length > MAX_TARGET) return refusal(path, 414, `the request is ${request.url.length} characters long; this viewer reads at most ${MAX_TARGET}`)
    const token = guard.token
    if (token !== null) {
      const given = new URLSearchParams(request.url.slice(path.length)).get("token")
      if (given !== null && sameToken(given, token)) {
        const rest = new URLSearchParams(request.url.slice(path.length))
        rest.delete("token")
        const query = rest.toString()
        return HttpServerResponse.redirect(query === "" ? path : `${path}?${query}`, { status: 303 }).pipe(
          HttpServerResponse.setHeader("set-cookie", `${TOKEN_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict`),
          HttpServerResponse.setHeaders(noStore)
        )
      }
      // A browser brings the cookie; a script may send the token as a bearer instead.
      const cookie = request.cookies[TOKEN_COOKIE]
      const bearer = /^Bearer (\S+)$/.exec(request.headers["authorization"] ?? "")?.[1]
      const brought = [cookie, bearer].some((t) => t !== undefined && sameToken(t, token))
      if (!brought) {
        return path.startsWith("/api/")
          ? jsonText(JSON.stringify({ error: "this viewer needs its token: open the address assay view printed, with ?token=" }), 401)
          : htmlResponse(tokenPage(given !== null), 401)
      }
    }
    const response = yield* inner
    const body = response.body
    if (body._tag === "Uint8Array" && body.contentLength > MAX_RESPONSE_BYTES) {
      const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`
      return refusal(path, 413, `the answer is ${mb(body.contentLength)}, over this viewer's bound of ${mb(MAX_RESPONSE_BYTES)}: ask for less, or use assay report --json`)
    }
    return response
  })

const statusOf = (e: Store.StoreError) => (e.reason === "unknown-run" ? 404 : 500)

/** A page, or the error page naming what went wrong (an unknown run: 404). */
const asPage = <R>(effect: Effect.Effect<string, Store.StoreError | Refused, R>) =>
  effect.pipe(
    Effect.map((body) => htmlResponse(body)),
    Effect.catchTag("StoreError", (e) => Effect.succeed(htmlResponse(errorPage(statusOf(e), e.message), statusOf(e)))),
    Effect.catchTag("Refused", (e) => Effect.succeed(htmlResponse(errorPage(e.status, e.message), e.status)))
  )

/** A JSON answer, or `{ "error": ... }` with the status. */
const asJson = <R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, Store.StoreError | Refused, R>) =>
  effect.pipe(
    Effect.catchTag("StoreError", (e) => Effect.succeed(jsonResponse({ error: e.message }, statusOf(e)))),
    Effect.catchTag("Refused", (e) => Effect.succeed(jsonResponse({ error: e.message }, e.status)))
  )

const param = (name: string) => Effect.map(HttpRouter.params, (p) => p[name] ?? "")

const listParam = (name: string) =>
  Effect.map(HttpServerRequest.ParsedSearchParams, (q) => {
    const v = q[name]
    return v === undefined ? [] : typeof v === "string" ? [v] : [...v]
  })

const flagParam = (name: string) => Effect.map(listParam(name), (v) => v.some((x) => x !== "" && x !== "0"))

/** A request the viewer will not answer as asked: its status and one line. */
class Refused extends Schema.TaggedError<Refused>()("Refused", { status: Schema.Number, reason: Schema.String }) {
  override get message() {
    return this.reason
  }
}

/** The runs and candidates a comparison names, each once, refused past the bounds. */
const comparedParams = Effect.gen(function*() {
  const runs = [...new Set(yield* listParam("run"))]
  const candidates = [...new Set(yield* listParam("candidate"))]
  if (runs.length > MAX_COMPARED_RUNS) {
    return yield* new Refused({ status: 400, reason: `a comparison takes at most ${MAX_COMPARED_RUNS} runs; ${runs.length} were named` })
  }
  if (candidates.length > MAX_COMPARED_CANDIDATES) {
    return yield* new Refused({ status: 400, reason: `a comparison takes at most ${MAX_COMPARED_CANDIDATES} candidates; ${candidates.length} were named` })
  }
  return { runs, candidates }
})

const encodeAttempt = Schema.encode(Attempt)

/** The routes: pages, the JSON API, and the one script. */
export const router = HttpRouter.empty.pipe(
  HttpRouter.get(
    "/",
    asPage(Effect.gen(function*() {
      const store = yield* Store.Store
      return runsPage(yield* listRuns, store.home)
    }))
  ),
  HttpRouter.get(
    "/runs/:runId",
    asPage(Effect.gen(function*() {
      const runId = yield* param("runId")
      const brief = yield* runBrief(runId)
      const report = yield* reportOf(runId)
      const progress = report === null ? yield* progressOf(runId) : null
      return runPage(brief, report, progress, yield* cellsOf(runId))
    }))
  ),
  HttpRouter.get(
    "/runs/:runId/attempts/:attemptId",
    asPage(Effect.gen(function*() {
      const stored = yield* attemptOf(yield* param("runId"), decodeURIComponent(yield* param("attemptId")))
      return attemptPage(stored, yield* siblingsOf(stored))
    }))
  ),
  HttpRouter.get(
    "/pair",
    asPage(Effect.gen(function*() {
      const one = (name: string) => Effect.map(listParam(name), (v) => v[0] ?? "")
      const [ra, a, rb, b] = [yield* one("ra"), yield* one("a"), yield* one("rb"), yield* one("b")]
      if ([ra, a, rb, b].includes("")) {
        return yield* new Refused({ status: 400, reason: "side by side needs two Attempts: /pair?ra=RUN&a=ATTEMPT&rb=RUN&b=ATTEMPT (the comparison page links them)" })
      }
      return pairPage(yield* pairOf({ runId: ra, id: a }, { runId: rb, id: b }))
    }))
  ),
  HttpRouter.get(
    "/compare",
    asPage(Effect.gen(function*() {
      const { runs: chosen, candidates } = yield* comparedParams
      const runs = yield* listRuns
      const comparison = chosen.length === 0 ? null : yield* compare(chosen, candidates)
      return comparePage(runs, chosen, candidates, comparison, yield* flagParam("differ"))
    }))
  ),
  HttpRouter.get("/static/live.js", Effect.succeed(HttpServerResponse.text(liveScript, { contentType: "text/javascript; charset=utf-8" }))),
  HttpRouter.get("/static/view.js", Effect.succeed(HttpServerResponse.text(viewScript, { contentType: "text/javascript; charset=utf-8" }))),
  HttpRouter.get("/api/runs", asJson(Effect.map(listRuns, (runs) => jsonResponse({ runs })))),
  HttpRouter.get(
    "/api/runs/:runId",
    asJson(Effect.gen(function*() {
      const runId = yield* param("runId")
      const cells = yield* flagParam("cells")
      const report = yield* reportOf(runId, { cells })
      // Unfinished: no report yet; its progress instead, with 409 so a script cannot mistake it.
      if (report === null) return jsonResponse(yield* progressOf(runId), 409)
      // The document `assay report RUN --json [--cells]` prints, byte for byte.
      return jsonText((yield* Effect.orDie(encodeJson(report, { cells }))) + "\n")
    }))
  ),
  HttpRouter.get(
    "/api/runs/:runId/cells",
    asJson(Effect.gen(function*() {
      const runId = yield* param("runId")
      return jsonResponse({ runId, cells: yield* cellsOf(runId) })
    }))
  ),
  HttpRouter.get("/api/runs/:runId/progress", asJson(Effect.flatMap(param("runId"), (runId) => Effect.map(progressOf(runId), (p) => jsonResponse(p))))),
  HttpRouter.get(
    "/api/runs/:runId/attempts/:attemptId",
    asJson(Effect.gen(function*() {
      const stored = yield* attemptOf(yield* param("runId"), decodeURIComponent(yield* param("attemptId")))
      return jsonResponse({ id: stored.id, runId: stored.runId, attempt: yield* Effect.orDie(encodeAttempt(stored.attempt)) })
    }))
  ),
  HttpRouter.get(
    "/api/compare",
    asJson(Effect.gen(function*() {
      const { runs, candidates } = yield* comparedParams
      return jsonResponse(yield* compare(runs, candidates))
    }))
  )
)

/** The app: the routes, and a page for any other path. */
export const app = router.pipe(Effect.catchTag("RouteNotFound", () => Effect.succeed(htmlResponse(errorPage(404, "no such page"), 404))))

/**
 * Serves the viewer until interrupted (Ctrl-C). Fails at once when the store cannot be opened or
 * the port is taken. Off loopback, a token made now is told once through `onListening`.
 */
export const view = (options: ViewOptions) => {
  const token = isLoopback(options.host) ? null : randomBytes(24).toString("base64url")
  let server: Server | undefined
  return Effect.gen(function*() {
    // On Ctrl-C every connection is ended first: the server's close waits for each one, and a
    // connection that never sent a request (a browser's pre-connect) or sent half of one would
    // keep the process alive until its client gave up.
    yield* Effect.addFinalizer(() => Effect.sync(() => server?.closeAllConnections()))
    const address = yield* HttpServer.addressFormattedWith((url) => Effect.succeed(url))
    yield* options.onListening(address.replace("0.0.0.0", "localhost"), token)
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    Effect.provide(
      HttpServer.serve(guarded(app, { served: options.host, token })).pipe(
        Layer.provide(Store.layerAt(options.at, { readOnly: true })),
        Layer.provideMerge(NodeHttpServer.layer(() => (server = createServer()), { port: options.port, host: options.host }))
      )
    ),
    Effect.catchTag("ServeError", (e) => {
      const cause = e.cause instanceof Error ? e.cause : null
      const code = cause !== null && "code" in cause ? String(cause.code) : ""
      const detail = code === "EADDRINUSE" ? "the port is in use: pass another --port (0 picks a free one)" : code === "EADDRNOTAVAIL" ? "no interface of this machine has that address" : cause?.message ?? String(e.cause)
      return Effect.fail(new ViewError({ host: options.host, port: options.port, detail }))
    })
  )
}

/** Opens `url` in the desktop's browser; false when there is no opener to run. */
export const openInBrowser = (url: string): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    const [command, args] = process.platform === "darwin"
      ? ["open", [url]] as const
      : process.platform === "win32"
      ? ["cmd", ["/c", "start", "", url]] as const
      : ["xdg-open", [url]] as const
    const child = spawn(command, [...args], { stdio: "ignore", detached: true })
    child.once("error", () => resume(Effect.succeed(false)))
    child.once("spawn", () => {
      child.unref()
      resume(Effect.succeed(true))
    })
  })
