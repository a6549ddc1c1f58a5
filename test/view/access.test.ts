/**
 * Who can read `assay view`: only requests that name the viewer's own address (a page whose name
 * was rebound to 127.0.0.1 names its own and is refused), with bounded questions and answers, and
 * off loopback only a browser that brought the token printed at start.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { request } from "node:http"
import { assay, bin, cleanEnv, root, tempDir } from "../cli/support.ts"

interface Viewer {
  readonly port: number
  /** The address line's token, off loopback. */
  readonly token: string | null
  readonly child: ChildProcess
}

/** Starts `assay view` with `args` on a free port and waits for the address it prints. */
const startViewer = (args: ReadonlyArray<string>): Promise<Viewer> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, "view", "--port", "0", ...args], { cwd: root, env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString()
      const found = /assay view: http:\/\/[^:]+:(\d+)\/(\?token=([\w-]+))? /.exec(stdout)
      if (found !== null) done({ port: Number(found[1]), token: found[3] ?? null, child })
    })
    child.on("exit", (code) => fail(new Error(`assay view exited (${code}) before it listened: ${stderr}`)))
  })

const stopViewer = (viewer: Viewer | undefined): Promise<void> =>
  new Promise((done) => {
    if (viewer === undefined || viewer.child.exitCode !== null || viewer.child.signalCode !== null) return done()
    viewer.child.removeAllListeners("exit")
    viewer.child.once("exit", () => done())
    viewer.child.kill("SIGTERM")
  })

interface Answer {
  readonly status: number
  readonly body: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
}

/** A GET to the viewer on 127.0.0.1 with the Host header (and other headers) given: what fetch cannot set. */
const get = (port: number, path: string, headers: Record<string, string>): Promise<Answer> =>
  new Promise((done, fail) => {
    const req = request({ host: "127.0.0.1", port, path, method: "GET", headers, setHost: false }, (res) => {
      let body = ""
      res.on("data", (d: Buffer) => (body += d.toString()))
      res.on("end", () => done({ status: res.statusCode ?? 0, body, headers: res.headers }))
    })
    req.on("error", fail)
    req.end()
  })

describe("assay view answers only its user", { timeout: 180_000 }, () => {
  let home = ""
  let runId = ""
  let local: Viewer | undefined
  let wide: Viewer | undefined

  beforeAll(async () => {
    home = tempDir("assay-view-access-")
    const ran = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--task", "ledger-01", "--yes", "--home", home, "--json"])
    expect(ran.code, ran.stderr).toBe(0)
    runId = (JSON.parse(ran.stdout) as { runId: string }).runId
    local = await startViewer(["--home", home])
    wide = await startViewer(["--home", home, "--host", "0.0.0.0"])
  })

  afterAll(async () => {
    await stopViewer(local)
    await stopViewer(wide)
  })

  it("a request naming another host (DNS rebinding) is refused with 403 and one line; its own names are answered", async () => {
    const { port } = local!
    for (const path of ["/api/runs", "/", `/runs/${runId}`]) {
      const evil = await get(port, path, { host: "evil.example" })
      expect(evil.status).toBe(403)
      expect(evil.body.trimEnd().split("\n")).toHaveLength(1)
      expect(evil.body).not.toContain(runId)
      const otherPort = await get(port, path, { host: `127.0.0.1:${port + 1}` })
      expect(otherPort.status).toBe(403)
    }
    // No Host at all: Node's server refuses it first (400), as HTTP/1.1 requires.
    expect((await get(port, "/api/runs", {})).status).toBeGreaterThanOrEqual(400)
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
      const ok = await get(port, "/api/runs", { host })
      expect(ok.status, host).toBe(200)
      expect(ok.body).toContain(runId)
    }
  })

  it("a 10 KB comparison query is refused with one line; a run named many times is compared once", async () => {
    const { port } = local!
    const host = `127.0.0.1:${port}`
    const long = await get(port, `/api/compare?${Array.from({ length: 400 }, () => `run=${runId}`).join("&")}`, { host })
    expect(long.status).toBe(414)
    expect(long.body.trimEnd().split("\n")).toHaveLength(1)
    const once = await get(port, `/api/compare?run=${runId}`, { host })
    const many = await get(port, `/api/compare?${Array.from({ length: 80 }, () => `run=${runId}`).join("&")}`, { host })
    expect(once.status).toBe(200)
    expect(many.status).toBe(200)
    expect(many.body).toBe(once.body)
    const nine = Array.from({ length: 9 }, (_, i) => `run=r-${String(i).repeat(16)}`).join("&")
    const tooMany = await get(port, `/api/compare?${nine}`, { host })
    expect(tooMany.status).toBe(400)
    expect(tooMany.body).toContain("at most 8 runs")
  })

  it("off loopback the token printed at start is needed: the page asks for it, ?token= sets a cookie, a wrong one is refused", async () => {
    const { port, token } = wide!
    expect(token).not.toBeNull()
    const host = `localhost:${port}`
    const api = await get(port, "/api/runs", { host })
    expect(api.status).toBe(401)
    expect(api.body).not.toContain(runId)
    const page = await get(port, "/", { host })
    expect(page.status).toBe(401)
    expect(page.body).toContain(`name="token"`)
    const wrong = await get(port, `/?token=${"x".repeat(token!.length)}`, { host })
    expect(wrong.status).toBe(401)
    expect(wrong.body).toContain("not this viewer's")
    const brought = await get(port, `/api/runs?token=${token}`, { host })
    expect(brought.status).toBe(303)
    expect(brought.headers["location"]).toBe("/api/runs")
    const cookie = String(brought.headers["set-cookie"]).split(";")[0]!
    expect(cookie).toBe(`assay_view_token=${token}`)
    const withCookie = await get(port, "/api/runs", { host, cookie })
    expect(withCookie.status).toBe(200)
    expect(withCookie.body).toContain(runId)
    // A script sends it as a bearer.
    expect((await get(port, "/api/runs", { host, authorization: `Bearer ${token}` })).status).toBe(200)
    expect((await get(port, "/api/runs", { host, authorization: "Bearer nope" })).status).toBe(401)
    // The token does not stand in for the Host check.
    expect((await get(port, "/api/runs", { host: "evil.example", cookie })).status).toBe(403)
  })
})
