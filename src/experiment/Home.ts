/**
 * A home folder: its store file (`assay.sqlite`) and the lock (`assay.lock`) that admits one
 * writer at a time. Two runs on one home would each run every cell (and pay for it twice), so a
 * writer takes the lock for as long as it writes; readers (plan, report) take none, since the
 * store's WAL lets them read while a run writes. A store file that cannot be read as a sound
 * SQLite database is named and left as it is, never taken for a new home.
 */
import { createHash, randomBytes } from "node:crypto"
import {
  accessSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fstatSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync
} from "node:fs"
import { homedir, hostname, tmpdir } from "node:os"
import { isAbsolute, join, resolve } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Sqlite from "./Sqlite.ts"
import { Context, Duration, Effect, Layer, Option, Schema, type Scope } from "effect"

export class HomeError extends Schema.TaggedError<HomeError>()("HomeError", {
  // foreign: the store file is a sound SQLite database that assay did not make (left as it is).
  reason: Schema.Literal("locked", "timeout", "damaged", "foreign", "read-only", "no-store", "io"),
  home: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

/** The store file of a home. */
export const storeFile = (home: string): string => join(resolve(home), "assay.sqlite")

/**
 * The application id every store assay makes carries in its header (`PRAGMA application_id`,
 * bytes 68-71): "asay". A store without it is assay's only if an older assay made it (its
 * migrations table and tables are there, see `identityOf`); any other SQLite file is refused.
 */
export const APPLICATION_ID = 0x61736179

/** The lock file of a home: present while a writer holds it. */
export const lockFile = (home: string): string => join(resolve(home), "assay.lock")

// ---------------------------------------------------------------------------------------------
// The writer's lock

/** Who holds a home's lock, as written in its lock file. */
export const Holder = Schema.Struct({
  pid: Schema.Number,
  host: Schema.String,
  since: Schema.String,
  command: Schema.String,
  // Tells this holder's file from a later one with the same pid: only its own is ever removed.
  token: Schema.String
})
export type Holder = typeof Holder.Type

const decodeHolder = Schema.decodeUnknownOption(Schema.parseJson(Holder))

export interface LockOptions {
  /** Wait for the lock: `true` without limit, a duration at most that long; absent, fail at once. */
  readonly wait?: boolean | Duration.DurationInput
  /** What the holder is doing, for the line another command prints (default: this command line). */
  readonly command?: string
  /** Called once when the lock is held by someone else and `wait` is set. */
  readonly onWait?: (holder: Holder | null) => Effect.Effect<void>
  /** How often a waiting taker looks again (default 500 ms). */
  readonly pollInterval?: Duration.DurationInput
}

/** The lock held by this process on a home, for as long as its layer's scope is open. */
export interface HomeLock {
  readonly home: string
  readonly holder: Holder
}
export const HomeLock = Context.GenericTag<HomeLock>("assay/HomeLock")

/** A file's text, or null when it is absent. */
const readIfPresent = (file: string): string | null => {
  try {
    return readFileSync(file, "utf8")
  } catch (e) {
    if (codeOf(e) === "ENOENT") return null
    throw e
  }
}

const codeOf = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined

/**
 * Whether the holder's process is certainly gone: only a process on this host can be asked; one
 * on another host (a shared folder) counts as alive, since nothing here can tell.
 */
const isGone = (holder: Holder): boolean => {
  if (holder.host !== hostname()) return false
  // Our own pid with a token this process never used: an earlier process that had the same pid
  // (a restarted container gives its command the same pid each time).
  if (holder.pid === process.pid) return !ownTokens.has(holder.token)
  try {
    process.kill(holder.pid, 0)
  } catch (e) {
    // EPERM: the process exists and belongs to someone else.
    return codeOf(e) === "ESRCH"
  }
  return isZombie(holder.pid)
}

/** A killed process that nobody has reaped yet still answers kill(pid, 0); on Linux, /proc tells. */
const isZombie = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
    return state === "Z" || state === "X"
  } catch {
    return false // no /proc (not Linux), or gone this instant: the next look decides
  }
}

/** Tokens of the locks this process holds or is taking. */
const ownTokens = new Set<string>()

