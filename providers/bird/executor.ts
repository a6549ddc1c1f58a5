/**
 * Runs a pair's SQL the way upstream's `execute_sql` does, under upstream's timeout. better-sqlite3
 * cannot interrupt a running statement, so the statements run in a child Node process (one, kept
 * alive and reused) that is killed when the time is up, as `func_timeout` abandons the call. The
 * child opens each database read-only and returns every cell with its storage class (integers as
 * exact decimals, reals as round-trip text), so Python's int/float/text distinctions survive.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { join, sep } from "node:path"
import { Effect, Schema } from "effect"

/** One cell as the child reports it: `n` NULL, `i<decimal>` integer, `f<number>` real, `s<text>` text, `b<hex>` blob. */
export type CellToken = string
export type Rows = ReadonlyArray<ReadonlyArray<CellToken>>

/** A statement's outcome: its rows, or the error SQLite (or the binding) raised. */
export type StatementResult = { readonly rows: Rows } | { readonly error: string; readonly errorType: string }

export interface Execution {
  /** The statements' outcomes in order, up to and including the first error. */
  readonly results: ReadonlyArray<StatementResult>
  readonly timedOut: boolean
}

export class ExecutorError extends Schema.TaggedError<ExecutorError>()("ExecutorError", {
  detail: Schema.String
}) {
  override get message() {
    return `bird sql executor: ${this.detail}`
  }
}

/**
 * The functions of SQLite 3.40.1 as the oracle's Python `sqlite3` has them (`PRAGMA function_list`
 * of Debian's 3.40.1 build). A function a later engine has beyond these does not exist for the
 * grader: a query that names one fails when it is prepared, as on the oracle's engine.
 */
export const SQLITE_340_FUNCTIONS: ReadonlyArray<string> = [
  "->", "->>", "abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "avg", "bm25", "ceil",
  "ceiling", "changes", "char", "coalesce", "cos", "cosh", "count", "cume_dist", "current_date",
  "current_time", "current_timestamp", "date", "datetime", "degrees", "dense_rank", "exp", "first_value",
  "floor", "format", "fts3_tokenizer", "fts5", "fts5_source_id", "glob", "group_concat", "hex", "highlight",
  "ifnull", "iif", "instr", "json", "json_array", "json_array_length", "json_extract", "json_group_array",
  "json_group_object", "json_insert", "json_object", "json_patch", "json_quote", "json_remove",
  "json_replace", "json_set", "json_type", "json_valid", "julianday", "lag", "last_insert_rowid",
  "last_value", "lead", "length", "like", "likelihood", "likely", "ln", "load_extension", "log", "log10",
  "log2", "lower", "ltrim", "match", "matchinfo", "max", "min", "mod", "nth_value", "ntile", "nullif",
  "offsets", "optimize", "percent_rank", "pi", "pow", "power", "printf", "quote", "radians", "random",
  "randomblob", "rank", "replace", "round", "row_number", "rtreecheck", "rtreedepth", "rtreenode", "rtrim",
  "sign", "sin", "sinh", "snippet", "soundex", "sqlite_compileoption_get", "sqlite_compileoption_used",
  "sqlite_log", "sqlite_source_id", "sqlite_version", "sqrt", "strftime", "substr", "substring", "subtype",
  "sum", "tan", "tanh", "time", "total", "total_changes", "trim", "trunc", "typeof", "unicode", "unixepoch",
  "unlikely", "upper", "zeroblob"
]

/** Table-valued functions added after 3.40 (`PRAGMA function_list` does not list them). */
export const NEWER_TABLE_FUNCTIONS: ReadonlyArray<string> = ["jsonb_each", "jsonb_tree"]

/** Functions whose argument count 3.40 fixes and a later engine widened (3.48's iif, 3.45's json_valid). */
export const SQLITE_340_ARITY: Readonly<Record<string, number>> = { iif: 3, json_valid: 1 }

