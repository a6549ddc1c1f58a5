/**
 * What a model is shown for a task, as upstream builds it at ShishirPatil/gorilla@6ea57973:
 *
 * - the Python language hint appended to every function description (`utils.py`,
 *   `_func_doc_language_specific_pre_processing`, applied when the dataset is loaded);
 * - function-calling mode: the tool schemas of `convert_to_tool(functions, GORILLA_TO_OPENAPI,
 *   OPENAI_COMPLETIONS)` (type names mapped to JSON Schema, nested properties and items mapped,
 *   float marked, `.` in names replaced by `_`);
 * - prompt mode: the default system prompt of `formulate_system_prompt` (Python return format,
 *   no tool-call tag, function docs as indented JSON, plaintext, classic style), placed as
 *   `system_prompt_pre_processing_chat_model` places it.
 */
import type { Message, Task } from "./data.ts"
import { isDict, type PyDict, pyJsonDumps, type PyValue } from "./pyjson.ts"

/** Upstream's hint for Python categories, appended to each function description. */
export const PYTHON_HINT = " Note that the provided function is in Python 3 syntax."

/** Upstream's `GORILLA_TO_OPENAPI`: the data's type names to JSON Schema type names. */
export const GORILLA_TO_OPENAPI: Readonly<Record<string, string>> = {
  integer: "integer",
  number: "number",
  float: "number",
  string: "string",
  boolean: "boolean",
  bool: "boolean",
  array: "array",
  list: "array",
  dict: "object",
  object: "object",
  tuple: "array",
  any: "string",
  byte: "integer",
  short: "integer",
  long: "integer",
  double: "number",
  char: "string",
  ArrayList: "array",
  Array: "array",
  HashMap: "object",
  Hashtable: "object",
  Queue: "array",
  Stack: "array",
  Any: "string",
  String: "string",
  Bigint: "integer"
}

type MutableDict = Map<string, PyValue>

// Deep copy, so the task's own docs are never changed (upstream deep-copies too).
const clone = (v: PyValue): PyValue => {
  if (Array.isArray(v)) return v.map(clone)
  if (isDict(v)) {
    const m: MutableDict = new Map()
    for (const [k, x] of v) m.set(k, clone(x))
    return m
  }
  return v
}

const asDict = (v: PyValue | undefined): MutableDict | undefined => (v !== undefined && isDict(v) ? (v as MutableDict) : undefined)

const mapTypeName = (t: PyValue | undefined): PyValue => (typeof t === "string" && Object.hasOwn(GORILLA_TO_OPENAPI, t) ? (GORILLA_TO_OPENAPI[t] as string) : (t ?? null))

/** The function docs with the Python hint appended to each description (a copy). */
export const withPythonHint = (functions: ReadonlyArray<PyDict>): ReadonlyArray<PyDict> =>
  functions.map((f) => {
    const c = clone(f) as MutableDict
    const d = c.get("description")
    c.set("description", `${typeof d === "string" ? d : ""}${PYTHON_HINT}`)
    return c
  })

// Upstream's `_cast_to_openai_type`, in place on a copy.
const castProperties = (properties: MutableDict): MutableDict => {
  for (const [, raw] of properties) {
    const value = asDict(raw)
    if (value === undefined) continue
    if (!value.has("type")) value.set("type", "string")
    else {
      const varType = value.get("type")
      if (varType === "float") {
        value.set("format", "float")
        const d = value.get("description")
        value.set("description", `${typeof d === "string" ? d : ""} This is a float type value.`)
      }
      value.set("type", typeof varType === "string" && Object.hasOwn(GORILLA_TO_OPENAPI, varType) ? (GORILLA_TO_OPENAPI[varType] as string) : "string")
    }
    const type = value.get("type")
    if (type === "array" || type === "object") {
      const props = asDict(value.get("properties"))
      const items = asDict(value.get("items"))
      if (props !== undefined) value.set("properties", castProperties(props))
      else if (items !== undefined) {
        items.set("type", mapTypeName(items.get("type")))
        const inner = asDict(items.get("items"))
        const innerProps = asDict(items.get("properties"))
        if (items.get("type") === "array" && inner !== undefined) inner.set("type", mapTypeName(inner.get("type")))
        else if (items.get("type") === "object" && innerProps !== undefined) items.set("properties", castProperties(innerProps))
      }
    }
  }
  return properties
}

