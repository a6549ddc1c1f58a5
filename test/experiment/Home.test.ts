import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { createRequire } from "node:module"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { SqlClient } from "@effect/sql"
import * as Sqlite from "../../src/experiment/Sqlite.ts"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { build } from "esbuild"
import { Deferred, Effect, Fiber, Layer } from "effect"
import * as Home from "../../src/experiment/Home.ts"
import * as Store from "../../src/experiment/Store.ts"

// ---------------------------------------------------------------------------------------------
// Temporary homes and child processes, all removed after each test

const folders: Array<string> = []
const children: Array<ChildProcess> = []
const mounts: Array<string> = []

afterEach(async () => {
  for (const dir of mounts.splice(0)) execFileSync("umount", [dir])
  await Promise.all(children.splice(0).map((child) => {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
    const gone = new Promise<void>((done) => child.once("exit", () => done()))
    child.kill("SIGKILL")
    return gone
  }))
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const tempHome = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "assay-home-"))
  folders.push(dir)
  return dir
}

interface Locker {
  readonly child: ChildProcess
  /** The JSON lines the child prints, in order. */
  readonly next: () => Promise<Record<string, unknown>>
  readonly exited: Promise<number | null>
}

// The locker, bundled once: under `node --import tsx` each child took seconds to start on two
// busy cores, plain node a fraction of one. Only better-sqlite3 (native) stays outside, by path.
let lockerScript = ""
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "assay-locker-"))
  lockerScript = join(dir, "homeLocker.mjs")
  const native = createRequire(import.meta.url).resolve("better-sqlite3")
  await build({
    entryPoints: [join(import.meta.dirname, "homeLocker.ts")],
    outfile: lockerScript,
    bundle: true,
    platform: "node",
    format: "esm",
    logLevel: "error",
    // Bundled CommonJS dependencies call require: give the ES module one.
    banner: { js: `import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);` },
    plugins: [{ name: "native", setup: (b) => b.onResolve({ filter: /^better-sqlite3$/ }, () => ({ path: native, external: true })) }]
  })
})
afterAll(() => rmSync(join(lockerScript, ".."), { recursive: true, force: true }))

const locker = (home: string, go: string, holdMs: number, wait = false): Locker => {
  const child = spawn(process.execPath, [lockerScript, home, go, String(holdMs), wait ? "wait" : ""], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  children.push(child)
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)))
  return {
    child,
    exited,
    next: async () => {
      const line = await lines.next()
      if (line.done) throw new Error(`the locker ${child.pid} ended without a line`)
      return JSON.parse(line.value) as Record<string, unknown>
    }
  }
}

/** Starts lockers, waits until all are ready, then lets them try at once; returns their outcomes. */
const raceLockers = async (home: string, count: number, holdMs: number) => {
  const go = join(tempHome(), "go")
  const all = Array.from({ length: count }, () => locker(home, go, holdMs))
  for (const l of all) expect(await l.next()).toEqual({ ready: true })
  writeFileSync(go, "")
  return Promise.all(all.map(async (l) => ({ locker: l, outcome: await l.next() })))
}

/** The pid of a process that has ended (and been reaped). */
const deadPid = (): number => {
  const pid = Number(execFileSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }))
  expect(() => process.kill(pid, 0)).toThrow()
  return pid
}

const staleLock = (home: string, pid: number) =>
  writeFileSync(Home.lockFile(home), JSON.stringify({ pid, host: hostname(), since: "2020-01-01T00:00:00.000Z", command: "assay run", token: "0000000000000000" }))

const lockHolder = (home: string): Record<string, unknown> => JSON.parse(readFileSync(Home.lockFile(home), "utf8")) as Record<string, unknown>

// ---------------------------------------------------------------------------------------------
// Stores