/** Writes `text` to a new file whose name nobody else uses, durably, so that linking it publishes it whole. */
const writeFresh = (file: string, text: string): void => {
  const fd = openSync(file, "wx")
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Publishes `staged` as `target` if `target` is absent: a hard link fails with EEXIST when it is
 * present, so exactly one of several takers wins, and the file is never seen half-written. Where
 * hard links are not supported, an exclusive create is the next best thing.
 */
const publish = (staged: string, target: string, text: string): boolean => {
  try {
    linkSync(staged, target)
    return true
  } catch (e) {
    const code = codeOf(e)
    if (code === "EEXIST") return false
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "ENOSYS" && code !== "EOPNOTSUPP") throw e
  }
  try {
    writeFresh(target, text)
    return true
  } catch (e) {
    if (codeOf(e) === "EEXIST") return false
    throw e
  }
}

/** Removes `file` only if it still holds exactly `text` (another's lock is never removed). */
const removeIfUnchanged = (file: string, text: string): void => {
  if (readIfPresent(file) !== text) return
  try {
    unlinkSync(file)
  } catch (e) {
    if (codeOf(e) !== "ENOENT") throw e
  }
}

type Attempt =
  | { readonly _tag: "taken" }
  | { readonly _tag: "held"; readonly holder: Holder | null }
  | { readonly _tag: "retry" }

/**
 * One try at the lock. A lock whose process is gone is removed under a second, short-lived lock
 * (`assay.lock.breaking`) and only if it is still the same file, so of two takers that both saw
 * it stale, one removes it and then both race fairly for the free lock.
 */
const tryTake = (file: string, mine: Holder): Attempt => {
  const text = JSON.stringify(mine)
  const staged = `${file}.${mine.token}`
  writeFresh(staged, text)
  try {
    if (publish(staged, file, text)) return { _tag: "taken" }
    const current = readIfPresent(file)
    if (current === null) return { _tag: "retry" } // released between our two steps
    const holder = Option.getOrNull(decodeHolder(current))
    if (holder === null || !isGone(holder)) return { _tag: "held", holder }
    const breaker = `${file}.breaking`
    if (!publish(staged, breaker, text)) {
      // Another taker is removing the stale lock right now (it takes microseconds). A breaker
      // left by a process killed in that instant is itself gone, and is removed the same way.
      const other = readIfPresent(breaker)
      const otherHolder = other === null ? null : Option.getOrNull(decodeHolder(other))
      if (other !== null && otherHolder !== null && isGone(otherHolder)) removeIfUnchanged(breaker, other)
      return { _tag: "retry" }
    }
    try {
      removeIfUnchanged(file, current)
    } finally {
      removeIfUnchanged(breaker, text)
    }
    return { _tag: "retry" }
  } finally {
    unlinkSync(staged)
  }
}

const describeHolder = (home: string, holder: Holder | null): string => {
  const file = lockFile(home)
  if (holder === null) {
    return `the home ${resolve(home)} has a lock file that cannot be read (${file}): if no assay command is writing this home, remove that file`
  }
  const where = holder.host === hostname() ? `pid ${holder.pid} on ${holder.host}` : `pid ${holder.pid} on another host, ${holder.host}`
  return `the home ${resolve(home)} is in use by \`${holder.command}\` (${where}, since ${holder.since}): ` +
    `add --wait to wait for it, or if that process is gone, remove ${file}`
}

/** Who holds a home's lock now, if anyone (null: free). A lock file that cannot be read is `{ unreadable }`. */
export const holderOf = (home: string): Effect.Effect<Holder | { readonly unreadable: string } | null, HomeError> =>
  Effect.try({
    try: () => {
      const text = readIfPresent(lockFile(home))
      if (text === null) return null
      return Option.getOrElse(decodeHolder(text), () => ({ unreadable: lockFile(home) }))
    },
    catch: (e) => new HomeError({ reason: "io", home: resolve(home), detail: `cannot read ${lockFile(home)}: ${String(e)}` })
  })

/** Removes a folder if it is empty; one that is not (a store made, another taker's lock) stays, as it should. */
const removeIfEmpty = (dir: string): void => {
  try {
    rmdirSync(dir)
  } catch (e) {
    if (codeOf(e) !== "ENOTEMPTY" && codeOf(e) !== "EEXIST" && codeOf(e) !== "ENOENT") throw e
  }
}

