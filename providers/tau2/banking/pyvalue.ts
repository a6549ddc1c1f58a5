/**
 * Python values as world records hold them. Banking records are plain dicts (no pydantic
 * coercion), so an int stays an int and a float stays a float (`-50.0` prints as `-50.0`).
 * A JS number cannot tell `50` from `50.0`, so a float whose value is integral (or not finite,
 * or -0.0) is kept as the tagged object `{"$float": 50}`; every other number is what it looks
 * like (non-integral numbers are floats, integral ones ints). The tag is plain JSON, so World's
 * digest covers it.
 *
 * Also here: `json.loads` with CPython's error texts (tools print them), `str()`/`repr()`,
 * `format(x, ".2f")` with Python's exact rounding, and the `json.dumps` views of these values.
 */
import { Either } from "effect"
import type { Canonical } from "../../../src/index.ts"
import { literalAt, numberAt, skipWhitespace } from "../common/orderedJson.ts"
import { dict, float, type PyValue } from "../common/pyjson.ts"
import { pyReprWith, pyTypeName, reprNumber } from "../common/pyrepr.ts"

export type Py = Canonical.Json

const FLOAT = "$float"

/** A Python float as a record value. */
export const pyFloat = (x: number): Py => {
  if (Number.isNaN(x)) return { [FLOAT]: "nan" }
  if (x === Infinity) return { [FLOAT]: "inf" }
  if (x === -Infinity) return { [FLOAT]: "-inf" }
  if (Object.is(x, -0)) return { [FLOAT]: "-0" }
  return Number.isInteger(x) ? { [FLOAT]: x } : x
}

/** The number behind a tagged float, or undefined when `v` is no float tag. */
export const floatTag = (v: Py | undefined): number | undefined => {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined
  const keys = Object.keys(v)
  if (keys.length !== 1 || keys[0] !== FLOAT) return undefined
  const t = (v as { readonly [k: string]: Canonical.Json })[FLOAT]
  if (typeof t === "number") return t
  return t === "nan" ? NaN : t === "inf" ? Infinity : t === "-inf" ? -Infinity : t === "-0" ? -0 : undefined
}

export const isFloat = (v: Py | undefined): boolean =>
  floatTag(v) !== undefined || (typeof v === "number" && !Number.isInteger(v))

export const isInt = (v: Py | undefined): v is number => typeof v === "number" && Number.isInteger(v)

/** int or float (not bool), as `isinstance(v, (int, float))` minus bool. */
export const isNumber = (v: Py | undefined): boolean => typeof v === "number" || floatTag(v) !== undefined

/** The numeric value of an int, float or bool; undefined otherwise. */
export const num = (v: Py | undefined): number | undefined =>
  typeof v === "number" ? v : typeof v === "boolean" ? (v ? 1 : 0) : floatTag(v)

export const isDict = (v: Py | undefined): v is { readonly [k: string]: Canonical.Json } =>
  v !== null && typeof v === "object" && !Array.isArray(v) && floatTag(v) === undefined

export const pyType = (v: Py | undefined): string => pyTypeName(v, isFloat)

/** Python truthiness. */
export const truthy = (v: Py | undefined): boolean => {
  if (v === null || v === undefined || v === false) return false
  if (v === true) return true
  if (typeof v === "number") return v !== 0
  if (typeof v === "string") return v.length > 0
  if (Array.isArray(v)) return v.length > 0
  const f = floatTag(v)
  if (f !== undefined) return f !== 0
  return Object.keys(v).length > 0
}

// -- str / repr ------------------------------------------------------------------------------------

export { reprNumber }

/** `repr()`, strings escaped as CPython does, tagged floats as floats. */
export const pyRepr: (v: Py | undefined) => string = pyReprWith({ floatOf: floatTag, escapeUnprintable: true })

/** `str(v)` (what an f-string prints). */
export const pyStr = (v: Py | undefined): string => (typeof v === "string" ? v : pyRepr(v))