/** A home with one finished run and enough notes to span many pages; its connection closed. */
const populatedHome = () =>
  Effect.gen(function*() {
    const home = tempHome()
    const runId = yield* Effect.gen(function*() {
      const store = yield* Store.Store
      const runId = yield* store.startRun("sha256:experiment", { reps: 1 })
      for (let i = 0; i < 60; i++) yield* store.putNote(runId, "bulk", { i, text: "x".repeat(2000) })
      yield* store.finishRun(runId, { done: true })
      return runId
    }).pipe(Effect.provide(Store.layer(home)))
    return { home, runId, file: Home.storeFile(home) }
  })

const digest = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex")

const openFails = (home: string, options: Store.LayerOptions = {}) =>
  Effect.flip(Effect.provide(Effect.flatMap(Store.Store, (s) => s.latestRun), Store.layer(home, options)))

/** The damaged-store failure: reason, a line naming the file and the problem and the way out; nothing written. */
const expectDamaged = (home: string, problem: RegExp) =>
  Effect.gen(function*() {
    const file = Home.storeFile(home)
    const before = readFileSync(file)
    const listing = readdirSync(home).sort()
    const error = yield* openFails(home)
    expect(error.reason).toBe("damaged")
    expect(error.message).toContain(file)
    expect(error.message).toMatch(problem)
    expect(error.message).toContain("restore it from a backup, or move it aside to start a new home")
    expect(error.message).not.toContain("\n")
    expect(readFileSync(file).equals(before)).toBe(true)
    expect(readdirSync(home).sort()).toEqual(listing)
  })