/**
 * Takes the writer's lock on a home (creating the folder) until the scope closes. Held by a live
 * process, it fails at once with a line naming that process, or waits when `wait` says so. The
 * lock of a process that is gone is taken over. Released when the scope closes (which includes
 * the interruption that SIGINT and SIGTERM cause under NodeRuntime.runMain), and, as a last
 * resort, when the process exits without closing it.
 */
export const lock = (home: string, options: LockOptions = {}): Effect.Effect<Holder, HomeError, Scope.Scope> => {
  const dir = resolve(home)
  const file = lockFile(dir)
  const io = (doing: string) => (e: unknown) =>
    codeOf(e) === "EROFS" || codeOf(e) === "EACCES" || codeOf(e) === "EPERM"
      ? new HomeError({ reason: "read-only", home: dir, detail: `the home ${dir} is not writable (${codeOf(e)}), so nothing can run in it; plan, report, replay and view can still read it` })
      : new HomeError({ reason: "io", home: dir, detail: `${doing} ${file}: ${String(e)}` })
  const base = {
    pid: process.pid,
    host: hostname(),
    command: options.command ?? ["assay", ...process.argv.slice(2)].join(" "),
    token: randomBytes(8).toString("hex")
  }
  const interval = options.pollInterval ?? Duration.millis(500)
  const deadline = options.wait === undefined || options.wait === false
    ? null
    : options.wait === true
    ? Number.POSITIVE_INFINITY
    : Date.now() + Duration.toMillis(options.wait)

  // Whether this lock made the home's folder: one left empty on release (the command stopped
  // before its store was made) goes with it, so no empty home remains to be taken for a run's.
  let created = false
  const take = Effect.gen(function*() {
    ownTokens.add(base.token)
    const existed = existsSync(dir)
    created = !existed
    yield* Effect.try({
      try: () => mkdirSync(dir, { recursive: true }),
      catch: (e) =>
        existed ? io("cannot create the home for")(e) : new HomeError({ reason: "io", home: dir, detail: `cannot create the home ${dir} (${codeOf(e)}): give --home a folder you can write` })
    })
    let told = false
    let retries = 0
    for (;;) {
      const mine: Holder = { ...base, since: new Date().toISOString() }
      const attempt = yield* Effect.try({ try: () => tryTake(file, mine), catch: io("cannot take the lock") })
      if (attempt._tag === "taken") return mine
      if (attempt._tag === "retry") {
        // A release or a takeover happened between two steps; it settles within milliseconds.
        if (++retries > 200) return yield* new HomeError({ reason: "io", home: dir, detail: `cannot take the lock ${file}: it keeps changing` })
        yield* Effect.sleep(Duration.millis(5))
        continue
      }
      if (deadline === null) return yield* new HomeError({ reason: "locked", home: dir, detail: describeHolder(dir, attempt.holder) })
      if (Date.now() >= deadline) {
        return yield* new HomeError({ reason: "timeout", home: dir, detail: `gave up waiting: ${describeHolder(dir, attempt.holder)}` })
      }
      if (!told && options.onWait) yield* options.onWait(attempt.holder)
      told = true
      retries = 0
      // The acquisition is uninterruptible (acquireRelease), but not its waits: nothing is held
      // while it waits, and Ctrl-C must end a command waiting for another's lock.
      yield* Effect.interruptible(Effect.sleep(Duration.min(Duration.decode(interval), Duration.millis(Math.max(1, deadline - Date.now())))))
    }
  })

  return Effect.acquireRelease(
    Effect.tap(Effect.onError(take, () => Effect.sync(() => ownTokens.delete(base.token))), (mine) =>
      Effect.sync(() => {
        const text = JSON.stringify(mine)
        // On process exit with the scope never closed (process.exit mid-run), the lock goes
        // with the process even where its pid cannot be checked (another host).
        exitHooks.set(mine.token, () => removeIfUnchanged(file, text))
        if (exitHooks.size === 1) {
          process.on("exit", runExitHooks)
          for (const signal of fatalSignals) process.prependListener(signal, onFatalSignal)
        }
      })),
    (mine) =>
      Effect.sync(() => {
        exitHooks.delete(mine.token)
        ownTokens.delete(mine.token)
        if (exitHooks.size === 0) {
          process.removeListener("exit", runExitHooks)
          for (const signal of fatalSignals) process.removeListener(signal, onFatalSignal)
        }
      }).pipe(
        Effect.zipRight(Effect.try({ try: () => removeIfUnchanged(file, JSON.stringify(mine)), catch: io("cannot release the lock") })),
        Effect.zipRight(Effect.try({ try: () => created && removeIfEmpty(dir), catch: io("cannot remove the empty home") })),
        // The scope is closing whatever happens; a lock left behind is taken over by the next taker's pid check.
        Effect.catchAll((e) => Effect.logWarning(e.message))
      )
  )
}

