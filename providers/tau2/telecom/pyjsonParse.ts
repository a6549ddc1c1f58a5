/**
 * JSON text as Python's `json.loads` sees it: a number written with a fraction or an exponent
 * is a float (`2.0`), any other an int (`2`). `JSON.parse` cannot tell them apart, and upstream
 * prints the two differently (`refuel_data` says "2.0 GB" or "2 GB", and writes it to the DB).
 * Floats become `PyFloat`; objects are plain objects (telecom keys are never integer-like).
 */
import { Either } from "effect"
import { type JsonBuilders, type JsonSyntaxError, parseJsonWith } from "../common/orderedJson.ts"
import { float, type PyFloat } from "../common/pyjson.ts"

/** A JSON value whose floats are marked. */
export type PyJson = null | boolean | number | string | PyFloat | ReadonlyArray<PyJson> | { readonly [key: string]: PyJson }

export const isPyFloat = (v: unknown): v is PyFloat =>
  typeof v === "object" && v !== null && !Array.isArray(v) && (v as { _tag?: unknown })._tag === "PyFloat"

export type ParseFailure = JsonSyntaxError

const py: JsonBuilders<PyJson> = {
  // Assigned key by key, as before: a repeated key keeps its first place and its last value.
  object: (entries) => {
    const out: Record<string, PyJson> = {}
    for (const [key, v] of entries) out[key] = v
    return out
  },
  number: (literal, isFloat) => (isFloat ? float(Number(literal)) : Number(literal))
}

/** Parse JSON text, floats marked. */
export const parsePyJson = (text: string): Either.Either<PyJson, ParseFailure> => parseJsonWith<PyJson>(text, py)
