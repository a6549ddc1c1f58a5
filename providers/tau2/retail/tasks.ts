/**
 * Retail tasks (upstream src/tau2/data_model/tasks.py) decoded with Schema, the train/test
 * split, and the deterministic parts of upstream's evaluator:
 * - DB: the final world's digest equals the digest after replaying the gold actions on a fresh
 *   fork (evaluator_env.py); the gold digest is computed once per task, cached by content id.
 * - ACTION: every gold action matched by some tool call (evaluator_action.py,
 *   `Action.compare_with_tool_call`).
 * - COMMUNICATE: every communicate_info string found in an assistant message
 *   (evaluator_communicate.py).
 */
import { Effect, ParseResult, Schema } from "effect"
import { type Canonical, World } from "../../../src/index.ts"
import { pyEquals } from "../common/pyjson.ts"
import { contentIdOnce } from "../common/taskIds.ts"
import { Tau2DataError, pinnedFiles } from "./data.ts"
import { step, type ToolType } from "./tools.ts"

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

/** tasks.json decoded, in file order. */
export const decodeTasks = (json: unknown): Effect.Effect<ReadonlyArray<Task>, Tau2DataError> =>
  Effect.mapError(
    Schema.decodeUnknown(Schema.Array(Task))(json),
    (e) => new Tau2DataError({ file: pinnedFiles.tasks.name, reason: "invalid", detail: ParseResult.TreeFormatter.formatErrorSync(e) })
  )

/** The tasks of a split (upstream `get_tasks(split)`), in tasks.json order. */
export { type Split, tasksOfSplit } from "../common/dbDomain.ts"

/** The content id of a task's decoded value (what the gold digest is cached by). */
export const taskContentId: (task: Task) => string = contentIdOnce((task: Task) => Schema.encodeSync(Task)(task))

/**
 * The gold world: the gold actions replayed on a fresh fork of `initial`. A gold action that
 * errors is kept as upstream keeps it (its writes, if any, applied; nothing else); an action
 * requested by the user fails upstream (retail has no user tools) and changes nothing.
 */
export const goldWorld = (initial: World.World, task: Task): World.World =>
  World.replay(World.fork(initial), task.evaluation_criteria?.actions ?? [], (world, action) =>
    action.requestor === "user" ? world : step(world, action.name, action.arguments as { readonly [key: string]: Canonical.Json })[0]
  )

const goldDigests = new Map<string, string>()

/** The gold world's digest, computed once per (initial world, task content id). */
export const goldDigest = (initial: World.World, task: Task): string => {
  const key = `${World.digest(initial)}|${taskContentId(task)}`
  let digest = goldDigests.get(key)
  if (digest === undefined) {
    digest = World.digest(goldWorld(initial, task))
    goldDigests.set(key, digest)
  }
  return digest
}

/**
 * DB check: the final world equals the gold world (digest equality). Upstream passes it
 * outright when a task has neither actions nor env assertions.
 */
export const dbCheck = (initial: World.World, task: Task, finalWorld: World.World): boolean => {
  const criteria = task.evaluation_criteria
  if (criteria === null) return true
  if (criteria.actions === null && criteria.env_assertions === null) return true
  return World.digest(finalWorld) === goldDigest(initial, task)
}

/** The gold-world functions bound to one initial world: `goldWorld(task)`, `dbCheck(final, task)`. */
export const goldOf = (initial: World.World) => ({
  goldWorld: (task: Task): World.World => goldWorld(initial, task),
  goldDigest: (task: Task): string => goldDigest(initial, task),
  dbCheck: (finalWorld: World.World, task: Task): boolean => dbCheck(initial, task, finalWorld)
})

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
