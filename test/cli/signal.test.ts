import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { createServer, type Server } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { assay, bin, cleanEnv, root, tempDir } from "./support.ts"

/** A model server that takes every request and never answers: calls stay in flight until the client goes. */
const silentServer = async (onRequest: () => void) => {
  const sockets = new Set<Socket>()
  const server: Server = createServer(() => onRequest())
  server.on("connection", (s) => sockets.add(s))
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((ok) => {
        for (const s of sockets) s.destroy()
        server.close(() => ok())
      })
  }
}

/** `assay run` with model calls in flight, sent `signal` as its first call arrives: its exit code and how long it took after the signal. */
const stopMidCall = async (signal: NodeJS.Signals, home: string): Promise<{ readonly code: number | string | null; readonly ms: number; readonly stderr: string }> => {
  let signalledAt = 0
  let stop: () => void = () => {}
  const server = await silentServer(() => {
    if (signalledAt === 0) {
      signalledAt = Date.now()
      stop()
    }
  })
  try {
    const child = spawn(process.execPath, [bin, "run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--yes", "--home", home], {
      cwd: root,
      env: cleanEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test-signal" }),
      stdio: ["ignore", "ignore", "pipe"]
    })
    stop = () => child.kill(signal)
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    const code = await new Promise<number | string | null>((ok) => {
      // A hang is what this guards against: past 20 s it is one, and the child is killed.
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        ok("hung")
      }, 20_000)
      child.on("exit", (c, s) => {
        clearTimeout(timer)
        ok(c ?? s)
      })
    })
    return { code, ms: Date.now() - signalledAt, stderr }
  } finally {
    await server.close()
  }
}

describe("a run stopped by a signal while model calls are in flight", { timeout: 120_000 }, () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`${signal}: exits 130 promptly, twice in a row, and leaves the home usable`, async () => {
      const home = tempDir("assay-signal-")
      for (let i = 0; i < 2; i++) {
        const r = await stopMidCall(signal, home)
        expect(r.code, r.stderr).toBe(130)
        expect(r.ms).toBeLessThan(10_000)
      }
      // The home's lock went with the process: a run on it starts and finishes.
      const after = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--yes", "--home", home])
      expect(after.code, after.stderr).toBe(0)
    })
  }
})
