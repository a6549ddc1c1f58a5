/**
 * What the viewer's tests share: `assay view` started as a user starts it (and stopped), a GET,
 * and a gate in front of the loopback model server that holds model calls until a test lets them
 * through, so a test decides how far a run has got when it looks.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { bin, root } from "../cli/support.ts"

export interface Viewer {
  readonly url: string
  readonly child: ChildProcess
  readonly stderr: () => string
}

/** Starts `assay view` on a free port and waits for the address it prints. */
export const startViewer = (home: string): Promise<Viewer> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, "view", "--home", home, "--port", "0"], {
      cwd: root,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ASSAY_DATA_DIR: process.env["ASSAY_DATA_DIR"] ?? "" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    const timer = setTimeout(() => fail(new Error(`assay view printed no address in 60 s: ${stdout} ${stderr}`)), 60_000)
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString()
      const url = /(http:\/\/127\.0\.0\.1:\d+)\//.exec(stdout)?.[1]
      if (url !== undefined) {
        clearTimeout(timer)
        done({ url, child, stderr: () => stderr })
      }
    })
    child.on("exit", (code) => {
      clearTimeout(timer)
      fail(new Error(`assay view exited (${code}) before it listened: ${stderr}`))
    })
  })

export const stopViewer = (viewer: Viewer | undefined): Promise<void> =>
  new Promise((done) => {
    if (viewer === undefined || viewer.child.exitCode !== null || viewer.child.signalCode !== null) return done()
    viewer.child.removeAllListeners("exit")
    viewer.child.once("exit", () => done())
    viewer.child.kill("SIGTERM")
  })

export const get = async (url: string) => {
  const res = await fetch(url)
  return { status: res.status, text: await res.text() }
}

export const attr = (element: string, name: string): string | undefined => new RegExp(`${name}="([^"]*)"`).exec(element)?.[1]

/**
 * A proxy in front of the loopback model server that holds each model call (POST) until the
 * test releases it: the test decides how many cells a run has written when it looks.
 */
export const startGate = async () => {
  let target = ""
  let permits = 0
  const held: Array<{ readonly go: () => void; readonly res: ServerResponse }> = []
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const upstream = request(`${target}${req.url ?? "/"}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on("error", (e) => res.destroy(e))
    req.pipe(upstream)
  }
  const server = createServer((req, res) => {
    if (req.method !== "POST") return forward(req, res)
    if (permits > 0) {
      permits--
      return forward(req, res)
    }
    req.pause()
    held.push({ go: () => forward(req, res), res })
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    target: (url: string) => void (target = url),
    release: (n: number) => {
      permits += n
      while (permits > 0 && held.length > 0) {
        permits--
        held.shift()!.go()
      }
    },
    // Calls still held are dropped, so a run left behind by a failed test ends rather than waits.
    close: () =>
      new Promise<void>((done) => {
        for (const { res } of held.splice(0)) res.destroy()
        server.close(() => done())
        server.closeAllConnections()
      })
  }
}

/** Waits until the viewer lists a running run with `n` cells written; its id. */
export const writtenReaches = async (url: string, n: number, ended: () => string | null): Promise<string> => {
  for (let i = 0; i < 1200; i++) {
    const early = ended()
    if (early !== null) throw new Error(early)
    const runs = JSON.parse((await get(`${url}/api/runs`)).text) as { runs: ReadonlyArray<{ runId: string; state: string; cells: { written: number } }> }
    const live = runs.runs.find((r) => r.state === "running" && r.cells.written >= n)
    if (live !== undefined) return live.runId
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`the viewer never listed a running run with ${n} cells written`)
}