/** One tool as offered in function-calling mode (OpenAI chat-completions shape, `function` part). */
export interface ToolSchema {
  /** The name the model sees: upstream replaces `.` with `_` (APIs allow `^[a-zA-Z0-9_-]{1,64}$`). */
  readonly name: string
  /** The function's own name in the task (what the checker expects). */
  readonly functionName: string
  readonly description: string
  /** JSON Schema of the arguments (`type: "object"`), as Python values; `toPlainJson` for an API. */
  readonly parameters: PyDict
}

/** The name a function is offered under in function-calling mode. */
export const toolNameOf = (functionName: string): string => functionName.replace(/\./g, "_")

/**
 * The tools offered for a task's functions in function-calling mode: upstream's
 * `convert_to_tool` for OpenAI-style models, applied to the docs with the Python hint. A model
 * answering with these names is graded with `underscoreToDot: true` when any name had a `.`.
 */
export const toolSchemas = (functions: ReadonlyArray<PyDict>): ReadonlyArray<ToolSchema> =>
  withPythonHint(functions).map((f) => {
    const item = f as MutableDict
    const functionName = String(item.get("name") ?? "")
    const parameters = asDict(item.get("parameters")) ?? new Map<string, PyValue>()
    parameters.set("type", "object")
    const properties = asDict(parameters.get("properties")) ?? new Map<string, PyValue>()
    parameters.set("properties", castProperties(properties))
    const description = item.get("description")
    return { name: toolNameOf(functionName), functionName, description: typeof description === "string" ? description : "", parameters }
  })

/** The function docs as upstream lists them in the prompt: `json.dumps(functions, indent=4)`. */
export const functionDocsJson = (functions: ReadonlyArray<PyDict>): string => pyJsonDumps(withPythonHint(functions), 4)

/** Upstream's default prompt-mode system prompt for a task's functions. */
export const promptSystemPrompt = (functions: ReadonlyArray<PyDict>): string =>
  PROMPT.persona +
  PROMPT.task +
  "\n\n" +
  PROMPT.toolCallFormat +
  "\n\n" +
  PROMPT.multiturnBehavior +
  "\n\n" +
  `Here is a list of functions in json format that you can invoke.\n${functionDocsJson(functions)}\n`

// The default ("classic", plaintext, Python return format, no tag) system prompt, piece by piece.
const PROMPT = {
  persona: "You are an expert in composing functions.",
  task:
    "You are given a question and a set of possible functions. Based on the question, you will need to make one or more function/tool calls to achieve the purpose. " +
    "If none of the functions can be used, point it out. If the given question lacks the parameters required by the function, also point it out.",
  toolCallFormat:
    "You should only return the function calls in your response.\n\n" +
    "If you decide to invoke any of the function(s), you MUST put it in the format of " +
    "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]" +
    ".  You SHOULD NOT include any other text in the response.",
  multiturnBehavior:
    "At each turn, you should try your best to complete the tasks requested by the user within the current turn. " +
    "Continue to output functions to call until you have fulfilled the user's request to the best of your ability. " +
    "Once you have no more functions to call, the system will consider the current turn complete and proceed to the next turn or task."
} as const

/**
 * The messages a prompt-mode model receives: the system prompt first, merged ahead of the
 * task's own system message when it has one.
 */
export const promptMessages = (task: Task): ReadonlyArray<Message> => {
  const first = task.question[0] ?? []
  const system = promptSystemPrompt(task.functions)
  const head = first[0]
  if (head !== undefined && head.role === "system") return [{ role: "system", content: `${system}\n\n${head.content}` }, ...first.slice(1)]
  return [{ role: "system", content: system }, ...first]
}

/** The messages a function-calling model receives: the task's first turn, unchanged. */
export const functionCallingMessages = (task: Task): ReadonlyArray<Message> => task.question[0] ?? []
