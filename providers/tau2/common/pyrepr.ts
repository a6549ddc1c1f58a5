/**
 * Python's type names and `repr()` for JSON-like values, as the tau2 tools print them in error
 * texts. Each domain keeps floats its own way (retail: non-integral numbers; telecom: `PyFloat`;
 * banking: non-integral numbers and `{"$float": x}` tags), so the caller says which values are floats.
 */
import type { Canonical } from "../../../src/index.ts"
import { reprFloat } from "./pyjson.ts"

/** `type(v).__name__`: numbers are ints unless `isFloat` says otherwise; other objects are dicts. */
export const pyTypeName = <V>(v: V | undefined, isFloat: (v: V) => boolean): string => {
  if (v === null || v === undefined) return "NoneType"
  if (typeof v === "boolean") return "bool"
  if (isFloat(v)) return "float"
  if (typeof v === "number") return "int"
  if (typeof v === "string") return "str"
  return Array.isArray(v) ? "list" : "dict"
}

const hex = (c: number, n: number) => c.toString(16).padStart(n, "0")

// Python's str.isprintable for the characters repr escapes: controls, separators other than
// the ASCII space, and the unassigned/format/surrogate categories.
const NONPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u
const isPrintable = (c: number): boolean => c === 0x20 || !NONPRINTABLE.test(String.fromCodePoint(c))

/**
 * `repr()` of a str. ASCII controls are always escaped; `escapeUnprintable` also escapes the
 * other characters CPython does (banking; retail and telecom print them as they are).
 */
export const reprString = (s: string, escapeUnprintable = false): string => {
  // Python prefers single quotes unless the text holds one and no double quote.
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'"
  let out = quote
  for (const ch of s) {
    const c = ch.codePointAt(0)!
    if (ch === "\\") out += "\\\\"
    else if (ch === quote) out += "\\" + ch
    else if (ch === "\n") out += "\\n"
    else if (ch === "\r") out += "\\r"
    else if (ch === "\t") out += "\\t"
    else if (c < 0x20 || c === 0x7f) out += `\\x${hex(c, 2)}`
    else if (escapeUnprintable && !isPrintable(c)) {
      out += c <= 0xff ? `\\x${hex(c, 2)}` : c <= 0xffff ? `\\u${hex(c, 4)}` : `\\U${hex(c, 8)}`
    } else out += ch
  }
  return out + quote
}

/** `repr()` of an int (`asFloat` false) or a float. */
export const reprNumber = (v: number, asFloat: boolean): string =>
  asFloat ? reprFloat(v) : Number.isSafeInteger(v) ? String(v) : BigInt(v).toString()

export interface ReprOptions {
  /** The float an object stands for (banking's tags), or undefined for a dict. */
  readonly floatOf: (v: { readonly [k: string]: Canonical.Json }) => number | undefined
  readonly escapeUnprintable: boolean
}

/** `repr()` of a JSON value: integral numbers are ints, others floats; dicts in entry order. */
export const pyReprWith = (options: ReprOptions) => {
  const repr = (v: Canonical.Json | undefined): string => {
    if (v === null || v === undefined) return "None"
    if (typeof v === "boolean") return v ? "True" : "False"
    if (typeof v === "number") return reprNumber(v, !Number.isInteger(v))
    if (typeof v === "string") return reprString(v, options.escapeUnprintable)
    if (Array.isArray(v)) return `[${v.map(repr).join(", ")}]`
    const f = options.floatOf(v as { readonly [k: string]: Canonical.Json })
    if (f !== undefined) return reprFloat(f)
    return `{${Object.entries(v).map(([k, x]) => `${reprString(k, options.escapeUnprintable)}: ${repr(x)}`).join(", ")}}`
  }
  return repr
}
