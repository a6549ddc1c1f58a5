/**
 * The candidate's tools: `query` (the tool loop's read-only look at the database, with a row and a
 * time limit) and `submit_sql` (the final answer, in both protocols, so the SQL a candidate gives
 * is an effect: recorded, replayable, faulted and admitted like any tool call). A tool is a
 * synchronous function of the world, so `query` runs in this process on a read-only connection.
 */
import { createRequire } from "node:module"
import { type Canonical, Tool } from "../../src/index.ts"
import { freezeClock } from "./clock.ts"

export const QUERY_MAX_ROWS = 50
export const QUERY_MAX_MS = 5_000
const CELL_MAX_CHARS = 200

/** The part of better-sqlite3 used here (the package ships no types). */
interface Statement {
  readonly reader: boolean
  safeIntegers(on: boolean): Statement
  raw(on: boolean): Statement
  columns(): ReadonlyArray<{ readonly name: string }>
  iterate(): IterableIterator<ReadonlyArray<unknown>>
}
interface Database {
  prepare(sql: string): Statement
}
type DatabaseConstructor = new (path: string, options: { readonly readonly: boolean; readonly fileMustExist: boolean }) => Database

let Database: DatabaseConstructor | undefined
const connections = new Map<string, Database>()
const connection = (path: string): Database => {
  Database ??= createRequire(import.meta.url)("better-sqlite3") as DatabaseConstructor
  let db = connections.get(path)
  if (db === undefined) {
    db = new Database(path, { readonly: true, fileMustExist: true })
    connections.set(path, db)
  }
  return db
}

const DQS = /^no such column: "([\s\S]*)" - should this be a string literal in single-quotes\?$/

const show = (v: unknown): Canonical.Json => {
  if (v === null || v === undefined) return null
  if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()
  if (typeof v === "number") return Number.isFinite(v) ? v : String(v)
  if (Buffer.isBuffer(v)) return `x'${v.toString("hex").slice(0, CELL_MAX_CHARS)}'`
  const s = String(v)
  return s.length > CELL_MAX_CHARS ? `${s.slice(0, CELL_MAX_CHARS)}…` : s
}

/**
 * Runs one read-only statement (frozen clock, SQLite's double-quoted-string fallback as the grader
 * has it) and shows at most QUERY_MAX_ROWS rows; reading stops at the time limit between rows
 * (better-sqlite3 cannot interrupt a single step, so one slow step runs to its end).
 */
export const runQuery = (dbPath: string, sql: string): { readonly output: string; readonly error: boolean } => {
  let text = freezeClock(sql)
  for (let tries = 0; tries < 64; tries++) {
    try {
      const stmt = connection(dbPath).prepare(text)
      if (!stmt.reader) return { output: "Error: only statements that return rows can run here (the database is read-only)", error: true }
      stmt.safeIntegers(true)
      const columns = stmt.columns().map((c) => c.name)
      const rows: Array<ReadonlyArray<Canonical.Json>> = []
      const deadline = Date.now() + QUERY_MAX_MS
      let truncated: string | null = null
      for (const row of stmt.raw(true).iterate()) {
        if (rows.length >= QUERY_MAX_ROWS) {
          truncated = `more than ${QUERY_MAX_ROWS} rows; the first ${QUERY_MAX_ROWS} are shown`
          break
        }
        if (Date.now() > deadline) {
          truncated = `stopped after ${QUERY_MAX_MS / 1000} s; ${rows.length} rows read`
          break
        }
        rows.push(row.map(show))
      }
      return { output: JSON.stringify({ columns, rows, ...(truncated !== null ? { truncated } : {}) }), error: false }
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e)
      const m = DQS.exec(message)
      const quoted = m === null ? "" : `"${m[1]!.replace(/"/g, '""')}"`
      if (m === null || !text.includes(quoted)) return { output: `Error: ${message}`, error: true }
      text = text.split(quoted).join(`'${m[1]!.replace(/'/g, "''")}'`)
    }
  }
  return { output: "Error: too many double-quoted names", error: true }
}

const sqlArg = (args: { readonly [key: string]: Canonical.Json }): string | null => (typeof args["sql"] === "string" ? args["sql"] : null)

export const queryTool = (dbPath: string): Tool.Tool => ({
  spec: {
    name: "query",
    description: `Run one read-only SQLite statement on the database and see its result (at most ${QUERY_MAX_ROWS} rows).`,
    parameters: {
      type: "object",
      properties: { sql: { type: "string", description: "one SQLite statement" } },
      required: ["sql"]
    }
  },
  access: "read",
  run: (_world, args) => {
    const sql = sqlArg(args)
    if (sql === null) return Tool.fail("Error: the argument sql must be a string")
    const r = runQuery(dbPath, sql)
    return r.error ? Tool.fail(r.output) : Tool.ok(r.output)
  }
})

export const SUBMIT = "submit_sql"

export const submitTool: Tool.Tool = {
  spec: {
    name: SUBMIT,
    description: "Give the final answer: the one SQLite query that answers the question. This ends the task.",
    parameters: {
      type: "object",
      properties: { sql: { type: "string", description: "the final SQLite query" } },
      required: ["sql"]
    }
  },
  access: "read",
  run: (_world, args) => (sqlArg(args) === null ? Tool.fail("Error: the argument sql must be a string") : Tool.ok("submitted"))
}
