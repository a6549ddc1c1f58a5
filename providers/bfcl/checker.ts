/**
 * A transcription of BFCL's AST checker (`bfcl_eval/eval_checker/ast_eval/ast_checker.py`, Python
 * branch) and of the relevance/irrelevance rule and output-format check of
 * `eval_checker/eval_runner.py` / `utils.py`, at ShishirPatil/gorilla@6ea57973.
 *
 * The structure follows upstream function by function, so the two can be read side by side; the
 * verdict, the error type and the error strings (built with Python's `repr`) are upstream's.
 * Where upstream would raise (a task shape the data never has), the verdict is invalid with
 * error type `checker:python_exception` instead.
 */
import type { Category, Task } from "./data.ts"
import {
  isDict,
  newList,
  pyContains,
  pyEq,
  pyInList,
  pyIter,
  pyLen,
  PyFloat,
  pyRepr,
  PyTuple,
  pyType,
  type PyDict,
  type PyList,
  type PyTypeName,
  type PyValue
} from "./pyjson.ts"

/** The ways an answer can lose; each verdict says which one it lost by (at most one). */
export const CHECK_NAMES = [
  "wrong-format",
  "wrong-count",
  "wrong-function",
  "missing-parameter",
  "unexpected-parameter",
  "wrong-type",
  "wrong-value",
  "unmatched-call",
  "relevance"
] as const
export type CheckName = (typeof CHECK_NAMES)[number]

export interface Verdict {
  readonly valid: boolean
  /** Upstream's `error_type`, null when valid. */
  readonly errorType: string | null
  /** Upstream's `error` list, each entry as Python's `str()` would print it. */
  readonly errors: ReadonlyArray<string>
  /** Upstream's `error` list as values (the `cannot_find_match` entries are dicts). */
  readonly upstreamErrors: ReadonlyArray<PyValue>
  /** For each way to lose, whether this answer lost that way. */
  readonly lost: Readonly<Record<CheckName, boolean>>
}

/** What decoding a model's output gave: calls (any value) or the decoder's error message. */
export type DecodeOutcome =
  | { readonly _tag: "Decoded"; readonly value: PyValue }
  | { readonly _tag: "DecodeError"; readonly message: string }

export interface CheckOptions {
  /** Upstream's per-model `underscore_to_dot`: expected names have `.` replaced by `_`. */
  readonly underscoreToDot?: boolean
}

/** Maps an upstream error type to the way it loses. */
export const checkOf = (errorType: string): CheckName => {
  if (errorType.startsWith("ast_decoder:")) return "wrong-format"
  if (errorType.endsWith(":wrong_count")) return "wrong-count"
  if (errorType.endsWith(":wrong_func_name")) return "wrong-function"
  if (errorType.endsWith(":missing_required") || errorType.endsWith(":missing_optional")) return "missing-parameter"
  if (errorType.endsWith(":unexpected_param")) return "unexpected-parameter"
  if (errorType.startsWith("type_error:")) return "wrong-type"
  if (errorType.endsWith(":cannot_find_match")) return "unmatched-call"
  if (errorType.startsWith("relevance_error:") || errorType.startsWith("irrelevance_error:")) return "relevance"
  return "wrong-value"
}

const checkOfCache = new Map<string, CheckName>()
const cachedCheckOf = (errorType: string): CheckName => {
  let c = checkOfCache.get(errorType)
  if (c === undefined) {
    c = checkOf(errorType)
    checkOfCache.set(errorType, c)
  }
  return c
}

const NO_LOSS: Readonly<Record<CheckName, boolean>> = Object.freeze({
  "wrong-format": false,
  "wrong-count": false,
  "wrong-function": false,
  "missing-parameter": false,
  "unexpected-parameter": false,
  "wrong-type": false,
  "wrong-value": false,
  "unmatched-call": false,
  relevance: false
})

// One shared, frozen record per way to lose: verdicts are many, the records are nine.
const LOST_BY: ReadonlyMap<CheckName, Readonly<Record<CheckName, boolean>>> = new Map(
  CHECK_NAMES.map((c) => [c, Object.freeze({ ...NO_LOSS, [c]: true })])
)

// Every list of error texts is born with the general elements kind (as pyjson's newList), the
// shared empty one too: a caller's loop over verdicts' errors then meets one array shape, where
// a [] literal's and a map's results had two, and the second, met late, a deopt of that loop.
const EMPTY_STRINGS: Array<string> = Array.of("")
EMPTY_STRINGS.pop()
const strings = (): Array<string> => EMPTY_STRINGS.slice()

const VALID: Verdict = Object.freeze({ valid: true, errorType: null, errors: strings(), upstreamErrors: newList(), lost: NO_LOSS })

