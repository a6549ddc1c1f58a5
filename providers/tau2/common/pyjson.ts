/**
 * Python's `json.dumps`, `repr(float)` and `round(x, 2)`, as upstream tau2 meets them.
 *
 * JavaScript has one number type; Python tells `198` from `198.0`. Values are therefore built
 * as a small Python value tree (`PyValue`) where floats are marked, so the text matches byte for
 * byte: money fields are floats even when integral, everything else keeps JSON's own type.
 * Dicts are entry lists because JS objects reorder integer-like keys ("1234") and Python dicts
 * keep insertion order.
 */

/** A Python float. */
export interface PyFloat {
  readonly _tag: "PyFloat"
  readonly value: number
}

/** A Python dict: insertion-ordered entries. */
export interface PyDict {
  readonly _tag: "PyDict"
  readonly entries: ReadonlyArray<readonly [string, PyValue]>
}

/** `number` and `bigint` are Python ints; floats are wrapped. */
export type PyValue = null | boolean | string | number | bigint | PyFloat | PyDict | ReadonlyArray<PyValue>

export const float = (value: number): PyFloat => ({ _tag: "PyFloat", value })

export const dict = (entries: ReadonlyArray<readonly [string, PyValue]>): PyDict => ({ _tag: "PyDict", entries })

/** Python `str` ordering: by code point (JS compares UTF-16 units, which differs above U+FFFF). */
export const compareCodePoints = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    // A surrogate (U+D800..DFFF) stands for a code point above the whole BMP.
    const sx = x >= 0xd800 && x <= 0xdfff
    const sy = y >= 0xd800 && y <= 0xdfff
    if (sx !== sy) return sx ? 1 : -1
    return x - y
  }
  return a.length - b.length
}

/** Python's `sorted` of strings. */
export const sortedStrings = (xs: ReadonlyArray<string>): Array<string> => [...xs].sort(compareCodePoints)

/**
 * `repr(float)`: shortest round-trip digits; exponent form when the decimal exponent is below
 * -4 or at least 16; `.0` added to an integral value in fixed form.
 */
export const reprFloat = (x: number): string => {
  if (Number.isNaN(x)) return "nan"
  if (x === Infinity) return "inf"
  if (x === -Infinity) return "-inf"
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0"
  // toExponential() without digits is the shortest round-trip form, as Python's repr.
  const [mantissa = "", expText = "0"] = x.toExponential().split("e")
  const negative = mantissa.startsWith("-")
  const digits = mantissa.replace("-", "").replace(".", "")
  const exp = Number(expText)
  const sign = negative ? "-" : ""
  if (exp < -4 || exp >= 16) {
    const body = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits
    const e = Math.abs(exp)
    return `${sign}${body}e${exp < 0 ? "-" : "+"}${e < 10 ? "0" : ""}${e}`
  }
  const point = exp + 1
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`
  if (point >= digits.length) return `${sign}${digits}${"0".repeat(point - digits.length)}.0`
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`
}

/**
 * Python `round(x, 2)` on a float: the exact binary value rounded to two decimals, ties to even
 * (`round(0.125, 2) == 0.12`, `round(2.675, 2) == 2.67`), the sign of zero kept.
 */
export const round2 = (x: number): number => {
  if (!Number.isFinite(x) || x === 0 || Math.abs(x) >= 2 ** 52) return x
  // toFixed rounds the exact value, but sends exact ties up; a tie at two decimals is a
  // multiple of 1/8 with an odd numerator (x = m/8, 100x = 12.5m), exact in binary.
  const eighths = x * 8
  if (Number.isInteger(eighths) && eighths % 2 !== 0) {
    const lo = Math.floor(eighths * 12.5)
    const k = lo % 2 === 0 ? lo : lo + 1
    const r = k / 100
    return r === 0 && x < 0 ? -0 : r
  }
  return Number.parseFloat(x.toFixed(2))
}

/** Python `int` text of a JS number known to be integral, or a bigint. */
const reprInt = (n: number | bigint): string =>
  typeof n === "bigint" ? n.toString() : Number.isSafeInteger(n) ? String(n) : BigInt(n).toString()

const hex4 = (code: number): string => code.toString(16).padStart(4, "0")

