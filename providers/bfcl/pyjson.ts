/**
 * Python values as BFCL's checker sees them, read from JSON that Python's `json` wrote.
 *
 * Plain `JSON.parse` loses what the checker tells apart: `5` (int) from `5.0` (float), a tuple
 * (`{"__tuple__": [...]}` in the oracle files) from a list, and the key order of dicts whose keys
 * look like integers. The model here keeps all three, and the helpers give Python's `==`, `repr`
 * and `type(x).__name__`, which the checker's verdicts and error strings depend on.
 */

/** A Python `float`. Ints are plain JS numbers (bigint beyond 2^53), so floats carry the tag. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** A Python `tuple`: equal to no list, though a `tuple`-typed parameter accepts either. */
export class PyTuple {
  constructor(readonly items: ReadonlyArray<PyValue>) {}
}

/** A Python `int`; bigint only when the literal is beyond Number's exact range. */
export type PyInt = number | bigint

/** A Python `dict` with string keys, in insertion order (JSON objects have string keys only). */
export type PyDict = ReadonlyMap<string, PyValue>

/** A Python `list`. */
export type PyList = ReadonlyArray<PyValue>

export type PyValue = null | boolean | PyInt | PyFloat | string | PyList | PyTuple | PyDict

export type PyTypeName = "NoneType" | "bool" | "int" | "float" | "str" | "list" | "tuple" | "dict"

export const isDict = (v: PyValue): v is PyDict => v instanceof Map
export const isList = (v: PyValue): v is PyList => Array.isArray(v)

/** `type(v).__name__`. */
export const pyType = (v: PyValue): PyTypeName => {
  switch (typeof v) {
    case "string":
      return "str"
    case "number":
    case "bigint":
      return "int"
    case "boolean":
      return "bool"
    default:
      if (v === null) return "NoneType"
      if (Array.isArray(v)) return "list"
      if (v instanceof PyFloat) return "float"
      if (v instanceof PyTuple) return "tuple"
      return "dict"
  }
}

// ---------------------------------------------------------------------------------------------
// Parsing

/** Why a text is not the JSON this module reads; `offset` is a UTF-16 index into the text. */
export interface PyJsonSyntaxError {
  readonly _tag: "PyJsonSyntaxError"
  readonly offset: number
  readonly message: string
}

export type ParseResult = { readonly ok: true; readonly value: PyValue } | { readonly ok: false; readonly error: PyJsonSyntaxError }

// A hand-written scanner: one pass, no intermediate tokens, so parsing a corpus line costs little
// next to checking it. Containers are read by one loop that keeps the open ones on a stack, not by
// a function per kind of value calling the others: V8 inlined those mutually recursive functions
// into one another, so each one's optimised code held copies of the rest, and compiling them was a
// large part of a fresh process's first pass over a corpus.
const CONTROL = /[\x00-\x1f]/
class Scanner {
  pos = 0
  failure: PyJsonSyntaxError | null = null
  // Where the first backslash at or after `backslashFrom` stands (-1: none), kept as the scan
  // moves on; and whether the text has a control character at all (one in a string is an error).
  backslashFrom = Infinity
  backslashAt = -1
  // The containers open around the value being read, innermost last, and for each dict the key
  // its next value goes under (see `value`). The scanner's own, not each value's: `fields` reads
  // every member of a corpus line by a call of its own.
  readonly open: Array<Array<PyValue> | Map<string, PyValue>> = []
  readonly keys: Array<string> = []
  readonly controls: boolean
  constructor(readonly text: string) {
    this.controls = CONTROL.test(text)
  }

  fail(message: string): undefined {
    if (this.failure === null) this.failure = { _tag: "PyJsonSyntaxError", offset: this.pos, message }
    return undefined
  }

  // Python's json writes at most one space between tokens (without indent): that one is skipped
  // here, any more by a loop apart, so what V8 inlines at each of the six places whitespace may
  // stand in `value` is straight code, not six loops to compile.
  skipWs(): void {
    const t = this.text
    let c = t.charCodeAt(this.pos)
    if (c === 32) c = t.charCodeAt(++this.pos)
    if (c === 32 || c === 10 || c === 13 || c === 9) this.skipMoreWs()
  }

  skipMoreWs(): void {
    const t = this.text
    let p = this.pos
    for (;;) {
      const c = t.charCodeAt(p)
      if (c === 32 || c === 10 || c === 13 || c === 9) p++
      else break
    }
    this.pos = p
  }