// An error message built only when read: most callers want the verdict, not the prose, and
// the prose (Python reprs of values and possible answers) costs more than the check itself.
class Message {
  constructor(readonly make: () => string) {}
}
// A value of the task's (a possible answer), which never changes: its repr is kept (taskRepr).
class TaskValue {
  constructor(readonly value: PyValue) {}
}
type ErrorItem = PyValue | Message | TaskValue | ReadonlyArray<ErrorItem> | ReadonlyMap<string, ErrorItem>

// Error texts quote the task's possible answers again and again (one task, many answers); the
// repr of each is made once. Task data is immutable, so a kept repr never goes stale.
const taskReprs = new WeakMap<object, string>()
const taskRepr = (v: PyValue): string => {
  if (typeof v !== "object" || v === null) return pyRepr(v)
  let r = taskReprs.get(v)
  if (r === undefined) {
    r = pyRepr(v)
    taskReprs.set(v, r)
  }
  return r
}

const materialize = (e: ErrorItem): PyValue => {
  if (e instanceof Message) return e.make()
  if (e instanceof TaskValue) return e.value
  if (Array.isArray(e)) return (e as ReadonlyArray<ErrorItem>).map(materialize)
  if (e instanceof Map) {
    const items = e as ReadonlyMap<string, ErrorItem>
    const m = new Map<string, PyValue>()
    for (const k of items.keys()) m.set(k, materialize(items.get(k) as ErrorItem))
    return m
  }
  return e as PyValue
}

class InvalidVerdict implements Verdict {
  readonly valid = false
  readonly lost: Readonly<Record<CheckName, boolean>>
  private upstream: ReadonlyArray<PyValue> | undefined
  private text: ReadonlyArray<string> | undefined
  constructor(readonly errorType: string, private readonly items: ReadonlyArray<ErrorItem>) {
    this.lost = LOST_BY.get(cachedCheckOf(errorType)) ?? NO_LOSS
  }
  get upstreamErrors(): ReadonlyArray<PyValue> {
    return (this.upstream ??= this.items.map(materialize))
  }
  get errors(): ReadonlyArray<string> {
    if (this.text === undefined) {
      const text = strings()
      const upstream = this.upstream
      if (upstream !== undefined) for (let i = 0; i < upstream.length; i++) text.push(strOf(upstream[i] as PyValue))
      else for (let i = 0; i < this.items.length; i++) text.push(itemStr(this.items[i] as ErrorItem))
      this.text = text
    }
    return this.text
  }
  toJSON(): { valid: false; errorType: string; errors: ReadonlyArray<string>; lost: Readonly<Record<CheckName, boolean>> } {
    return { valid: false, errorType: this.errorType, errors: this.errors, lost: this.lost }
  }
}

const strOf = (e: PyValue): string => (typeof e === "string" ? e : pyRepr(e))

// str(materialize(e)) and repr(materialize(e)), made from the items without the values between.
const itemStr = (e: ErrorItem): string => (typeof e === "string" ? e : e instanceof Message ? e.make() : itemRepr(e))
const itemRepr = (e: ErrorItem): string => {
  if (e instanceof Message) return pyRepr(e.make())
  if (e instanceof TaskValue) return taskRepr(e.value)
  if (Array.isArray(e)) {
    const xs = e as ReadonlyArray<ErrorItem>
    let out = "["
    for (let i = 0; i < xs.length; i++) out += (i === 0 ? "" : ", ") + itemRepr(xs[i] as ErrorItem)
    return out + "]"
  }
  if (e instanceof Map) {
    const m = e as ReadonlyMap<string, ErrorItem>
    let out = "{"
    for (const k of m.keys()) out += (out.length === 1 ? "" : ", ") + pyRepr(k) + ": " + itemRepr(m.get(k) as ErrorItem)
    return out + "}"
  }
  return pyRepr(e as PyValue)
}

const verdictOf = (errorType: string, items: ReadonlyArray<ErrorItem>): Verdict => new InvalidVerdict(errorType, items)

// The error messages, each made by a function of its own: a closure written inside a checker would
// capture the checker's variables, and V8 would then allocate them in a context object on every call
// (every parameter checked), where only a failing answer needs them.
const nestedTypeMessage = (param: string, description: string, nested: PyTypeName, value: PyValue): Message =>
  new Message(() => `Nested type checking failed for parameter ${pyRepr(param)}. Expected outer type ${description} with inner type ${classRepr(nested)}. Parameter value: ${pyRepr(value)}.`)
