/**
 * The multi-turn protocol as upstream's runner plays it (`base_handler.inference_multi_turn_FC`
 * and `inference_multi_turn_prompting`, with the OpenAI-style handlers' message handling):
 *
 * - each user turn in order; a `miss_func` turn that adds held-out functions has no user message
 *   of its own and gets upstream's: in function-calling mode the docs join the tools, in prompt
 *   mode the message lists them (Python's `str` of the docs);
 * - within a turn, steps: the model replies, the reply is decoded as upstream's `decode_execute`
 *   decodes it, and a reply that does not decode or decodes to no call ends the turn; else every
 *   call runs on the task's instances (a `tool/*` world effect each) and the results go back, as
 *   tool messages (function calling) or as one user message holding their `repr` (prompt mode);
 * - after the 21st executed step of a turn the runner force-quits: that turn is kept and no
 *   later turn runs (the checker then sees fewer turns than the ground truth).
 *
 * The output is upstream's model result (turns → steps → the model's response as upstream's
 * result file stores it) with each step's decoded call strings beside it.
 */
import { Effect, Ref, Schema } from "effect"
import { type Canonical, type Capabilities, type Conversation, type Tool, WorldEffects } from "../../../src/index.ts"
import { decodePromptOutput } from "../decode.ts"
import { isDict, parsePyJson, type PyDict as DocDict, pyRepr, type PyValue, toPlainJson } from "../pyjson.ts"
import { promptSystemPrompt, toolSchemas } from "../tools.ts"
import type { MultiTurnTask } from "./tasks.ts"
import { EXECUTE_TOOL } from "./world.ts"

export type Mode = "tools" | "text"

/** Upstream's `MAXIMUM_STEP_LIMIT`: a turn force-quits when its executed steps exceed it. */
export const MAXIMUM_STEP_LIMIT = 20

/** Upstream's user message for a turn that adds held-out functions (function-calling mode). */
export const ADDED_FUNCTIONS_PROMPT = "I have updated some more functions you can choose from. What about now?"

/** Prompt mode's version: the added docs as Python prints the list, then the same sentence. */
export const addedFunctionsPromptText = (docs: ReadonlyArray<DocDict>): string => `${pyRepr(docs as ReadonlyArray<PyValue>)}\n${ADDED_FUNCTIONS_PROMPT}`

// ---------------------------------------------------------------------------------------------
// One step: the model's response as upstream stores it, and what it decodes to

/**
 * A step's response as upstream's result file holds it: function calling, the tool calls as
 * `[{name: arguments JSON text}]`, or the reply's text when it made none (null: no text either);
 * prompt mode, the reply's text.
 */
export const StepResponse = Schema.Union(Schema.Null, Schema.String, Schema.Array(Schema.Record({ key: Schema.String, value: Schema.String })))
export type StepResponse = typeof StepResponse.Type

export const Step = Schema.Struct({
  response: StepResponse,
  /** The call strings `decode_execute` made of it; null when it failed (`error` says why). */
  calls: Schema.NullOr(Schema.Array(Schema.String)),
  error: Schema.optionalWith(Schema.String, { exact: true })
})
export type Step = typeof Step.Type

export const Output = Schema.Struct({
  mode: Schema.Literal("tools", "text"),
  /** Upstream's model result: turns → steps. */
  turns: Schema.Array(Schema.Array(Step)),
  /** The runner force-quit a turn after too many steps (later turns did not run). */
  forceQuit: Schema.Boolean
})
export type Output = typeof Output.Type

/** A step's response as upstream's OpenAI-style handlers keep it (`_parse_query_response_*`). */
export const responseOf = (mode: Mode, reply: Conversation.AgentReply): StepResponse =>
  mode === "tools" && reply.toolCalls.length > 0
    ? reply.toolCalls.map((c) => ({ [c.name]: c.argumentsText ?? JSON.stringify(c.arguments) }))
    : reply.text

type Decoded = { readonly ok: true; readonly calls: ReadonlyArray<string> } | { readonly ok: false; readonly error: string }

const failed = (error: string): Decoded => ({ ok: false, error })