const escapeString = (s: string, ensureAscii: boolean): string => {
  let out = '"'
  let start = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c && (c < 0x7f || !ensureAscii)) continue
    if (i > start) out += s.slice(start, i)
    start = i + 1
    switch (c) {
      case 0x22:
        out += '\\"'
        break
      case 0x5c:
        out += "\\\\"
        break
      case 0x0a:
        out += "\\n"
        break
      case 0x0d:
        out += "\\r"
        break
      case 0x09:
        out += "\\t"
        break
      case 0x08:
        out += "\\b"
        break
      case 0x0c:
        out += "\\f"
        break
      default:
        // JS strings are UTF-16, so an astral character is already its surrogate pair.
        out += `\\u${hex4(c)}`
    }
  }
  return start === 0 ? `"${s}"` : out + s.slice(start) + '"'
}

export interface DumpsOptions {
  /** Python's default is true. */
  readonly ensureAscii?: boolean
  /** Python's default is false. */
  readonly sortKeys?: boolean
  /** [item, key] separators; Python's default (no indent) is [", ", ": "]. */
  readonly separators?: readonly [string, string]
}

/** `json.dumps(value, ensure_ascii=..., sort_keys=..., separators=...)` without indentation. */
export const dumps = (value: PyValue, options: DumpsOptions = {}): string => {
  const ensureAscii = options.ensureAscii ?? true
  const sortKeys = options.sortKeys ?? false
  const [itemSep, keySep] = options.separators ?? [", ", ": "]
  const parts: Array<string> = []
  const write = (v: PyValue): void => {
    if (v === null) parts.push("null")
    else if (v === true) parts.push("true")
    else if (v === false) parts.push("false")
    else if (typeof v === "string") parts.push(escapeString(v, ensureAscii))
    else if (typeof v === "number" || typeof v === "bigint") parts.push(reprInt(v))
    else if (Array.isArray(v)) {
      const xs: ReadonlyArray<PyValue> = v
      parts.push("[")
      for (let i = 0; i < xs.length; i++) {
        if (i > 0) parts.push(itemSep)
        write(xs[i]!)
      }
      parts.push("]")
    } else {
      const tagged = v as PyFloat | PyDict
      if (tagged._tag === "PyFloat") {
        const x = tagged.value
        // json.dumps spells the non-finite floats as JavaScript does.
        parts.push(Number.isNaN(x) ? "NaN" : x === Infinity ? "Infinity" : x === -Infinity ? "-Infinity" : reprFloat(x))
        return
      }
      const entries = sortKeys ? [...tagged.entries].sort((a, b) => compareCodePoints(a[0], b[0])) : tagged.entries
      parts.push("{")
      for (let i = 0; i < entries.length; i++) {
        if (i > 0) parts.push(itemSep)
        const [k, x] = entries[i]!
        parts.push(escapeString(k, ensureAscii), keySep)
        write(x)
      }
      parts.push("}")
    }
  }
  write(value)
  return parts.join("")
}

/**
 * Python `==` on JSON-shaped values: `1 == 1.0 == True`, dicts compare without order. `floatValue`
 * reads the caller's float representation, if it has one, as a number.
 */
export const pyEqualsWith = (floatValue: (x: unknown) => number | undefined) => {
  const num = (x: unknown): number | undefined =>
    typeof x === "number" ? x : typeof x === "boolean" ? (x ? 1 : 0) : floatValue(x)
  const eq = (a: unknown, b: unknown): boolean => {
    const na = num(a)
    const nb = num(b)
    if (na !== undefined || nb !== undefined) return na !== undefined && nb !== undefined && na === nb
    if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b
    if (Array.isArray(a) || Array.isArray(b)) {
      if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
      return a.every((x, i) => eq(x, b[i]))
    }
    const ka = Object.keys(a)
    const kb = Object.keys(b)
    if (ka.length !== kb.length) return false
    const rb = b as Record<string, unknown>
    const ra = a as Record<string, unknown>
    return ka.every((k) => Object.prototype.hasOwnProperty.call(rb, k) && eq(ra[k], rb[k]))
  }
  return eq
}

/** Python `==` on JSON-shaped values (numbers plain): `1 == 1.0 == True`, dicts compare without order. */
export const pyEquals: (a: unknown, b: unknown) => boolean = pyEqualsWith(() => undefined)