const incorrectTypeMessage = (param: string, description: string, valueType: PyTypeName, value: PyValue): Message =>
  new Message(() => `Incorrect type for parameter ${pyRepr(param)}. Expected type ${description}, got ${valueType}. Parameter value: ${pyRepr(value)}.`)
const invalidValueMessage = (param: string, value: PyValue, acceptable: PyValue, suffix: string): Message =>
  new Message(() => `Invalid value for parameter ${pyRepr(param)}: ${pyRepr(value)}. Expected one of ${taskRepr(acceptable)}.${suffix}`)
const dictValueMessage = (key: string, value: PyValue, standardized: PyValue): Message =>
  new Message(() => `Invalid value for parameter ${pyRepr(key)}: ${pyRepr(value)}. Expected one of ${pyRepr(standardized)}.`)
const paramMessage = (before: string, param: PyValue, after: string): Message => new Message(() => `${before}${pyRepr(param)}${after}`)
const unmatchedMessage = (considered: ReadonlyArray<PyValue>, i: number): Message =>
  new Message(() => `Could not find a matching function among index ${pyRepr(considered)} of model output for index ${i} of possible answers.`)

// Raised where the Python code would raise; caught once, at the entry points, and reported.
class PythonWouldRaise extends Error {}
const raise = (message: string): never => {
  throw new PythonWouldRaise(message)
}

// ---------------------------------------------------------------------------------------------
// Entry points

/**
 * Grades a decoded answer to a task the way upstream's eval runner does: the relevance rule for
 * irrelevance / live_irrelevance / live_relevance, else the format check and the AST checker.
 */
export const check = (task: Task, outcome: DecodeOutcome, options?: CheckOptions): Verdict => {
  if (task.possibleAnswer === null || isRelevanceCategory(task.category)) return checkRelevance(task.category, outcome)
  if (outcome._tag === "DecodeError")
    return verdictOf("ast_decoder:decoder_failed", [`Invalid syntax. Failed to decode AST. ${outcome.message}`])
  return checkAst(task, outcome.value, options)
}

const isRelevanceCategory = (c: Category): boolean => c === "irrelevance" || c === "live_irrelevance" || c === "live_relevance"

/** Upstream's `is_function_calling_format_output`: a list of `{name: {params}}` single-key dicts. */
export const isCallFormat = (v: PyValue): v is PyList => {
  if (!Array.isArray(v)) return false
  for (let i = 0; i < v.length; i++) {
    const item = v[i] as PyValue
    if (!isDict(item) || item.size !== 1) return false
    const params = item.values().next().value as PyValue
    if (!isDict(params)) return false
  }
  return true
}

/** Upstream's `is_empty_output`: not in call format, `[]` or `[{}]`. */
export const isEmptyOutput = (v: PyValue): boolean => {
  if (!isCallFormat(v)) return true
  if (v.length === 0) return true
  const first = v[0] as PyDict
  return v.length === 1 && first.size === 0
}

/** The relevance rule: irrelevance categories pass without a call, live_relevance with one. */
export const checkRelevance = (category: string, outcome: DecodeOutcome): Verdict => {
  const containsCall = outcome._tag === "Decoded" && !isEmptyOutput(outcome.value)
  if (category.includes("irrelevance")) {
    return containsCall ? verdictOf("irrelevance_error:decoder_success", ["Valid syntax. Successfully decode AST when it should not."]) : VALID
  }
  if (containsCall) return VALID
  const decodeError = outcome._tag === "DecodeError" ? outcome.message : "None"
  return verdictOf("relevance_error:decoder_failed", [`Invalid syntax. Failed to decode AST when it should have. ${decodeError}`])
}

/** The format check followed by upstream's `ast_checker` (Python). */
export const checkAst = (task: Task, decoded: PyValue, options?: CheckOptions): Verdict => {
  if (!isCallFormat(decoded)) {
    return verdictOf("ast_decoder:decoder_wrong_output_format", [
      "Did not output in the specified format. Note: the model_result is wrapped in a string to ensure json serializability."
    ])
  }
  try {
    const r = astChecker(task.functions, decoded, task.possibleAnswer ?? [], task.category, options?.underscoreToDot === true)
    return r.valid ? VALID : verdictOf(r.errorType, r.error)
  } catch (e) {
    if (e instanceof PythonWouldRaise) return verdictOf("checker:python_exception", [e.message])
    throw e
  }
}

// ---------------------------------------------------------------------------------------------
// The transcription

// A class, not literals: literals written with their fields in different orders, or without
// isVariable, or frozen, each had a hidden class of its own, so every `.valid` read in the
// checker met several shapes (bigger optimised code, and each shape first met late a deopt).
class Result {
  constructor(public valid: boolean, public error: Array<ErrorItem>, public errorType: string, public isVariable: boolean) {}
}
const fail = (errorType: string, error: Array<ErrorItem>): Result => new Result(false, error, errorType, false)

