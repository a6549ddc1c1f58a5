/**
 * JSON text to values that keep every object's key order. `JSON.parse` cannot: a JS object
 * lists integer-like keys ("1234567890", the retail product and item ids) first and in numeric
 * order, while Python dicts, and so upstream's outputs, keep the order of the file.
 */
import { Either } from "effect"

export type OrderedJson = null | boolean | number | string | ReadonlyArray<OrderedJson> | OrderedObject

/** An object as a Map: insertion order is the file's order, whatever the keys look like. */
export type OrderedObject = ReadonlyMap<string, OrderedJson>

export interface JsonSyntaxError {
  readonly offset: number
  readonly expected: string
}

/** How a caller builds its values: objects from their entries in file order, numbers from their literal. */
export interface JsonBuilders<V> {
  readonly object: (entries: ReadonlyArray<readonly [string, V]>) => V
  /** `isFloat`: the literal has a fraction or an exponent (Python's `json.loads` makes it a float). */
  readonly number: (literal: string, isFloat: boolean) => V
}

/** Builders for a value type that also holds JSON's null, booleans, strings and arrays as they are. */
type BuildersOf<V> = [null | boolean | string | Array<V>] extends [V] ? JsonBuilders<V> : never

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y

/*
 * The lexical pieces every JSON reader here shares (this scanner and banking's `jsonLoads`, which
 * keeps its own structure for CPython's error texts and positions).
 */

/** The index after the JSON white space (space, tab, newline, carriage return) at `i`. */
export const skipWhitespace = (text: string, i: number): number => {
  let j = i
  for (;;) {
    const c = text.charCodeAt(j)
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) j++
    else return j
  }
}

/** JSON's `null`, `true` or `false` at `i`, with its length; undefined when none stands there. */
export const literalAt = (text: string, i: number): readonly [null | boolean, number] | undefined =>
  text.startsWith("null", i) ? [null, 4] : text.startsWith("true", i) ? [true, 4] : text.startsWith("false", i) ? [false, 5] : undefined

/** The JSON number literal at `i`; `isFloat`: it has a fraction or an exponent (Python's `json.loads` makes it a float). */
export const numberAt = (text: string, i: number): { readonly literal: string; readonly isFloat: boolean } | undefined => {
  NUMBER.lastIndex = i
  const m = NUMBER.exec(text)
  return m === null ? undefined : { literal: m[0], isFloat: m[1] !== undefined || m[2] !== undefined }
}

/** Parse JSON text, each object and number built by the caller; the first syntax error wins. */
export const parseJsonWith = <V>(text: string, build: BuildersOf<V>): Either.Either<V, JsonSyntaxError> => {
  // BuildersOf guarantees V holds these shapes, so a Value is a V.
  type Value = V | null | boolean | string | Array<V>
  let i = 0
  let failure: JsonSyntaxError | undefined
  const fail = (expected: string): null => {
    failure ??= { offset: i, expected }
    return null
  }
  const ws = () => {
    i = skipWhitespace(text, i)
  }
  const seen = noBackslashYet()
  const str = (): string | null => {
    const start = i
    // The closing quote by indexOf when no backslash comes before it (a loop per character is
    // slow in cold code); otherwise character by character, as before.
    const quote = text.indexOf('"', start + 1)
    if (quote >= 0) {
      const backslash = backslashFrom(text, start + 1, seen)
      if (backslash < 0 || backslash > quote) {
        i = quote + 1
        return text.slice(start + 1, quote)
      }
    }
    i++ // opening quote
    let escaped = false
    for (;;) {
      if (i >= text.length) return fail("closing quote")
      const c = text.charCodeAt(i)
      if (c === 0x22) break
      if (c === 0x5c) {
        escaped = true
        i += 2
      } else i++
    }
    i++
    // Escapes are rare in the data: let the platform decode them exactly.
    return escaped ? (JSON.parse(text.slice(start, i)) as string) : text.slice(start + 1, i - 1)
  }
  const value = (): Value => {
    ws()
    const c = text[i]
    if (c === "{") {
      i++
      const entries: Array<readonly [string, V]> = []
      ws()
      if (text[i] === "}") {
        i++
        return build.object(entries)
      }
      for (;;) {
        ws()
        if (text[i] !== '"') return fail("object key")
        const key = str()
        if (key === null) return null
        ws()
        if (text[i] !== ":") return fail("':'")
        i++
        const v = value()
        if (failure) return null
        entries.push([key, v as V])
        ws()
        if (text[i] === ",") i++
        else if (text[i] === "}") {
          i++
          return build.object(entries)
        } else return fail("',' or '}'")
      }
    }
    if (c === "[") {
      i++
      const out: Array<V> = []
      ws()
      if (text[i] === "]") {
        i++
        return out
      }
      for (;;) {
        const v = value()
        if (failure) return null
        out.push(v as V)
        ws()
        if (text[i] === ",") i++
        else if (text[i] === "]") {
          i++
          return out
        } else return fail("',' or ']'")
      }
    }
    if (c === '"') return str()
    const literal = literalAt(text, i)
    if (literal !== undefined) {
      i += literal[1]
      return literal[0]
    }
    const n = numberAt(text, i)
    if (n === undefined) return fail("a JSON value")
    i += n.literal.length
    return build.number(n.literal, n.isFloat)
  }
  const result = value()
  ws()
  if (!failure && i !== text.length) fail("end of input")
  return failure ? Either.left(failure) : Either.right(result as V)
}

const ordered: BuildersOf<OrderedJson> = {
  object: (entries) => new Map(entries),
  number: (literal) => Number(literal)
}

/** Parse JSON text, objects as Maps in file order. */
export const parseOrdered = (text: string): Either.Either<OrderedJson, JsonSyntaxError> => parseJsonWith<OrderedJson>(text, ordered)

