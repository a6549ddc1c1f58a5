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

/** Parse JSON text, objects as Maps in file order. */
export const parseOrdered = (text: string): Either.Either<OrderedJson, JsonSyntaxError> => {
  let i = 0
  let failure: JsonSyntaxError | undefined
  const fail = (expected: string): null => {
    failure ??= { offset: i, expected }
    return null
  }
  const ws = () => {
    for (;;) {
      const c = text.charCodeAt(i)
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++
      else return
    }
  }
  const str = (): string | null => {
    const start = i
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
  const value = (): OrderedJson => {
    ws()
    const c = text[i]
    if (c === "{") {
      i++
      const out = new Map<string, OrderedJson>()
      ws()
      if (text[i] === "}") {
        i++
        return out
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
        out.set(key, v)
        ws()
        if (text[i] === ",") i++
        else if (text[i] === "}") {
          i++
          return out
        } else return fail("',' or '}'")
      }
    }
    if (c === "[") {
      i++
      const out: Array<OrderedJson> = []
      ws()
      if (text[i] === "]") {
        i++
        return out
      }
      for (;;) {
        const v = value()
        if (failure) return null
        out.push(v)
        ws()
        if (text[i] === ",") i++
        else if (text[i] === "]") {
          i++
          return out
        } else return fail("',' or ']'")
      }
    }
    if (c === '"') return str()
    if (text.startsWith("true", i)) {
      i += 4
      return true
    }
    if (text.startsWith("false", i)) {
      i += 5
      return false
    }
    if (text.startsWith("null", i)) {
      i += 4
      return null
    }
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 64))
    if (m === null) return fail("a JSON value")
    i += m[0].length
    return Number(m[0])
  }
  const result = value()
  ws()
  if (!failure && i !== text.length) fail("end of input")
  return failure ? Either.left(failure) : Either.right(result)
}

export const isOrderedObject = (v: OrderedJson): v is OrderedObject => v instanceof Map