// The child program, plain JavaScript so it runs with `node -e` from the sources and from a build.
const CHILD = String.raw`
const Database = require(process.argv[1])
const FUNCTIONS_340 = new Set(${JSON.stringify(SQLITE_340_FUNCTIONS)})
const NEWER_TABLES = ${JSON.stringify(NEWER_TABLE_FUNCTIONS)}
const ARITY_340 = ${JSON.stringify(SQLITE_340_ARITY)}
// SQLite 3.40 (the oracle's engine) as far as results go: sum/avg/total add in plain doubles
// (3.43 made them compensated, which changes low bits), and functions added after 3.40 do not exist.
const INT = /^\s*[+-]?\d+\s*$/
const REAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/
const PREFIX = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/
const MAX = 9223372036854775807n, MIN = -9223372036854775808n
const numeric = (v) => {
  if (typeof v === "bigint") return { int: v }
  if (typeof v === "number") return { real: v }
  const text = Buffer.isBuffer(v) ? v.toString("utf8") : String(v)
  if (INT.test(text)) { const i = BigInt(text.trim()); if (i <= MAX && i >= MIN) return { int: i } }
  if (REAL.test(text)) return { real: Number(text.trim()) }
  const m = PREFIX.exec(text)
  return { real: m === null ? 0 : Number(m[0].trim()) }
}
const summer = (finish) => ({
  safeIntegers: true,
  deterministic: true,
  start: () => ({ cnt: 0, iSum: 0n, rSum: 0, approx: false, overflow: false }),
  step: (p, v) => {
    if (v === null) return p
    const n = numeric(v)
    p.cnt++
    if (n.int !== undefined) {
      p.rSum += Number(n.int)
      if (!p.approx && !p.overflow) { p.iSum += n.int; if (p.iSum > MAX || p.iSum < MIN) { p.approx = true; p.overflow = true } }
    } else { p.rSum += n.real; p.approx = true }
    return p
  },
  inverse: (p, v) => {
    if (v === null) return p
    const n = numeric(v)
    p.cnt--
    if (n.int !== undefined) { p.rSum -= Number(n.int); if (!p.approx) p.iSum -= n.int }
    else p.rSum -= n.real
    return p
  },
  result: finish
})
const sum = (p) => {
  if (p.cnt === 0) return null
  if (p.overflow) throw new Error("integer overflow")
  return p.approx ? p.rSum : p.iSum
}
const dbs = new Map()
const open = (path) => {
  let db = dbs.get(path)
  if (!db) {
    db = new Database(path, { readonly: true, fileMustExist: true })
    db.aggregate("sum", summer(sum))
    db.aggregate("avg", summer((p) => (p.cnt === 0 ? null : p.rSum / p.cnt)))
    db.aggregate("total", summer((p) => p.rSum))
    // Only ever prepared, in probes: the engine counts their arguments as 3.40 counts these functions'.
    for (const [name, arity] of Object.entries(ARITY_340)) {
      db.function(PLACEHOLDER + name, Object.defineProperty(() => null, "length", { value: arity }))
    }
    dbs.set(path, db)
  }
  return db
}
const cell = (v) => {
  if (v === null || v === undefined) return "n"
  if (typeof v === "bigint") return "i" + v.toString()
  if (typeof v === "number") return "f" + (Object.is(v, -0) ? "-0" : String(v))
  if (typeof v === "string") return "s" + v
  if (Buffer.isBuffer(v)) return "b" + v.toString("hex")
  return "s" + String(v)
}
// better-sqlite3 is built with SQLITE_DQS=0; Python's sqlite3 keeps SQLite's default, where a
// double-quoted name that is no column is a string literal. Emulated: on exactly SQLite's error
// for that case, the quoted name becomes a string literal and the statement is prepared again.
// SQLite before 3.41 words that error without the hint (an engine given by ASSAY_BIRD_SQLITE may be one).
const SQLITE_VERSION = new Database(":memory:").prepare("select sqlite_version()").pluck().get()
const DQS = Number(SQLITE_VERSION.split(".")[1]) >= 41
  ? /^no such column: "([\s\S]*)" - should this be a string literal in single-quotes\?$/
  : /^no such column: ([\s\S]*)$/
const run = (db, sql) => {
  for (let tries = 0; tries < 64; tries++) {
    const r = runOnce(db, sql)
    const m = r.error !== undefined ? DQS.exec(r.error) : null
    if (m === null) return r
    const quoted = '"' + m[1].replace(/"/g, '""') + '"'
    if (!sql.includes(quoted)) return r
    sql = sql.split(quoted).join("'" + m[1].replace(/'/g, "''") + "'")
  }
  return runOnce(db, sql)
}
// Python's sqlite3 allows a comment after the one statement ("SELECT 1; -- done"); better-sqlite3
// 8.1 (SQLite 3.40, the oracle's engine) refuses any tail but whitespace. On exactly that refusal,
// a trailing line comment after the last semicolon is dropped and the statement prepared again.
const TRAILING_COMMENT = /;[ \t\r\n]*--[^'"\n]*[ \t\r\n]*$/
const prepare = (db, sql) => {
  try { return db.prepare(sql) } catch (e) {
    if (e instanceof RangeError && /more than one statement/.test(e.message) && TRAILING_COMMENT.test(sql)) {
      return db.prepare(sql.replace(TRAILING_COMMENT, ";"))
    }
    throw e
  }
}
// A function SQLite 3.40 lacks must fail when the statement is prepared, as on the oracle's engine,
// even where it would never be called; and no stand-in may be registered for it, since a registered
// function exists. Which names a statement puts before "(" is read from its tokens (outside strings,
// quoted names and comments); whether the engine resolves one there (not a CTE's name, not in a CTE
// nobody reads) is left to the engine: a probe with each such name renamed to one that does not exist
// is prepared, and the engine's own "no such function" for the new name is 3.40's for the old.
const PLACEHOLDER = "assay_sqlite340_"
const ID_START = /[A-Za-z_\u0080-\uffff]/
const ID_PART = /[A-Za-z0-9_$\u0080-\uffff]/
const closing = { '"': '"', "\x60": "\x60", "[": "]" }
const namesBeforeParen = (sql) => {
  const found = []
  let last = null
  let i = 0
  while (i < sql.length) {
    const c = sql[i]
    if (c === "'" || c === '"' || c === "\x60" || c === "[") {
      const end = closing[c] ?? "'"
      let j = i + 1
      let text = ""
      while (j < sql.length) {
        if (sql[j] === end) { if (end !== "]" && sql[j + 1] === end) { text += end; j += 2; continue } break }
        text += sql[j++]
      }
      last = c === "'" ? null : { name: text, start: i, end: j + 1 }
      i = j + 1
    } else if (c === "-" && sql[i + 1] === "-") {
      const nl = sql.indexOf("\n", i)
      i = nl < 0 ? sql.length : nl + 1
    } else if (c === "/" && sql[i + 1] === "*") {
      const close = sql.indexOf("*/", i + 2)
      i = close < 0 ? sql.length : close + 2
    } else if (/\s/.test(c)) i++
    else if (ID_START.test(c)) {
      let j = i + 1
      while (j < sql.length && ID_PART.test(sql[j])) j++
      last = { name: sql.slice(i, j), start: i, end: j }
      i = j
    } else if (/[0-9.]/.test(c)) {
      let j = i + 1
      while (j < sql.length && /[0-9A-Za-z_.]/.test(sql[j])) j++
      last = null
      i = j
    } else {
      if (c === "(" && last !== null) found.push(last)
      last = null
      i++
    }
  }
  return found
}
let absent = null
const absentOn = (db) => {
  if (absent !== null) return absent
  const engine = new Map()
  for (const f of db.prepare("PRAGMA function_list").all()) {
    const name = f.name.toLowerCase()
    if (!name.startsWith(PLACEHOLDER)) engine.set(name, [...(engine.get(name) ?? []), f.narg])
  }
  const missing = new Set(NEWER_TABLES)
  for (const name of engine.keys()) if (!FUNCTIONS_340.has(name)) missing.add(name)
  // Only where this engine takes another count than 3.40 (on 3.40 itself, nothing to do).
  const arity = new Set(Object.keys(ARITY_340).filter((n) => (engine.get(n) ?? []).some((k) => k !== ARITY_340[n])))
  return (absent = { missing, arity })
}
const unknownTo340 = (db, sql) => {
  const { missing, arity } = absentOn(db)
  const calls = namesBeforeParen(sql).filter((t) => missing.has(t.name.toLowerCase()) || arity.has(t.name.toLowerCase()))
  if (calls.length === 0) return null
  let probe = sql
  for (let k = calls.length - 1; k >= 0; k--) {
    const t = calls[k]
    const lower = t.name.toLowerCase()
    const stand = missing.has(lower) ? PLACEHOLDER + "absent_" + k : PLACEHOLDER + lower
    probe = probe.slice(0, t.start) + stand + probe.slice(t.end)
  }
  try { prepare(db, probe); return null } catch (e) {
    const m = /^(no such function: |no such table: (?:main\.)?|wrong number of arguments to function )assay_sqlite340_(?:absent_(\d+)|(\w+))(\(\))?$/.exec(e.message)
    if (m === null) return null // another error: the statement itself says what it is
    const name = m[2] !== undefined ? calls[Number(m[2])].name : calls.find((t) => t.name.toLowerCase() === m[3]).name
    return { error: m[1] + name + (m[4] ?? ""), errorType: e.code || e.constructor.name }
  }
}
const runOnce = (db, sql) => {
  const refused = unknownTo340(db, sql)
  if (refused !== null) return refused
  let stmt
  try { stmt = prepare(db, sql) } catch (e) {
    // Python's sqlite3 runs empty and comment-only SQL and returns no rows.
    if (e instanceof RangeError && /contains no statements/.test(e.message)) return { rows: [] }
    return { error: e.message, errorType: e.code || e.constructor.name }
  }
  try {
    if (!stmt.reader) { stmt.run(); return { rows: [] } }
    stmt.safeIntegers(true)
    return { rows: stmt.raw(true).all().map((r) => r.map(cell)) }
  } catch (e) { return { error: e.message, errorType: e.code || e.constructor.name } }
}
process.stdout.write(JSON.stringify({ ready: true, sqlite: SQLITE_VERSION }) + "\n")
let buffer = ""
process.stdin.setEncoding("utf8")
process.stdin.on("data", (chunk) => {
  buffer += chunk
  let nl
  while ((nl = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, nl); buffer = buffer.slice(nl + 1)
    const req = JSON.parse(line)
    const results = []
    try {
      const db = open(req.db)
      for (const sql of req.sqls) { const r = run(db, sql); results.push(r); if (r.error !== undefined) break }
    } catch (e) { results.push({ error: e.message, errorType: e.code || e.constructor.name }) }
    process.stdout.write(JSON.stringify({ id: req.id, results }) + "\n")
  }
})
`