const exitHooks = new Map<string, () => void>()
const runExitHooks = () => {
  for (const hook of exitHooks.values()) {
    try {
      hook()
    } catch {
      // The process is exiting: there is no one left to tell, and the next taker's pid check covers it.
    }
  }
}

/** The signals whose default action ends the process without its "exit" event. */
const fatalSignals = ["SIGINT", "SIGTERM", "SIGHUP"] as const

/**
 * Runs first on each of those signals while a lock is held. Another listener (runMain's, which
 * interrupts the program so that the lock's scope closes) handles the first Ctrl-C and then lets
 * go; a second Ctrl-C a few milliseconds later, or a SIGHUP nobody listens to, would find no
 * listener but this one, and Node's default action would end the process with the lock left
 * behind. So when nobody else listens, the locks are removed here and the signal is raised again
 * with its default action: the process ends as it would have, without the lock.
 */
const onFatalSignal = (signal: NodeJS.Signals) => {
  if (process.listenerCount(signal) > 1) return
  runExitHooks()
  exitHooks.clear()
  for (const s of fatalSignals) process.removeListener(s, onFatalSignal)
  process.removeListener("exit", runExitHooks)
  process.kill(process.pid, signal)
}

/** The lock as a layer: the home is this process's to write for the layer's lifetime. */
export const layerLock = (home: string, options: LockOptions = {}): Layer.Layer<HomeLock, HomeError> =>
  Layer.scoped(HomeLock, Effect.map(lock(home, options), (holder) => ({ home: resolve(home), holder })))

// ---------------------------------------------------------------------------------------------
// The store file

/** How the store of a home is to be opened, once its file has been found sound. */
export interface StoreAccess {
  /** The store file of the home. */
  readonly file: string
  /** What SQLite opens: the store file, or a snapshot of it when a read-only home cannot be opened in place. */
  readonly filename: string
  readonly readonly: boolean
}

const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1")
const RECOVERY = "restore it from a backup, or move it aside to start a new home"

const damaged = (dir: string, file: string, problem: string) =>
  new HomeError({ reason: "damaged", home: dir, detail: `the store ${file} ${problem}: ${RECOVERY}; nothing was written` })

const foreign = (dir: string, file: string) =>
  new HomeError({
    reason: "foreign",
    home: dir,
    detail: `the store ${file} is a SQLite database that assay did not make: pass another --home, or move that file aside; nothing was written`
  })

const sizeOf = (file: string): number => {
  try {
    return statSync(file).size
  } catch (e) {
    if (codeOf(e) === "ENOENT") return 0
    throw e
  }
}

const writable = (path: string): boolean => {
  try {
    accessSync(path, constants.W_OK)
    return true
  } catch {
    return false // EACCES, EROFS, EPERM: all mean this process cannot write there
  }
}

/**
 * What the first 100 bytes and the size of the file say, before SQLite sees it: an empty or
 * foreign file would otherwise be opened as a new database, and a truncated one read as shorter.
 * Null when nothing is wrong.
 */