  /**
   * The value at `pos`, or undefined on failure (null is a legal value). With `skip` (a value the
   * caller never reads), the value is checked as any other, and nothing of it is built.
   */
  value(skip: boolean): PyValue | undefined {
    const t = this.text
    // Empty when a value starts (a failed one ends the scan). A container of a skipped value is
    // SKIPPED_LIST or SKIPPED_DICT.
    const open = this.open
    const keys = this.keys
    // A dict was just opened, or continued by ',': a key and ':' come before the next value.
    let key = false
    for (;;) {
      if (key) {
        key = false
        this.skipWs()
        if (t.charCodeAt(this.pos) !== 34) return this.fail("expected a string key")
        const k = this.string(skip)
        if (k === undefined) return undefined
        this.skipWs()
        if (t.charCodeAt(this.pos) !== 58) return this.fail("expected ':'")
        this.pos++
        keys[open.length - 1] = k
      }
      this.skipWs()
      const c = t.charCodeAt(this.pos)
      let v: PyValue | undefined = undefined
      switch (c) {
        case 34: // "
          v = this.string(skip)
          if (v === undefined) return undefined
          break
        case 123: {
          // {
          this.pos++
          const map = skip ? SKIPPED_DICT : new Map<string, PyValue>()
          this.skipWs()
          if (t.charCodeAt(this.pos) === 125) {
            this.pos++
            v = map
            break
          }
          open.push(map)
          keys.push("")
          key = true
          continue
        }
        case 91: {
          // [
          this.pos++
          // newList, not a [] literal: V8 pretenures a literal's allocation site once most of its
          // arrays survive (as the task files' do, parsed at load), and a process that then parses
          // answers by the thousand would allocate each short-lived list in the old generation: heap
          // growing ~4 MB per scavenge and every scavenge slowed (~60-100 ms more in the bench's line pass).
          const items = skip ? SKIPPED_LIST : newList()
          this.skipWs()
          if (t.charCodeAt(this.pos) === 93) {
            this.pos++
            v = items
            break
          }
          open.push(items)
          keys.push("")
          continue
        }
        case 116: // t
          if (t.startsWith("true", this.pos)) {
            this.pos += 4
            v = true
          }
          break
        case 102: // f
          if (t.startsWith("false", this.pos)) {
            this.pos += 5
            v = false
          }
          break
        case 110: // n
          if (t.startsWith("null", this.pos)) {
            this.pos += 4
            v = null
          }
          break
        case 78: // N
          v = this.nonFinite("NaN", Number.NaN, skip)
          break
        case 73: // I
          v = this.nonFinite("Infinity", Infinity, skip)
          break
        default:
          if (c === 45 || (c >= 48 && c <= 57)) {
            v = this.number(skip)
            if (v === undefined) return undefined
          }
      }
      if (v === undefined) return this.fail(Number.isNaN(c) ? "unexpected end of input" : `unexpected character ${JSON.stringify(t[this.pos])}`)
      // A value read: it goes into the innermost open container, and closes those it ends.
      for (;;) {
        const depth = open.length
        if (depth === 0) return v
        const container = open[depth - 1] as Array<PyValue> | Map<string, PyValue>
        const isList = Array.isArray(container)
        // Python's json keeps the last of duplicate keys, in the first one's position; Map.set does too.
        if (!skip) {
          if (isList) container.push(v)
          else container.set(keys[depth - 1] as string, v)
        }
        this.skipWs()
        const d = t.charCodeAt(this.pos)
        if (d === 44) {
          this.pos++
          key = !isList
          break
        }
        if (d !== (isList ? 93 : 125)) return this.fail(isList ? "expected ',' or ']'" : "expected ',' or '}'")
        this.pos++
        open.pop()
        keys.pop()
        v = skip ? container : (CLOSE[isList ? 0 : 1] as Close)(container)
      }
    }
  }