interface Child {
  readonly process: ChildProcess
  readonly pending: Map<number, (results: ReadonlyArray<StatementResult>) => void>
  /** Resolves once the child has loaded better-sqlite3: its start is not part of any pair's time. */
  readonly ready: Promise<boolean>
}

const STARTUP_MS = 60_000

let child: Child | undefined
let nextId = 1

/**
 * Another better-sqlite3 for the grader, by its folder (e.g. one bundling SQLite 3.40, the oracle's;
 * see the README's "Why idx 244 differs"). Unset: the oracle's engine where tools/bird-sqlite
 * installed it in this checkout, else the project's own.
 */
export const ENGINE_ENV = "ASSAY_BIRD_SQLITE"

const betterSqlite3 = (): string => {
  const other = process.env[ENGINE_ENV]
  if (other !== undefined && other !== "") return other
  const own = createRequire(import.meta.url).resolve("better-sqlite3")
  // The checkout's root is the folder holding the node_modules the project's own engine is in
  // (so from the sources and from the command's bundle alike); an installed package has no tools/.
  const at = own.lastIndexOf(`${sep}node_modules${sep}`)
  const oracle = at < 0 ? undefined : join(own.slice(0, at), "tools", "bird-sqlite", "node_modules", "better-sqlite3")
  return oracle !== undefined && existsSync(join(oracle, "build", "Release", "better_sqlite3.node")) ? oracle : own
}