const problemOfHeader = (file: string): { readonly problem: string | null; readonly applicationId: number } => {
  const fd = openSync(file, "r")
  try {
    const problem = (p: string | null) => ({ problem: p, applicationId: p === null ? header.readUInt32BE(68) : 0 })
    const size = fstatSync(fd).size
    const header = Buffer.alloc(100)
    if (size === 0) return problem("is empty")
    const read = size >= 100 ? readSync(fd, header, 0, 100, 0) : 0
    if (read < 100 || !header.subarray(0, 16).equals(SQLITE_HEADER)) return problem("is not a SQLite database")
    const rawPageSize = header.readUInt16BE(16)
    const pageSize = rawPageSize === 1 ? 65536 : rawPageSize
    if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) return problem("is not a SQLite database (its header is damaged)")
    if (size % pageSize !== 0) return problem(`is truncated (${size} bytes is not a whole number of ${pageSize}-byte pages)`)
    // The page count in the header is valid only while its version number matches the change counter.
    const pages = header.readUInt32BE(28)
    const countValid = header.readUInt32BE(92) === header.readUInt32BE(24) && pages > 0
    // With a write-ahead log, the file may be mid-checkpoint and legitimately shorter for a moment.
    if (countValid && sizeOf(`${file}-wal`) === 0 && size < pages * pageSize) {
      return problem(`is truncated (${size / pageSize} of its ${pages} pages)`)
    }
    return problem(null)
  } finally {
    closeSync(fd)
  }
}

/** Whose a sound SQLite file is: assay's (its application id, or an older assay's tables), or another program's. */
type Identity = "assay" | "foreign"

type Probe =
  | { readonly _tag: "sound"; readonly identity: Identity }
  | { readonly _tag: "damaged"; readonly problem: string }
  | { readonly _tag: "cannot-open" }

/** The SQLite error code (SQLITE_CORRUPT, ...) behind a failure or a defect, if there is one. */
const sqliteCodeOf = (e: unknown): string | undefined => {
  const direct = codeOf(e)
  if (direct !== undefined) return direct
  return typeof e === "object" && e !== null && "cause" in e ? codeOf(e.cause) : undefined
}

const probeOutcome = (e: unknown): Effect.Effect<Probe, unknown> => {
  const code = sqliteCodeOf(e)
  // SQLITE_READONLY_DIRECTORY and kin: a WAL store in a folder this process cannot write, whose
  // -shm file SQLite can neither find nor make. (better-sqlite3 is built without URI filenames, so
  // `?immutable=1` is not there to ask for.)
  if (code === "SQLITE_CANTOPEN" || code?.startsWith("SQLITE_READONLY") === true) return Effect.succeed({ _tag: "cannot-open" })
  if (code !== undefined && (code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_NOTADB"))) {
    const cause = typeof e === "object" && e !== null && "cause" in e && e.cause instanceof Error ? e.cause : e
    return Effect.succeed({ _tag: "damaged", problem: `is corrupt: ${cause instanceof Error ? cause.message : String(cause)}` })
  }
  return Effect.fail(e)
}

/**
 * Whose the open database is: assay's application id, or, without one, the tables an older assay
 * made (its migrations, the first of them its own, and the experiments, runs and attempts tables).
 */
const identityOf = (sql: SqlClient.SqlClient): Effect.Effect<Identity, unknown> =>
  Effect.gen(function*() {
    const id = yield* sql.unsafe<{ application_id: number }>("PRAGMA application_id")
    if (Number(id[0]?.application_id ?? 0) === APPLICATION_ID) return "assay"
    const tables = new Set((yield* sql.unsafe<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")).map((r) => r.name))
    if (!["effect_sql_migrations", "experiments", "runs", "attempts"].every((t) => tables.has(t))) return "foreign"
    const first = yield* sql.unsafe<{ name: string }>("SELECT name FROM effect_sql_migrations WHERE migration_id = 1")
    return first[0]?.name === "init" ? "assay" : "foreign"
  })

/**
 * Opens the file read-only and runs `PRAGMA quick_check`, which reads every page, then tells whose
 * it is. The client is opened without switching to WAL (that would write the header), and closed
 * before returning.
 */
const probe = (filename: string): Effect.Effect<Probe, unknown> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ quick_check: string }>("PRAGMA quick_check")
    const first = rows[0]?.quick_check ?? "no answer"
    if (first === "ok") return { _tag: "sound" as const, identity: yield* identityOf(sql) }
    // SQLite's first finding, on one line: "*** in database main ***\nTree 6 page 6: ...".
    const finding = first.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("***")).join("; ")
    return { _tag: "damaged" as const, problem: `is corrupt: ${finding || first.replaceAll("\n", " ")}` }
  }).pipe(
    Effect.provide(Sqlite.layer({ filename, readonly: true, disableWAL: true })),
    Effect.catchAll(probeOutcome),
    // better-sqlite3 throws from its constructor, which the client's layer turns into a defect.
    Effect.catchAllDefect(probeOutcome)
  )