  /**
   * The object at `pos` (as `value` reads it), building only the members named in `wanted`. Apart
   * from `value`, so that the code V8 optimised for `value` while the task files loaded is still
   * the code that reads each corpus line's answer: with this choice inside it, first met at the
   * first line, V8 threw that code away there and compiled `value` again.
   */
  fields(wanted: ReadonlySet<string>): PyDict | undefined {
    const t = this.text
    this.pos++
    const map = new Map<string, PyValue>()
    this.skipWs()
    if (t.charCodeAt(this.pos) === 125) {
      this.pos++
      return map
    }
    for (;;) {
      this.skipWs()
      if (t.charCodeAt(this.pos) !== 34) return this.fail("expected a string key")
      const key = this.string(false)
      if (key === undefined) return undefined
      this.skipWs()
      if (t.charCodeAt(this.pos) !== 58) return this.fail("expected ':'")
      this.pos++
      const read = wanted.has(key)
      const v = this.value(!read)
      if (v === undefined) return undefined
      if (read) map.set(key, v)
      this.skipWs()
      const c = t.charCodeAt(this.pos)
      if (c === 44) {
        this.pos++
        continue
      }
      if (c === 125) {
        this.pos++
        return map
      }
      return this.fail("expected ',' or '}'")
    }
  }

  /** Python's json reads NaN, Infinity and -Infinity as floats: `word` at `pos` as `x`, or undefined. */
  nonFinite(word: string, x: number, skip: boolean): PyValue | undefined {
    if (!this.text.startsWith(word, this.pos)) return undefined
    this.pos += word.length
    return skip ? 0 : new PyFloat(x)
  }

  number(skip: boolean): PyValue | undefined {
    const t = this.text
    const start = this.pos
    let p = start
    let isFloat = false
    if (t.charCodeAt(p) === 45) {
      p++
      if (t.charCodeAt(p) === 73) {
        this.pos = p
        const v = this.nonFinite("Infinity", -Infinity, skip)
        if (v !== undefined) return v
      }
    }
    const digitsStart = p
    // A leading 0 is the whole integer part, as JSON has it: Python's json reads `01` as 0 and
    // then fails on the 1 (a model's `{"month": 01}` is a decode error upstream, not 1).
    if (t.charCodeAt(p) === 48) p++
    else {
      while (p < t.length) {
        const c = t.charCodeAt(p)
        if (c >= 48 && c <= 57) p++
        else break
      }
    }
    if (p === digitsStart) {
      this.pos = p
      this.fail("expected a digit")
      return undefined
    }
    if (t.charCodeAt(p) === 46) {
      isFloat = true
      p++
      const fracStart = p
      while (p < t.length && t.charCodeAt(p) >= 48 && t.charCodeAt(p) <= 57) p++
      if (p === fracStart) {
        this.pos = p
        this.fail("expected a digit after '.'")
        return undefined
      }
    }
    const e = t.charCodeAt(p)
    if (e === 101 || e === 69) {
      isFloat = true
      p++
      const s = t.charCodeAt(p)
      if (s === 43 || s === 45) p++
      const expStart = p
      while (p < t.length && t.charCodeAt(p) >= 48 && t.charCodeAt(p) <= 57) p++
      if (p === expStart) {
        this.pos = p
        this.fail("expected a digit in the exponent")
        return undefined
      }
    }
    this.pos = p
    if (skip) return 0
    const literal = t.slice(start, p)
    if (isFloat) return new PyFloat(Number(literal))
    const n = Number(literal)
    return Number.isSafeInteger(n) ? n : BigInt(literal)
  }