/** `parse_nested_value`: a dict of dicts reads as a nested call (its first key), another dict as a dict literal, the rest by `repr`. */
const nestedValue = (v: PyValue): string => {
  if (!isDict(v)) return pyRepr(v)
  const values = [...v.values()]
  if (values.every(isDict)) {
    const first = v.keys().next()
    if (first.done === true) throw new NestedFailure("list index out of range")
    const args = v.get(first.value) as DocDict
    return `${first.value}(${[...args].map(([k, x]) => `${k}=${nestedValue(x)}`).join(", ")})`
  }
  return `{${[...v].map(([k, x]) => `'${k}': ${nestedValue(x)}`).join(", ")}}`
}
class NestedFailure extends Error {}

/**
 * Upstream's `decode_execute` of one step: function calling, `convert_to_function_call` (each
 * call's JSON arguments loaded and printed back as `name(k=repr(v),…)`); prompt mode,
 * `default_decode_execute_prompting` (the Python call text parsed, printed by `parse_nested_value`).
 */
export const decodeExecute = (mode: Mode, response: StepResponse): Decoded => {
  if (response === null) return failed(mode === "tools" ? "'NoneType' object is not iterable" : "'NoneType' object has no attribute 'strip'")
  if (mode === "tools") {
    // A text reply: iterating a str yields no dicts (an empty text is no call at all).
    if (typeof response === "string") return response === "" ? { ok: true, calls: [] } : failed("'str' object has no attribute 'items'")
    const calls: Array<string> = []
    for (const item of response) {
      for (const [name, text] of Object.entries(item)) {
        const parsed = parsePyJson(text)
        if (!parsed.ok) return failed(`${parsed.error.message}: char ${parsed.error.offset}`)
        if (!isDict(parsed.value)) return failed(`'${Array.isArray(parsed.value) ? "list" : typeof parsed.value}' object has no attribute 'items'`)
        calls.push(`${name}(${[...parsed.value].map(([k, v]) => `${k}=${pyRepr(v)}`).join(",")})`)
      }
    }
    return { ok: true, calls }
  }
  if (typeof response !== "string") return failed("a prompt-mode response is text")
  const decoded = decodePromptOutput(response)
  if (decoded._tag === "DecodeError") return failed(decoded.message)
  try {
    const calls: Array<string> = []
    for (const call of decoded.value as ReadonlyArray<PyValue>) {
      if (!isDict(call)) continue
      for (const [name, args] of call) calls.push(`${name}(${isDict(args) ? [...args].map(([k, v]) => `${k}=${nestedValue(v)}`).join(", ") : ""})`)
    }
    return { ok: true, calls }
  } catch (e) {
    if (e instanceof NestedFailure) return failed(e.message)
    throw e
  }
}

/** `is_empty_execute_response`: no call, or a single empty one. */
export const isEmptyExecution = (calls: ReadonlyArray<string>): boolean => calls.length === 0 || (calls.length === 1 && calls[0] === "")

/** A step from its response as upstream stores it (a live reply's, or a line of upstream's result file). */
export const stepFromResponse = (mode: Mode, response: StepResponse): Step => {
  const decoded = decodeExecute(mode, response)
  return decoded.ok ? { response, calls: decoded.calls } : { response, calls: null, error: decoded.error }
}

/**
 * One step of a turn, from the model's reply: the step as the output keeps it, and the calls to
 * run, or none when the turn ends here (the reply did not decode, or decoded to no call).
 */
export const stepOf = (mode: Mode, reply: Conversation.AgentReply): { readonly step: Step; readonly run: ReadonlyArray<string> } => {
  const step = stepFromResponse(mode, responseOf(mode, reply))
  return { step, run: step.calls === null || isEmptyExecution(step.calls) ? [] : step.calls }
}

/** The answer as the checker reads it: per step, its call strings, or null when it did not decode. */
export const answerOf = (output: Output): ReadonlyArray<ReadonlyArray<ReadonlyArray<string> | null>> =>
  output.turns.map((steps) => steps.map((s) => s.calls))

// ---------------------------------------------------------------------------------------------
// What the model is offered

