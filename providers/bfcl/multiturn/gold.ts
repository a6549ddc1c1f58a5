/**
 * The gold candidate of the multi-turn tasks: per turn, one step making all of the turn's
 * ground-truth calls, then a reply with no call (which ends the turn); an empty ground-truth turn
 * is that reply alone.
 *
 * Ground-truth calls are Python call strings, some with positional arguments; a function-calling
 * reply has named arguments only, so each positional argument is given the name of the method's
 * parameter in its place (the executor's signature), which binds to the same value.
 */
import { type Canonical, type Conversation } from "../../../src/index.ts"
import type { Method } from "./api.ts"
import { evalExpr, parseCall } from "./call.ts"
import { jsonDumps, type Py, PyDict, pyRepr } from "./py.ts"
import type { Mode } from "./protocol.ts"
import type { MultiTurnTask } from "./tasks.ts"
import { classesOf } from "./world.ts"

interface NamedCall {
  readonly name: string
  readonly args: ReadonlyArray<readonly [string, Py]>
}

/** A ground-truth call with every argument named, or the reason it cannot be. */
export const namedCall = (task: MultiTurnTask, call: string): NamedCall | string => {
  const parsed = parseCall(call)
  if (!parsed.ok) return `${call}: ${parsed.message}`
  const { args, callee, kwargs } = parsed.call
  const name = callee.join(".")
  const found = classesOf(task)
  // A later class wins a name both have, as in the executor.
  const method = found.ok ? found.classes.reduce<Method<unknown> | undefined>((m, api) => api.methods[name] ?? m, undefined) : undefined
  if (method === undefined) return `${call}: no method ${name} in the task's classes`
  if (args.length > method.params.length) return `${call}: more positional arguments than ${name} takes`
  const named = args.map((a, i): readonly [string, Py] => {
    const p = method.params[i]!
    return [typeof p === "string" ? p : p[0], evalExpr(a)]
  })
  return { name, args: [...named, ...kwargs.map(([k, e]) => [k, evalExpr(e)] as const)] }
}

const STOP: Conversation.AgentReply = { text: "", toolCalls: [] }

/** Per turn, the gold step's reply (all the turn's ground-truth calls), or null for an empty ground-truth turn. */
export const goldTurns = (task: MultiTurnTask, mode: Mode): ReadonlyArray<Conversation.AgentReply | null> => {
  let n = 0
  return task.groundTruth.map((turn) => {
    if (turn.length === 0) return null
    const calls = turn.map((c) => {
      const named = namedCall(task, c)
      if (typeof named === "string") throw new Error(`bfcl-multi-turn gold of ${task.id}: ${named}`)
      return named
    })
    if (mode === "text") {
      return { text: `[${calls.map((c) => `${c.name}(${c.args.map(([k, v]) => `${k}=${pyRepr(v)}`).join(", ")})`).join(", ")}]`, toolCalls: [] }
    }
    return {
      text: null,
      toolCalls: calls.map((c) => {
        const argumentsText = jsonDumps(PyDict.of(c.args))
        if (argumentsText === undefined) throw new Error(`bfcl-multi-turn gold of ${task.id}: ${c.name}'s arguments are not JSON`)
        return { id: `call-${++n}`, name: c.name, arguments: JSON.parse(argumentsText) as { readonly [key: string]: Canonical.Json }, argumentsText }
      })
    }
  })
}

/** The gold replies of a task in the given action space: each turn's step, then a reply with no call. */
export const goldReplies = (task: MultiTurnTask, mode: Mode): ReadonlyArray<Conversation.AgentReply> =>
  goldTurns(task, mode).flatMap((step) => (step === null ? [STOP] : [step, STOP]))
