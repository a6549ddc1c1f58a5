/**
 * Upstream's task (src/tau2/data_model/tasks.py) decoded with Schema, its splits, and what every
 * domain's grading shares: the ACTION check (evaluator_action.py, `Action.compare_with_tool_call`),
 * the COMMUNICATE check (evaluator_communicate.py) and `str(task.user_scenario)`, the scenario as
 * the user simulator's prompt renders it. A domain's tasks.ts adds its own fields and DB check.
 */
import { Schema } from "effect"
import type { Canonical } from "../../../src/index.ts"
import { pyEquals } from "./pyjson.ts"
import { contentIdOnce } from "./taskIds.ts"
import type { ToolType } from "./toolkit.ts"

/** A field upstream declares `Optional[...] = None`: absent or null decodes to null. */
export const nullable = <A, I>(schema: Schema.Schema<A, I>) => Schema.optionalWith(Schema.NullOr(schema), { default: () => null })

export const Requestor = Schema.Literal("user", "assistant")

export const Action = Schema.Struct({
  action_id: Schema.String,
  requestor: Schema.optionalWith(Requestor, { default: () => "assistant" as const }),
  name: Schema.String,
  arguments: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  info: nullable(Schema.String),
  /** Arguments compared by the ACTION check; null compares every argument of the call. */
  compare_args: nullable(Schema.Array(Schema.String))
})
export type Action = typeof Action.Type

export const RewardType = Schema.Literal("DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE")
export type RewardType = typeof RewardType.Type

export const EvaluationCriteria = Schema.Struct({
  actions: nullable(Schema.Array(Action)),
  env_assertions: nullable(Schema.Array(Schema.Unknown)),
  communicate_info: nullable(Schema.Array(Schema.String)),
  nl_assertions: nullable(Schema.Array(Schema.String)),
  reward_basis: Schema.optionalWith(Schema.Array(RewardType), { default: () => ["DB", "COMMUNICATE"] as const })
})
export type EvaluationCriteria = typeof EvaluationCriteria.Type

export const StructuredUserInstructions = Schema.Struct({
  domain: Schema.String,
  reason_for_call: Schema.String,
  known_info: nullable(Schema.String),
  unknown_info: nullable(Schema.String),
  task_instructions: Schema.String
})

export const UserScenario = Schema.Struct({
  persona: nullable(Schema.String),
  instructions: Schema.Union(StructuredUserInstructions, Schema.String)
})
export type UserScenario = typeof UserScenario.Type

export const Task = Schema.Struct({
  id: Schema.String,
  description: nullable(
    Schema.Struct({ purpose: nullable(Schema.String), relevant_policies: nullable(Schema.String), notes: nullable(Schema.String) })
  ),
  user_scenario: UserScenario,
  ticket: nullable(Schema.String),
  /** null for every retail task (no initialization data, actions or message history). */
  initial_state: nullable(Schema.Unknown),
  evaluation_criteria: nullable(EvaluationCriteria),
  issues: nullable(Schema.Array(Schema.Unknown))
})
export type Task = typeof Task.Type

/** The content id of a task's decoded value (what the gold digest is cached by). */
export const taskContentId: (task: Task) => string = contentIdOnce((task: Task) => Schema.encodeSync(Task)(task))

export const Splits = Schema.Struct({ train: Schema.Array(Schema.String), test: Schema.Array(Schema.String), base: Schema.Array(Schema.String) })
export type Splits = typeof Splits.Type

export type Split = "train" | "test" | "base"

/** The tasks of one of upstream's splits (upstream `get_tasks(split)`), in tasks.json order. */
export const tasksOfSplit = <T extends { readonly id: string }>(tasks: ReadonlyArray<T>, splits: Splits, split: Split): ReadonlyArray<T> => {
  const ids = new Set(splits[split])
  return tasks.filter((t) => ids.has(t.id))
}

/** A tool call of the trajectory, as the ACTION check sees it. */
export interface TrajectoryToolCall {
  readonly name: string
  readonly arguments: { readonly [key: string]: Canonical.Json }
}

