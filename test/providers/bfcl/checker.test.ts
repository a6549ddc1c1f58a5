import { describe, expect, it } from "@effect/vitest"
import { check, checkOf, type DecodeOutcome } from "../../../providers/bfcl/checker.ts"
import type { Category, Task } from "../../../providers/bfcl/data.ts"
import { parsePyJson, type PyDict, type PyList, type PyValue } from "../../../providers/bfcl/pyjson.ts"

const py = (text: string): PyValue => {
  const r = parsePyJson(text)
  if (!r.ok) throw new Error(r.error.message)
  return r.value
}

const FUNCTION = `{"name": "calc.area", "description": "Area.", "parameters": {"type": "dict", "required": ["base"], "properties": {
  "base": {"type": "integer"}, "height": {"type": "float"}, "unit": {"type": "string"},
  "dims": {"type": "tuple", "items": {"type": "float"}}, "opts": {"type": "dict"},
  "tags": {"type": "array", "items": {"type": "string"}}}}}`
const ANSWER = `{"calc.area": {"base": [10], "height": [5.0], "unit": ["", "cm"], "dims": ["", [1.0, 2.0]],
  "opts": ["", {"k": ["v"], "n": ["", 1]}], "tags": ["", ["a b"]]}}`

const task = (category: Category, answers: Array<string> | null = [ANSWER], functions: Array<string> = [FUNCTION]): Task => ({
  id: `${category}_test`,
  category,
  question: [[{ role: "user", content: "?" }]],
  functions: functions.map((f) => py(f) as PyDict),
  possibleAnswer: answers === null ? null : (answers.map(py) as PyList)
})

const decoded = (text: string): DecodeOutcome => ({ _tag: "Decoded", value: py(text) })
const simple = (params: string) => check(task("simple_python"), decoded(`[{"calc.area": ${params}}]`))