// Passing results are never changed by callers (only results a checker made itself are), so two
// shared ones serve every check. Not frozen: a frozen one would have a shape of its own.
const OK: Result = new Result(true, [], "", false)
const OK_VARIABLE: Result = new Result(true, [], "", true)
const ok = (): Result => OK

const PYTHON_TYPE_MAPPING: Readonly<Record<string, PyTypeName>> = {
  string: "str",
  integer: "int",
  float: "float",
  boolean: "bool",
  array: "list",
  tuple: "list",
  dict: "dict",
  any: "str"
}

const mapType = (t: PyValue | undefined): PyTypeName => {
  const m = typeof t === "string" && Object.hasOwn(PYTHON_TYPE_MAPPING, t) ? PYTHON_TYPE_MAPPING[t] : undefined
  return m ?? raise(`KeyError: ${pyRepr(t ?? null)}`)
}

const classRepr = (t: PyTypeName): string => `<class '${t}'>`

const get = (d: PyValue | undefined, key: string): PyValue => {
  if (d instanceof Map) {
    const v = d.get(key)
    if (v !== undefined) return v
    return raise(`KeyError: ${pyRepr(key)}`)
  }
  return raise(`TypeError: cannot subscript ${d === undefined ? "None" : pyType(d)}`)
}

const iter = (v: PyValue): ReadonlyArray<PyValue> => pyIter(v) ?? raise(`TypeError: '${pyType(v)}' object is not iterable`)
const contains = (container: PyValue, x: PyValue): boolean =>
  (container instanceof Map && typeof x === "string" ? container.has(x) : pyContains(container, x)) ?? raise(`TypeError: argument of type '${pyType(container)}' is not iterable`)
const len = (v: PyValue): number => pyLen(v) ?? raise(`TypeError: object of type '${pyType(v)}' has no len()`)
const firstKey = (d: PyValue): string => {
  if (!isDict(d) || d.size === 0) return raise("IndexError: list index out of range")
  return d.keys().next().value as string
}
const firstValue = (d: PyValue): PyValue => {
  if (!isDict(d) || d.size === 0) return raise("IndexError: list index out of range")
  return d.values().next().value as PyValue
}

const astChecker = (
  functions: ReadonlyArray<PyDict>,
  modelOutput: PyList,
  possibleAnswer: PyList,
  category: string,
  underscoreToDot: boolean
): Result => {
  if (category.includes("parallel")) return parallelFunctionCheckerNoOrder(functions, modelOutput, possibleAnswer, underscoreToDot)
  if (category.includes("multiple")) return multipleFunctionChecker(functions, modelOutput, possibleAnswer, underscoreToDot)
  if (modelOutput.length !== 1) return fail("simple_function_checker:wrong_count", ["Wrong number of functions."])
  return simpleFunctionChecker(
    functions[0] ?? raise("IndexError: list index out of range"),
    modelOutput[0] as PyDict,
    possibleAnswer[0] ?? raise("IndexError: list index out of range"),
    underscoreToDot
  )
}

// Python's `==` of any value with a str is true only for an equal str, so `===` is the same
// test; pyEq, inlined here, had made this one of the larger functions V8 compiles.
const findDescription = (functions: ReadonlyArray<PyDict>, name: string): PyDict | null => {
  for (let i = 0; i < functions.length; i++) {
    const f = functions[i] as PyDict
    if (f.get("name") === name) return f
  }
  return null
}

// The type of the first acceptable value that is not "" (None when there is none). Acceptable
// lists belong to the task and never change, so the answer is kept per list.
const answerTypeCache = new WeakMap<object, PyTypeName | null>()
const possibleAnswerType = (possibleAnswer: PyValue): PyTypeName | null => {
  const cacheable = Array.isArray(possibleAnswer)
  if (cacheable) {
    const hit = answerTypeCache.get(possibleAnswer)
    if (hit !== undefined) return hit
  }
  let t: PyTypeName | null = null
  const xs = iter(possibleAnswer)
  for (let i = 0; i < xs.length; i++) {
    const a = xs[i] as PyValue
    if (a !== "") {
      t = pyType(a)
      break
    }
  }
  if (cacheable) answerTypeCache.set(possibleAnswer, t)
  return t
}

// Model strings repeat across answers; a bounded memo of their normal forms.
const standardCache = new Map<string, string>()
const standardizeString = (s: string): string => {
  let r = standardCache.get(s)
  if (r === undefined) {
    if (standardCache.size >= 100_000) standardCache.clear()
    r = computeStandardized(s)
    standardCache.set(s, r)
  }
  return r
}

