/**
 * A home's store is assay's or nothing: a SQLite file assay did not make is refused with one line
 * and left byte for byte; plan, report and replay never migrate or write, and refuse an older
 * store naming the command that upgrades it; a home its user cannot write (folder and file) is
 * still planned, reported, replayed and viewed, checked as a user who is not root.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync, spawn, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs"
import { request } from "node:http"
import { dirname, join } from "node:path"
import { assay, cleanEnv, root, tempDir } from "./support.ts"

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex")

const sqlite = (file: string, statements: string) =>
  execFileSync(process.execPath, [
    "-e",
    `const D = require("better-sqlite3"); const db = new D(process.argv[1]); db.exec(process.argv[2]); db.close()`,
    file,
    statements
  ], { cwd: root })

const plan = (home: string) => assay(["plan", "--benchmark", "ledger", "--candidate", "gold", "--home", home])

const gold = async (home: string) => {
  const ran = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--task", "ledger-01", "--yes", "--home", home, "--json"])
  expect(ran.code, ran.stderr).toBe(0)
  return (JSON.parse(ran.stdout) as { runId: string }).runId
}

describe("a home's store is assay's or nothing", { timeout: 180_000 }, () => {
  it("a SQLite file assay did not make is refused by plan and run with one line, and left byte for byte", async () => {
    const home = tempDir("assay-foreign-")
    const file = join(home, "assay.sqlite")
    sqlite(file, "CREATE TABLE t(x); INSERT INTO t VALUES (1)")
    const before = sha256(file)
    for (const args of [["plan", "--benchmark", "ledger", "--candidate", "gold"], ["run", "--benchmark", "ledger", "--candidate", "gold", "--yes"], ["report"]]) {
      const r = await assay([...args, "--home", home])
      expect(r.code, r.stderr).toBe(1)
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1)
      expect(r.stderr).toContain(`the store ${file} is a SQLite database that assay did not make`)
      expect(sha256(file)).toBe(before)
    }
    // Nothing beside it either (no -wal, -shm or lock left).
    expect(readdirSync(home)).toEqual(["assay.sqlite"])
  })

  it("an older store is refused by plan, report and replay naming `assay run`, left byte for byte; run upgrades it", async () => {
    const home = tempDir("assay-older-")
    const file = join(home, "assay.sqlite")
    await gold(home)
    // As an older assay left it: its newest migration not yet applied, and no application id.
    sqlite(file, "DELETE FROM effect_sql_migrations WHERE migration_id = (SELECT MAX(migration_id) FROM effect_sql_migrations); PRAGMA application_id = 0")
    const before = sha256(file)
    for (const r of [await plan(home), await assay(["report", "--home", home]), await assay(["replay", "--home", home])]) {
      expect(r.code, r.stderr).toBe(1)
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1)
      expect(r.stderr).toContain("was written by an older assay")
      expect(r.stderr).toContain("assay run")
      expect(sha256(file)).toBe(before)
    }
    await gold(home)
    const after = await plan(home)
    expect(after.code, after.stderr).toBe(0)
  })
})

// ---------------------------------------------------------------------------------------------
// A read-only home, as a user who is not root (root writes through any mode bits)

const asNobody = spawnSync("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "true"]).status === 0
const why = process.getuid?.() !== 0
  ? "the tests run as a user who is not root: a read-only home is that user's own case, covered by chmod alone"
  : "setpriv cannot switch to nobody here"

/** The command's current build (bin/assay.js builds it; nobody cannot write the build folder). */
const builtEntry = (): string => {
  const cache = join(root, "node_modules", ".assay")
  return join(cache, (JSON.parse(readFileSync(join(cache, "manifest.json"), "utf8")) as { entry: string }).entry)
}