const toolSpecs = (docs: ReadonlyArray<DocDict>, hint: boolean): ReadonlyArray<Tool.ToolSpec> =>
  toolSchemas(docs).map((t, i) => {
    const own = docs[i]?.get("description")
    return {
      name: t.name,
      // Upstream adds the Python hint when the task is loaded, to the docs offered from the start only.
      description: hint ? t.description : typeof own === "string" ? own : "",
      parameters: toPlainJson(t.parameters) as { readonly [key: string]: Canonical.Json }
    }
  })

// Inputs are asked for at planning, at each Attempt and when deciding staleness. A task's docs are
// its classes' docs (one file each), so the list of names says which they are: few lists, made once each.
const inputsMade = new Map<string, Capabilities.ProtocolInputs>()

/** Function calling: no system prompt, the offered docs as tools. Prompt mode: upstream's system prompt with the docs. */
export const inputsOf = (task: MultiTurnTask, mode: Mode): Capabilities.ProtocolInputs => {
  const key = `${mode}\u0000${task.functions.map((f) => String(f.get("name"))).join("\u0000")}`
  let inputs = inputsMade.get(key)
  if (inputs === undefined) {
    inputs = mode === "tools" ? { system: "", tools: toolSpecs(task.functions, true) } : { system: promptSystemPrompt(task.functions), tools: [] }
    inputsMade.set(key, inputs)
  }
  return inputs
}

// ---------------------------------------------------------------------------------------------
// The run

const ExecuteResult = Schema.Struct({ output: Schema.String })

/** Runs one call string on the Attempt's instances, as a `tool/write` effect keyed by the function's name. */
export const execute = (call: string) =>
  WorldEffects.perform(
    { kind: "tool/write", key: /^\s*([^(\s]*)/.exec(call)?.[1] || "call", request: { tool: EXECUTE_TOOL, args: { call } } },
    ExecuteResult
  ).pipe(Effect.map((r) => r.output))

export const run = (task: MultiTurnTask, ctx: Capabilities.ProtocolContext) =>
  Effect.gen(function*() {
    const mode: Mode = ctx.inputs.tools.length > 0 ? "tools" : "text"
    let tools = ctx.inputs.tools
    const append = (...ms: ReadonlyArray<Conversation.Message>) => Ref.update(ctx.transcript, (all) => [...all, ...ms])
    const turns: Array<ReadonlyArray<Step>> = []
    let forceQuit = false
    for (let turn = 0; turn < task.question.length && !forceQuit; turn++) {
      let messages: ReadonlyArray<{ readonly role: string; readonly content: string }> = task.question[turn] ?? []
      const added = task.heldOut.get(turn)
      if (added !== undefined) {
        if (mode === "tools") {
          tools = [...tools, ...toolSpecs(added, false)]
          messages = [{ role: "user", content: ADDED_FUNCTIONS_PROMPT }]
        } else messages = [{ role: "user", content: addedFunctionsPromptText(added) }]
      }
      yield* append(...messages.flatMap((m): ReadonlyArray<Conversation.Message> => (m.role === "user" ? [{ role: "user", content: m.content }] : [])))
      const steps: Array<Step> = []
      for (let count = 0;;) {
        const reply = yield* ctx.agent.reply({ system: ctx.inputs.system, messages: yield* Ref.get(ctx.transcript), tools })
        yield* append({ role: "assistant", content: reply.text, toolCalls: mode === "tools" ? reply.toolCalls : [] })
        const { run: calls, step } = stepOf(mode, reply)
        steps.push(step)
        if (calls.length === 0) break
        const results: Array<string> = []
        for (const call of calls) results.push(yield* execute(call))
        if (mode === "tools") {
          // One tool message per call, answering the tool call it came from.
          yield* append(...reply.toolCalls.map((c, i): Conversation.Message => ({ role: "tool", toolCallId: c.id, name: c.name, content: results[i] ?? "", error: false })))
        } else {
          const fed = calls.map((call, i) => new Map<string, PyValue>([["role", "tool"], ["name", call], ["content", results[i] ?? ""]]))
          yield* append({ role: "user", content: pyRepr(fed) })
        }
        count++
        if (count > MAXIMUM_STEP_LIMIT) {
          forceQuit = true
          break
        }
      }
      turns.push(steps)
    }
    return { mode, turns, forceQuit } satisfies Output
  })