let engineVersion: string | null = null

/** The SQLite version of the executor's engine, once it has started (null before). */
export const engine = (): { readonly sqlite: string | null; readonly module: string } => ({ sqlite: engineVersion, module: betterSqlite3() })

/** Whether a SQLite version is the oracle's line, 3.40 (3.40.1 graded upstream's verdicts). */
export const isOracleEngine = (sqlite: string | null): boolean => sqlite?.startsWith("3.40.") === true

/** How to give the grader the oracle's SQLite: the checkout's tool when there is one, else by hand. */
export const oracleEngineHint = (): string => {
  const own = createRequire(import.meta.url).resolve("better-sqlite3")
  const at = own.lastIndexOf(`${sep}node_modules${sep}`)
  const tool = at < 0 ? undefined : join(own.slice(0, at), "tools", "bird-sqlite", "ensure.mjs")
  const byHand = `${ENGINE_ENV}=DIR (DIR: a better-sqlite3 8.1.0 install, which bundles it)`
  return tool !== undefined && existsSync(tool)
    ? `get it with \`node ${tool}\` (builds it once: a few minutes, npm's registry, a C/C++ toolchain) or ${byHand}`
    : `get it with ${byHand}`
}

const startChild = (): Child => {
  // TZ=UTC as upstream's oracle ran: 'localtime' modifiers then read UTC.
  const proc = spawn(process.execPath, ["-e", CHILD, betterSqlite3()], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, TZ: "UTC" }
  })
  const pending = new Map<number, (results: ReadonlyArray<StatementResult>) => void>()
  let isReady: (ok: boolean) => void = () => {}
  const ready = new Promise<boolean>((resolve) => (isReady = resolve))
  const self: Child = { process: proc, pending, ready }
  let buffer = ""
  proc.stdout!.setEncoding("utf8")
  proc.stdout!.on("data", (chunk: string) => {
    buffer += chunk
    let nl: number
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      const reply = JSON.parse(line) as {
        readonly id: number
        readonly results: ReadonlyArray<StatementResult>
        readonly ready?: boolean
        readonly sqlite?: string
      }
      if (reply.ready === true) {
        engineVersion = reply.sqlite ?? null
        isReady(true)
        continue
      }
      const done = pending.get(reply.id)
      pending.delete(reply.id)
      done?.(reply.results)
    }
  })
  proc.on("exit", () => {
    isReady(false)
    if (child === self) child = undefined
    for (const done of pending.values()) done([{ error: "the sql executor exited", errorType: "ExecutorExit" }])
    pending.clear()
  })
  // An idle executor never keeps the command alive.
  proc.unref()
  ;(proc.stdout as unknown as { unref?: () => void }).unref?.()
  ;(proc.stdin as unknown as { unref?: () => void }).unref?.()
  return self
}