export const isOrderedObject = (v: OrderedJson): v is OrderedObject => v instanceof Map

/**
 * Where the first backslash at or after `from` stands in a text (-1: none), kept through one
 * scan: it asks for each string in turn, and a DB's strings have almost no escapes, so an indexOf
 * per string would read the rest of the text each time.
 */
interface Backslashes {
  from: number
  at: number
}
const noBackslashYet = (): Backslashes => ({ from: Infinity, at: -1 })
const backslashFrom = (text: string, j: number, seen: Backslashes): number => {
  if (seen.from <= j && (seen.at === -1 || seen.at >= j)) return seen.at
  seen.from = j
  seen.at = text.indexOf("\\", j)
  return seen.at
}

/**
 * The index after the JSON string whose opening quote is at `i`; -1 when it is not closed. The
 * platform's indexOf finds the closing quote (a scan character by character is slow before the
 * JIT warms, and a DB is mostly strings); an escape before it is stepped over, as the quote it
 * may escape.
 */
const stringEnd = (text: string, i: number, seen: Backslashes): number => {
  let j = i + 1
  for (;;) {
    const quote = text.indexOf('"', j)
    if (quote < 0) return -1
    const backslash = backslashFrom(text, j, seen)
    if (backslash < 0 || backslash > quote) return quote + 1
    j = backslash + 2
  }
}

// The characters a value's end depends on: quotes (strings are skipped whole) and brackets.
const STRUCTURE = /["[\]{}]/g

/**
 * The index after the JSON value that starts at `i`, by strings and brackets only (nothing else
 * is checked: a caller parses the slice); -1 when no value's end is found.
 */
const valueEnd = (text: string, i: number, seen: Backslashes): number => {
  const c = text.charCodeAt(i)
  if (c === 0x22) return stringEnd(text, i, seen)
  if (c !== 0x7b && c !== 0x5b) {
    let j = i
    for (;;) {
      const d = text.charCodeAt(j)
      if (j >= text.length || d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) return j > i ? j : -1
      j++
    }
  }
  // Everything but quotes and brackets is passed over by the regular expression, natively.
  let depth = 0
  let j = i
  for (;;) {
    STRUCTURE.lastIndex = j
    const m = STRUCTURE.exec(text)
    if (m === null) return -1
    j = m.index
    const d = text.charCodeAt(j)
    if (d === 0x22) {
      j = stringEnd(text, j, seen)
      if (j < 0) return -1
      continue
    }
    if (d === 0x7b || d === 0x5b) depth++
    else {
      depth--
      if (depth === 0) return j + 1
    }
    j++
  }
}

/** One member of an object scanned by `objectMembers`: its key and where its value's text stands. */
export interface MemberSpan {
  readonly key: string
  readonly start: number
  readonly end: number
}

/**
 * The members of the JSON object at `i`, in file order, their values left as text spans, with
 * the index after the object; undefined when the text is not plainly such an object (a caller
 * then takes the full parse, which says where it fails). Keys are decoded as `JSON.parse` does.
 */
export const objectMembers = (
  text: string,
  i: number
): { readonly members: ReadonlyArray<MemberSpan>; readonly end: number } | undefined => {
  let j = skipWhitespace(text, i)
  if (text.charCodeAt(j) !== 0x7b) return undefined
  j = skipWhitespace(text, j + 1)
  const seen = noBackslashYet()
  const members: Array<MemberSpan> = []
  if (text.charCodeAt(j) === 0x7d) return { members, end: j + 1 }
  for (;;) {
    if (text.charCodeAt(j) !== 0x22) return undefined
    const keyEnd = stringEnd(text, j, seen)
    if (keyEnd < 0) return undefined
    const raw = text.slice(j + 1, keyEnd - 1)
    let key: string
    try {
      key = raw.includes("\\") ? (JSON.parse(text.slice(j, keyEnd)) as string) : raw
    } catch {
      return undefined
    }
    j = skipWhitespace(text, keyEnd)
    if (text.charCodeAt(j) !== 0x3a) return undefined
    const start = skipWhitespace(text, j + 1)
    const end = valueEnd(text, start, seen)
    if (end < 0) return undefined
    members.push({ key, start, end })
    j = skipWhitespace(text, end)
    const c = text.charCodeAt(j)
    if (c === 0x7d) return { members, end: j + 1 }
    if (c !== 0x2c) return undefined
    j = skipWhitespace(text, j + 1)
  }
}

/**
 * The first member named `key` of the JSON object at `i`, scanning only as far as it; undefined
 * when there is none or the text before it is not plainly such an object (as `objectMembers`).
 */
export const memberOf = (text: string, i: number, key: string): MemberSpan | undefined => {
  let j = skipWhitespace(text, i)
  if (text.charCodeAt(j) !== 0x7b) return undefined
  j = skipWhitespace(text, j + 1)
  const seen = noBackslashYet()
  for (;;) {
    if (text.charCodeAt(j) !== 0x22) return undefined
    const keyEnd = stringEnd(text, j, seen)
    if (keyEnd < 0) return undefined
    const raw = text.slice(j + 1, keyEnd - 1)
    let name: string
    try {
      name = raw.includes("\\") ? (JSON.parse(text.slice(j, keyEnd)) as string) : raw
    } catch {
      return undefined
    }
    j = skipWhitespace(text, keyEnd)
    if (text.charCodeAt(j) !== 0x3a) return undefined
    const start = skipWhitespace(text, j + 1)
    const end = valueEnd(text, start, seen)
    if (end < 0) return undefined
    if (name === key) return { key, start, end }
    j = skipWhitespace(text, end)
    if (text.charCodeAt(j) !== 0x2c) return undefined
    j = skipWhitespace(text, j + 1)
  }
}