const canMountReadOnly = (() => {
  const dir = mkdtempSync(join(tmpdir(), "assay-mount-probe-"))
  try {
    execFileSync("mount", ["--bind", "-o", "ro", dir, dir], { stdio: "ignore" })
    execFileSync("umount", [dir])
    return true
  } catch {
    return false // not root, or no CAP_SYS_ADMIN: the option path is tested instead
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})()

describe("one writer per home", () => {
  it("of two commands taking the lock at once, exactly one gets it; the other is refused at once with pid, host and since", async () => {
    const home = tempHome()
    const results = await raceLockers(home, 2, 2_000)
    const won = results.filter((r) => r.outcome["taken"] === true)
    const lost = results.filter((r) => r.outcome["taken"] === false)
    expect(won).toHaveLength(1)
    expect(lost).toHaveLength(1)
    const holder = won[0]!.outcome["holder"] as Home.Holder
    expect(holder.pid).toBe(won[0]!.locker.child.pid)
    expect(lockHolder(home)).toMatchObject({ pid: holder.pid, host: hostname(), command: "homeLocker" })
    const refusal = lost[0]!.outcome
    expect(refusal["reason"]).toBe("locked")
    const message = String(refusal["message"])
    expect(message).toContain(`pid ${holder.pid} on ${hostname()}`)
    expect(message).toContain(`since ${holder.since}`)
    expect(message).toContain("--wait")
    expect(message).toContain(Home.lockFile(home))
    expect(await lost[0]!.locker.exited).toBe(3)
    // The loser never touched the winner's lock, and the winner removes it when it is done.
    expect(lockHolder(home)["token"]).toBe(holder.token)
    expect(await won[0]!.locker.exited).toBe(0)
    expect(existsSync(Home.lockFile(home))).toBe(false)
  }, 60_000)

  it("a lock left by a killed process is taken over, by exactly one of several takers", async () => {
    const home = tempHome()
    const first = await raceLockers(home, 1, -1)
    const victim = first[0]!.locker
    expect(first[0]!.outcome["taken"]).toBe(true)
    victim.child.kill("SIGKILL")
    await victim.exited
    expect(lockHolder(home)["pid"]).toBe(victim.child.pid) // SIGKILL runs no finalizer
    const results = await raceLockers(home, 3, 1_000)
    const won = results.filter((r) => r.outcome["taken"] === true)
    expect(won).toHaveLength(1)
    for (const r of results.filter((r) => r.outcome["taken"] === false)) {
      expect(String(r.outcome["message"])).toContain(`pid ${won[0]!.locker.child.pid} on`)
    }
    expect(readdirSync(home).filter((f) => f.startsWith("assay.lock"))).toEqual(["assay.lock"])
  }, 60_000)

  it("SIGTERM ends a holder the way the command ends, and its lock goes with it", async () => {
    const home = tempHome()
    const [held] = await raceLockers(home, 1, -1)
    expect(held!.outcome["taken"]).toBe(true)
    held!.locker.child.kill("SIGTERM")
    await held!.locker.exited
    expect(existsSync(Home.lockFile(home))).toBe(false)
  }, 60_000)

  it("waiting gets the lock once its holder lets go", async () => {
    const home = tempHome()
    const [held] = await raceLockers(home, 1, 1_500)
    expect(held!.outcome["taken"]).toBe(true)
    const seen: Array<Home.Holder | null> = []
    const holder = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const mine = yield* Home.lock(home, { wait: true, pollInterval: "50 millis", onWait: (h) => Effect.sync(() => seen.push(h)) })
          expect(lockHolder(home)["token"]).toBe(mine.token)
          return mine
        })
      )
    )
    expect(holder.pid).toBe(process.pid)
    expect(seen.map((h) => h?.pid)).toEqual([held!.locker.child.pid])
    expect(await held!.locker.exited).toBe(0)
    expect(existsSync(Home.lockFile(home))).toBe(false)
  }, 60_000)

  it.live("a wait with a limit gives up with the holder named", () =>
    Effect.gen(function*() {
      const home = tempHome()
      yield* Home.lock(home, { command: "assay run --yes" })
      // Another lock in the same process is refused like another process's: the lock is not re-entrant.
      const refused = yield* Effect.flip(Effect.scoped(Home.lock(home, { wait: "200 millis", pollInterval: "20 millis" })))
      expect(refused.reason).toBe("timeout")
      expect(refused.message).toContain("`assay run --yes`")
      expect(refused.message).toContain(`pid ${process.pid}`)
    }).pipe(Effect.scoped))

  it.live("a lock whose pid is gone on this host is taken over; one from another host is not", () =>
    Effect.gen(function*() {
      const home = tempHome()
      staleLock(home, deadPid())
      const mine = yield* Effect.scoped(Effect.map(Home.lock(home), (holder) => {
        expect(lockHolder(home)).toEqual(holder)
        return holder
      }))
      expect(mine.pid).toBe(process.pid)
      expect(existsSync(Home.lockFile(home))).toBe(false)

      writeFileSync(Home.lockFile(home), JSON.stringify({ pid: 1, host: "elsewhere", since: "2020-01-01T00:00:00.000Z", command: "assay run", token: "1" }))
      const refused = yield* Effect.flip(Effect.scoped(Home.lock(home)))
      expect(refused.reason).toBe("locked")
      expect(refused.message).toContain("pid 1 on another host, elsewhere")
      expect(existsSync(Home.lockFile(home))).toBe(true)
    }))

  it.live("a lock that is not this process's is never removed by its release", () =>
    Effect.gen(function*() {
      const home = tempHome()
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Home.lock(home)
        // Someone replaced the lock (by hand, say) while this process held it.
        staleLock(home, 1)
      }))
      expect(lockHolder(home)["pid"]).toBe(1)
    }))

  it.live("an unreadable lock file is reported, not removed", () =>
    Effect.gen(function*() {
      const home = tempHome()
      writeFileSync(Home.lockFile(home), "")
      const refused = yield* Effect.flip(Effect.scoped(Home.lock(home)))
      expect(refused.reason).toBe("locked")
      expect(refused.message).toContain("cannot be read")
      expect(readFileSync(Home.lockFile(home), "utf8")).toBe("")
      expect(yield* Home.holderOf(home)).toEqual({ unreadable: Home.lockFile(home) })
    }))
})

