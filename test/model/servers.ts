/** Small raw servers on 127.0.0.1 for tests of what the clients make of the wire and of the network. */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http"
import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from "node:net"
import { Effect, type Scope } from "effect"

const listen = (server: Server, sockets: Set<Socket>): Effect.Effect<number, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<number>((resume) => {
      server.on("connection", (socket: Socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
    }),
    () =>
      Effect.async<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  )

/** An HTTP server answering every request with `handle`; its port. */
export const httpServer = (
  handle: (req: IncomingMessage, res: ServerResponse, body: string) => void
): Effect.Effect<number, never, Scope.Scope> => {
  const server = createHttpServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")))
  })
  return listen(server, new Set())
}

/** A TCP server that does `onData` with each connection's first bytes (reset it, or say nothing). */
export const tcpServer = (onData: (socket: Socket) => void): Effect.Effect<number, never, Scope.Scope> =>
  listen(createNetServer((socket) => socket.once("data", () => onData(socket))), new Set())

/** A port nothing listens on: bound, then closed. */
export const closedPort: Effect.Effect<number> = Effect.async<number>((resume) => {
  const server = createNetServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** A JSON answer. */
export const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

/** An SSE answer of these events (each JSON-encoded), then the end of the body. */
export const sse = (res: ServerResponse, events: ReadonlyArray<unknown>): void => {
  res.writeHead(200, { "content-type": "text/event-stream" })
  for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`)
  res.end()
}