/** `Action.compare_with_tool_call`: same name, and the compared arguments equal as Python dicts. */
export const actionMatches = (action: Action, call: TrajectoryToolCall): boolean => {
  if (action.name !== call.name) return false
  // compare_args None means: the keys of the CALL's arguments.
  const compareArgs = action.compare_args ?? Object.keys(call.arguments)
  if (compareArgs.length === 0) return true
  const pick = (args: { readonly [key: string]: unknown }) =>
    Object.fromEntries(Object.entries(args).filter(([k]) => compareArgs.includes(k)))
  return pyEquals(pick(call.arguments), pick(action.arguments))
}

export interface ActionCheck {
  readonly actionId: string
  readonly name: string
  readonly matched: boolean
  readonly toolType: ToolType | null
}

export interface CheckResult<C> {
  /** 1 when every expectation is met (or there is none), else 0. */
  readonly reward: 0 | 1
  readonly checks: ReadonlyArray<C>
}

/** ACTION: each gold action matched by some tool call of the trajectory (user's or agent's). */
export const actionCheck = (
  task: Task,
  toolCalls: ReadonlyArray<TrajectoryToolCall>,
  toolTypes: ReadonlyArray<{ readonly name: string; readonly type: ToolType }> = []
): CheckResult<ActionCheck> => {
  const actions = task.evaluation_criteria?.actions ?? []
  const checks = actions.map((action) => ({
    actionId: action.action_id,
    name: action.name,
    matched: toolCalls.some((call) => actionMatches(action, call)),
    toolType: toolTypes.find((t) => t.name === action.name)?.type ?? null
  }))
  return { reward: checks.every((c) => c.matched) ? 1 : 0, checks }
}

export interface CommunicateCheck {
  readonly info: string
  readonly met: boolean
}

/**
 * COMMUNICATE: each communicate_info string, lower-cased, is a substring of some assistant
 * message with text, lower-cased with its commas removed. Pass the assistant messages' text
 * contents (null for a message without text, such as a pure tool call).
 */
export const communicateCheck = (task: Task, assistantContents: ReadonlyArray<string | null>): CheckResult<CommunicateCheck> => {
  const infos = task.evaluation_criteria?.communicate_info ?? []
  const texts = assistantContents
    .filter((c): c is string => c !== null && c.trim().length > 0)
    .map((c) => c.toLowerCase().replaceAll(",", ""))
  const checks = infos.map((info) => ({ info, met: texts.some((t) => t.includes(info.toLowerCase())) }))
  return { reward: checks.every((c) => c.met) ? 1 : 0, checks }
}

// Python's str.splitlines(keepends=True) boundaries.
const LINE = /[^\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]*(?:\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029])?/g

/** `textwrap.indent(text, prefix)`: the prefix on every line that is not whitespace only. */
export const indent = (text: string, prefix: string): string => {
  let out = ""
  for (const line of text.match(LINE) ?? []) if (line.length > 0) out += line.trim().length > 0 ? prefix + line : line
  return out
}

/** `str(task.user_scenario)`: what the user simulator's prompt calls the instructions. */
export const renderUserScenario = (scenario: UserScenario): string => {
  const lines: Array<string> = []
  if (scenario.persona !== null) lines.push("Persona:", indent(scenario.persona, "\t"))
  lines.push("Instructions:")
  const i = scenario.instructions
  let instructions: string
  if (typeof i === "string") instructions = i
  else {
    const parts = [`Domain: ${i.domain}`, `Reason for call:\n${indent(i.reason_for_call, "\t")}`]
    if (i.known_info !== null) parts.push(`Known info:\n${indent(i.known_info, "\t")}`)
    if (i.unknown_info !== null) parts.push(`Unknown info:\n${indent(i.unknown_info, "\t")}`)
    parts.push(`Task instructions:\n${indent(i.task_instructions, "\t")}`)
    instructions = parts.join("\n")
  }
  lines.push(indent(instructions, "\t"))
  return lines.join("\n")
}