/**
 * `format(x, ".Nf")`: the exact binary value rounded half to even (JS toFixed sends exact
 * ties up).
 */
export const formatFixed = (x: number, digits: number): string => {
  if (Number.isNaN(x)) return "nan"
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf"
  const negative = x < 0 || Object.is(x, -0)
  const a = Math.abs(x)
  // a = mant * 2^exp exactly
  const buf = new DataView(new ArrayBuffer(8))
  buf.setFloat64(0, a)
  const hi = buf.getUint32(0)
  const lo = buf.getUint32(4)
  const biased = (hi >>> 20) & 0x7ff
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo)
  let exp: number
  if (biased === 0) exp = -1074
  else {
    mant |= 1n << 52n
    exp = biased - 1075
  }
  const scale = 10n ** BigInt(digits)
  let q: bigint
  if (exp >= 0) q = (mant << BigInt(exp)) * scale
  else {
    const den = 1n << BigInt(-exp)
    const n = mant * scale
    q = n / den
    const r2 = (n % den) * 2n
    if (r2 > den || (r2 === den && q % 2n === 1n)) q += 1n
  }
  let s = q.toString()
  if (digits > 0) {
    s = s.padStart(digits + 1, "0")
    s = `${s.slice(0, -digits)}.${s.slice(-digits)}`
  }
  return (negative ? "-" : "") + s
}

/** `float(x)` for an int/float/bool value (undefined for other types). */
export const toFloat = (v: Py | undefined): number | undefined => num(v)

// -- json.dumps views -----------------------------------------------------------------------------

/** A record value as pyjson's `PyValue` (floats marked), for `json.dumps` emulation. */
export const toPyValue = (v: Py | undefined): PyValue => {
  if (v === undefined || v === null) return null
  if (typeof v === "number") return Number.isInteger(v) ? v : float(v)
  if (typeof v === "string" || typeof v === "boolean") return v
  if (Array.isArray(v)) return v.map(toPyValue)
  const f = floatTag(v)
  if (f !== undefined) return float(f)
  return dict(Object.entries(v).map(([k, x]) => [k, toPyValue(x)] as const))
}

// -- json.loads -------------------------------------------------------------------------------------

/** A `JSONDecodeError` message: `msg: line L column C (char P)`, positions in code points. */
const decodeError = (msg: string, text: string, pos: number): string => {
  // JS indexes UTF-16 units; Python indexes code points.
  const before = text.slice(0, pos)
  const cpPos = Array.from(before).length
  const nl = before.lastIndexOf("\n")
  const line = before.split("\n").length
  const col = nl === -1 ? cpPos + 1 : Array.from(before.slice(nl + 1)).length + 1
  return `${msg}: line ${line} column ${col} (char ${cpPos})`
}

const keyOrders = new WeakMap<object, ReadonlyArray<string>>()

/**
 * A parsed object's entries in the text's order (Python's dict order). A JS object lists
 * integer-like keys ("123") first; the parser remembers the real order.
 */
export const orderedEntries = (v: { readonly [k: string]: Canonical.Json }): ReadonlyArray<readonly [string, Canonical.Json]> => {
  const order = keyOrders.get(v)
  return order === undefined ? Object.entries(v) : order.map((k) => [k, v[k]!] as const)
}

class Fail {
  constructor(readonly message: string) {}
}


/**
 * `json.loads(text)` (or with `parse_int=float`): the value, or the `JSONDecodeError` text.
 * Objects keep key order (and, as Python's dict, the last of repeated keys at its first place).
 */
