/**
 * The home's lock goes with the process whatever signals end it: a double Ctrl-C milliseconds
 * apart (the second finds the command's own handler gone, and Node's default action would end
 * the process on the spot), SIGINT then SIGTERM, a SIGHUP nobody else listens to.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { join } from "node:path"
import { assay, bin, cleanEnv, exitOrHung, root, tempDir } from "./support.ts"

/** A model server that never answers: the run holds its lock with calls in flight. */
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

/** `assay run` sent `signals` back to back as its first model call arrives (it holds the lock then); how it ended. */
const signalled = async (signals: ReadonlyArray<NodeJS.Signals>, home: string) => {
  let send: () => void = () => {}
  let sent = false
  const server = await silentServer(() => {
    if (!sent) {
      sent = true
      send()
    }
  })
  try {
    const child = spawn(process.execPath, [bin, "run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--yes", "--home", home], {
      cwd: root,
      env: cleanEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test-signal" }),
      stdio: ["ignore", "ignore", "pipe"]
    })
    const lockedWhenSignalled: Array<boolean> = []
    send = () => {
      lockedWhenSignalled.push(existsSync(join(home, "assay.lock")))
      for (const signal of signals) child.kill(signal)
    }
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    // A hang is what this guards against: past 20 s it is one, and the child is killed.
    const ended = await exitOrHung(child)
    return { ended, stderr, lockedWhenSignalled }
  } finally {
    await server.close()
  }
}

describe("the home's lock goes with the process on any signal sequence", { timeout: 180_000 }, () => {
  const sequences: ReadonlyArray<ReadonlyArray<NodeJS.Signals>> = [
    ["SIGINT", "SIGINT"],
    ["SIGINT", "SIGINT", "SIGINT"],
    ["SIGINT", "SIGTERM"],
    ["SIGTERM", "SIGINT"],
    ["SIGHUP"]
  ]
  for (const signals of sequences) {
    it(`${signals.join(" then ")}, back to back: the process ends and leaves no lock`, async () => {
      const home = tempDir("assay-signals-")
      // Several tries: how far apart the signals land is up to the machine.
      for (let i = 0; i < 3; i++) {
        const r = await signalled(signals, home)
        expect(r.lockedWhenSignalled, r.stderr).toEqual([true])
        expect(r.ended, r.stderr).not.toBe("hung")
        // Ended by the signal itself, or exit 130 once the run was interrupted; never a success.
        expect([130, ...signals], r.stderr).toContain(r.ended)
        expect(existsSync(join(home, "assay.lock")), `lock left after ${signals.join(", ")}: ${r.stderr}`).toBe(false)
      }
      const after = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--yes", "--home", home])
      expect(after.code, after.stderr).toBe(0)
    })
  }
})
