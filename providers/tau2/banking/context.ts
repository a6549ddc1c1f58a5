/**
 * What every banking tool (tools.ts, discoverable.ts) runs on: the call context that reads through
 * the call's own writes, the helpers of upstream's utils.py and db_query.py, and the environment.
 * Its own module so that the tools and the discoverable tools both import it, not each other.
 */
import { createHash } from "node:crypto"
import { Either } from "effect"
import { type Canonical, World } from "../../../src/index.ts"
import { dumps } from "../common/pyjson.ts"
import type { Bm25Index } from "./bm25.ts"
import type { DiscoverableTool } from "./data.ts"
import { asKey, PyException, pyEq, pyFloatOf, raise } from "./python.ts"
import { formatFixed, isDict, isFloat, jsonLoads, num, orderedEntries, pyRepr, pyStr, pyType as pyTypeName, toPyValue, type Py } from "./pyvalue.ts"

export type Args = { readonly [key: string]: Canonical.Json }
export type Rec = { readonly [key: string]: Canonical.Json }

export const SESSION = "$session"

/** The world without the session table: what the DB check compares. */
export const dbWorld = (world: World.World): World.World =>
  World.entries(world, SESSION).reduce((w, [k]) => World.set(w, SESSION, k, null), world)

/** Set the task's read-log allowlist (`get_environment(read_log_allowlist=...)`). */
export const withReadLogAllowlist = (world: World.World, names: ReadonlyArray<string>): World.World =>
  World.set(world, SESSION, "read_log_allowlist", [...names])

// -- call context: reads through the call's own writes --------------------------------------------

export class Ctx {
  readonly changed = new Map<string, World.Write>()
  readonly appended = new Map<string, Array<string>>()
  constructor(
    readonly world: World.World,
    readonly env: Environment
  ) {}
  private k(table: string, key: string) {
    return `${table}\u0000${key}`
  }
  get(table: string, key: string): Rec | undefined {
    const own = this.changed.get(this.k(table, key))
    const v = own !== undefined ? own.value : World.get(this.world, table, key)
    return v === undefined || v === null ? undefined : (v as Rec)
  }
  has(table: string, key: string): boolean {
    return this.get(table, key) !== undefined
  }
  put(table: string, key: string, value: Rec): void {
    if (!this.has(table, key)) {
      const list = this.appended.get(table) ?? []
      list.push(key)
      this.appended.set(table, list)
    }
    this.changed.set(this.k(table, key), { table, key, value })
  }
  /** `db.<table>.data.items()`: world order, own writes applied, new keys last. */
  entries(table: string): ReadonlyArray<readonly [string, Rec]> {
    const out: Array<readonly [string, Rec]> = []
    for (const [k] of World.entries(this.world, table)) {
      const v = this.get(table, k)
      if (v !== undefined) out.push([k, v])
    }
    for (const k of this.appended.get(table) ?? []) if (!World.has(this.world, table, k)) out.push([k, this.get(table, k)!])
    return out
  }
  size(table: string): number {
    return this.entries(table).length
  }
  /** `add_to_db`: false when the id exists. */
  add(table: string, key: string, record: Rec): boolean {
    if (this.has(table, key)) return false
    this.put(table, key, record)
    return true
  }
  /** `record[field] = value` for several fields, in place (existing keys keep their place). */
  update(table: string, key: string, updates: Rec): Rec | undefined {
    const old = this.get(table, key)
    if (old === undefined) return undefined
    const next = { ...old, ...updates }
    this.put(table, key, next)
    return next
  }
  get writes(): ReadonlyArray<World.Write> {
    return [...this.changed.values()]
  }
}

// -- shared helpers (utils.py, db_query.py) ------------------------------------------------------

export const TODAY = "11/14/2025"
export const NOW_ISO = "2025-11-14T03:40:00"

export const sha256hex = (s: string) => createHash("sha256").update(s, "utf8").digest("hex")
export const deterministicId = (seed: string, length = 16): string => sha256hex(seed).slice(0, length)

/** `json.dumps(v, sort_keys=True)` (default separators, ASCII). */
export const dumpsSorted = (v: Py): string => dumps(toPyValue(v), { sortKeys: true })

/** `_load_databases` order: what `query_database_tool` lists as available. */
const queryableTables = [
  "users",
  "accounts",
  "referrals",
  "credit_card_applications",
  "user_discoverable_tools",
  "user_discoverable_tool_calls",
  "agent_discoverable_tools",
  "task_config",
  "verification_history",
  "credit_card_transaction_history",
  "cash_back_disputes",
  "bank_account_transaction_history",
  "credit_card_accounts",
  "human_transfer_requests",
  "transaction_disputes",
  "credit_card_orders",
  "credit_card_closure_reasons",
  "credit_card_account_flags",
  "debit_cards",
  "debit_card_orders",
  "debit_card_disputes",
  "credit_limit_increase_requests",
  "payment_history"
]

const pyLt = (a: Py | undefined, b: Py | undefined, op: "gt" | "gte" | "lt" | "lte"): boolean => {
  const na = typeof a === "string" ? undefined : num(a)
  const nb = typeof b === "string" ? undefined : num(b)
  let c: number
  if (na !== undefined && nb !== undefined) c = na < nb ? -1 : na > nb ? 1 : 0
  else if (typeof a === "string" && typeof b === "string") c = a < b ? -1 : a > b ? 1 : 0
  else return raise("TypeError", "comparison")
  if (Number.isNaN(na ?? 0) || Number.isNaN(nb ?? 0)) return false
  return op === "gt" ? c > 0 : op === "gte" ? c >= 0 : op === "lt" ? c < 0 : c <= 0
}