const computeStandardized = (s: string): string => {
  const stripped = s.replace(STRIPPED, "")
  // Python's lower() has no final-sigma rule; JS's toLowerCase() does, so lower Σ alone.
  const lowered = stripped.includes("\u03a3") ? Array.from(stripped, (c) => c.toLowerCase()).join("") : stripped.toLowerCase()
  return lowered.includes("'") ? lowered.replace(/'/g, '"') : lowered
}

const STRIPPED = /[ ,./\-_*^]/g

// `paType` is possibleAnswerType(possibleAnswer), which upstream computes first.
const typeChecker = (
  param: string,
  value: PyValue,
  possibleAnswer: PyValue,
  expectedTypeDescription: string,
  expectedTypeConverted: PyTypeName,
  nestedTypeConverted: PyTypeName | null,
  paType: PyTypeName | null
): Result => {
  const isVariable = paType !== null && paType !== expectedTypeConverted
  const valueType = pyType(value)
  if (valueType === expectedTypeConverted && nestedTypeConverted === null) return isVariable ? OK_VARIABLE : OK

  const result = new Result(true, [], "type_error:simple", false)
  if (valueType === expectedTypeConverted && nestedTypeConverted !== null) {
    const paItems = iter(possibleAnswer)
    for (let i = 0; i < paItems.length; i++) {
      const paItem = paItems[i] as PyValue
      let flag = true
      if (Array.isArray(paItem)) {
        const valueItems = iter(value)
        for (let j = 0; j < valueItems.length; j++) {
          const r = typeChecker(param, valueItems[j] as PyValue, paItem, classRepr(nestedTypeConverted), nestedTypeConverted, null, possibleAnswerType(paItem))
          if (!r.valid) {
            flag = false
            break
          }
        }
      }
      if (flag) return isVariable ? OK_VARIABLE : OK
    }
    result.valid = false
    result.error = [
      nestedTypeMessage(param, expectedTypeDescription, nestedTypeConverted, value)
    ]
    result.errorType = "type_error:nested"
  }

  if (paType !== null && valueType === paType) {
    if (result.valid) return OK_VARIABLE
    result.isVariable = true
    return result
  }
  result.valid = false
  result.error.push(
    incorrectTypeMessage(param, expectedTypeDescription, valueType, value)
  )
  result.errorType = "type_error:simple"
  return result
}

const standardStringsCache = new WeakMap<object, ReadonlyArray<string>>()
const standardStrings = (possibleAnswer: PyValue): ReadonlyArray<string> => {
  const cacheable = Array.isArray(possibleAnswer)
  if (cacheable) {
    const hit = standardStringsCache.get(possibleAnswer)
    if (hit !== undefined) return hit
  }
  // Born with the general elements kind, by no literal (see ParamExpect and newList).
  const standardized = strings()
  const xs = iter(possibleAnswer)
  for (let i = 0; i < xs.length; i++) {
    const a = xs[i] as PyValue
    if (typeof a === "string") standardized.push(standardizeString(a))
  }
  if (cacheable) standardStringsCache.set(possibleAnswer, standardized)
  return standardized
}

const stringChecker = (param: string, modelOutput: string, possibleAnswer: PyValue): Result => {
  if (!standardStrings(possibleAnswer).includes(standardizeString(modelOutput))) {
    return fail("value_error:string", [invalidValueMessage(param, modelOutput, possibleAnswer, " Case insensitive.")])
  }
  return ok()
}

const standardizeItems = (xs: ReadonlyArray<PyValue>): Array<PyValue> => {
  const out = newList()
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i] as PyValue
    out.push(typeof x === "string" ? standardizeString(x) : x)
  }
  return out
}

// An acceptable list of the task's, standardized: made once per list.
const standardListCache = new WeakMap<object, ReadonlyArray<PyValue>>()
const standardTaskList = (a: PyValue): ReadonlyArray<PyValue> => {
  if (!Array.isArray(a)) return standardizeItems(iter(a))
  let r = standardListCache.get(a)
  if (r === undefined) {
    r = standardizeItems(a)
    standardListCache.set(a, r)
  }
  return r
}

const listChecker = (param: string, modelOutput: PyList, possibleAnswer: PyValue): Result => {
  const standardizedOutput = standardizeItems(modelOutput)
  let found = false
  const xs = iter(possibleAnswer)
  for (let i = 0; i < xs.length; i++) {
    if (pyEq(standardizedOutput, standardTaskList(xs[i] as PyValue))) {
      found = true
      break
    }
  }
  if (!found) {
    return fail("value_error:list/tuple", [invalidValueMessage(param, modelOutput, possibleAnswer, "")])
  }
  return ok()
}

