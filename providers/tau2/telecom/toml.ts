/**
 * The TOML subset of upstream's telecom db.toml and user_db.toml: `[a.b]` tables, `[[a.b]]`
 * arrays of tables (a dotted header continues the last element of each array it passes), and
 * `key = value` with basic strings, integers, floats, booleans and one-line arrays of those.
 * Anything else is refused with its line number. Floats are marked (`PyFloat`) as Python's
 * `toml` loads them; the model decides a field's Python type in the end anyway.
 */
import { Either } from "effect"
import { float } from "../common/pyjson.ts"
import type { PyJson } from "./pyjsonParse.ts"

type Table = Record<string, PyJson>

const KEY = /^[A-Za-z0-9_-]+$/

const scalar = (text: string): PyJson | undefined => {
  if (text === "true") return true
  if (text === "false") return false
  if (text.startsWith('"')) {
    if (!text.endsWith('"') || text.length < 2) return undefined
    try {
      return JSON.parse(text) as string
    } catch {
      // Not a JSON-compatible basic string: refused as a whole by the caller.
      return undefined
    }
  }
  if (/^[+-]?\d+$/.test(text)) return Number(text)
  if (/^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text)) return float(Number(text))
  return undefined
}

const value = (text: string): PyJson | undefined => {
  if (!text.startsWith("[")) return scalar(text)
  if (!text.endsWith("]")) return undefined
  const inner = text.slice(1, -1).trim()
  if (inner === "") return []
  const items: Array<PyJson> = []
  // Items are scalars: split on commas outside strings.
  let start = 0
  let inString = false
  for (let i = 0; i <= inner.length; i++) {
    const c = inner[i]
    if (c === '"' && inner[i - 1] !== "\\") inString = !inString
    if ((c === "," && !inString) || i === inner.length) {
      const part = inner.slice(start, i).trim()
      start = i + 1
      if (part === "" && i === inner.length) break
      const v = scalar(part)
      if (v === undefined) return undefined
      items.push(v)
    }
  }
  return items
}

const isTable = (v: PyJson | undefined): v is Table => typeof v === "object" && v !== null && !Array.isArray(v) && !("_tag" in v)

export interface TomlError {
  readonly line: number
  readonly detail: string
}

/** Parse the subset; the root table, keys in file order. */
export const parseToml = (text: string): Either.Either<Table, TomlError> => {
  const root: Table = {}
  let current: Table = root
  const lines = text.split(/\r?\n/)
  // Walk a dotted path from the root, entering the last element of arrays of tables.
  const walk = (path: ReadonlyArray<string>, n: number): Table | string => {
    let t: Table = root
    for (const part of path) {
      const next: PyJson | undefined = t[part]
      if (next === undefined) {
        const made: Table = {}
        t[part] = made
        t = made
      } else if (Array.isArray(next)) {
        const last: PyJson | undefined = next[next.length - 1]
        if (!isTable(last)) return `line ${n}: ${part} is not an array of tables`
        t = last
      } else if (isTable(next)) t = next
      else return `line ${n}: ${part} is a value, not a table`
    }
    return t
  }
  for (let n = 1; n <= lines.length; n++) {
    const line = lines[n - 1]!.trim()
    if (line === "" || line.startsWith("#")) continue
    const header = /^(\[\[?)([A-Za-z0-9_.-]+)(\]\]?)$/.exec(line)
    if (header !== null) {
      const path = header[2]!.split(".")
      if (!path.every((p) => KEY.test(p))) return Either.left({ line: n, detail: `bad table name ${header[2]}` })
      const array = header[1] === "[["
      if (array !== (header[3] === "]]")) return Either.left({ line: n, detail: "unbalanced brackets" })
      const parent = walk(path.slice(0, -1), n)
      if (typeof parent === "string") return Either.left({ line: n, detail: parent })
      const name = path[path.length - 1]!
      const table: Table = {}
      if (array) {
        const existing = parent[name]
        if (existing === undefined) parent[name] = [table]
        else if (Array.isArray(existing)) (existing as Array<PyJson>).push(table)
        else return Either.left({ line: n, detail: `${name} is not an array of tables` })
        current = table
      } else {
        const existing = parent[name]
        if (existing === undefined) parent[name] = table
        else if (!isTable(existing)) return Either.left({ line: n, detail: `${name} is already a value` })
        current = isTable(existing) ? existing : table
      }
      continue
    }
    const eq = line.indexOf("=")
    if (eq < 0) return Either.left({ line: n, detail: "expected key = value" })
    const key = line.slice(0, eq).trim()
    if (!KEY.test(key)) return Either.left({ line: n, detail: `bad key ${key}` })
    if (key in current) return Either.left({ line: n, detail: `duplicate key ${key}` })
    const v = value(line.slice(eq + 1).trim())
    if (v === undefined) return Either.left({ line: n, detail: `unsupported value for ${key}` })
    current[key] = v
  }
  return Either.right(root)
}