  string(skip: boolean): string | undefined {
    const t = this.text
    const start = this.pos + 1
    // Fastest path, by the platform's indexOf (a loop per character is slow in cold code): the
    // closing quote, with no backslash before it and no control character in the text.
    if (!this.controls) {
      const quote = t.indexOf('"', start)
      if (quote >= 0) {
        if (this.backslashFrom > start || (this.backslashAt !== -1 && this.backslashAt < start)) {
          this.backslashFrom = start
          this.backslashAt = t.indexOf("\\", start)
        }
        if (this.backslashAt === -1 || this.backslashAt > quote) {
          this.pos = quote + 1
          return skip ? "" : t.slice(start, quote)
        }
      }
    }
    let p = start
    // Fast path: no escapes.
    for (;;) {
      const c = t.charCodeAt(p)
      if (c === 34) {
        this.pos = p + 1
        return t.slice(start, p)
      }
      if (c === 92) break
      if (Number.isNaN(c)) {
        this.pos = p
        this.fail("unterminated string")
        return undefined
      }
      if (c < 32) {
        this.pos = p
        this.fail("control character in string")
        return undefined
      }
      p++
    }
    let out = t.slice(start, p)
    for (;;) {
      const c = t.charCodeAt(p)
      if (c === 34) {
        this.pos = p + 1
        return out
      }
      if (Number.isNaN(c)) {
        this.pos = p
        this.fail("unterminated string")
        return undefined
      }
      if (c < 32) {
        this.pos = p
        this.fail("control character in string")
        return undefined
      }
      if (c !== 92) {
        let q = p + 1
        while (q < t.length) {
          const d = t.charCodeAt(q)
          if (d === 34 || d === 92 || d < 32) break
          q++
        }
        out += t.slice(p, q)
        p = q
        continue
      }
      const esc = t.charCodeAt(p + 1)
      switch (esc) {
        case 34:
          out += '"'
          break
        case 92:
          out += "\\"
          break
        case 47:
          out += "/"
          break
        case 98:
          out += "\b"
          break
        case 102:
          out += "\f"
          break
        case 110:
          out += "\n"
          break
        case 114:
          out += "\r"
          break
        case 116:
          out += "\t"
          break
        case 117: {
          const hex = t.slice(p + 2, p + 6)
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
            this.pos = p
            this.fail("bad \\u escape")
            return undefined
          }
          // Surrogate halves are joined by concatenation, as Python's json does.
          out += String.fromCharCode(parseInt(hex, 16))
          p += 6
          continue
        }
        default:
          this.pos = p
          this.fail("bad escape")
          return undefined
      }
      p += 2
    }
  }
}

/**
 * A new empty list whose elements kind is already the general one (PACKED_ELEMENTS): a list
 * born from Array.of() keeps the small-int kind while it holds only small ints or nothing (and
 * one from `map` is holey), so the checker's code, optimised for the lists it met first, would
 * meet lists of other kinds later, be thrown away and compiled again (most of a fresh process's
 * first pass is such compiling). Every list the checker compares or prints is made by it.
 */
export const newList = (): Array<PyValue> => EMPTY_LIST.slice()
// Copies of it have its kind; slice of an empty list is also far cheaper than Array.of (a generic
// builtin), and no literal's allocation site is involved (see Scanner.value).
const EMPTY_LIST: Array<PyValue> = Array.of(null)
EMPTY_LIST.pop()

// What a skipped list or dict stands for: never added to, never read.
const SKIPPED_LIST: Array<PyValue> = []
const SKIPPED_DICT = new Map<string, PyValue>()

// What a closed container stands for: a list itself, a dict itself unless it is
// `{"__tuple__": [...]}`, a tuple. Called through one site that meets both, which V8 compiles as
// a plain call (see pyRepr): inlined into the scanner, the tuple's construction, never met while
// the task files load, had thrown the scanner's optimised code away at a corpus's first tuple.
type Close = (container: Array<PyValue> | Map<string, PyValue>) => PyValue
const CLOSE: ReadonlyArray<Close> = [
  (list) => list,
  (container) => {
    const map = container as Map<string, PyValue>
    if (map.size !== 1) return map
    const inner = map.get("__tuple__")
    return inner !== undefined && Array.isArray(inner) ? new PyTuple(inner) : map
  }
]

/**
 * Parses one JSON text into Python values as Python's `json.loads` reads it: a number literal with
 * `.`, `e` or `E` is a float, any other is an int (`01` is an error); `NaN`, `Infinity` and
 * `-Infinity` are floats; `{"__tuple__": [...]}` is a tuple.
 */
export const parsePyJson = (text: string): ParseResult => {
  const s = new Scanner(text)
  const value = s.value(false)
  if (value === undefined) return { ok: false, error: s.failure ?? { _tag: "PyJsonSyntaxError", offset: s.pos, message: "invalid JSON" } }
  s.skipWs()
  if (s.pos !== text.length) {
    s.fail("trailing characters")
    return { ok: false, error: s.failure ?? { _tag: "PyJsonSyntaxError", offset: s.pos, message: "trailing characters" } }
  }
  return { ok: true, value }
}

/**
 * `parsePyJson` of a text whose top-level object has members the caller never reads (a corpus
 * line's verdict beside its answer): the same syntax checks, failures and values, but the object
 * holds only the members named in `wanted`, the others checked and not built (less work and
 * garbage per line), and it is a dict even when its only member is `__tuple__`. A text whose top
 * level is not an object is parsed whole.
 */