const dictChecker = (modelOutput: PyValue, possibleAnswers: ReadonlyArray<PyValue>): Result => {
  if (!isDict(modelOutput)) return raise(`AttributeError: '${pyType(modelOutput)}' object has no attribute 'items'`)
  let result: Result = fail("dict_checker:unclear", [])
  for (const possibleAnswer of possibleAnswers) {
    if (possibleAnswer === "") continue
    result = fail("dict_checker:unclear", [])
    let flag = true
    for (const key of modelOutput.keys()) {
      const value = modelOutput.get(key) as PyValue
      if (!contains(possibleAnswer, key)) {
        result.valid = false
        result.error.push(`Unexpected dict key parameter: '${key}'.`)
        result.errorType = "value_error:dict_key"
        flag = false
        break
      }
      const standardizedValue = typeof value === "string" ? standardizeString(value) : value
      const standardized = standardizeItems(iter(get(possibleAnswer, key)))
      if (!pyInList(standardizedValue, standardized)) {
        result.valid = false
        result.error.push(dictValueMessage(key, value, standardized))
        result.errorType = "value_error:dict_value"
        flag = false
        break
      }
    }
    if (!isDict(possibleAnswer)) return raise(`AttributeError: '${pyType(possibleAnswer)}' object has no attribute 'items'`)
    for (const key of possibleAnswer.keys()) {
      if (!modelOutput.has(key) && !contains(possibleAnswer.get(key) as PyValue, "")) {
        result.valid = false
        result.error.push(`Missing dict key parameter: '${key}'.`)
        result.errorType = "value_error:dict_key"
        flag = false
        break
      }
    }
    if (flag) return ok()
  }
  return result
}

const listDictChecker = (modelOutput: PyList, possibleAnswers: PyValue): Result => {
  let result: Result = fail("list_dict_checker:unclear", [])
  for (const answer of iter(possibleAnswers)) {
    let flag = true
    if (modelOutput.length !== len(answer)) {
      result = fail("value_error:list_dict_count", ["Wrong number of dictionaries in the list."])
      continue
    }
    const answerItems = iter(answer)
    for (let i = 0; i < modelOutput.length; i++) {
      result = dictChecker(modelOutput[i] as PyValue, [answerItems[i] as PyValue])
      if (!result.valid) {
        flag = false
        break
      }
    }
    if (flag) return ok()
  }
  return result
}

// Function docs belong to the task and never change: what the checker reads from them is kept
// per doc and per parameter. A doc whose reading raises is not kept, so it raises every time,
// at the same point as upstream.
// Classes, not literals: see ParamExpect.
class DocView {
  constructor(readonly name: PyValue, readonly properties: PyValue, readonly required: PyValue) {}
}
const docCache = new WeakMap<PyDict, DocView>()
const docView = (funcDescription: PyDict): DocView => {
  let view = docCache.get(funcDescription)
  if (view === undefined) {
    const name = get(funcDescription, "name")
    const parameters = get(funcDescription, "parameters")
    const properties = get(parameters, "properties")
    view = new DocView(name, properties, get(parameters, "required"))
    docCache.set(funcDescription, view)
  }
  return view
}

// What one parameter's value goes through, chosen once per parameter from the doc's type: the
// conversion before the type check (a tuple's items, an int as a float) and the check of the
// value after it. Called through these fields, from one place each, rather than branched on:
// a call site that has met two functions is compiled as a plain call, so the first tuple or list
// of dicts of a corpus (met late) costs no deoptimisation of the checker that inlined the branch.
class ParamView {
  readonly convert: (value: PyValue) => PyValue
  readonly checkValue: ValueCheck
  constructor(readonly typeDescription: string, readonly expectedType: PyTypeName, readonly nestedType: PyTypeName | null) {
    this.convert = typeDescription === "tuple" ? tupleAsList : typeDescription === "float" ? intAsFloat : asIs
    this.checkValue =
      expectedType === "dict"
        ? checkDictValue
        : expectedType === "list"
          ? nestedType === "dict" ? checkListDictValue : checkListValue
          : expectedType === "str"
            ? checkStrValue
            : checkOtherValue
  }
}
type ValueCheck = (param: string, value: PyValue, acceptable: PyValue) => Result
const asIs = (value: PyValue): PyValue => value
const tupleAsList = (value: PyValue): PyValue => (value instanceof PyTuple ? value.items : value)
const intAsFloat = (value: PyValue): PyValue => (typeof value === "number" || typeof value === "bigint" ? new PyFloat(Number(value)) : value)
const checkDictValue: ValueCheck = (_param, value, acceptable) => dictChecker(value, iter(acceptable))
const checkListDictValue: ValueCheck = (_param, value, acceptable) => listDictChecker(value as PyList, acceptable)
const checkStrValue: ValueCheck = (param, value, acceptable) => stringChecker(param, value as string, acceptable)
const checkListValue: ValueCheck = (param, value, acceptable) => listChecker(param, value as PyList, acceptable)
const checkOtherValue: ValueCheck = (param, value, acceptable) =>
  contains(acceptable, value) ? OK : fail("value_error:others", [invalidValueMessage(param, value, acceptable, "")])