describe("a damaged store is named, never replaced", () => {
  it.effect("an empty store file", () =>
    Effect.gen(function*() {
      const home = tempHome()
      writeFileSync(Home.storeFile(home), "")
      yield* expectDamaged(home, /assay\.sqlite is empty:/)
    }))

  it.effect("a file that is not SQLite, short or long", () =>
    Effect.gen(function*() {
      const short = tempHome()
      writeFileSync(Home.storeFile(short), "not a database")
      yield* expectDamaged(short, /is not a SQLite database/)
      const long = tempHome()
      writeFileSync(Home.storeFile(long), Buffer.alloc(8192, 0x41))
      yield* expectDamaged(long, /is not a SQLite database/)
    }))

  it.effect("a store truncated at a page boundary or inside a page", () =>
    Effect.gen(function*() {
      const { home, file } = yield* populatedHome()
      const size = readFileSync(file).length
      expect(size).toBeGreaterThan(8 * 4096)
      truncateSync(file, 4 * 4096)
      yield* expectDamaged(home, /is truncated \(4 of its \d+ pages\)/)
      truncateSync(file, 4096 + 100)
      yield* expectDamaged(home, /is truncated \(4196 bytes is not a whole number of 4096-byte pages\)/)
    }))

  it.effect("a store with a damaged page", () =>
    Effect.gen(function*() {
      const { home, file } = yield* populatedHome()
      const bytes = readFileSync(file)
      bytes.fill(0xab, 5 * 4096, 5 * 4096 + 512)
      writeFileSync(file, bytes)
      yield* expectDamaged(home, /is corrupt: /)
    }))

  it.effect("a sound store opens, and a new home gets a store that is never empty", () =>
    Effect.gen(function*() {
      const { home, runId } = yield* populatedHome()
      const latest = yield* Effect.provide(Effect.flatMap(Store.Store, (s) => s.latestRun), Store.layer(home))
      expect(latest?.id).toBe(runId)
      const fresh = join(tempHome(), "new-home")
      yield* Effect.provide(Effect.flatMap(Store.Store, (s) => s.latestRun), Store.layer(fresh))
      expect(readdirSync(fresh)).toEqual(["assay.sqlite"])
      expect(readFileSync(Home.storeFile(fresh)).length).toBeGreaterThan(0)
    }))
})

