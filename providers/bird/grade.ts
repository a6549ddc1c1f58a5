/**
 * Upstream's grading of one (prediction, gold) pair, transcribed from bird-bench/mini_dev@4d970a9
 * `evaluation/` (see GRADING.md of the data kit): how the SQL is taken from a prediction entry,
 * execution accuracy (Python set equality of row tuples) and soft F1 (positional row pairing
 * after de-duplication, cell membership per row), with errors and timeouts scoring 0.
 */
import { createHash } from "node:crypto"
import { Effect } from "effect"
import { freezeClock } from "./clock.ts"
import { type CellToken, execute, type ExecutorError, type Rows } from "./executor.ts"

/** Upstream's `meta_time_out`, in seconds. */
export const UPSTREAM_TIMEOUT_S = 30

const SEPARATOR = "\t----- bird -----\t"

/** Python's `str.strip()` with no argument: Unicode whitespace (as `\s`, plus the separators JS lacks). */
const pyStrip = (s: string): string => s.replace(/^[\s\x1c-\x1f\x85]+|[\s\x1c-\x1f\x85]+$/gu, "")

/**
 * The SQL upstream executes for one prediction entry (`package_sqls`, mode "pred"): the text
 * before the one separator, as is; the whole string stripped when the separator is missing or
 * repeated; a single space for a value that is not a string.
 */
export const predictedSqlOf = (entry: unknown): string => {
  if (typeof entry !== "string") return " "
  const parts = entry.split(SEPARATOR)
  return parts.length === 2 ? parts[0]! : pyStrip(entry)
}

/** The SQL and database of one gold line (`SQL<TAB>db_id`, the line stripped first). */
export const goldLineOf = (line: string): { readonly sql: string; readonly dbId: string } | null => {
  const parts = pyStrip(line).split("\t")
  return parts.length === 2 ? { sql: parts[0]!, dbId: parts[1]! } : null
}

// ---------------------------------------------------------------------------------------------
// Python equality of cells

/**
 * A key equal for two cells exactly when Python's `==` (with matching hashes) holds: an int and a
 * float of the same value share one key, compared exactly (BigInt), while text, blob and NULL
 * keep their own kinds.
 */
const cellKey = (t: CellToken): string => {
  switch (t[0]) {
    case "n":
      return "n"
    case "i":
      return `#${t.slice(1)}`
    case "f": {
      const x = Number(t.slice(1))
      if (Number.isInteger(x)) return `#${BigInt(x).toString()}`
      // NaN is never equal, not even to itself (SQLite turns NaN into NULL, so this is defensive).
      if (Number.isNaN(x)) return `nan:${Math.random()}`
      return `#${String(x)}`
    }
    default:
      return t
  }
}

const rowKey = (row: ReadonlyArray<CellToken>): string => JSON.stringify(row.map(cellKey))

/** Execution accuracy: `set(predicted) == set(gold)`. */
export const executionAccuracy = (predicted: Rows, gold: Rows): 0 | 1 => {
  const p = new Set(predicted.map(rowKey))
  const g = new Set(gold.map(rowKey))
  if (p.size !== g.size) return 0
  for (const k of p) if (!g.has(k)) return 0
  return 1
}

/** `list(dict.fromkeys(rows))`: de-duplicated, first occurrence kept, order kept. */
const dedupe = (rows: Rows): ReadonlyArray<ReadonlyArray<string>> => {
  const seen = new Set<string>()
  const out: Array<ReadonlyArray<string>> = []
  for (const row of rows) {
    const k = rowKey(row)
    if (seen.has(k)) continue
    seen.add(k)
    out.push(row.map(cellKey))
  }
  return out
}

/** `calculate_row_match`: cell membership both ways, over the gold row's length. */
const rowMatch = (pred: ReadonlyArray<string>, gold: ReadonlyArray<string>): readonly [number, number, number] => {
  const n = gold.length
  const g = new Set(gold)
  const p = new Set(pred)
  let matches = 0
  let predOnly = 0
  let truthOnly = 0
  for (const v of pred) {
    if (g.has(v)) matches++
    else predOnly++
  }
  for (const v of gold) if (!p.has(v)) truthOnly++
  return [matches / n, predOnly / n, truthOnly / n]
}