const paramCache = new WeakMap<object, ParamView>()
const paramView = (details: PyValue): ParamView => {
  const cacheable = details instanceof Map
  if (cacheable) {
    const hit = paramCache.get(details)
    if (hit !== undefined) return hit
  }
  const typeDescription = get(details, "type")
  const expectedType = mapType(typeDescription)
  const nestedType = typeDescription === "array" || typeDescription === "tuple" ? mapType(get(get(details, "items"), "type")) : null
  const view = new ParamView(typeDescription as string, expectedType, nestedType)
  if (cacheable) paramCache.set(details, view)
  return view
}

// What the checker reads of one expected call's parameters, kept per possible answer (task data,
// which never changes): per parameter the doc's type reading, the acceptable values and the type
// of the first of them; per parameter the model left out, whether "" is acceptable. An entry is
// made the first time an answer needs it, in upstream's order, and kept only when nothing on the
// way raised, so a task whose reading raises raises every time, at the same point as upstream.
//
// These, and the other kept readings, are made by classes or Array.of rather than literals: V8
// decides per literal whether to allocate its objects in the old generation once most of them
// survive (as kept ones do), and throws away the optimised code that made them when it does.
class ParamExpect {
  constructor(readonly view: ParamView, readonly acceptable: PyValue, readonly answerType: PyTypeName | null) {}
}
class CallExpect {
  readonly params = new Map<string, ParamExpect>()
  readonly optional = new Map<string, boolean>()
  constructor(readonly properties: PyValue) {}
}
const callExpects = new WeakMap<PyDict, CallExpect>()
const callExpect = (possibleAnswer: PyValue, properties: PyValue): CallExpect | null => {
  if (!(possibleAnswer instanceof Map)) return null
  let ce = callExpects.get(possibleAnswer)
  if (ce === undefined) {
    ce = new CallExpect(properties)
    callExpects.set(possibleAnswer, ce)
  }
  // Another doc with the same answer (never in BFCL's data): read afresh each time.
  return ce.properties === properties ? ce : null
}

const simpleFunctionChecker = (funcDescription: PyDict | null, modelOutput: PyDict, possibleAnswerCall: PyValue, underscoreToDot: boolean): Result => {
  if (funcDescription === null) return raise("TypeError: 'NoneType' object is not subscriptable")
  const possibleAnswer = firstValue(possibleAnswerCall)
  const doc = docView(funcDescription)
  let funcName = doc.name
  const paramDetails = doc.properties
  const requiredParams = doc.required
  if (typeof funcName !== "string") return raise("TypeError: function name is not a str")
  if (underscoreToDot && funcName.includes(".")) funcName = funcName.replace(/\./g, "_")

  if (!modelOutput.has(funcName)) {
    return fail("simple_function_checker:wrong_func_name", [paramMessage("Function name ", funcName, " not found in model output.")])
  }
  const modelParams = modelOutput.get(funcName) as PyDict

  const required = iter(requiredParams)
  for (let i = 0; i < required.length; i++) {
    const param = required[i] as PyValue
    if (!contains(modelParams, param)) {
      return fail("simple_function_checker:missing_required", [paramMessage("Missing required parameter: ", param, ".")])
    }
  }

  const ce = callExpect(possibleAnswer, paramDetails)
  // The keys' iterator stepped by hand, not for-of: for-of wraps the loop in the iterator-closing
  // protocol (a try/finally), which makes this function's optimised code bigger and slower to
  // compile; and keys and get, not entries, whose destructuring runs the iterator protocol again.
  const params = modelParams.keys()
  for (let step = params.next(); step.done !== true; step = params.next()) {
    const param = step.value
    let pe = ce?.params.get(param)
    if (pe === undefined) {
      if (!contains(paramDetails, param) || !contains(possibleAnswer, param)) {
        return fail("simple_function_checker:unexpected_param", [paramMessage("Unexpected parameter: ", param, ".")])
      }
      // Upstream reads these in this order, with the value's conversion (which never raises)
      // between the doc's reading and the acceptable values.
      const view = paramView(get(paramDetails, param))
      const acceptable = get(possibleAnswer, param)
      pe = new ParamExpect(view, acceptable, possibleAnswerType(acceptable))
      ce?.params.set(param, pe)
    }
    const r = checkParam(param, modelParams.get(param) as PyValue, pe)
    if (!r.valid) return r
  }

  if (possibleAnswer instanceof Map) {
    const answerParams = possibleAnswer.keys()
    for (let step = answerParams.next(); step.done !== true; step = answerParams.next()) {
      const r = checkProvided(ce, modelParams, possibleAnswer, step.value)
      if (!r.valid) return r
    }
  } else {
    const answerParams = iter(possibleAnswer)
    for (let i = 0; i < answerParams.length; i++) {
      const r = checkProvided(ce, modelParams, possibleAnswer, answerParams[i] as PyValue)
      if (!r.valid) return r
    }
  }
  return ok()
}