interface Result {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** The command as nobody, with a temp folder nobody can write (a read-only store is read from a copy there). */
const assayAsNobody = (args: ReadonlyArray<string>, tmp: string): Promise<Result> =>
  new Promise((done, fail) => {
    const child = spawn("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", process.execPath, builtEntry(), ...args], {
      cwd: root,
      env: cleanEnv({ TMPDIR: tmp, HOME: tmp, XDG_CACHE_HOME: join(tmp, ".cache") }),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", fail)
    child.on("close", (code) => done({ code, stdout, stderr }))
  })

/** `assay view` as nobody: the status of GET /api/runs and its body, then the viewer stopped. */
const viewAsNobody = (home: string, tmp: string): Promise<{ readonly status: number; readonly body: string }> =>
  new Promise((done, fail) => {
    const child = spawn("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", process.execPath, builtEntry(), "view", "--home", home, "--port", "0"], {
      cwd: root,
      env: cleanEnv({ TMPDIR: tmp, HOME: tmp, XDG_CACHE_HOME: join(tmp, ".cache") }),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let answer: { status: number; body: string } | null = null
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString()
      const port = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(stdout)?.[1]
      if (port === undefined || answer !== null) return
      answer = { status: 0, body: "" }
      const req = request({ host: "127.0.0.1", port: Number(port), path: "/api/runs" }, (res) => {
        let body = ""
        res.on("data", (d: Buffer) => (body += d.toString()))
        res.on("end", () => {
          answer = { status: res.statusCode ?? 0, body }
          child.kill("SIGTERM")
        })
      })
      req.on("error", (e) => {
        child.kill("SIGTERM")
        fail(e)
      })
      req.end()
    })
    child.on("error", fail)
    child.on("close", () => (answer !== null && answer.status !== 0 ? done(answer) : fail(new Error(`assay view did not answer: ${stderr}`))))
  })

/** Makes every folder above `dir` passable by others (the test run's own temp folder is private); the modes to put back. */
const openPath = (dir: string): ReadonlyArray<readonly [string, number]> => {
  const changed: Array<readonly [string, number]> = []
  for (let d = dirname(dir); d !== dirname(d); d = dirname(d)) {
    const mode = statSync(d).mode & 0o7777
    if ((mode & 0o001) === 0) {
      chmodSync(d, mode | 0o001)
      changed.push([d, mode])
    }
  }
  return changed
}

const runnable = asNobody && process.getuid?.() === 0
describe.skipIf(!runnable)(`a home its user cannot write${runnable ? "" : ` (skipped: ${why})`}`, { timeout: 240_000 }, () => {
  it("is planned, reported, replayed and viewed by a user who is not root, and left as it was", async () => {
    const base = tempDir("assay-readonly-home-")
    const home = join(base, "home")
    const runId = await gold(home)
    // The user's own home, made unwritable as `chmod -R a-w` makes it: the folder, the store, the run folders.
    const chownAll = (p: string) => {
      chownSync(p, 65534, 65534)
      if (statSync(p).isDirectory()) for (const name of readdirSync(p)) chownAll(join(p, name))
    }
    chownAll(home)
    execFileSync("chmod", ["-R", "a-w", home])
    const tmp = join(base, "tmp")
    mkdirSync(tmp)
    chownSync(tmp, 65534, 65534)
    const restore = openPath(home)
    try {
      const file = join(home, "assay.sqlite")
      const before = sha256(file)
      const planned = await assayAsNobody(["plan", "--benchmark", "ledger", "--candidate", "gold", "--home", home, "--json"], tmp)
      expect(planned.code, planned.stderr).toBe(0)
      expect((JSON.parse(planned.stdout) as { cells: { kept: number } }).cells.kept).toBeGreaterThan(0)
      const reported = await assayAsNobody(["report", runId, "--home", home, "--json"], tmp)
      expect(reported.code, reported.stderr).toBe(0)
      expect((JSON.parse(reported.stdout) as { runId: string }).runId).toBe(runId)
      const replayed = await assayAsNobody(["replay", runId, "--home", home], tmp)
      expect(replayed.code, replayed.stderr).toBe(0)
      expect(replayed.stdout).toContain(`replay of ${runId}`)
      const viewed = await viewAsNobody(home, tmp)
      expect(viewed.status).toBe(200)
      expect(viewed.body).toContain(runId)
      expect(sha256(file)).toBe(before)
      expect(existsSync(join(home, "assay.lock"))).toBe(false)
      // The copy a read-only store is read from went with each command.
      expect(readdirSync(tmp).filter((n) => n.startsWith("assay-readonly-"))).toEqual([])
    } finally {
      for (const [d, mode] of restore) chmodSync(d, mode)
      execFileSync("chmod", ["-R", "u+w", home])
    }
  })
})
