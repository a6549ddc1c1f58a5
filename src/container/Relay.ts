/**
 * A port of the host's loopback made reachable inside a container's own loopback, and nothing
 * else: how an agent CLI running in a task's container reaches assay's model proxy and MCP server
 * (both on the host's 127.0.0.1) while the container keeps its own network (none, for a task
 * without internet).
 *
 * Two halves, joined by a Unix socket (a path on the host's filesystem, which no network namespace
 * hides):
 *
 * - in this process, a listener on the socket that connects each arrival to 127.0.0.1:PORT;
 * - in the container's network namespace (entered with `nsenter --net`, which needs root), a small
 *   Node process listening on the container's 127.0.0.1:PORT that connects each arrival to the
 *   socket. It ends when its stdin closes, so it never outlives this process, however that ends.
 *
 * The CLI is told the same URL it would be told on the host: http://127.0.0.1:PORT.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { EngineError } from "./Engine.ts"

export interface Relay {
  /** Ends both halves and removes the socket. */
  readonly close: Effect.Effect<void>
}

/** The half inside the namespace: argv is [port, socket]; prints `ready` once listening. */
const INSIDE = [
  "const net = require('node:net')",
  "const [port, sock] = process.argv.slice(1)",
  "const server = net.createServer((c) => {",
  "  const up = net.connect(sock)",
  "  c.pipe(up).pipe(c)",
  "  c.on('error', () => up.destroy())",
  "  up.on('error', () => c.destroy())",
  "})",
  "server.on('error', (e) => { process.stderr.write(String(e.message) + '\\n'); process.exit(1) })",
  "server.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\\n'))",
  "process.stdin.on('end', () => process.exit(0))",
  "process.stdin.resume()"
].join("\n")

/** The half inside is a Node script: this runtime when it is Node, else the `node` on PATH (under Deno). */
const nodeBinary = (): string => (process.versions["deno"] === undefined ? process.execPath : "node")

const failed = (detail: string) => new EngineError({ reason: "exec-failed", detail: `relaying the host's loopback into the container: ${detail}` })

/**
 * Relays the host's 127.0.0.1:`port` into the network namespace of the process `nsPid` (a
 * container's first process), at the same port. Root only (entering another namespace).
 */
export const relayLoopback = (nsPid: number, port: number): Effect.Effect<Relay, EngineError> =>
  Effect.async<Relay, EngineError>((resume) => {
    if (typeof process.getuid === "function" && process.getuid() !== 0) {
      resume(Effect.fail(failed("it needs root (nsenter into the container's network namespace); run assay as root, or run the CLI outside a container")))
      return
    }
    let dir: string
    try {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "assay-relay-"))
    } catch (e) {
      resume(Effect.fail(failed(`a folder for its socket: ${String(e)}`)))
      return
    }
    const sock = path.join(dir, `${port}.sock`)
    const outside = net.createServer((c) => {
      const up = net.connect(port, "127.0.0.1")
      c.pipe(up).pipe(c)
      c.on("error", () => up.destroy())
      up.on("error", () => c.destroy())
    })
    let settled = false
    let inside: ReturnType<typeof spawn> | undefined
    const cleanup = () => {
      outside.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
    outside.once("error", (e) => {
      if (settled) return
      settled = true
      cleanup()
      resume(Effect.fail(failed(e.message)))
    })
    outside.listen(sock, () => {
      const child = inside = spawn("nsenter", [`--net=/proc/${nsPid}/ns/net`, "--", nodeBinary(), "-e", INSIDE, String(port), sock], {
        stdio: ["pipe", "pipe", "pipe"]
      })
      let said = ""
      const close = Effect.sync(() => {
        child.stdin.end()
        child.kill("SIGKILL")
        cleanup()
      })
      child.stdout.on("data", (chunk: Buffer) => {
        said += chunk.toString("utf8")
        if (!settled && said.includes("ready\n")) {
          settled = true
          resume(Effect.succeed({ close }))
        }
      })
      child.stderr.on("data", (chunk: Buffer) => {
        said += chunk.toString("utf8")
      })
      const early = (why: string) => {
        if (settled) return
        settled = true
        cleanup()
        resume(Effect.fail(failed(why)))
      }
      child.on("error", (e) => early(`nsenter: ${e.message}`))
      child.on("exit", (code) => early(`nsenter exited (${code}): ${said.trim().slice(-300)}`))
    })
    return Effect.sync(() => {
      if (settled) return
      settled = true
      inside?.kill("SIGKILL")
      cleanup()
    })
  })