describe("reading a home that cannot be written", () => {
  it.effect("a read-only open reads a populated store and writes nothing to it", () =>
    Effect.gen(function*() {
      const { home, runId, file } = yield* populatedHome()
      const before = digest(file)
      const { latest, notes, refusedWrite } = yield* Effect.gen(function*() {
        const store = yield* Store.Store
        return {
          latest: yield* store.latestRun,
          notes: yield* store.notesOfRun(runId, "bulk"),
          refusedWrite: yield* Effect.flip(store.putNote(runId, "bulk", "more"))
        }
      }).pipe(Effect.provide(Store.layer(home, { readOnly: true })))
      expect(latest?.id).toBe(runId)
      expect(latest?.summary).toEqual({ done: true })
      expect(notes).toHaveLength(60)
      expect(refusedWrite.reason).toBe("query")
      expect(digest(file)).toBe(before)
      // SQLite's read-only connection may leave an empty log beside the file; never content.
      expect(existsSync(`${file}-wal`) ? readFileSync(`${file}-wal`).length : 0).toBe(0)
    }))

  it.effect("a read-only open of a store that would need migrating fails with a line saying so", () =>
    Effect.gen(function*() {
      const { home, file } = yield* populatedHome()
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM effect_sql_migrations WHERE migration_id = (SELECT MAX(migration_id) FROM effect_sql_migrations)`
      }).pipe(Effect.provide(Sqlite.layer({ filename: file })), Effect.orDie)
      const before = digest(file)
      const error = yield* openFails(home, { readOnly: true })
      expect(error.reason).toBe("read-only")
      expect(error.message).toContain(file)
      expect(error.message).toContain("older assay")
      expect(digest(file)).toBe(before)
    }))

  it.effect("a reader opens the store while a writer is inside a transaction", () =>
    Effect.gen(function*() {
      const { home, runId, file } = yield* populatedHome()
      const inside = yield* Deferred.make<void>()
      const done = yield* Deferred.make<void>()
      const writer = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO notes (run_id, kind, note) VALUES (${runId}, 'bulk', '"in flight"')`
          yield* Deferred.succeed(inside, undefined)
          yield* Deferred.await(done)
        }))
      }).pipe(Effect.provide(Sqlite.layer({ filename: file })), Effect.orDie, Effect.fork)
      yield* Deferred.await(inside)
      for (const options of [{}, { readOnly: true }]) {
        const latest = yield* Effect.provide(Effect.flatMap(Store.Store, (s) => s.latestRun), Store.layer(home, options))
        expect(latest?.id).toBe(runId)
      }
      yield* Deferred.succeed(done, undefined)
      yield* Fiber.join(writer)
    }))

  it.skipIf(!canMountReadOnly)("a home on a read-only mount is reported from, and refuses a run", () =>
    Effect.runPromise(
      Effect.gen(function*() {
        const { home, runId, file } = yield* populatedHome()
        const before = digest(file)
        execFileSync("mount", ["--bind", "-o", "ro", home, home])
        mounts.push(home)
        expect(() => writeFileSync(join(home, "probe"), "")).toThrow(/EROFS/)
        // No readOnly option: the folder tells.
        const latest = yield* Effect.provide(Effect.flatMap(Store.Store, (s) => s.latestRun), Store.layer(home))
        expect(latest?.id).toBe(runId)
        const refused = yield* Effect.flip(Effect.scoped(Home.lock(home)))
        expect(refused.reason).toBe("read-only")
        expect(refused.message).toContain("plan, report, replay and view can still read it")
        execFileSync("umount", [home])
        mounts.splice(mounts.indexOf(home), 1)
        expect(digest(file)).toBe(before)
        expect(readdirSync(home)).toEqual(["assay.sqlite"])
      })
    ))
})

describe("the lock and the store together", () => {
  it.live("the lock's folder is the store's: taking it creates the home but no store, and a home it made and left empty goes with it", () =>
    Effect.gen(function*() {
      const home = join(tempHome(), "h")
      mkdirSync(join(home, ".."), { recursive: true })
      yield* Effect.scoped(Effect.tap(Home.lock(home), () => Effect.sync(() => expect(readdirSync(home)).toEqual(["assay.lock"]))))
      expect(existsSync(home)).toBe(false)
      // A home that was there before, or that holds anything once released, stays.
      mkdirSync(home)
      yield* Effect.scoped(Home.lock(home))
      expect(readdirSync(home)).toEqual([])
      const other = join(tempHome(), "o")
      yield* Effect.scoped(Effect.tap(Home.lock(other), () => Effect.sync(() => writeFileSync(join(other, "assay.sqlite"), ""))))
      expect(readdirSync(other)).toEqual(["assay.sqlite"])
    }))
})