// ---------------------------------------------------------------------------------------------
// The full check, only when the store changed since it was last known sound
//
// `PRAGMA quick_check` reads every page: a few hundred milliseconds on a store of 10,000 cells,
// paid by every command. So a writer notes the file's state (device, inode, size, modification
// and change times, to the nanosecond) once its connection has closed with the log checkpointed,
// and the next open that finds the file in exactly that state, with no log content beside it,
// checks only the header. Anything else that touched the file since (a copy, a truncation, bytes
// written, even with the modification time put back: the change time cannot be) makes the next
// open run the full check again. The notes live in the user's cache folder, not in the home, so a
// home holds only its store and its lock; a lost note costs one full check.

/** The folder of the notes: `$XDG_CACHE_HOME/assay/store-checks` (`~/.cache/...` by default). */
const checksFolder = (): string => {
  const xdg = process.env["XDG_CACHE_HOME"]
  const cache = xdg !== undefined && xdg !== "" && isAbsolute(xdg) ? xdg : join(process.env["HOME"] || homedir(), ".cache")
  return join(cache, "assay", "store-checks")
}

const noteFile = (file: string): string => join(checksFolder(), `${createHash("sha256").update(file).digest("hex").slice(0, 32)}.json`)

/** The file's state as a note records it, or null when it has log content beside it (a writer is mid-way, or crashed). */
const stateOf = (file: string): string | null => {
  if (sizeOf(`${file}-wal`) > 0) return null
  const s = statSync(file, { bigint: true })
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`
}

/** Whether the store is in the state its last note recorded (so it was sound then, and nothing has touched it). */
const unchangedSinceSound = (file: string): boolean => {
  try {
    const note = JSON.parse(readFileSync(noteFile(file), "utf8")) as { file?: unknown; state?: unknown }
    const state = stateOf(file)
    return state !== null && note.file === file && note.state === state
  } catch {
    return false // no note, or one that cannot be read: the full check decides
  }
}

/** Notes the store's state after a writer closed it; old notes of stores that are gone are dropped. */
const noteSound = (file: string): void => {
  try {
    const state = stateOf(file)
    if (state === null) return
    const folder = checksFolder()
    mkdirSync(folder, { recursive: true })
    const target = noteFile(file)
    const staged = `${target}.${process.pid}-${randomBytes(4).toString("hex")}`
    writeFileSync(staged, JSON.stringify({ file, state }))
    renameSync(staged, target)
    const notes = readdirSync(folder)
    if (notes.length > 256) {
      for (const name of notes) {
        const path = join(folder, name)
        const noted = (JSON.parse(readFileSync(path, "utf8")) as { file?: unknown }).file
        if (typeof noted !== "string" || !existsSync(noted)) rmSync(path, { force: true })
      }
    }
  } catch {
    // A note that cannot be written (a read-only cache folder, a race with another writer's
    // pruning) only means the next open runs the full check.
  }
}

/** A new, empty store made aside and linked into place, so the store file is never seen empty. */
const createStore = (file: string): Effect.Effect<void, unknown> => {
  const staged = `${file}.new-${process.pid}-${randomBytes(4).toString("hex")}`
  const removeStaged = Effect.sync(() => [staged, `${staged}-wal`, `${staged}-shm`].forEach((f) => rmSync(f, { force: true })))
  return Effect.gen(function*() {
    // The client switches the new file to WAL and marks it as assay's, and closes (checkpointing)
    // before it is linked.
    yield* Effect.provide(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`PRAGMA application_id = ${APPLICATION_ID}`)),
      Sqlite.layer({ filename: staged })
    )
    yield* Effect.try(() => {
      try {
        linkSync(staged, file)
      } catch (e) {
        // Another process made the store first: theirs is used.
        if (codeOf(e) !== "EEXIST") throw e
      }
    })
  }).pipe(Effect.catchAllDefect(Effect.fail), Effect.ensuring(removeStaged))
}

/**
 * Finds how a home's store can be opened, or why it cannot: absent (created, unless read-only),
 * empty, not SQLite, truncated, corrupt, or a SQLite database that is not assay's (named, and left
 * byte for byte as it was). Read-only
 * when asked, or when the folder or the file is not writable. A read-only home whose store
 * SQLite cannot open in place (a WAL store needs its `-shm` file, which a read-only folder
 * cannot get) is read from a snapshot in a temporary folder, removed when the scope closes.
 */
export const examineStore = (
  home: string,
  options: { readonly readOnly?: boolean } = {}
): Effect.Effect<StoreAccess, HomeError, Scope.Scope> =>
  Effect.gen(function*() {
    const dir = resolve(home)
    const file = storeFile(dir)
    const fail = (doing: string) => (e: unknown) => new HomeError({ reason: "io", home: dir, detail: `cannot ${doing} ${file}: ${String(e)}` })
    const present = existsSync(file)
    const readonly = options.readOnly === true || (existsSync(dir) && !writable(dir)) || (present && !writable(file))
    if (!present) {
      if (readonly) return yield* new HomeError({ reason: "no-store", home: dir, detail: `no assay store at ${file}` })
      yield* Effect.try(() => mkdirSync(dir, { recursive: true })).pipe(
        Effect.zipRight(createStore(file)),
        Effect.mapError(fail("create"))
      )
    }
    const header = yield* Effect.try({ try: () => problemOfHeader(file), catch: fail("read") })
    if (header.problem !== null) return yield* damaged(dir, file, header.problem)

    // A writer of a sound store notes its state once the connection has closed (this scope's
    // finalizers run in reverse order, so the client opened after this check has closed by then).
    const noteOnClose = readonly ? Effect.void : Effect.addFinalizer(() => Effect.sync(() => noteSound(file)))
    // Only a store marked as assay's in its header is taken on a note: an unmarked one is looked into.
    if (!readonly && header.applicationId === APPLICATION_ID && unchangedSinceSound(file)) {
      yield* noteOnClose
      return { file, filename: file, readonly }
    }

    const companions = [`${file}-wal`, `${file}-shm`]
    const before = companions.map(existsSync)
    const first = yield* probe(file).pipe(Effect.mapError(fail("check")))
    if (first._tag === "damaged" || (first._tag === "sound" && first.identity === "foreign")) {
      // The read-only check made these beside a damaged or foreign file: take them away again, as
      // nothing may be left behind. (Only files it made, and only while the log is empty.)
      const logEmpty = sizeOf(`${file}-wal`) === 0
      yield* Effect.try({
        try: () => companions.forEach((f, i) => logEmpty && !before[i] && rmSync(f, { force: true })),
        catch: fail("clean up beside")
      })
      return yield* first._tag === "damaged" ? damaged(dir, file, first.problem) : foreign(dir, file)
    }
    if (first._tag === "sound") {
      yield* noteOnClose
      return { file, filename: file, readonly }
    }
    // SQLite cannot open it in place: a read-only home with no -shm file beside its store.
    if (!readonly) return yield* new HomeError({ reason: "io", home: dir, detail: `cannot open ${file}` })
    if (existsSync(`${file}-wal`)) {
      return yield* new HomeError({
        reason: "read-only",
        home: dir,
        detail: `the store ${file} has a write-ahead log but no -shm file, and the home is read-only: copy the home somewhere writable to read it`
      })
    }
    // No log, so no writer: a copy of the file alone is the whole store.
    const copy = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const folder = mkdtempSync(join(tmpdir(), "assay-readonly-"))
          copyFileSync(file, join(folder, "assay.sqlite"))
          return folder
        },
        catch: fail("copy")
      }),
      (folder) => Effect.sync(() => rmSync(folder, { recursive: true, force: true }))
    )
    const filename = join(copy, "assay.sqlite")
    const second = yield* probe(filename).pipe(Effect.mapError(fail("check")))
    if (second._tag === "damaged") return yield* damaged(dir, file, second.problem)
    if (second._tag === "sound" && second.identity === "foreign") return yield* foreign(dir, file)
    if (second._tag === "cannot-open") return yield* new HomeError({ reason: "io", home: dir, detail: `cannot open ${file}` })
    return { file, filename, readonly: true }
  })
