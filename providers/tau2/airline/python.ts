/**
 * What upstream's airline tools show an agent for arguments Python would refuse before the
 * tool's own checks: pydantic's validation texts for the
 * models the tools build from their arguments (FlightInfo, Passenger, Payment, Reservation,
 * Certificate). The shapes an agent plausibly sends (a missing key, a wrong literal, a string
 * where an int belongs) are covered; exotic ones are approximations (see README.md).
 */
import type { Canonical } from "../../../src/index.ts"
import { pyRepr, pyType } from "../common/python.ts"

export { asKey, calculateArgumentError, pyRepr, pyStr, pyType } from "../common/python.ts"

/** A field's kind, as pydantic validates it (lax mode). */
export type FieldKind =
  | { readonly kind: "str" }
  | { readonly kind: "int" }
  | { readonly kind: "float" }
  | { readonly kind: "literal"; readonly values: ReadonlyArray<string> }
  /** `list[Model]`: each element a dict of the model's fields. */
  | { readonly kind: "models"; readonly model: string; readonly fields: ReadonlyArray<readonly [string, FieldKind]> }

export const str: FieldKind = { kind: "str" }
export const int: FieldKind = { kind: "int" }
export const floatField: FieldKind = { kind: "float" }
export const literal = (...values: ReadonlyArray<string>): FieldKind => ({ kind: "literal", values })
export const models = (model: string, fields: ReadonlyArray<readonly [string, FieldKind]>): FieldKind => ({ kind: "models", model, fields })

interface FieldError {
  readonly loc: string
  readonly message: string
  readonly type: string
  readonly input: Canonical.Json | undefined
}

const INT_STRING = /^[+-]?\d+(_\d+)*$/
const FLOAT_STRING = /^[+-]?(?:(?:\d+(?:_\d+)*)?(?:\.\d+(?:_\d+)*)?|\d+(?:_\d+)*\.)(?:[eE][+-]?\d+(?:_\d+)*)?$/

const isDict = (v: Canonical.Json | undefined): v is { readonly [key: string]: Canonical.Json } => v !== null && typeof v === "object" && !Array.isArray(v)

/** One field's value as pydantic gives it to the model (ints from bools, integral floats and numeric strings), or its errors. */
const validateField = (loc: string, kind: FieldKind, v: Canonical.Json | undefined): { readonly value: Canonical.Json } | ReadonlyArray<FieldError> => {
  const error = (type: string, message: string): ReadonlyArray<FieldError> => [{ loc, type, message, input: v }]
  switch (kind.kind) {
    case "str":
      return typeof v === "string" ? { value: v } : error("string_type", "Input should be a valid string")
    case "int":
      if (typeof v === "boolean") return { value: v ? 1 : 0 }
      if (typeof v === "number") {
        return Number.isInteger(v) ? { value: v } : error("int_from_float", "Input should be a valid integer, got a number with a fractional part")
      }
      if (typeof v === "string") {
        const t = v.trim()
        return INT_STRING.test(t) ? { value: Number(t.replaceAll("_", "")) } : error("int_parsing", "Input should be a valid integer, unable to parse string as an integer")
      }
      return error("int_type", "Input should be a valid integer")
    case "float": {
      if (typeof v === "boolean") return { value: v ? 1 : 0 }
      if (typeof v === "number") return { value: v }
      if (typeof v === "string") {
        const t = v.trim()
        return t !== "" && t !== "." && FLOAT_STRING.test(t)
          ? { value: Number(t.replaceAll("_", "")) }
          : error("float_parsing", "Input should be a valid number, unable to parse string as a number")
      }
      return error("float_type", "Input should be a valid number")
    }
    case "literal": {
      if (typeof v === "string" && kind.values.includes(v)) return { value: v }
      const q = kind.values.map((x) => `'${x}'`)
      const list = q.length <= 1 ? q.join("") : `${q.slice(0, -1).join(", ")} or ${q[q.length - 1]}`
      return error("literal_error", `Input should be ${list}`)
    }
    case "models": {
      if (!Array.isArray(v)) return error("list_type", "Input should be a valid list")
      const errors: Array<FieldError> = []
      const out: Array<Canonical.Json> = []
      ;(v as ReadonlyArray<Canonical.Json>).forEach((x, i) => {
        if (!isDict(x)) {
          errors.push({ loc: `${loc}.${i}`, type: "model_type", message: `Input should be a valid dictionary or instance of ${kind.model}`, input: x })
          return
        }
        const r = validateFields(kind.fields, x, `${loc}.${i}.`)
        errors.push(...r.errors)
        out.push(r.value)
      })
      return errors.length > 0 ? errors : { value: out }
    }
  }
}

const validateFields = (
  fields: ReadonlyArray<readonly [string, FieldKind]>,
  input: { readonly [key: string]: Canonical.Json | undefined },
  prefix = ""
): { readonly value: Record<string, Canonical.Json>; readonly errors: ReadonlyArray<FieldError> } => {
  const errors: Array<FieldError> = []
  const value: Record<string, Canonical.Json> = {}
  for (const [name, kind] of fields) {
    if (!Object.hasOwn(input, name)) {
      errors.push({ loc: prefix + name, type: "missing", message: "Field required", input: input as Canonical.Json })
      continue
    }
    const r = validateField(prefix + name, kind, input[name])
    if ("value" in r) value[name] = r.value
    else errors.push(...r)
  }
  return { value, errors }
}

/** pydantic's `input_value` text: Python's repr, cut in the middle past 50 characters. */
const inputRepr = (v: Canonical.Json | undefined): string => {
  const r = pyRepr(v)
  return r.length > 50 ? `${r.slice(0, 24)}...${r.slice(-24)}` : r
}

const errorText = (model: string, errors: ReadonlyArray<FieldError>): string => {
  const lines = [`${errors.length} validation error${errors.length > 1 ? "s" : ""} for ${model}`]
  for (const e of errors) {
    lines.push(e.loc)
    lines.push(`  ${e.message} [type=${e.type}, input_value=${inputRepr(e.input)}, input_type=${pyType(e.input)}]`)
    lines.push(`    For further information visit https://errors.pydantic.dev/2.13/v/${e.type}`)
  }
  return lines.join("\n")
}

/**
 * `Model(**kwargs)`: the validated fields (in the model's order), or pydantic's error text listing
 * every failing field in field order. Extra keys are ignored, as pydantic's default.
 */
export const validateModel = (
  model: string,
  fields: ReadonlyArray<readonly [string, FieldKind]>,
  input: { readonly [key: string]: Canonical.Json | undefined }
): { readonly ok: true; readonly value: Record<string, Canonical.Json> } | { readonly ok: false; readonly message: string } => {
  const { value, errors } = validateFields(fields, input)
  return errors.length === 0 ? { ok: true, value } : { ok: false, message: errorText(model, errors) }
}
