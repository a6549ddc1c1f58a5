/**
 * Where benchmark data lives: one folder, `ASSAY_DATA_DIR` when it is set, else the user's cache,
 * `$XDG_CACHE_HOME/assay/data` (`~/.cache/assay/data` when XDG_CACHE_HOME is not set). The data is
 * a copy of pinned upstream files, the same for every clone and every home, so it is kept once per
 * user rather than per checkout. `assay data pull` writes there and every provider reads there,
 * both through `dataRoot`, so the advice of a missing-data error is the command that fixes it.
 */
import { isAscii } from "node:buffer"
import { randomBytes } from "node:crypto"
import { type BigIntStats, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, isAbsolute, join, resolve } from "node:path"
import { crc32 } from "node:zlib"
import { Config, Option, Record } from "effect"

/** The variables the data folder depends on. */
export interface DataEnv {
  readonly ASSAY_DATA_DIR?: string | undefined
  readonly XDG_CACHE_HOME?: string | undefined
  readonly HOME?: string | undefined
}

const nonEmpty = (s: string | undefined): string | undefined => (s === undefined || s === "" ? undefined : s)

/**
 * `$XDG_CACHE_HOME/assay/NAME` (`~/.cache/assay/NAME` when XDG_CACHE_HOME is not set or not
 * absolute, as the XDG spec says): the user's cache folders, the data's default one among them.
 */
export const userCacheFolder = (name: string, env: DataEnv = process.env): string => {
  const xdg = nonEmpty(env.XDG_CACHE_HOME)
  const cache = xdg !== undefined && isAbsolute(xdg) ? xdg : join(nonEmpty(env.HOME) ?? homedir(), ".cache")
  return resolve(cache, "assay", name)
}

/** The folder used when ASSAY_DATA_DIR is not set. */
export const defaultDataRoot = (env: DataEnv = process.env): string => userCacheFolder("data", env)

/** The data folder, absolute: `ASSAY_DATA_DIR` (an empty value counts as unset), else `defaultDataRoot`. */
export const dataRoot = (env: DataEnv = process.env): string => {
  const set = nonEmpty(env.ASSAY_DATA_DIR)
  return set !== undefined ? resolve(set) : defaultDataRoot(env)
}

/** The variables of `DataEnv`, read through Effect's Config (so a test can give them with a ConfigProvider). */
export const dataEnvConfig: Config.Config<DataEnv> = Config.all({
  ASSAY_DATA_DIR: Config.option(Config.string("ASSAY_DATA_DIR")),
  XDG_CACHE_HOME: Config.option(Config.string("XDG_CACHE_HOME")),
  HOME: Config.option(Config.string("HOME"))
}).pipe(Config.map((c) => Record.map(c, Option.getOrUndefined)))

/** `dataRoot` of `dataEnvConfig`. */
export const dataRootConfig: Config.Config<string> = Config.map(dataEnvConfig, dataRoot)

/** The folder and why it is that one: "/x (ASSAY_DATA_DIR)" or "/home/u/.cache/assay/data (the default; ASSAY_DATA_DIR is not set)". */
export const describeDataRoot = (root: string, env: DataEnv = process.env): string =>
  root !== dataRoot(env)
    ? root
    : nonEmpty(env.ASSAY_DATA_DIR) !== undefined
    ? `${root} (ASSAY_DATA_DIR)`
    : `${root} (the default; ASSAY_DATA_DIR is not set)`

/** How a benchmark's data is pulled: by URL, or only from a local copy (some files have no upstream blob). */
export type PullKind = "download" | "local-copy"

/**
 * How the command names benchmarks loaded by path: `assay data pull` takes the path, not the
 * provider's name. Set by the command as it loads one; a benchmark not in it goes by its name.
 */
const pullNames = new Map<string, string>()
export const namedForPull = (benchmark: string, asTyped: string): void => {
  pullNames.set(benchmark, asTyped)
}

/** The command that puts a benchmark's files into the data folder. */
export const pullCommand = (benchmark: string, kind: PullKind): string => {
  const name = pullNames.get(benchmark) ?? benchmark
  return kind === "download"
    ? `\`assay data pull ${name}\` (or \`assay data pull ${name} --from DIR\` with DIR a local copy laid out like the data folder)`
    : `\`assay data pull ${name} --from DIR\` with DIR a local copy laid out like the data folder (some of its files are made from upstream code and have no download URL)`
}

/**
 * What a provider says when a file is missing: the folder it looked in and the pull that fills it.
 * `root` is the folder looked in; when it is not `dataRoot()` (a caller's own folder) the pull
 * advice also says to point ASSAY_DATA_DIR at the folder pulled into.
 */
