/**
 * `assay view`'s command line: what it refuses before serving (exit 2, one line), the warning
 * off loopback, and a port that is taken (exit 1, one line).
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { createServer } from "node:net"
import { join } from "node:path"
import { assay, bin, root, tempDir } from "../cli/support.ts"

/** Starts `assay view` with `args`, waits for its address line, and stops it; what it printed. */
const serveBriefly = (args: ReadonlyArray<string>): Promise<{ readonly stdout: string; readonly stderr: string }> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, "view", ...args], {
      cwd: root,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000)
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString()
      if (/http:\/\/\S+\//.test(stdout)) child.kill("SIGTERM")
    })
    child.on("error", fail)
    child.on("exit", () => {
      clearTimeout(timer)
      done({ stdout, stderr })
    })
  })

describe("assay view's command line", { timeout: 180_000 }, () => {
  it("a home without a store, and a port past 65535, are refused with one line and exit 2", async () => {
    const missing = join(tempDir("assay-view-cli-"), "nothing-here")
    const none = await assay(["view", "--home", missing])
    expect(none.code, none.stderr).toBe(2)
    expect(none.stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(none.stderr).toContain(`no assay home at ${missing}`)
    const port = await assay(["view", "--home", missing, "--port", "70000"])
    expect(port.code, port.stderr).toBe(2)
    expect(port.stderr).toContain("--port 70000: expected a whole number from 0 to 65535")
  })

  it("off loopback it warns that the results are visible to the network; on a taken port it exits 1 naming it", async () => {
    const home = tempDir("assay-view-cli-")
    const ran = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--task", "ledger-01", "--yes", "--home", home])
    expect(ran.code, ran.stderr).toBe(0)

    const wide = await serveBriefly(["--home", home, "--port", "0", "--host", "0.0.0.0"])
    expect(wide.stderr).toContain("assay: warning: --host 0.0.0.0: the results, transcripts included, are visible to anyone who can reach this machine")
    expect(wide.stdout).toMatch(/assay view: http:\/\/localhost:\d+\//)
    const local = await serveBriefly(["--home", home, "--port", "0"])
    expect(local.stderr).not.toContain("warning")
    expect(local.stdout).toMatch(/assay view: http:\/\/127\.0\.0\.1:\d+\//)

    const taken = createServer()
    await new Promise<void>((done) => taken.listen(0, "127.0.0.1", done))
    try {
      const address = taken.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const r = await assay(["view", "--home", home, "--port", String(port)])
      expect(r.code, r.stderr).toBe(1)
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1)
      expect(r.stderr).toContain(`cannot serve on 127.0.0.1:${port}: the port is in use`)
    } finally {
      await new Promise<void>((done) => taken.close(() => done()))
    }
  })
})
