/**
 * JSON text as Python's `json.loads` sees it: a number written with a fraction or an exponent
 * is a float (`2.0`), any other an int (`2`). `JSON.parse` cannot tell them apart, and upstream
 * prints the two differently (`refuel_data` says "2.0 GB" or "2 GB", and writes it to the DB).
 * Floats become `PyFloat`; objects are plain objects (telecom keys are never integer-like).
 */
import { Either } from "effect"
import { float, type PyFloat } from "../common/pyjson.ts"

/** A JSON value whose floats are marked. */
export type PyJson = null | boolean | number | string | PyFloat | ReadonlyArray<PyJson> | { readonly [key: string]: PyJson }

export const isPyFloat = (v: unknown): v is PyFloat =>
  typeof v === "object" && v !== null && !Array.isArray(v) && (v as { _tag?: unknown })._tag === "PyFloat"

export interface ParseFailure {
  readonly offset: number
  readonly expected: string
}

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y

/** Parse JSON text, floats marked. */
export const parsePyJson = (text: string): Either.Either<PyJson, ParseFailure> => {
  let i = 0
  let failure: ParseFailure | undefined
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
    i++
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
    return escaped ? (JSON.parse(text.slice(start, i)) as string) : text.slice(start + 1, i - 1)
  }
  const value = (): PyJson => {
    ws()
    const c = text[i]
    if (c === "{") {
      i++
      const out: Record<string, PyJson> = {}
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
        out[key] = v
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
      const out: Array<PyJson> = []
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
    NUMBER.lastIndex = i
    const m = NUMBER.exec(text)
    if (m === null) return fail("a JSON value")
    i += m[0].length
    const n = Number(m[0])
    return m[1] !== undefined || m[2] !== undefined ? float(n) : n
  }
  const result = value()
  ws()
  if (!failure && i !== text.length) fail("end of input")
  return failure ? Either.left(failure) : Either.right(result)
}
