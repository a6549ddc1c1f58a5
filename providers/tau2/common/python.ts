/**
 * The little of Python's runtime behaviour the DB domains' tools (retail, airline) show an agent
 * when it passes arguments of the wrong shape: type names, `str()`/`repr()`, dict-key lookups,
 * iteration, `str.lower` and pydantic's string validation (keyword binding is toolkit.ts). Agents
 * do send such calls, and upstream answers them with the exception's text.
 */
import { Either } from "effect"
import type { Canonical } from "../../../src/index.ts"
import { pyEquals } from "./pyjson.ts"
import { pyReprWith, pyTypeName } from "./pyrepr.ts"

/** Numbers decoded from JSON: integral ones are taken as ints, the others as floats. */
export const pyType = (v: Canonical.Json | undefined): string => pyTypeName(v, (x) => typeof x === "number" && !Number.isInteger(x))

/** Python `repr()` of a JSON-decoded value (integral numbers are taken as ints). */
export const pyRepr: (v: Canonical.Json | undefined) => string = pyReprWith({ floatOf: () => undefined, escapeUnprintable: false })

/** Python `str()`: strings as they are, everything else as `repr()`. */
export const pyStr = (v: Canonical.Json | undefined): string => (typeof v === "string" ? v : pyRepr(v))

/**
 * The key for `x in some_dict`: a string is looked up; a list or dict raises; any other value
 * simply is not a key of a dict of strings (Right(undefined)).
 */
export const asKey = (v: Canonical.Json | undefined): Either.Either<string | undefined, string> =>
  typeof v === "string"
    ? Either.right(v)
    : v !== null && typeof v === "object"
      ? Either.left(`unhashable type: '${pyType(v)}'`)
      : Either.right(undefined)

/**
 * `for x in xs: xs.count(x)`: a list, or a string's characters (str.count of one character
 * counts it the same way); a dict iterates but has no `count`; anything else is not iterable.
 */
export const asCountable = (v: Canonical.Json | undefined): Either.Either<ReadonlyArray<Canonical.Json>, string> => {
  if (Array.isArray(v)) return Either.right(v as ReadonlyArray<Canonical.Json>)
  if (typeof v === "string") return Either.right(Array.from(v))
  if (v !== null && typeof v === "object") {
    return Object.keys(v).length === 0 ? Either.right([]) : Either.left("'dict' object has no attribute 'count'")
  }
  return Either.left(`'${pyType(v)}' object is not iterable`)
}

/** `len(xs)` then `zip(..., xs)`: a list, a string's characters, a dict's keys. */
export const asSized = (v: Canonical.Json | undefined): Either.Either<ReadonlyArray<Canonical.Json>, string> => {
  if (Array.isArray(v)) return Either.right(v as ReadonlyArray<Canonical.Json>)
  if (typeof v === "string") return Either.right(Array.from(v))
  if (v !== null && typeof v === "object") return Either.right(Object.keys(v))
  return Either.left(`object of type '${pyType(v)}' has no len()`)
}

/**
 * `all(char in "0123456789+-*\/(). " for char in expression)` for a non-string expression:
 * undefined when every element passes (then `eval` refuses the type), else the message.
 */
export const calculateArgumentError = (v: Canonical.Json | undefined, allowed: string): string => {
  const elements: ReadonlyArray<Canonical.Json> | undefined = Array.isArray(v)
    ? (v as ReadonlyArray<Canonical.Json>)
    : v !== null && typeof v === "object"
      ? Object.keys(v)
      : undefined
  if (elements === undefined) return `'${pyType(v)}' object is not iterable`
  for (const e of elements) {
    if (typeof e !== "string") return `'in <string>' requires string as left operand, not ${pyType(e)}`
    if (!allowed.includes(e)) return "Invalid characters in expression"
  }
  return "eval() arg 1 must be a string, bytes or code object"
}

export const lower = (v: Canonical.Json | undefined): Either.Either<string, string> =>
  typeof v === "string" ? Either.right(v.toLowerCase()) : Either.left(`'${pyType(v)}' object has no attribute 'lower'`)

/** `a == b` between JSON values: numbers equal numbers and booleans (True == 1). */
export const pyEq = (a: Canonical.Json | undefined, b: Canonical.Json | undefined): boolean => pyEquals(a, b)

export const count = (xs: ReadonlyArray<Canonical.Json>, x: Canonical.Json): number => xs.reduce<number>((n, y) => (pyEq(y, x) ? n + 1 : n), 0)

/**
 * Pydantic's text for string fields given a non-string (pydantic 2, as the oracle's 2.13), or
 * undefined when every field is a string.
 */
export const validateStrings = (
  model: string,
  fields: ReadonlyArray<readonly [string, Canonical.Json | undefined]>
): string | undefined => {
  const errors = fields.filter(([, v]) => typeof v !== "string")
  if (errors.length === 0) return undefined
  const lines = [`${errors.length} validation error${errors.length > 1 ? "s" : ""} for ${model}`]
  for (const [name, v] of errors) {
    lines.push(name)
    lines.push(`  Input should be a valid string [type=string_type, input_value=${pyRepr(v)}, input_type=${pyType(v)}]`)
    lines.push("    For further information visit https://errors.pydantic.dev/2.13/v/string_type")
  }
  return lines.join("\n")
}