describe("the full check runs only on a store that changed since a writer closed it", () => {
  // The notes go to a cache folder of this file's own, removed with the other temporary folders.
  const useCache = () => {
    const cache = tempHome()
    const was = process.env["XDG_CACHE_HOME"]
    process.env["XDG_CACHE_HOME"] = cache
    return Effect.as(
      Effect.addFinalizer(() => Effect.sync(() => (was === undefined ? delete process.env["XDG_CACHE_HOME"] : (process.env["XDG_CACHE_HOME"] = was)))),
      join(cache, "assay", "store-checks")
    )
  }
  const notes = (folder: string) => (existsSync(folder) ? readdirSync(folder).map((n) => JSON.parse(readFileSync(join(folder, n), "utf8")) as { file: string; state: string }) : [])

  it.scoped("a writer's close notes the store; bytes changed in place, even with the old modification time put back, are still found", () =>
    Effect.gen(function*() {
      const folder = yield* useCache()
      const { home, file } = yield* populatedHome()
      expect(notes(folder).map((n) => n.file)).toEqual([file])
      // Opening the unchanged store again works, and leaves one note of it.
      yield* Effect.provide(Effect.flatMap(Store.Store, (s) => s.latestRun), Store.layer(home))
      expect(notes(folder).map((n) => n.file)).toEqual([file])
      const { mtime, atime } = statSync(file)
      const bytes = readFileSync(file)
      bytes.fill(0xab, 5 * 4096, 5 * 4096 + 512)
      writeFileSync(file, bytes)
      utimesSync(file, atime, mtime)
      yield* expectDamaged(home, /is corrupt: /)
    }))

  it.scoped("a store in exactly its noted state is not read in full (shown by a note forged for a damaged file)", () =>
    Effect.gen(function*() {
      const folder = yield* useCache()
      const { home, file } = yield* populatedHome()
      const bytes = readFileSync(file)
      bytes.fill(0xab, 5 * 4096, 5 * 4096 + 512)
      writeFileSync(file, bytes)
      const s = statSync(file, { bigint: true })
      const [name] = readdirSync(folder)
      writeFileSync(join(folder, name!), JSON.stringify({ file, state: `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` }))
      // The header check passes and the page is never read: the open succeeds.
      yield* Effect.scoped(Layer.build(Store.layer(home)))
      // A read-only open never relies on a note: it checks in full.
      const error = yield* openFails(home, { readOnly: true })
      expect(error.reason).toBe("damaged")
    }))
})

describe("a store is assay's or nothing", () => {
  const applicationIdOf = (file: string) => readFileSync(file).readUInt32BE(68)

  it.effect("a new store carries assay's application id in its header", () =>
    Effect.gen(function*() {
      const { file } = yield* populatedHome()
      expect(applicationIdOf(file)).toBe(Home.APPLICATION_ID)
    }))

  it.effect("a SQLite file of another program is refused whatever the mode asked, and left byte for byte with nothing beside it", () =>
    Effect.gen(function*() {
      for (const journal of ["DELETE", "WAL"]) {
        const home = tempHome()
        const file = Home.storeFile(home)
        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql.unsafe(`PRAGMA journal_mode = ${journal}`)
          yield* sql`CREATE TABLE t (x)`
          yield* sql`INSERT INTO t VALUES (1)`
        }).pipe(Effect.provide(Sqlite.layer({ filename: file, disableWAL: true })), Effect.orDie)
        const before = digest(file)
        for (const options of [{}, { readOnly: true }, { migrate: false }]) {
          const error = yield* openFails(home, options)
          expect(error.reason).toBe("foreign")
          expect(error.message).toContain(`the store ${file} is a SQLite database that assay did not make`)
          expect(digest(file)).toBe(before)
          expect(readdirSync(home)).toEqual(["assay.sqlite"])
        }
      }
    }))

  it.effect("a store an older assay made (no application id) is still assay's: a writer marks it, a reader leaves it as it is", () =>
    Effect.gen(function*() {
      const { home, file, runId } = yield* populatedHome()
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe("PRAGMA application_id = 0")).pipe(
        Effect.provide(Sqlite.layer({ filename: file })),
        Effect.orDie
      )
      expect(applicationIdOf(file)).toBe(0)
      const before = digest(file)
      const read = yield* Effect.provide(Effect.flatMap(Store.Store, (s) => s.latestRun), Store.layer(home, { readOnly: true }))
      expect(read?.id).toBe(runId)
      expect(digest(file)).toBe(before)
      const written = yield* Effect.provide(Effect.flatMap(Store.Store, (s) => s.latestRun), Store.layer(home))
      expect(written?.id).toBe(runId)
      expect(applicationIdOf(file)).toBe(Home.APPLICATION_ID)
    }))
})