/** Soft F1 (`calculate_f1_score`), with Python's float arithmetic in the same order. */
export const softF1 = (predictedRows: Rows, goldRows: Rows): number => {
  if (predictedRows.length === 0 && goldRows.length === 0) return 1
  const predicted = dedupe(predictedRows)
  const gold = dedupe(goldRows)
  const match: Array<number> = []
  const predOnly: Array<number> = []
  const truthOnly: Array<number> = []
  for (let i = 0; i < gold.length; i++) {
    if (i >= predicted.length) {
      match.push(0)
      truthOnly.push(1)
      continue
    }
    const [m, p, t] = rowMatch(predicted[i]!, gold[i]!)
    match.push(m)
    predOnly.push(p)
    truthOnly.push(t)
  }
  for (let i = gold.length; i < predicted.length; i++) predOnly.push(1)
  const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)
  const tp = sum(match)
  const fp = sum(predOnly)
  const fn = sum(truthOnly)
  const precision = tp + fp > 0 ? tp / (tp + fp) : 0
  const recall = tp + fn > 0 ? tp / (tp + fn) : 0
  return precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0
}

// ---------------------------------------------------------------------------------------------
// Digest of a result, as the oracle computes it (to tell execution from comparison differences)

const doubleHex = (x: number): string => {
  const view = new DataView(new ArrayBuffer(8))
  view.setFloat64(0, x)
  let hex = ""
  for (let i = 0; i < 8; i++) hex += view.getUint8(i).toString(16).padStart(2, "0")
  return hex
}

const token = (t: CellToken): string => {
  const body = t.slice(1)
  switch (t[0]) {
    case "n":
      return "n;"
    case "i":
      return `i${body};`
    case "f":
      return `f${doubleHex(Number(body))};`
    case "b":
      return `b${body};`
    default:
      return `s${Buffer.byteLength(body, "utf8")}:${body};`
  }
}

/** sha256 of the typed, order-preserving encoding of the oracle README. */
export const rowsDigest = (rows: Rows): string =>
  createHash("sha256").update(rows.map((r) => `[${r.map(token).join("")}]`).join(""), "utf8").digest("hex")

// ---------------------------------------------------------------------------------------------
// One pair

export interface PairVerdict {
  readonly ex: 0 | 1
  readonly f1: number
  readonly error: string | null
  readonly errorSide: "pred" | "gold" | null
  readonly timedOut: boolean
  readonly predRows: number | null
  readonly goldRows: number | null
  readonly predDigest: string | null
  readonly goldDigest: string | null
}

export interface PairOptions {
  /** The whole pair's time limit (upstream: 30 s). */
  readonly timeoutS?: number
  /** Rewrite the clock to the frozen instant (default true: as the oracle ran). */
  readonly frozenClock?: boolean
}

/**
 * Grades one pair on the database at `dbPath`: the prediction runs first, the gold only if it did
 * not fail, both within one timeout; any error or a timeout scores 0 on both metrics.
 */
export const gradePair = (
  dbPath: string,
  predictedSql: string,
  goldSql: string,
  options: PairOptions = {}
): Effect.Effect<PairVerdict, ExecutorError> =>
  Effect.map(
    execute(
      dbPath,
      options.frozenClock === false ? [predictedSql, goldSql] : [freezeClock(predictedSql), freezeClock(goldSql)],
      (options.timeoutS ?? UPSTREAM_TIMEOUT_S) * 1000
    ),
    (run): PairVerdict => {
      const [pred, gold] = run.results
      const predRows = pred !== undefined && "rows" in pred ? pred.rows : null
      const goldRows = gold !== undefined && "rows" in gold ? gold.rows : null
      const failed = [pred, gold].find((r) => r !== undefined && "error" in r)
      const base = {
        timedOut: run.timedOut,
        predRows: predRows?.length ?? null,
        goldRows: goldRows?.length ?? null,
        predDigest: predRows === null ? null : rowsDigest(predRows),
        goldDigest: goldRows === null ? null : rowsDigest(goldRows)
      }
      if (failed !== undefined && "error" in failed) {
        return { ...base, ex: 0, f1: 0, error: failed.error, errorSide: failed === pred ? "pred" : "gold" }
      }
      if (run.timedOut || predRows === null || goldRows === null) return { ...base, ex: 0, f1: 0, error: null, errorSide: null }
      return { ...base, ex: executionAccuracy(predRows, goldRows), f1: softF1(predRows, goldRows), error: null, errorSide: null }
    }
  )