export const parsePyJsonFields = (text: string, wanted: ReadonlySet<string>): ParseResult => {
  const s = new Scanner(text)
  s.skipWs()
  if (text.charCodeAt(s.pos) !== 123) return parsePyJson(text)
  const value = s.fields(wanted)
  if (value === undefined) return { ok: false, error: s.failure ?? { _tag: "PyJsonSyntaxError", offset: s.pos, message: "invalid JSON" } }
  s.skipWs()
  if (s.pos !== text.length) {
    s.fail("trailing characters")
    return { ok: false, error: s.failure ?? { _tag: "PyJsonSyntaxError", offset: s.pos, message: "trailing characters" } }
  }
  return { ok: true, value }
}

// ---------------------------------------------------------------------------------------------
// Equality

// Numeric view for Python's cross-type numeric equality (True == 1 == 1.0).
const numeric = (v: PyValue): number | bigint | undefined => {
  switch (typeof v) {
    case "number":
    case "bigint":
      return v
    case "boolean":
      return v ? 1 : 0
    default:
      return v instanceof PyFloat ? v.value : undefined
  }
}

/** Python's `a == b` over the value model. */
export const pyEq = (a: PyValue, b: PyValue): boolean => {
  if (a === b) return true
  switch (typeof a) {
    case "string":
      return false
    case "number":
    case "bigint":
    case "boolean": {
      const nb = numeric(b)
      // Loose equality between bigint and number compares the exact mathematical values.
      // eslint-disable-next-line eqeqeq
      return nb !== undefined && a == nb
    }
  }
  if (a === null || b === null) return false
  if (a instanceof PyFloat) {
    const nb = numeric(b)
    return nb !== undefined && a.value == nb
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b)) return false
    return seqEq(a, b)
  }
  if (a instanceof PyTuple) return b instanceof PyTuple && seqEq(a.items, b.items)
  if (a instanceof Map) {
    if (!(b instanceof Map) || a.size !== b.size) return false
    for (const k of a.keys()) {
      const w = b.get(k)
      if (w === undefined || !pyEq(a.get(k) as PyValue, w)) return false
    }
    return true
  }
  return false
}

const seqEq = (a: ReadonlyArray<PyValue>, b: ReadonlyArray<PyValue>): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (!pyEq(a[i] as PyValue, b[i] as PyValue)) return false
  return true
}

/** Python's `x in container` for a list or tuple container (`==` per item). */
export const pyInList = (x: PyValue, container: ReadonlyArray<PyValue>): boolean => {
  for (let i = 0; i < container.length; i++) if (pyEq(x, container[i] as PyValue)) return true
  return false
}

/**
 * Python iteration (`for x in v`) for the containers the checker may be handed: lists and tuples
 * yield items, strings their characters, dicts their keys. `undefined` where Python raises
 * TypeError (numbers, bool, None).
 */
export const pyIter = (v: PyValue): ReadonlyArray<PyValue> | undefined => {
  if (Array.isArray(v)) return v
  if (v instanceof PyTuple) return v.items
  if (typeof v === "string") return Array.from(v)
  if (v instanceof Map) return Array.from(v.keys())
  return undefined
}

/** Python's `x in v` for any container; `undefined` where Python raises TypeError. */
export const pyContains = (v: PyValue, x: PyValue): boolean | undefined => {
  if (Array.isArray(v)) return pyInList(x, v)
  if (v instanceof PyTuple) return pyInList(x, v.items)
  if (typeof v === "string") return typeof x === "string" ? v.includes(x) : undefined
  if (v instanceof Map) return typeof x === "string" ? v.has(x) : isHashable(x) ? false : undefined
  return undefined
}

const isHashable = (x: PyValue): boolean => !(Array.isArray(x) || x instanceof Map)

/** Python's `len(v)`; `undefined` where Python raises TypeError. */
export const pyLen = (v: PyValue): number | undefined => {
  if (Array.isArray(v)) return v.length
  if (v instanceof PyTuple) return v.items.length
  if (typeof v === "string") return Array.from(v).length
  if (v instanceof Map) return v.size
  return undefined
}

// ---------------------------------------------------------------------------------------------
// repr