export const missingDataMessage = (benchmark: string, kind: PullKind, file: string, root: string, env: DataEnv = process.env): string =>
  `${file} is missing from the data folder ${describeDataRoot(root, env)}: run ${pullCommand(benchmark, kind)}` +
  (root === dataRoot(env) ? "" : `, with ASSAY_DATA_DIR=${root}`)

// ---------------------------------------------------------------------------------------------
// What a provider keeps of its data between processes, in the user's cache folder (the data
// folder may be read-only): forms of a data file prepared for a fast load, keyed by the file's
// sha256, and notes of files already verified. Each is checked before use (its own checksum, its
// key, the noted file's exact state), so a damaged, stale or foreign entry is never used: the
// caller then does the full work, as if there were none. A lost entry costs that work once.

// No sha256 on the way to an entry: its first use in a process costs ~0.5 ms, a good part of a
// load from a prepared form. A CRC-32 catches the damage a cache meets (a truncated or altered
// file); an entry names its key or path and is checked against it, so names that collide cost a
// miss, never a wrong entry.
const hex8 = (n: number): string => (n >>> 0).toString(16).padStart(8, "0")
const checksum = (body: string | Uint8Array): string => hex8(crc32(body))
/** A file name for the entry of `text`: 64 bits, a CRC-32 and an FNV-1a of its UTF-16 code units. */
const entryName = (text: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return hex8(crc32(text)) + hex8(h)
}
// Entry names as `entryName` makes them (16 hex digits), and as the scheme before it did (32).
const ENTRY_NAME = "[0-9a-f]{16}"
const OLD_ENTRY_NAME = "[0-9a-f]{32}"

/** Writes `text` to `target` through a staged file, so a reader sees the old entry or the new one, whole. */
const writeWhole = (target: string, text: string): void => {
  const staged = `${target}.${process.pid}-${randomBytes(4).toString("hex")}`
  try {
    mkdirSync(join(target, ".."), { recursive: true })
    writeFileSync(staged, text)
    renameSync(staged, target)
  } catch {
    // A cache that cannot be written (read-only, full, a race) only means the next load does the full work.
    removeEntry(staged)
  }
}

/** Removes a cache entry; one that cannot be removed (its folder read-only) stays, taking only room. */
const removeEntry = (path: string): void => {
  try {
    rmSync(path, { force: true })
  } catch {
    // Left in place: a cache entry never has to go for the work to go on.
  }
}

const preparedFile = (kind: string, key: string, env: DataEnv): string =>
  join(userCacheFolder("prepared", env), `${kind}-${entryName(key)}.json`)

/**
 * The prepared form of kind `kind` stored under `key` (which names everything the form depends
 * on: the data file's sha256, the form's version), or undefined when there is none, it is
 * damaged (its checksum fails) or it was stored under another key.
 */
export const readPrepared = (kind: string, key: string, env: DataEnv = process.env): unknown => {
  let bytes: Buffer
  try {
    bytes = readFileSync(preparedFile(kind, key, env))
  } catch {
    return undefined // none yet
  }
  // The checksum is of the body's bytes, so it is checked before the body is decoded.
  const body = bytes.subarray(9)
  if (bytes.length < 9 || bytes[8] !== 0x0a || bytes.toString("latin1", 0, 8) !== checksum(body)) return undefined
  try {
    // An ASCII body (as writePrepared writes) decodes as latin1, several times faster than UTF-8
    // for a large form; one with other bytes (an older writer's) is decoded as UTF-8.
    const stored = JSON.parse(isAscii(body) ? body.toString("latin1") : body.toString("utf8")) as {
      readonly key?: unknown
      readonly form?: unknown
    }
    return stored.key === key ? stored.form : undefined
  } catch {
    return undefined // cannot happen with a matching checksum, unless written so by hand
  }
}

// JSON text with every non-ASCII code unit written as a \u escape: the same value to JSON.parse,
// and a one-byte text for the reader (see readPrepared).
const asciiJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

// Forms of a kind kept besides the one just written: another checkout or version of assay may
// share the cache and still read its own, and every older one is dead weight (a BFCL form is 5 MB).
const KEEP_OTHERS = 2

/**
 * Stores a prepared form (any JSON value) under `key`, and removes the kind's older forms but
 * the newest `KEEP_OTHERS`: every change to a form's sources or data makes a new key. Failing to
 * store or to remove is not an error.
 */
export const writePrepared = (kind: string, key: string, form: unknown, env: DataEnv = process.env): void => {
  const body = asciiJson({ key, form })
  const target = preparedFile(kind, key, env)
  writeWhole(target, `${checksum(body)}\n${body}`)
  pruneForms(kind, target)
}

