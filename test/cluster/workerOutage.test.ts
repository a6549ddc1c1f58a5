/**
 * A worker that loses its database behaves like a service: it says so once per change of state
 * (lost, retrying, back), retries with a capped backoff rather than logging every failure, exits
 * non-zero after `--max-outage-secs`, and SIGTERM ends it within seconds whatever the database does.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { bin, root, tempDir } from "../cli/support.ts"
import * as Postgres from "../support/postgres.ts"

let scope: Scope.CloseableScope
const children = new Set<ChildProcess>()

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
})
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

interface Worker {
  readonly child: ChildProcess
  /** Everything it wrote to stderr so far. */
  readonly stderr: () => string
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  /** Resolves once its stderr holds `text`. */
  readonly said: (text: string | RegExp) => Promise<void>
}

const startWorker = (url: string, extra: ReadonlyArray<string> = []): Promise<Worker> =>
  new Promise((ok, fail) => {
    const child = spawn(process.execPath, [bin, "worker", "--store", url, "--home", tempDir(), "--host", "127.0.0.1", "--concurrency", "2", ...extra], {
      cwd: root,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
      stdio: ["ignore", "ignore", "pipe"]
    })
    children.add(child)
    let err = ""
    const waiters: Array<{ text: string | RegExp; done: () => void }> = []
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on("close", (code, signal) => done({ code, signal })))
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString()
      for (const w of [...waiters]) {
        if (typeof w.text === "string" ? err.includes(w.text) : w.text.test(err)) {
          waiters.splice(waiters.indexOf(w), 1)
          w.done()
        }
      }
      if (err.includes("assay: worker on port")) ok(worker)
    })
    const worker: Worker = {
      child,
      stderr: () => err,
      exited,
      said: (text) =>
        new Promise<void>((done, never) => {
          if (typeof text === "string" ? err.includes(text) : text.test(err)) return done()
          waiters.push({ text, done })
          void exited.then(() => never(new Error(`the worker exited before saying ${String(text)}: ${err}`)))
        })
    }
    void exited.then(({ code }) => fail(new Error(`worker exited ${code} before joining: ${err}`)))
  })

/** Lines that are not the worker's start line. */
const linesAfterStart = (stderr: string) => stderr.split("\n").filter((l) => l.trim() !== "" && !l.includes("assay: worker on port"))

describe("a worker whose Postgres goes away", () => {
  it("says it lost the database once, then retrying, with bounded lines over 20 s; SIGTERM ends it within 5 s", async () => {
    const pg = await Effect.runPromise(Scope.extend(Postgres.start, scope))
    const worker = await startWorker(pg.database("outage"))
    // A fast shutdown of the server: every session ends, and nothing listens on its port after.
    process.kill(pg.pid, "SIGINT")
    await worker.said("lost its database")
    await worker.said("retrying")
    // Twenty seconds of outage: a line per state change, not one per failed query.
    await new Promise((r) => setTimeout(r, 20_000))
    const lines = linesAfterStart(worker.stderr())
    expect(lines.length, worker.stderr()).toBeLessThanOrEqual(6)
    expect(lines.filter((l) => l.includes("lost its database"))).toHaveLength(1)
    expect(worker.stderr()).not.toMatch(/\n\s+at /)
    const sent = Date.now()
    worker.child.kill("SIGTERM")
    const end = await Promise.race([worker.exited, new Promise<null>((r) => setTimeout(() => r(null), 5_000))])
    expect(end, `still running 5 s after SIGTERM (sent at ${sent}): ${worker.stderr()}`).not.toBeNull()
  }, 90_000)

  it("--max-outage-secs 3: exits non-zero with one line naming the outage once the database has been gone that long", async () => {
    const pg = await Effect.runPromise(Scope.extend(Postgres.start, scope))
    const worker = await startWorker(pg.database("outage"), ["--max-outage-secs", "3"])
    process.kill(pg.pid, "SIGINT")
    const end = await worker.exited
    expect(end.code).not.toBe(0)
    expect(end.code).not.toBeNull()
    expect(worker.stderr()).toMatch(/database .*(unreachable|gone) for more than 3 s/)
  }, 90_000)

  it("SIGTERM with the database up ends the worker within 5 s by its graceful path (cells given back), exit 130", async () => {
    const pg = await Effect.runPromise(Scope.extend(Postgres.start, scope))
    const worker = await startWorker(pg.database("term"))
    worker.child.kill("SIGTERM")
    const end = await Promise.race([worker.exited, new Promise<null>((r) => setTimeout(() => r(null), 5_000))])
    expect(end, worker.stderr()).not.toBeNull()
    expect(end?.code).toBe(130)
    expect(worker.stderr()).not.toContain("stopped before it could give back its cells")
  }, 60_000)
})
