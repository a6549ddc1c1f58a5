/**
 * Canonical JSON (RFC 8785, JCS): object keys sorted by UTF-16 code units, no whitespace,
 * numbers in ECMAScript's shortest round-trip form, strings escaped as JSON.stringify does
 * (which is what JCS prescribes). Values that JSON cannot hold are a typed error with the path
 * where they were met, never silently dropped as JSON.stringify would.
 */
import { Effect, Either, Schema } from "effect"

export class NotJson extends Schema.TaggedError<NotJson>()("NotJson", {
  path: Schema.String,
  reason: Schema.Literal("non-finite-number", "undefined", "function", "bigint", "symbol", "cycle", "non-plain-object")
}) {
  override get message() {
    return `value at ${this.path || "$"} is not JSON (${this.reason})`
  }
}

/** A JSON value, as decoded by JSON.parse. */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

const pathOf = (path: ReadonlyArray<string | number>): string =>
  "$" + path.map((p) => (typeof p === "number" ? `[${p}]` : /^[A-Za-z_$][\w$]*$/.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`)).join("")

const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * A number's canonical text, undefined when JSON cannot hold it: ECMAScript's Number::toString is
 * the shortest round-trip form RFC 8785 mandates; -0 is "0".
 */
export const numberText = (n: number): string | undefined => (Number.isFinite(n) ? (Object.is(n, -0) ? "0" : String(n)) : undefined)

// Deeper than this, the fast pass gives up and the checked one decides (a cycle, or deep data).
const FAST_DEPTH = 256

/**
 * The canonical text when `v` is JSON, else undefined: the same text as `checked` writes, without
 * its bookkeeping (the path, the cycle set), and taking the text recorded for a value met inside
 * (`remember`). Sorting with no comparator is by UTF-16 code units, as `compareKeys`.
 */
const fast = (v: unknown, depth: number): string | undefined => {
  switch (typeof v) {
    case "string":
      return JSON.stringify(v)
    case "boolean":
      return v ? "true" : "false"
    case "number":
      return numberText(v)
    case "object":
      break
    default:
      return undefined
  }
  if (v === null) return "null"
  const known = remembered.get(v)
  if (known !== undefined) return known
  if (depth > FAST_DEPTH) return undefined
  if (Array.isArray(v)) {
    let out = "["
    for (let i = 0; i < v.length; i++) {
      const t = fast(v[i], depth + 1)
      if (t === undefined) return undefined
      out += i === 0 ? t : "," + t
    }
    return out + "]"
  }
  const proto = Object.getPrototypeOf(v)
  if (proto !== Object.prototype && proto !== null) return undefined
  const record = v as Record<string, unknown>
  const keys = Object.keys(record).sort()
  let out = "{"
  for (const k of keys) {
    const x = record[k]
    if (x === undefined) continue
    const t = fast(x, depth + 1)
    if (t === undefined) return undefined
    out += (out.length === 1 ? "" : ",") + JSON.stringify(k) + ":" + t
  }
  return out + "}"
}

/** Canonical JSON text of a value, or the first place it is not JSON. */
export const canonicalEither = (value: unknown): Either.Either<string, NotJson> => {
  // Most values are JSON: written once by the fast pass; otherwise `checked` says where it is not.
  const text = fast(value, 0)
  return text !== undefined ? Either.right(text) : checked(value)
}

const checked = (value: unknown): Either.Either<string, NotJson> => {
  const seen = new Set<object>()
  const path: Array<string | number> = []
  let failure: NotJson | undefined
  const fail = (reason: NotJson["reason"]): string => {
    failure ??= new NotJson({ path: pathOf(path), reason })
    return ""
  }
  const write = (v: unknown): string => {
    switch (typeof v) {
      case "string":
        return JSON.stringify(v)
      case "boolean":
        return v ? "true" : "false"
      case "number":
        return numberText(v) ?? fail("non-finite-number")
      case "undefined":
        return fail("undefined")
      case "function":
        return fail("function")
      case "bigint":
        return fail("bigint")
      case "symbol":
        return fail("symbol")
    }
    if (v === null) return "null"
    const obj = v as object
    if (seen.has(obj)) return fail("cycle")
    seen.add(obj)
    let out: string
    if (Array.isArray(obj)) {
      const parts: Array<string> = []
      for (let i = 0; i < obj.length; i++) {
        path.push(i)
        parts.push(write(obj[i]))
        path.pop()
        if (failure) break
      }
      out = "[" + parts.join(",") + "]"
    } else {
      const proto = Object.getPrototypeOf(obj)
      if (proto !== Object.prototype && proto !== null) {
        out = fail("non-plain-object")
      } else {
        const record = obj as Record<string, unknown>
        const keys = Object.keys(record).sort(compareKeys)
        const parts: Array<string> = []
        for (const k of keys) {
          // An absent optional property (undefined) is not part of a JSON object: skip it, as
          // Schema-encoded optional fields leave it. Undefined inside arrays stays an error.
          if (record[k] === undefined) continue
          path.push(k)
          parts.push(JSON.stringify(k) + ":" + write(record[k]))
          path.pop()
          if (failure) break
        }
        out = "{" + parts.join(",") + "}"
      }
    }
    seen.delete(obj)
    return out
  }
  const text = write(value)
  return failure ? Either.left(failure) : Either.right(text)
}

/** Canonical JSON text of a value, failing with `NotJson`. */
export const canonical = (value: unknown): Effect.Effect<string, NotJson> => canonicalEither(value)

/** Canonical JSON text of a value known to be JSON (decoded data); a non-JSON value is a defect. */
export const canonicalUnsafe = (value: unknown): string => {
  const text = canonicalEither(value)
  if (text._tag === "Left") throw text.left
  return text.right
}

// Canonical texts made elsewhere for values that are immutable data (a provider's tool specs read
// from a prepared form that stored their texts), so a caller about to write one can take it instead.
const remembered = new WeakMap<object, string>()

/** Records `text` as the canonical JSON text of `value`; only for a text made from exactly that value. */
export const remember = (value: object, text: string): void => {
  remembered.set(value, text)
}

/** The canonical text recorded for `value` by `remember`, if any. */
export const rememberedText = (value: object): string | undefined => remembered.get(value)
