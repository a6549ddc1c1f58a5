/**
 * `assay view` stopped by Ctrl-C while a client holds a connection: it ends that connection and
 * exits. Not run under Deno (test/deno/vitest.config.ts): a child Deno starts through
 * process.execPath dies of a SIGINT by the signal's default action, as in test/cli/signal.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { connect } from "node:net"
import { assay, bin, cleanEnv, exitOf, root, tempDir } from "../cli/support.ts"

/**
 * Starts `assay view`, opens a connection that sends no request (as a browser's pre-connect
 * does) and holds it until the viewer has exited, then sends Ctrl-C: how the viewer exited. A
 * viewer that waited on that connection would never exit, and the test fail at its timeout.
 */
const stopWithIdleClient = (home: string): Promise<{ readonly code: number | string | null; readonly stdout: string }> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, "view", "--home", home, "--port", "0"], { cwd: root, env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    child.on("error", fail)
    child.stdout.on("data", (d: Buffer) => {
      const before = stdout
      stdout += d.toString()
      const port = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(stdout)?.[1]
      if (port === undefined || /http:\/\/127\.0\.0\.1:\d+\//.test(before)) return
      const socket = connect(Number(port), "127.0.0.1")
      socket.on("connect", () => child.kill("SIGINT"))
      // The viewer resetting it as it exits is expected, not a failure.
      socket.on("error", () => undefined)
      void exitOf(child).then(() => socket.destroy())
    })
    void exitOf(child).then((code) => done({ code, stdout }))
  })

describe("assay view stopped by Ctrl-C", { timeout: 180_000 }, () => {
  it("Ctrl-C ends the viewer though a client holds a connection that sent no request", async () => {
    const home = tempDir("assay-view-cli-")
    const ran = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--task", "ledger-01", "--yes", "--home", home])
    expect(ran.code, ran.stderr).toBe(0)
    const stopped = await stopWithIdleClient(home)
    expect(stopped.stdout).toMatch(/assay view: http:\/\/127\.0\.0\.1:\d+\//)
    expect(stopped.code).toBe(130)
  })
})