const pyIn = (needle: Py | undefined, hay: Py | undefined): boolean => {
  if (typeof hay === "string") {
    if (typeof needle !== "string") return raise("TypeError", "'in <string>' requires string as left operand")
    return hay.includes(needle)
  }
  if (Array.isArray(hay)) return hay.some((x) => pyEq(x, needle))
  if (isDict(hay)) {
    const k = asKey(needle)
    return k !== undefined && Object.hasOwn(hay, k)
  }
  return raise("TypeError", "argument of type is not iterable")
}

/** `_record_matches`: every `field__op` constraint holds; a TypeError/ValueError is a miss. */
const recordMatches = (record: Rec, constraints: ReadonlyArray<readonly [string, Canonical.Json]>): boolean => {
  for (const [key, expected] of constraints) {
    let field = key
    let op = "eq"
    const at = key.lastIndexOf("__")
    if (at !== -1) {
      field = key.slice(0, at)
      op = key.slice(at + 2)
    }
    const actual = Object.hasOwn(record, field) ? record[field] : null
    try {
      let ok: boolean
      switch (op) {
        case "ne":
          ok = !pyEq(actual, expected)
          break
        case "gt":
        case "gte":
        case "lt":
        case "lte":
          ok = pyLt(actual, expected, op)
          break
        case "contains":
          ok = actual !== null && pyIn(expected, actual)
          break
        case "startswith":
          ok = actual !== null && pyStr(actual).startsWith(pyStr(expected))
          break
        case "endswith":
          ok = actual !== null && pyStr(actual).endsWith(pyStr(expected))
          break
        case "in":
          ok = pyIn(actual, expected)
          break
        case "nin":
          ok = !pyIn(actual, expected)
          break
        default:
          ok = pyEq(actual, expected)
      }
      if (!ok) return false
    } catch (e) {
      if (e instanceof PyException && (e.type === "TypeError" || e.type === "ValueError")) return false
      throw e
    }
  }
  return true
}

/** `query_database_tool(database_name, constraints)`: the text upstream builds. */
export const queryDatabaseTool = (ctx: Ctx, databaseName: string, constraints: string): string => {
  if (!queryableTables.includes(databaseName)) {
    return `Error: Database '${databaseName}' not found. Available: [${queryableTables.map((t) => `'${t}'`).join(", ")}]`
  }
  let parsed: Py = {}
  if (constraints.length > 0) {
    const r = jsonLoads(constraints)
    if (Either.isLeft(r)) return `Error: Invalid JSON: ${r.left}`
    parsed = r.right
  }
  if (!isDict(parsed)) return `Error querying database: tau2.domains.banking_knowledge.db_query.query_db() argument after ** must be a mapping, not ${pyRepr(parsed).startsWith("[") ? "list" : typeof parsed}`
  const cs = orderedEntries(parsed)
  const results = ctx.entries(databaseName).filter(([, r]) => recordMatches(r, cs))
  if (results.length === 0) return `No records found in '${databaseName}'.`
  const lines = [`Found ${results.length} record(s) in '${databaseName}':\n`]
  results.forEach(([id, record], i) => {
    lines.push(`${i + 1}. Record ID: ${id}`)
    for (const [f, v] of Object.entries(record)) lines.push(`   ${f}: ${pyStr(v)}`)
    lines.push("")
  })
  return lines.join("\n")
}

/** `'{"field": "' + value + '"}'` as the f-strings build it. */
export const fieldQuery = (field: string, value: Py | undefined) => `{"${field}": "${pyStr(value)}"}`

/** `_parse_balance`. */
export const parseBalance = (v: Py | undefined): number => {
  if (typeof v === "boolean" || typeof v === "number" || isFloat(v) || num(v) !== undefined && typeof v !== "string") return num(v)!
  if (typeof v === "string") return pyFloatOf(v.replaceAll("$", "").replaceAll(",", ""))
  return 0
}

/** `_get_account_balance`. */
export const accountBalance = (account: Rec): number =>
  parseBalance(Object.hasOwn(account, "current_holdings") ? account["current_holdings"] : Object.hasOwn(account, "balance") ? account["balance"] : 0)

/** `f"{x:.2f}"` of a Python number. */
export const f2 = (v: Py | undefined): string => {
  const n = typeof v === "string" ? undefined : num(v)
  if (n !== undefined) return formatFixed(n, 2)
  if (typeof v === "string") return raise("ValueError", "Unknown format code 'f' for object of type 'str'")
  return raise("TypeError", `unsupported format string passed to ${pyTypeName(v)}.__format__`)
}

/** `str.title()` for the ASCII texts the tools title-case. */
export const title = (s: string): string => s.toLowerCase().replace(/(^|[^A-Za-z])([a-z])/g, (_, a: string, b: string) => a + b.toUpperCase())

// -- the environment -------------------------------------------------------------------------------

export interface Environment {
  readonly index: Bm25Index
  readonly discoverable: ReadonlyArray<DiscoverableTool>
}

export type Requestor = "assistant" | "user"