export const jsonLoads = (text: string, parseIntAsFloat = false): Either.Either<Py, string> => {
  if (text.startsWith("\ufeff")) return Either.left(decodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0))
  let i = 0
  const ws = () => {
    i = skipWhitespace(text, i)
  }
  const fail = (msg: string, pos: number): never => {
    throw new Fail(decodeError(msg, text, pos))
  }
  const str = (): string => {
    const begin = i - 1 // the opening quote
    let out = ""
    for (;;) {
      let j = i
      while (j < text.length) {
        const c = text.charCodeAt(j)
        if (c === 0x22 || c === 0x5c || c < 0x20) break
        j++
      }
      out += text.slice(i, j)
      if (j >= text.length) return fail("Unterminated string starting at", begin)
      const c = text.charCodeAt(j)
      if (c === 0x22) {
        i = j + 1
        return out
      }
      if (c < 0x20) return fail("Invalid control character at", j)
      // backslash
      const e = text[j + 1]
      if (e === undefined) return fail("Unterminated string starting at", begin)
      const simple: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }
      if (e in simple) {
        out += simple[e]
        i = j + 2
        continue
      }
      if (e !== "u") return fail("Invalid \\escape", j)
      const h = text.slice(j + 2, j + 6)
      if (!/^[0-9a-fA-F]{4}$/.test(h)) return fail("Invalid \\uXXXX escape", j + 1)
      let code = parseInt(h, 16)
      i = j + 6
      if (code >= 0xd800 && code <= 0xdbff && text[i] === "\\" && text[i + 1] === "u") {
        const h2 = text.slice(i + 2, i + 6)
        if (!/^[0-9a-fA-F]{4}$/.test(h2)) return fail("Invalid \\uXXXX escape", i + 1)
        const low = parseInt(h2, 16)
        if (low >= 0xdc00 && low <= 0xdfff) {
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00)
          i += 6
        }
      }
      out += String.fromCodePoint(code)
    }
  }
  const value = (): Py => {
    const c = text[i]
    if (c === '"') {
      i++
      return str()
    }
    if (c === "{") {
      i++
      const out: Record<string, Py> = {}
      const order: Array<string> = []
      keyOrders.set(out, order)
      ws()
      if (text[i] === "}") {
        i++
        return out
      }
      for (;;) {
        if (text[i] !== '"') return fail("Expecting property name enclosed in double quotes", i)
        i++
        const key = str()
        ws()
        if (text[i] !== ":") return fail("Expecting ':' delimiter", i)
        i++
        ws()
        if (i >= text.length) return fail("Expecting value", i)
        const v = value()
        if (!Object.hasOwn(out, key)) order.push(key)
        if (key === FLOAT || key === "__proto__") Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true })
        else out[key] = v
        ws()
        if (text[i] === "}") {
          i++
          return out
        }
        if (text[i] !== ",") return fail("Expecting ',' delimiter", i)
        i++
        ws()
      }
    }
    if (c === "[") {
      i++
      const out: Array<Py> = []
      ws()
      if (text[i] === "]") {
        i++
        return out
      }
      for (;;) {
        ws()
        if (i >= text.length) return fail("Expecting value", i)
        out.push(value())
        ws()
        if (text[i] === "]") {
          i++
          return out
        }
        if (text[i] !== ",") return fail("Expecting ',' delimiter", i)
        i++
      }
    }
    const literal = literalAt(text, i)
    if (literal !== undefined) {
      i += literal[1]
      return literal[0]
    }
    if (text.startsWith("NaN", i)) {
      i += 3
      return pyFloat(NaN)
    }
    if (text.startsWith("Infinity", i)) {
      i += 8
      return pyFloat(Infinity)
    }
    if (text.startsWith("-Infinity", i)) {
      i += 9
      return pyFloat(-Infinity)
    }
    const n = numberAt(text, i)
    if (n === undefined) return fail("Expecting value", i)
    i += n.literal.length
    if (!n.isFloat) return parseIntAsFloat ? pyFloat(Number(n.literal)) : Number(n.literal)
    return pyFloat(Number(n.literal))
  }
  try {
    ws()
    const v = value()
    ws()
    if (i !== text.length) fail("Extra data", i)
    return Either.right(v)
  } catch (e) {
    if (e instanceof Fail) return Either.left(e.message)
    throw e
  }
}
