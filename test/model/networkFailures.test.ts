/**
 * Infrastructure is not the model: a connection refused, a name that does not resolve, a TLS
 * handshake that fails, a socket reset are `network`; no answer in time is `timeout`; what a
 * server says with a 4xx stays `bad-request` or `auth`. For every wire API, @effect/ai's included.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Clients from "../../src/model/Clients.ts"
import type { ModelRequest } from "../../src/model/Model.ts"
import { closedPort, httpServer, json, tcpServer } from "./servers.ts"

const apis = ["openai-responses", "openai-chat", "anthropic-messages", "google"] as const
type Api = (typeof apis)[number]

const request: ModelRequest = {
  provider: "test",
  model: "m",
  system: "",
  messages: [{ role: "user", content: "hi" }],
  tools: [{ name: "add", description: "adds", parameters: { type: "object", properties: {} } }]
}

const baseUrl = (api: Api, origin: string) => (api === "anthropic-messages" ? origin : api === "google" ? `${origin}/v1beta` : `${origin}/v1`)

const failureOf = (api: Api, origin: string, options: { stream?: boolean; timeout?: number } = {}) =>
  Effect.flip(Clients.generate(request, {
    endpoint: { api, baseUrl: baseUrl(api, origin), keyEnv: [] },
    stream: options.stream ?? false,
    timeout: options.timeout ?? 10_000
  }))

describe("network failures are the network's, never the model's", () => {
  for (const api of apis) {
    it.live(`${api}: a connection refused is a network ModelError with no status`, () =>
      Effect.gen(function*() {
        const port = yield* closedPort
        const error = yield* failureOf(api, `http://127.0.0.1:${port}`)
        // Never sent: the spend cap knows it was not billed.
        expect(error).toMatchObject({ _tag: "ModelError", reason: "network", status: null, sent: false })
        expect(error.detail).toContain("ECONNREFUSED")
        expect(error.retryable).toBe(true)
      }))

    it.live(`${api}: a host name that does not resolve is a network ModelError`, () =>
      Effect.gen(function*() {
        const error = yield* failureOf(api, "http://assay-no-such-host.invalid")
        expect(error).toMatchObject({ reason: "network", status: null, sent: false })
        expect(error.detail).toMatch(/ENOTFOUND|EAI_AGAIN/)
      }))

    it.scopedLive(`${api}: a TLS handshake that fails (https to a plain HTTP server) is a network ModelError`, () =>
      Effect.gen(function*() {
        const port = yield* httpServer((_req, res) => json(res, 200, {}))
        const error = yield* failureOf(api, `https://127.0.0.1:${port}`)
        expect(error).toMatchObject({ reason: "network", status: null, sent: false })
      }))

    for (const stream of [false, true]) {
      it.scopedLive(`${api}${stream ? " (streaming)" : ""}: a socket reset before any response is a network ModelError`, () =>
        Effect.gen(function*() {
          const port = yield* tcpServer((socket) => socket.resetAndDestroy())
          const error = yield* failureOf(api, `http://127.0.0.1:${port}`, { stream })
          // The server had the request when it reset the connection: sent (it may have been billed).
          expect(error).toMatchObject({ reason: "network", status: null, sent: true })
          expect(error.detail).toMatch(/ECONNRESET|socket hang up/)
        }))

      it.scopedLive(`${api}${stream ? " (streaming)" : ""}: a connection reset in the middle of the body is a network ModelError`, () =>
        Effect.gen(function*() {
          const port = yield* httpServer((_req, res) => {
            res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" })
            res.write(stream ? "data: {\"type\":" : "{\"id\":\"resp_1\",\"output\":[")
            setTimeout(() => res.socket?.resetAndDestroy(), 20)
          })
          const error = yield* failureOf(api, `http://127.0.0.1:${port}`, { stream })
          expect(error).toMatchObject({ reason: "network", sent: true })
        }))
    }

    it.scopedLive(`${api}: a server that accepts and never answers gives a timeout ModelError`, () =>
      Effect.gen(function*() {
        const port = yield* tcpServer(() => {
          // read the request, say nothing
        })
        const error = yield* failureOf(api, `http://127.0.0.1:${port}`, { timeout: 300 })
        expect(error).toMatchObject({ reason: "timeout", status: null })
      }))

    it.scopedLive(`${api}: 400, 401 and 404 stay bad-request, auth and bad-request, saying what the server said`, () =>
      Effect.gen(function*() {
        const said: Record<number, string> = { 400: "max_tokens is too large", 401: "invalid api key", 404: "model m does not exist" }
        let status = 400
        const port = yield* httpServer((_req, res) => json(res, status, { error: { message: said[status] } }))
        for (const [code, reason] of [[400, "bad-request"], [401, "auth"], [404, "bad-request"]] as const) {
          status = code
          const error = yield* failureOf(api, `http://127.0.0.1:${port}`)
          expect(error, `${api} ${code}`).toMatchObject({ reason, status: code, sent: true })
          expect(error.message).toContain(said[code])
          expect(error.retryable).toBe(false)
        }
      }))
  }
})
