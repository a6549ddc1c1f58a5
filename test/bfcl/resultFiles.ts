/**
 * BFCL result files as upstream's runner writes them (`base_handler.write`: one JSON line per task,
 * `{"id", "result", "input_token_count", "output_token_count", "latency"}`), built from answers:
 * function-calling handlers store `[{name: "<arguments as json.dumps writes them>"}]` (names with
 * `.` replaced by `_`, as those handlers offer them), prompting handlers the reply's Python text.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { isDict, type PyDict, pyJsonDumps, pyRepr, type PyValue } from "../../providers/bfcl/pyjson.ts"
import { toolNameOf } from "../../providers/bfcl/tools.ts"
import { evalExpr, parseCall } from "../../providers/bfcl/multiturn/call.ts"
import { goldTurns, namedCall } from "../../providers/bfcl/multiturn/gold.ts"
import { jsonDumps, type Py, PyDict as MultiTurnDict, pyRepr as multiTurnRepr } from "../../providers/bfcl/multiturn/py.ts"
import type { MultiTurnTask } from "../../providers/bfcl/multiturn/tasks.ts"

/** One call per `{name: {param: value}}` of the answer. */
const callsOf = (answer: ReadonlyArray<PyValue>): ReadonlyArray<readonly [string, PyDict]> =>
  answer.flatMap((call) => {
    if (!isDict(call)) return []
    const [name, args] = call.entries().next().value as [string, PyValue]
    return isDict(args) ? [[name, args] as const] : []
  })

/** The function-calling result of a decoded answer; with `noCallText`, that text where it has no call (as an API reply without tool calls). */
export const fcResult = (answer: ReadonlyArray<PyValue>, noCallText?: string): unknown => {
  const calls = callsOf(answer)
  return calls.length === 0 && noCallText !== undefined ? noCallText : calls.map(([name, args]) => ({ [toolNameOf(name)]: pyJsonDumps(args) }))
}

/** The prompting result of a decoded answer: `[f(a=1, b='x'), g()]` as Python prints its values; with `noCallText`, that text where it has no call. */
export const promptResult = (answer: ReadonlyArray<PyValue>, noCallText?: string): string => {
  const calls = callsOf(answer)
  return calls.length === 0 && noCallText !== undefined ? noCallText : `[${calls.map(([name, args]) => `${name}(${[...args].map(([k, v]) => `${k}=${pyRepr(v)}`).join(", ")})`).join(", ")}]`
}

/**
 * A multi-turn task's gold as the runner stores it: per turn, the step making the turn's calls
 * (`[{name: arguments}]`, or its Python text), then the reply that ends the turn (text, no call);
 * a turn with no ground-truth call is that reply alone.
 */
export const multiTurnGoldResult = (task: MultiTurnTask, format: "fc" | "prompt"): ReadonlyArray<ReadonlyArray<unknown>> =>
  goldTurns(task, format === "fc" ? "tools" : "text").map((reply) => {
    const done = "I have done what you asked."
    if (reply === null) return ["I need more details to do that."]
    return format === "fc" ? [reply.toolCalls.map((c) => ({ [c.name]: c.argumentsText })), done] : [reply.text, done]
  })

/** A call string with its arguments named (positional ones by the method's signature), or null. */
const named = (task: MultiTurnTask, call: string): { readonly name: string; readonly args: ReadonlyArray<readonly [string, Py]> } | null => {
  const found = namedCall(task, call)
  if (typeof found !== "string") return found
  // A method the task's classes lack (a call that fails when run) is stored as called, if by name only.
  const parsed = parseCall(call)
  if (!parsed.ok || parsed.call.args.length > 0) return null
  return { name: parsed.call.callee.join("."), args: parsed.call.kwargs.map(([k, e]) => [k, evalExpr(e)] as const) }
}

const DONE = "I have done what you asked."

/**
 * A multi-turn answer (turns → steps → call strings, as upstream's eval runner receives it) as the
 * runner would have stored the model's output: each step's calls, then the reply that ended the
 * turn. Undefined when the runner could not have written it: a call it could not name, or an empty
 * step before a step with calls (the runner ends a turn at its first step without calls). An
 * answer that is not turns (an inference error) is stored as it is.
 */
export const multiTurnResult = (task: MultiTurnTask, answer: unknown, format: "fc" | "prompt"): unknown => {
  if (!Array.isArray(answer) || !answer.every(Array.isArray)) return answer
  const turns: Array<Array<unknown>> = []
  for (const turn of answer as ReadonlyArray<ReadonlyArray<ReadonlyArray<string>>>) {
    const steps: Array<unknown> = []
    for (const [i, step] of turn.entries()) {
      const calls = step.filter((c) => c !== "")
      if (calls.length === 0) {
        if (turn.slice(i + 1).some((later) => later.some((c) => c !== ""))) return undefined
        break
      }
      const rendered = calls.map((c) => named(task, c))
      if (rendered.some((r) => r === null)) return undefined
      const ok = rendered as ReadonlyArray<NonNullable<ReturnType<typeof named>>>
      if (format === "prompt") steps.push(`[${ok.map((c) => `${c.name}(${c.args.map(([k, v]) => `${k}=${multiTurnRepr(v)}`).join(", ")})`).join(", ")}]`)
      else {
        const texts = ok.map((c) => jsonDumps(MultiTurnDict.of(c.args)))
        if (texts.some((t) => t === undefined)) return undefined
        steps.push(ok.map((c, j) => ({ [c.name]: texts[j] })))
      }
    }
    turns.push([...steps, DONE])
  }
  return turns
}

/** One line as the runner writes it. */
export const line = (id: string, result: unknown): string => JSON.stringify({ id, result, input_token_count: 100, output_token_count: 20, latency: 0.5 })

const GROUP = (category: string) => (category.startsWith("live_") ? "live" : category.startsWith("multi_turn") ? "multi_turn" : "non_live")

/** Writes `BFCL_v4_<category>_result.json` files under `dir/<group>/`, as upstream lays them out. */
export const writeResultFiles = (dir: string, byCategory: ReadonlyMap<string, ReadonlyArray<string>>): void => {
  for (const [category, lines] of byCategory) {
    const folder = join(dir, GROUP(category))
    mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, `BFCL_v4_${category}_result.json`), lines.map((l) => `${l}\n`).join(""))
  }
}