const pruneForms = (kind: string, kept: string): void => {
  const folder = dirname(kept)
  const name = new RegExp(`^${kind.replace(/[^A-Za-z0-9]/g, "\\$&")}-(?:${ENTRY_NAME}|${OLD_ENTRY_NAME})\\.json$`)
  let others: Array<{ readonly path: string; readonly mtimeMs: number }>
  try {
    others = readdirSync(folder)
      .filter((f) => name.test(f) && join(folder, f) !== kept)
      .map((f) => ({ path: join(folder, f), mtimeMs: statSync(join(folder, f)).mtimeMs }))
  } catch {
    return // the folder cannot be listed (or an entry went meanwhile): left for the next write
  }
  others.sort((a, b) => b.mtimeMs - a.mtimeMs)
  for (const old of others.slice(KEEP_OTHERS)) removeEntry(old.path)
}

/** A file's state as a note records it: device, inode, size, modification and change times (ns). */
const stateText = (s: BigIntStats): string => `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`

const stateOf = (path: string): string | undefined => {
  try {
    return stateText(statSync(path, { bigint: true }))
  } catch {
    return undefined
  }
}

const noteFile = (path: string, env: DataEnv): string => join(userCacheFolder("data-checks", env), `${entryName(path)}.json`)

/**
 * The sha256 noted for the file at `path` (absolute) when it was last hashed, if the file is in
 * exactly the state it was in then: anything that touched it since (a copy, a write, even with
 * the modification time put back: the change time cannot be) makes this undefined.
 *
 * A file's times come from a clock that ticks coarsely (a few ms on Linux, up to seconds on some
 * file systems), so a write in the same tick as the note leaves the state the note recorded.
 * As git does with its index, a note is used only when it was written in a later tick than the
 * file's last change; a note that is not (racy) is ignored, so the file is hashed and noted again.
 */
export const notedSha256 = (path: string, env: DataEnv = process.env): string | undefined => {
  let file: BigIntStats
  let noteStats: BigIntStats
  let text: string
  try {
    file = statSync(path, { bigint: true })
    const notePath = noteFile(path, env)
    noteStats = statSync(notePath, { bigint: true })
    text = readFileSync(notePath, "utf8")
  } catch {
    return undefined // no file or no note: the caller hashes the file
  }
  const state = stateText(file)
  if (noteStats.mtimeNs <= file.mtimeNs || noteStats.mtimeNs <= file.ctimeNs) return undefined // racy
  try {
    const note = JSON.parse(text) as { path?: unknown; state?: unknown; sha256?: unknown }
    return note.path === path && note.state === state && typeof note.sha256 === "string" ? note.sha256 : undefined
  } catch {
    return undefined // a note that cannot be read: the caller hashes the file
  }
}

/**
 * Notes that the file at `path` has sha256 `hash`, with the state `stateBefore` it had before it
 * was read (so a change while it was read makes the note stale, not wrong).
 */
export const noteSha256 = (path: string, hash: string, stateBefore: string | undefined, env: DataEnv = process.env): void => {
  if (stateBefore === undefined || stateOf(path) !== stateBefore) return
  const note = noteFile(path, env)
  writeWhole(note, JSON.stringify({ path, state: stateBefore, sha256: hash }))
  sweepNotes(dirname(note))
}

// A note is named by its file's path, so a file hashed again replaces its note; only the notes of
// files that are gone (a removed clone's data folder, a test's copy) pile up, ~1,000 per data folder.
// Past this many notes, writing one removes those.
const NOTES_SWEPT_ABOVE = 4000

const NOTE = new RegExp(`^${ENTRY_NAME}\\.json$`)
const OLD_NOTE = new RegExp(`^${OLD_ENTRY_NAME}\\.json$`)

const sweepNotes = (folder: string): void => {
  let names: Array<string>
  try {
    names = readdirSync(folder)
  } catch {
    return // cannot be listed: left for the next note
  }
  if (names.length <= NOTES_SWEPT_ABOVE) return
  for (const name of names) {
    const note = join(folder, name)
    // A note of the naming before this one is never read now. A staged note (another process's,
    // about to be renamed into place) is left alone.
    if (OLD_NOTE.test(name)) {
      removeEntry(note)
      continue
    }
    if (!NOTE.test(name)) continue
    let path: unknown
    try {
      path = (JSON.parse(readFileSync(note, "utf8")) as { path?: unknown }).path
    } catch {
      path = undefined // unreadable (or being replaced): such a note is never used either
    }
    if (typeof path !== "string" || !existsSync(path)) removeEntry(note)
  }
}

/** The state `noteSha256` is given: take it before reading the file. */
export const fileState = (path: string): string | undefined => stateOf(path)