/** `repr(x)` for a float: shortest round-trip digits, Python's switch to exponent form. */
export const pyFloatRepr = (x: number): string => {
  if (Number.isNaN(x)) return "nan"
  if (x === Infinity) return "inf"
  if (x === -Infinity) return "-inf"
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0"
  const sign = x < 0 ? "-" : ""
  const exp = Math.abs(x).toExponential() // shortest digits that round-trip, like Python's repr
  const eAt = exp.indexOf("e")
  const mantissa = exp.slice(0, eAt)
  const e = Number(exp.slice(eAt + 1))
  const digits = mantissa.replace(".", "")
  if (e >= -4 && e < 16) {
    if (e >= 0) {
      const intPart = digits.length > e + 1 ? digits.slice(0, e + 1) : digits.padEnd(e + 1, "0")
      const frac = digits.length > e + 1 ? digits.slice(e + 1) : "0"
      return `${sign}${intPart}.${frac}`
    }
    return `${sign}0.${"0".repeat(-e - 1)}${digits}`
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits
  const ae = Math.abs(e)
  return `${sign}${m}e${e < 0 ? "-" : "+"}${ae < 10 ? "0" : ""}${ae}`
}

// Characters Python's str.isprintable() rejects: categories Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs (but ' ').
const nonPrintable = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u
const plainAscii = /^[\x20-\x26\x28-\x5b\x5d-\x7e]*$/
const printableAscii = /^[\x20-\x7e]*$/

/** `repr(s)` for a str: Python's choice of quote and its escapes. */
export const pyStrRepr = (s: string): string => {
  if (plainAscii.test(s)) return `'${s}'`
  // Printable ASCII: only the backslash and the chosen quote are escaped, done by native replaces
  // (error texts quote messages full of quotes; a loop per character is slow in cold code).
  if (printableAscii.test(s)) {
    const useDouble = s.includes("'") && !s.includes('"')
    let body = s.includes("\\") ? s.replaceAll("\\", "\\\\") : s
    if (useDouble) return `"${body}"`
    if (body.includes("'")) body = body.replaceAll("'", "\\'")
    return `'${body}'`
  }
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'"
  let out = quote
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number
    if (ch === quote || ch === "\\") out += "\\" + ch
    else if (ch === "\t") out += "\\t"
    else if (ch === "\n") out += "\\n"
    else if (ch === "\r") out += "\\r"
    else if (cp < 0x20 || cp === 0x7f) out += "\\x" + cp.toString(16).padStart(2, "0")
    else if (cp < 0x7f) out += ch
    else if (nonPrintable.test(ch)) {
      if (cp <= 0xff) out += "\\x" + cp.toString(16).padStart(2, "0")
      else if (cp <= 0xffff) out += "\\u" + cp.toString(16).padStart(4, "0")
      else out += "\\U" + cp.toString(16).padStart(8, "0")
    } else out += ch
  }
  return out + quote
}

/** Python's `repr(v)` (which is also `str(v)` for every container). */
export const pyRepr = (v: PyValue): string => (typeof v === "string" ? pyStrRepr(v) : (REPRS[reprKind(v)] as Repr)(v))

// Any other kind's repr is a function of its own, called from pyRepr's one site: V8 compiles a
// call site that has met more than one function as a plain call, and inlines the callee of one
// that has met one. pyRepr, every kind in one body, was inlined whole into each of the error
// texts' callers, and each of their first compiles (most of a fresh process's first pass is
// compiling) carried a copy.
type Repr = (v: PyValue) => string
const reprKind = (v: PyValue): number => {
  switch (typeof v) {
    case "number":
    case "bigint":
      return 0
    case "boolean":
      return 1
  }
  if (v === null) return 2
  if (v instanceof PyFloat) return 3
  if (Array.isArray(v)) return 4
  if (v instanceof PyTuple) return 5
  return 6
}
const REPRS: ReadonlyArray<Repr> = [
  (v) => String(v),
  (v) => (v ? "True" : "False"),
  () => "None",
  (v) => pyFloatRepr((v as PyFloat).value),
  (v) => `[${reprItems(v as PyList)}]`,
  (v) => {
    const items = (v as PyTuple).items
    return items.length === 1 ? `(${pyRepr(items[0] as PyValue)},)` : `(${reprItems(items)})`
  },
  (v) => {
    const d = v as PyDict
    let out = "{"
    for (const k of d.keys()) out += (out.length === 1 ? "" : ", ") + pyStrRepr(k) + ": " + pyRepr(d.get(k) as PyValue)
    return out + "}"
  }
]

// The items' reprs joined by ", ", by concatenation: no array of parts (`map` makes one per list,
// of its own elements kind, which also costs the optimised repr a recompile when a new kind comes).
const reprItems = (xs: ReadonlyArray<PyValue>): string => {
  let out = ""
  for (let i = 0; i < xs.length; i++) out += (i === 0 ? "" : ", ") + pyRepr(xs[i] as PyValue)
  return out
}