// One parameter's value against its expectation, as upstream: converted, its type checked, then
// its value (a variable's, whose acceptable values are of another type than the doc's, is looked
// up as it is).
const checkParam = (param: string, rawValue: PyValue, pe: ParamExpect): Result => {
  const view = pe.view
  const acceptable = pe.acceptable
  const value = view.convert(rawValue)
  const typeResult = typeChecker(param, value, acceptable, view.typeDescription, view.expectedType, view.nestedType, pe.answerType)
  if (!typeResult.valid) return typeResult
  const checkValue = typeResult.isVariable ? checkOtherValue : view.checkValue
  return checkValue(param, value, acceptable)
}

// A parameter of the possible answer: provided by the model, or optional.
const checkProvided = (ce: CallExpect | null, modelParams: PyDict, possibleAnswer: PyValue, param: PyValue): Result => {
  if (!contains(modelParams, param) && !optional(ce, possibleAnswer, param)) {
    return fail("simple_function_checker:missing_optional", [paramMessage("Optional parameter ", param, " not provided and not marked as optional.")])
  }
  return OK
}

// Whether "" is among a parameter's acceptable values (upstream's mark of an optional one).
const optional = (ce: CallExpect | null, possibleAnswer: PyValue, param: PyValue): boolean => {
  const kept = typeof param === "string" ? ce?.optional.get(param) : undefined
  if (kept !== undefined) return kept
  const o = contains(get(possibleAnswer, param as string), "")
  if (typeof param === "string") ce?.optional.set(param, o)
  return o
}

const parallelFunctionCheckerNoOrder = (functions: ReadonlyArray<PyDict>, modelOutput: PyList, possibleAnswers: PyList, underscoreToDot: boolean): Result => {
  if (modelOutput.length !== possibleAnswers.length) {
    return fail("parallel_function_checker_no_order:wrong_count", ["Wrong number of functions."])
  }
  const matched = new Set<number>()
  let result: Result = ok()
  for (let i = 0; i < possibleAnswers.length; i++) {
    const expected = possibleAnswers[i] as PyValue
    const description = findDescription(functions, firstKey(expected))
    const allErrors: Array<ErrorItem> = []
    for (let index = 0; index < modelOutput.length; index++) {
      if (matched.has(index)) continue
      result = simpleFunctionChecker(description, modelOutput[index] as PyDict, expected, underscoreToDot)
      if (result.valid) {
        matched.add(index)
        break
      }
      allErrors.push(
        new Map([
          [
            `Model Result Index ${index}`,
            new Map<string, ErrorItem>([
              ["sub_error", result.error],
              ["sub_error_type", result.errorType],
              ["model_output_item", modelOutput[index] as PyValue],
              ["possible_answer_item", new TaskValue(expected)]
            ])
          ]
        ])
      )
    }
    if (!result.valid) {
      const considered = newList()
      for (let k = 0; k < modelOutput.length; k++) if (!matched.has(k)) considered.push(k)
      allErrors.unshift(
        unmatchedMessage(considered, i)
      )
      return fail("parallel_function_checker_no_order:cannot_find_match", allErrors)
    }
  }
  return ok()
}

const multipleFunctionChecker = (functions: ReadonlyArray<PyDict>, modelOutput: PyList, possibleAnswers: PyList, underscoreToDot: boolean): Result => {
  if (modelOutput.length !== possibleAnswers.length) {
    return fail("multiple_function_checker:wrong_count", ["Wrong number of functions."])
  }
  const expected = possibleAnswers[0] ?? raise("IndexError: list index out of range")
  const description = findDescription(functions, firstKey(expected))
  return simpleFunctionChecker(description, modelOutput[0] as PyDict, expected, underscoreToDot)
}
