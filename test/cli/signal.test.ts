import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { hostname } from "node:os"
import { join } from "node:path"
import { assay, bin, cleanEnv, exitOf, exitOrHung, root, tempDir } from "./support.ts"

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
const stopMidCall = async (signal: NodeJS.Signals, home: string, extra: ReadonlyArray<string> = []): Promise<{ readonly code: number | string | null; readonly ms: number; readonly stderr: string }> => {
  let signalledAt = 0
  let stop: () => void = () => {}
  const server = await silentServer(() => {
    if (signalledAt === 0) {
      signalledAt = Date.now()
      stop()
    }
  })
  try {
    const child = spawn(process.execPath, [bin, "run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--yes", "--home", home, ...extra], {
      cwd: root,
      env: cleanEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test-signal" }),
      stdio: ["ignore", "ignore", "pipe"]
    })
    stop = () => child.kill(signal)
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    // A hang is what this guards against: past 20 s it is one, and the child is killed.
    const code = await exitOrHung(child)
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

describe("what a stopped run says", { timeout: 120_000 }, () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`${signal}: one line with the cells kept (as plan counts them) and the command that resumes`, async () => {
      const home = tempDir("assay-signal-")
      const r = await stopMidCall(signal, home, ["--candidate", "gold", "--parallel", "2"])
      expect(r.code, r.stderr).toBe(130)
      const said = r.stderr.split("\n").filter((l) => l.startsWith("assay: stopped"))
      expect(said).toHaveLength(1)
      const m = /^assay: stopped: (\d+) of 40 cells are kept in (.+); resume with: (.+)$/.exec(said[0]!)
      expect(m, said[0]).not.toBeNull()
      expect(m![3]).toBe(`assay run --benchmark ledger --model openai:gpt-4o-mini --yes --home ${home} --candidate gold --parallel 2`)
      const plan = await assay(["plan", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--candidate", "gold", "--home", home, "--json"])
      expect(Number(m![1])).toBe(JSON.parse(plan.stdout).cells.kept)
      // The stopped run is listed as such, and reporting it is a failure (exit 1), not a usage error.
      const runs = JSON.parse((await assay(["runs", "--home", home, "--json"])).stdout) as { runs: ReadonlyArray<{ state: string }> }
      expect(runs.runs.map((x) => x.state)).toEqual(["stopped"])
      const report = await assay(["report", "--home", home])
      expect(report.code).toBe(1)
      // It names the command that resumes it, as the stopped line did.
      expect(report.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^assay: run r-\S+ did not finish \(it was stopped\): resume it with: /)])
      expect(report.stderr).toContain(`resume it with: ${m![3]}, or see assay runs`)
    })
  }
})

describe("a run stopped before its cells", { timeout: 120_000 }, () => {
  it("SIGINT while it waits for the home's lock: exit 130, one line saying nothing ran, nothing written, the holder's lock untouched", async () => {
    const home = tempDir("assay-signal-")
    // The lock of a live holder (this test's own process) on another command.
    const holder = JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString(), command: "assay run (the test)", token: "held-by-the-test" })
    writeFileSync(join(home, "assay.lock"), holder)
    const child = spawn(process.execPath, [bin, "run", "--benchmark", "ledger", "--candidate", "gold", "--yes", "--wait", "--home", home], {
      cwd: root,
      env: cleanEnv(),
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    let signalled = false
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString()
      // Signalled once, when it says it waits: an event, not a time.
      if (!signalled && stderr.includes("assay: waiting for pid")) {
        signalled = true
        child.kill("SIGINT")
      }
    })
    // Its exit is the event waited on; a run that ignored the signal fails at the test's timeout.
    const code = await exitOf(child)
    expect(code, stderr).toBe(130)
    expect(stderr.split("\n").filter((l) => l.startsWith("assay: stopped"))).toEqual([
      "assay: stopped before any cell ran: nothing was run or written; run the same command to start it"
    ])
    expect(readFileSync(join(home, "assay.lock"), "utf8")).toBe(holder)
    expect(existsSync(join(home, "assay.sqlite"))).toBe(false)
  })
})