/** Python's `str(v)`: the string itself for a str, `repr` otherwise. */
export const pyStr = (v: PyValue): string => (typeof v === "string" ? v : pyRepr(v))

// ---------------------------------------------------------------------------------------------
// Conversion

/**
 * Plain JSON for the value (floats become numbers, tuples arrays, dicts objects): for handing
 * schemas to APIs, where Python's distinctions no longer matter.
 */
export const toPlainJson = (v: PyValue): unknown => {
  switch (typeof v) {
    case "string":
    case "number":
    case "boolean":
      return v
    case "bigint":
      return Number(v)
  }
  if (v === null) return null
  if (v instanceof PyFloat) return v.value
  if (Array.isArray(v)) return v.map(toPlainJson)
  if (v instanceof PyTuple) return v.items.map(toPlainJson)
  const o: Record<string, unknown> = {}
  for (const [k, x] of v as PyDict) {
    // defineProperty only so that a key named "__proto__" stays an own key: for every other key
    // plain assignment makes the same property, and keeps the object in V8's fast mode (objects
    // made by defineProperty are slower to read, and to hash in every inputs id).
    if (k === "__proto__") Object.defineProperty(o, k, { value: toPlainJson(x), enumerable: true, writable: true, configurable: true })
    else o[k] = toPlainJson(x)
  }
  return o
}

/** Python values from plain JSON-like data (JS numbers: integral → int, else float). */
export const fromPlain = (v: unknown): PyValue => {
  if (v === null || v === undefined) return null
  if (typeof v === "string" || typeof v === "boolean" || typeof v === "bigint") return v
  if (typeof v === "number") return Number.isInteger(v) ? v : new PyFloat(v)
  if (v instanceof PyFloat || v instanceof PyTuple || v instanceof Map) return v as PyValue
  if (Array.isArray(v)) return v.map(fromPlain)
  const m = new Map<string, PyValue>()
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) m.set(k, fromPlain(x))
  return m
}

/**
 * Python's `json.dumps(v, indent=indent)` with its defaults (ensure_ascii, `", "`/`": "`
 * separators without indent, `","`/`": "` with it): the text upstream shows a prompt-mode model.
 */
export const pyJsonDumps = (v: PyValue, indent?: number): string => dump(v, indent, 0)

const dump = (v: PyValue, indent: number | undefined, depth: number): string => {
  switch (typeof v) {
    case "string":
      return jsonAsciiString(v)
    case "number":
    case "bigint":
      return String(v)
    case "boolean":
      return v ? "true" : "false"
  }
  if (v === null) return "null"
  if (v instanceof PyFloat) return Number.isFinite(v.value) ? pyFloatRepr(v.value) : v.value > 0 ? "Infinity" : Number.isNaN(v.value) ? "NaN" : "-Infinity"
  const items: Array<string> = []
  let open: string
  let close: string
  if (Array.isArray(v) || v instanceof PyTuple) {
    const xs = Array.isArray(v) ? v : (v as PyTuple).items
    for (const x of xs) items.push(dump(x, indent, depth + 1))
    open = "["
    close = "]"
  } else {
    for (const [k, x] of v as PyDict) items.push(`${jsonAsciiString(k)}: ${dump(x, indent, depth + 1)}`)
    open = "{"
    close = "}"
  }
  if (items.length === 0) return open + close
  if (indent === undefined) return open + items.join(", ") + close
  const pad = "\n" + " ".repeat(indent * (depth + 1))
  return open + pad + items.join("," + pad) + "\n" + " ".repeat(indent * depth) + close
}

/** `json.dumps` of a str with ensure_ascii (its default): non-ASCII and control characters as \\u escapes. */
export const jsonAsciiString = (s: string): string => {
  let out = '"'
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 34) out += '\\"'
    else if (c === 92) out += "\\\\"
    else if (c === 10) out += "\\n"
    else if (c === 13) out += "\\r"
    else if (c === 9) out += "\\t"
    else if (c === 8) out += "\\b"
    else if (c === 12) out += "\\f"
    else if (c < 0x20 || c > 0x7e) out += "\\u" + c.toString(16).padStart(4, "0")
    else out += s[i]
  }
  return out + '"'
}