// One statement batch at a time: a timeout kills the child, which must not take others' work with it.
const lock = Effect.runSync(Effect.makeSemaphore(1))

/**
 * Runs `sqls` in order on the database at `dbPath` (read-only), stopping at the first error; the
 * whole batch (open, every statement) must finish within `timeoutMs`, else it is abandoned.
 */
export const execute = (dbPath: string, sqls: ReadonlyArray<string>, timeoutMs: number): Effect.Effect<Execution, ExecutorError> =>
  lock.withPermits(1)(
    Effect.gen(function*() {
      const c = yield* Effect.try({
        try: () => (child ??= startChild()),
        catch: (e) => new ExecutorError({ detail: `cannot start: ${e instanceof Error ? e.message : String(e)}` })
      })
      // A timer holds the event loop while the (unref'd) child starts, and bounds the start.
      const started = yield* Effect.async<boolean>((resume) => {
        const timer = setTimeout(() => resume(Effect.succeed(false)), STARTUP_MS)
        void c.ready.then((ok) => {
          clearTimeout(timer)
          resume(Effect.succeed(ok))
        })
        return Effect.sync(() => clearTimeout(timer))
      })
      if (!started) {
        c.process.kill("SIGKILL")
        if (child === c) child = undefined
        return yield* new ExecutorError({ detail: `the child process did not start within ${STARTUP_MS / 1000} s` })
      }
      const id = nextId++
      // Wall time, as func_timeout's: a test clock must not stop it.
      const results = yield* Effect.async<ReadonlyArray<StatementResult> | null>((resume) => {
        const timer = setTimeout(() => resume(Effect.succeed(null)), timeoutMs)
        c.pending.set(id, (results) => {
          clearTimeout(timer)
          resume(Effect.succeed(results))
        })
        c.process.stdin!.write(JSON.stringify({ id, db: dbPath, sqls }) + "\n")
        return Effect.sync(() => clearTimeout(timer))
      })
      if (results !== null) return { results, timedOut: false }
      c.pending.delete(id)
      if (child === c) child = undefined
      c.process.kill("SIGKILL")
      return { results: [], timedOut: true }
    })
  )

/** Stops the executor (tests; the command exits without it). */
export const shutdown = Effect.sync(() => {
  child?.process.kill("SIGKILL")
  child = undefined
})
