/**
 * `assay view`: the viewer's HTTP server (@effect/platform's HttpRouter on the Node server of
 * @effect/platform-node: no web framework, since a handful of GET routes need none). Pages and
 * the JSON API behind them read the store afresh on every request, so a run that is writing is
 * seen as it goes without restarting the viewer. The store is opened read-only: viewing changes
 * nothing.
 */
import { spawn } from "node:child_process"
import { createServer } from "node:http"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, Schema } from "effect"
import { encodeJson } from "../experiment/Report.ts"
import * as Store from "../experiment/Store.ts"
import { Attempt } from "../schema/Attempt.ts"
import { attemptOf, compare, listRuns, progressOf, reportOf, runBrief } from "./Data.ts"
import { attemptPage, comparePage, errorPage, liveScript, redact, runPage, runsPage } from "./Pages.ts"

export interface ViewOptions {
  readonly at: Store.Location
  readonly host: string
  /** 0: any free port (the address is told through `onListening`). */
  readonly port: number
  /** Told the viewer's address once it listens, e.g. `http://127.0.0.1:4173`. */
  readonly onListening: (url: string) => Effect.Effect<void>
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

const statusOf = (e: Store.StoreError) => (e.reason === "unknown-run" ? 404 : 500)

/** A page, or the error page naming what went wrong (an unknown run: 404). */
const asPage = <R>(effect: Effect.Effect<string, Store.StoreError, R>) =>
  effect.pipe(
    Effect.map((body) => htmlResponse(body)),
    Effect.catchTag("StoreError", (e) => Effect.succeed(htmlResponse(errorPage(statusOf(e), e.message), statusOf(e))))
  )

/** A JSON answer, or `{ "error": ... }` with the status. */
const asJson = <R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, Store.StoreError, R>) =>
  effect.pipe(Effect.catchTag("StoreError", (e) => Effect.succeed(jsonResponse({ error: e.message }, statusOf(e)))))

const param = (name: string) => Effect.map(HttpRouter.params, (p) => p[name] ?? "")

const listParam = (name: string) =>
  Effect.map(HttpServerRequest.ParsedSearchParams, (q) => {
    const v = q[name]
    return v === undefined ? [] : typeof v === "string" ? [v] : [...v]
  })

const flagParam = (name: string) => Effect.map(listParam(name), (v) => v.some((x) => x !== "" && x !== "0"))

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
      return runPage(brief, report, progress, yield* compare([runId], []))
    }))
  ),
  HttpRouter.get(
    "/runs/:runId/attempts/:attemptId",
    asPage(Effect.gen(function*() {
      const stored = yield* attemptOf(yield* param("runId"), decodeURIComponent(yield* param("attemptId")))
      return attemptPage(stored)
    }))
  ),
  HttpRouter.get(
    "/compare",
    asPage(Effect.gen(function*() {
      const runs = yield* listRuns
      const chosen = yield* listParam("run")
      const candidates = yield* listParam("candidate")
      const comparison = chosen.length === 0 ? null : yield* compare(chosen, candidates)
      return comparePage(runs, chosen, candidates, comparison, yield* flagParam("differ"))
    }))
  ),
  HttpRouter.get("/static/live.js", Effect.succeed(HttpServerResponse.text(liveScript, { contentType: "text/javascript; charset=utf-8" }))),
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
      const comparison = yield* compare(yield* listParam("run"), yield* listParam("candidate"))
      return jsonResponse(comparison)
    }))
  )
)

/** The app: the routes, and a page for any other path. */
export const app = router.pipe(Effect.catchTag("RouteNotFound", () => Effect.succeed(htmlResponse(errorPage(404, "no such page"), 404))))

/** Serves the viewer until interrupted (Ctrl-C). Fails at once when the store cannot be opened or the port is taken. */
export const view = (options: ViewOptions) =>
  Effect.gen(function*() {
    const address = yield* HttpServer.addressFormattedWith((url) => Effect.succeed(url))
    yield* options.onListening(address.replace("0.0.0.0", "localhost"))
    return yield* Effect.never
  }).pipe(
    Effect.provide(
      HttpServer.serve(app).pipe(
        Layer.provide(Store.layerAt(options.at, { readOnly: true })),
        Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: options.port, host: options.host }))
      )
    ),
    Effect.catchTag("ServeError", (e) => {
      const cause = e.cause instanceof Error ? e.cause : null
      const code = cause !== null && "code" in cause ? String(cause.code) : ""
      const detail = code === "EADDRINUSE" ? "the port is in use: pass another --port (0 picks a free one)" : code === "EADDRNOTAVAIL" ? "no interface of this machine has that address" : cause?.message ?? String(e.cause)
      return Effect.fail(new ViewError({ host: options.host, port: options.port, detail }))
    })
  )

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
