/**
 * The Python runtime behaviour the banking tools show: exceptions as values carried to the
 * call boundary, dict-key lookups (`x in table`), `==`, keyword binding (`TypeError` texts),
 * and `json.dumps(v, indent=2)`.
 */
import type { Canonical } from "../../../src/index.ts"
import { dumps } from "../common/pyjson.ts"
import { isDict, num, pyType, toPyValue, type Py } from "./pyvalue.ts"

/** A Python exception raised inside a tool; caught where upstream catches it. */
export class PyException {
  constructor(
    readonly type: "TypeError" | "ValueError" | "AttributeError" | "KeyError" | "Exception",
    readonly text: string
  ) {}
}

export const raise = (type: PyException["type"], text: string): never => {
  throw new PyException(type, text)
}

/** `key in some_dict` where the dict has string keys: undefined when `v` cannot be one. */
export const asKey = (v: Py | undefined): string | undefined => {
  if (typeof v === "string") return v
  if (Array.isArray(v) || isDict(v)) return raise("TypeError", `unhashable type: '${pyType(v)}'`)
  return undefined
}

/** Python `==` on record values (1 == 1.0 == True; dicts without order). */
export const pyEq = (a: Py | undefined, b: Py | undefined): boolean => {
  const na = typeof a === "string" ? undefined : num(a)
  const nb = typeof b === "string" ? undefined : num(b)
  if (na !== undefined || nb !== undefined) return na !== undefined && nb !== undefined && na === nb
  if (a === undefined || b === undefined || a === null || b === null) return (a ?? null) === (b ?? null)
  if (typeof a !== "object" || typeof b !== "object") return a === b
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((x, i) => pyEq(x, b[i]))
  }
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  const rb = b as { readonly [k: string]: Canonical.Json }
  const ra = a as { readonly [k: string]: Canonical.Json }
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(rb, k) && pyEq(ra[k], rb[k]))
}

/** `x in [..strings..]`. */
export const inList = (v: Py | undefined, xs: ReadonlyArray<string>): boolean => typeof v === "string" && xs.includes(v)

const quoteList = (names: ReadonlyArray<string>): string => {
  const q = names.map((n) => `'${n}'`)
  if (q.length <= 1) return q.join("")
  if (q.length === 2) return `${q[0]} and ${q[1]}`
  return `${q.slice(0, -1).join(", ")}, and ${q[q.length - 1]}`
}

/** A parameter of a Python signature; `defaultValue` present when it has a default. */
export interface Param {
  readonly name: string
  readonly defaultValue?: Py
}

export const p = (name: string, ...defaultValue: [] | [Py]): Param => (defaultValue.length === 0 ? { name } : { name, defaultValue: defaultValue[0] })

/**
 * Binding `**args` to `Cls.fn(self, ...)`: an unexpected keyword is reported first, then the
 * missing positional parameters, in CPython's words. Returns the bound arguments.
 */
export const bind = (
  qualname: string,
  params: ReadonlyArray<Param>,
  args: { readonly [key: string]: Canonical.Json }
): { readonly [key: string]: Canonical.Json } => {
  const fn = `${qualname}()`
  for (const k of Object.keys(args)) {
    if (!params.some((x) => x.name === k)) raise("TypeError", `${fn} got an unexpected keyword argument '${k}'`)
  }
  const missing = params.filter((x) => !("defaultValue" in x) && !Object.hasOwn(args, x.name)).map((x) => x.name)
  if (missing.length > 0) {
    raise("TypeError", `${fn} missing ${missing.length} required positional argument${missing.length > 1 ? "s" : ""}: ${quoteList(missing)}`)
  }
  const out: Record<string, Canonical.Json> = {}
  for (const x of params) out[x.name] = Object.hasOwn(args, x.name) ? args[x.name]! : x.defaultValue!
  return out
}

/** `json.dumps(v, indent=2)` (ensure_ascii, `": "`, items on their own lines). */
export const dumpsIndent2 = (v: Py | undefined, level = 0): string => {
  const pad = (n: number) => "  ".repeat(n)
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]"
    return `[\n${v.map((x) => pad(level + 1) + dumpsIndent2(x, level + 1)).join(",\n")}\n${pad(level)}]`
  }
  if (isDict(v)) {
    const entries = Object.entries(v)
    if (entries.length === 0) return "{}"
    return `{\n${entries.map(([k, x]) => `${pad(level + 1)}${dumps(k)}: ${dumpsIndent2(x, level + 1)}`).join(",\n")}\n${pad(level)}}`
  }
  return dumps(toPyValue(v))
}

/** `float(v)` for what tools accept: numbers, bools and numeric strings. */
export const pyFloatOf = (v: Py | undefined): number => {
  const n = num(v)
  if (n !== undefined) return n
  if (typeof v === "string") {
    const t = v.trim().replaceAll("_", "")
    if (/^[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)$/.test(t)) return Number(t)
    if (/^[+-]?(inf|infinity)$/i.test(t)) return t.startsWith("-") ? -Infinity : Infinity
    if (/^[+-]?nan$/i.test(t)) return NaN
    return raise("ValueError", `could not convert string to float: ${pyReprStr(v)}`)
  }
  return raise("TypeError", `float() argument must be a string or a real number, not '${pyType(v)}'`)
}

const pyReprStr = (s: string): string => {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'"
  return quote + s.replaceAll("\\", "\\\\").replaceAll(quote, "\\" + quote).replaceAll("\n", "\\n").replaceAll("\t", "\\t").replaceAll("\r", "\\r") + quote
}


/** `item in container` (dict keys, list elements, substrings); other containers raise TypeError. */
export const pyContains = (container: Py | undefined, item: Py | undefined): boolean => {
  if (typeof container === "string") {
    if (typeof item !== "string") return raise("TypeError", `'in <string>' requires string as left operand, not ${pyType(item)}`)
    return container.includes(item)
  }
  if (Array.isArray(container)) return container.some((x) => pyEq(x, item))
  if (isDict(container)) {
    const k = asKey(item)
    return k !== undefined && Object.hasOwn(container, k)
  }
  return raise("TypeError", `argument of type '${pyType(container)}' is not iterable`)
}

/** `for x in container`: dict keys, list elements, a string's characters; else TypeError. */
export const pyIterate = (container: Py | undefined): ReadonlyArray<Py> => {
  if (typeof container === "string") return Array.from(container)
  if (Array.isArray(container)) return container
  if (isDict(container)) return Object.keys(container)
  return raise("TypeError", `'${pyType(container)}' object is not iterable`)
}

/** `name in mapping_of_str` where `name` may be any value (unhashable ones raise). */
export const inNames = (names: ReadonlyArray<string>, item: Py | undefined): boolean => {
  const k = asKey(item)
  return k !== undefined && names.includes(k)
}

/** `sep.join(items)`: every item must be a str. */
export const pyJoin = (sep: string, items: ReadonlyArray<Py | undefined>): string => {
  items.forEach((x, i) => {
    if (typeof x !== "string") raise("TypeError", `sequence item ${i}: expected str instance, ${pyType(x)} found`)
  })
  return items.join(sep)
}