describe("bfcl checker", () => {
  it("accepts a correct call, an int for a float parameter and optional parameters left out", () => {
    const v = simple(`{"base": 10, "height": 5}`)
    expect(v).toMatchObject({ valid: true, errorType: null, errors: [] })
    expect(Object.values(v.lost).some((x) => x)).toBe(false)
  })

  it("wrong-type: a float for an integer parameter, and a bool is not an int", () => {
    const v = simple(`{"base": 10.0, "height": 5.0}`)
    expect(v.errorType).toBe("type_error:simple")
    expect(v.errors).toEqual(["Incorrect type for parameter 'base'. Expected type integer, got float. Parameter value: 10.0."])
    expect(v.lost["wrong-type"]).toBe(true)
    expect(simple(`{"base": true, "height": 5.0}`).errorType).toBe("type_error:simple")
  })

  it("wrong-type: int items in a float tuple fail the nested check, the int-to-float conversion is top level only", () => {
    const strict = task("simple_python", [`{"calc.area": {"base": [10], "height": [5.0], "dims": [[1.0, 2.0]]}}`])
    const v = check(strict, decoded(`[{"calc.area": {"base": 10, "height": 5.0, "dims": {"__tuple__": [1, 2]}}}]`))
    expect(v.errorType).toBe("type_error:nested")
    expect(v.errors).toEqual([
      "Nested type checking failed for parameter 'dims'. Expected outer type tuple with inner type <class 'float'>. Parameter value: [1, 2]."
    ])
    // A "" among the acceptable values switches the item check off, and [1, 2] == [1.0, 2.0].
    expect(simple(`{"base": 10, "height": 5.0, "dims": {"__tuple__": [1, 2]}}`).valid).toBe(true)
  })

  it("a tuple-typed parameter accepts a tuple or a list", () => {
    expect(simple(`{"base": 10, "height": 5.0, "dims": {"__tuple__": [1.0, 2.0]}}`).valid).toBe(true)
    expect(simple(`{"base": 10, "height": 5.0, "dims": [1.0, 2.0]}`).valid).toBe(true)
  })

  it("wrong-value: numbers by Python ==, strings after normalisation", () => {
    const v = simple(`{"base": 11, "height": 5.0}`)
    expect(v.errorType).toBe("value_error:others")
    expect(v.errors).toEqual(["Invalid value for parameter 'base': 11. Expected one of [10]."])
    expect(v.lost["wrong-value"]).toBe(true)
    expect(simple(`{"base": 10, "height": 5.0, "unit": "C.M"}`).valid).toBe(true)
    const s = simple(`{"base": 10, "height": 5.0, "unit": "cm!"}`)
    expect(s.errorType).toBe("value_error:string")
    expect(s.errors).toEqual(["Invalid value for parameter 'unit': 'cm!'. Expected one of ['', 'cm']. Case insensitive."])
    expect(simple(`{"base": 10, "height": 5.0, "tags": ["A_B"]}`).valid).toBe(true)
    expect(simple(`{"base": 10, "height": 5.0, "tags": ["ab", "c"]}`).errorType).toBe("value_error:list/tuple")
  })

  it("wrong-value: dict parameters check keys and values", () => {
    expect(simple(`{"base": 10, "height": 5.0, "opts": {"k": "V"}}`).valid).toBe(true)
    expect(simple(`{"base": 10, "height": 5.0, "opts": {"k": "x"}}`).errorType).toBe("value_error:dict_value")
    expect(simple(`{"base": 10, "height": 5.0, "opts": {"z": "v"}}`).errorType).toBe("value_error:dict_key")
  })

  it("wrong-function: the expected name is compared case-sensitively", () => {
    const v = check(task("simple_python"), decoded(`[{"calc.Area": {"base": 10}}]`))
    expect(v.errorType).toBe("simple_function_checker:wrong_func_name")
    expect(v.errors).toEqual(["Function name 'calc.area' not found in model output."])
    expect(v.lost["wrong-function"]).toBe(true)
  })

  it("underscoreToDot compares against the sanitised name", () => {
    expect(check(task("simple_python"), decoded(`[{"calc_area": {"base": 10, "height": 5}}]`), { underscoreToDot: true }).valid).toBe(true)
  })

  it("missing-parameter: required by the schema, or listed without \"\" in the possible answer", () => {
    const r = simple(`{"height": 5.0}`)
    expect(r.errorType).toBe("simple_function_checker:missing_required")
    expect(r.lost["missing-parameter"]).toBe(true)
    const o = simple(`{"base": 10}`)
    expect(o.errorType).toBe("simple_function_checker:missing_optional")
    expect(o.errors).toEqual(["Optional parameter 'height' not provided and not marked as optional."])
  })

  it("unexpected-parameter: not in the schema or not in the possible answer", () => {
    const v = simple(`{"base": 10, "color": "red"}`)
    expect(v.errorType).toBe("simple_function_checker:unexpected_param")
    expect(v.lost["unexpected-parameter"]).toBe(true)
  })

  it("wrong-count and wrong-format", () => {
    const c = check(task("simple_python"), decoded(`[]`))
    expect(c.errorType).toBe("simple_function_checker:wrong_count")
    expect(c.lost["wrong-count"]).toBe(true)
    const f = check(task("simple_python"), decoded(`[{"a": {}, "b": {}}]`))
    expect(f.errorType).toBe("ast_decoder:decoder_wrong_output_format")
    expect(f.lost["wrong-format"]).toBe(true)
    expect(check(task("simple_python"), { _tag: "DecodeError", message: "bad" }).errorType).toBe("ast_decoder:decoder_failed")
  })

  it("parallel: calls match in any order; an unmatched call lists what was tried", () => {
    const second = `{"calc.area": {"base": [20], "height": [1.5]}}`
    const t = task("parallel", [ANSWER, second])
    expect(check(t, decoded(`[{"calc.area": {"base": 20, "height": 1.5}}, {"calc.area": {"base": 10, "height": 5}}]`)).valid).toBe(true)
    const v = check(t, decoded(`[{"calc.area": {"base": 20, "height": 1.5}}, {"calc.area": {"base": 30, "height": 5}}]`))
    expect(v.errorType).toBe("parallel_function_checker_no_order:cannot_find_match")
    expect(v.errors[0]).toBe("Could not find a matching function among index [0, 1] of model output for index 0 of possible answers.")
    expect(v.lost["unmatched-call"]).toBe(true)
    expect(check(t, decoded(`[{"calc.area": {"base": 10, "height": 5}}]`)).errorType).toBe("parallel_function_checker_no_order:wrong_count")
  })

  it("relevance: irrelevance passes without a call, live_relevance needs one", () => {
    const irr = task("irrelevance", null)
    expect(check(irr, decoded(`[]`)).valid).toBe(true)
    expect(check(irr, { _tag: "DecodeError", message: "x" }).valid).toBe(true)
    expect(check(irr, decoded(`[{}, {}]`)).valid).toBe(true)
    const made = check(irr, decoded(`[{"f": {}}]`))
    expect(made.errorType).toBe("irrelevance_error:decoder_success")
    expect(made.lost.relevance).toBe(true)
    const rel = task("live_relevance", null)
    expect(check(rel, decoded(`[{"f": {}}]`)).valid).toBe(true)
    const none = check(rel, decoded(`[{}]`))
    expect(none.errorType).toBe("relevance_error:decoder_failed")
    expect(none.errors).toEqual(["Invalid syntax. Failed to decode AST when it should have. None"])
  })

  it("maps every upstream error type to one way to lose", () => {
    expect(checkOf("value_error:list_dict_count")).toBe("wrong-value")
    expect(checkOf("multiple_function_checker:wrong_count")).toBe("wrong-count")
    expect(checkOf("type_error:nested")).toBe("wrong-type")
  })
})
