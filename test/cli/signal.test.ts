/**
 * A run stopped by a signal says so in its exit code (130), never 0: a script that waits on
 * `assay run` must not take a killed run for a finished one. What finished before is kept.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { bin, cleanEnv, root, tempDir } from "./support.ts"

/** A model endpoint that takes requests and never answers: the run waits on its calls. */
const silentServer = (): Promise<Server> =>
  new Promise((ready) => {
    const server = createServer(() => {})
    server.listen(0, "127.0.0.1", () => ready(server))
  })

describe("assay run stopped by a signal", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal} while calls are in flight: exit 130`, { timeout: 120_000 }, async () => {
      const server = await silentServer()
      try {
        const port = (server.address() as AddressInfo).port
        const home = tempDir("assay-signal-")
        const child = spawn(process.execPath, [bin, "run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--home", home, "--yes"], {
          cwd: root,
          env: cleanEnv({ OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, OPENAI_API_KEY: "sk-test" }),
          stdio: ["ignore", "pipe", "pipe"]
        })
        let stderr = ""
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
        let sent = false
        // Once the first call has reached the server, the run is waiting on it: stop it then.
        server.on("request", () => {
          if (!sent) {
            sent = true
            child.kill(signal)
          }
        })
        const code = await new Promise<number | null>((done) => child.on("close", (c) => done(c)))
        expect(sent, stderr).toBe(true)
        expect(code, stderr).toBe(130)
      } finally {
        server.closeAllConnections()
        server.close()
      }
    })
  }
})
