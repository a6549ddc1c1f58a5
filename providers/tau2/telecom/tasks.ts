/**
 * Telecom tasks (upstream src/tau2/data_model/tasks.py) decoded with Schema, the splits, each
 * task's initial state (`Environment.set_state` with `initialization_actions`), and the
 * deterministic parts of upstream's evaluator:
 * - ENV_ASSERTION: the task's env assertions on the final world (assertions.ts).
 * - ACTION: every gold action matched by some tool call (`Action.compare_with_tool_call`).
 * - DB: the final world against the gold world, by digest over the two DBs (the `env` table,
 *   state upstream keeps outside its DBs, is left out). The gold world is computed once per task.
 * Telecom rewards are ENV_ASSERTION or ENV_ASSERTION+ACTION, never DB.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { type PinnedData, World } from "../../../src/index.ts"
import { pyEqualsWith } from "../common/pyjson.ts"
import { contentIdOnce } from "../common/taskIds.ts"
import { Action, nullable, Requestor, RewardType, StructuredUserInstructions, UserScenario } from "../common/task.ts"
import { EnvAssertion, runEnvAssertions, type AssertionResult } from "./assertions.ts"
import { filesIn, pinnedFiles, type Splits } from "./data.ts"
import { envKey, envTable } from "./model.ts"
import { isPyFloat, type PyJson } from "./pyjsonParse.ts"
import { call, callWithoutSync, counterBillIds, runEnvFunction, syncEnvironment, type Args, type ToolOptions } from "./tools.ts"

// The task fields telecom shares with every tau2 domain (retail's decoding of them).
export { Action, Requestor, RewardType, StructuredUserInstructions, UserScenario }

export const EnvFunctionCall = Schema.Struct({
  env_type: Requestor,
  func_name: Schema.String,
  arguments: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
export type EnvFunctionCall = typeof EnvFunctionCall.Type

export const EvaluationCriteria = Schema.Struct({
  actions: nullable(Schema.Array(Action)),
  env_assertions: nullable(Schema.Array(EnvAssertion)),
  communicate_info: nullable(Schema.Array(Schema.String)),
  nl_assertions: nullable(Schema.Array(Schema.String)),
  reward_basis: Schema.optionalWith(Schema.Array(RewardType), { default: () => ["DB", "COMMUNICATE"] as const })
})
export type EvaluationCriteria = typeof EvaluationCriteria.Type

export const InitialState = Schema.Struct({
  /** null for every telecom task (the port refuses anything else). */
  initialization_data: Schema.optionalWith(Schema.Null, { default: () => null }),
  initialization_actions: nullable(Schema.Array(EnvFunctionCall)),
  /** null for every telecom task. */
  message_history: Schema.optionalWith(Schema.Null, { default: () => null })
})

export const Task = Schema.Struct({
  id: Schema.String,
  description: nullable(
    Schema.Struct({ purpose: nullable(Schema.String), relevant_policies: nullable(Schema.String), notes: nullable(Schema.String) })
  ),
  user_scenario: UserScenario,
  ticket: nullable(Schema.String),
  initial_state: nullable(InitialState),
  evaluation_criteria: nullable(EvaluationCriteria),
  issues: nullable(Schema.Array(Schema.Unknown))
})
export type Task = typeof Task.Type

/** tasks.json (parsed with floats marked) decoded, in file order. */
export const decodeTasks = (json: PyJson): Effect.Effect<ReadonlyArray<Task>, PinnedData.DataError> =>
  Effect.mapError(
    Schema.decodeUnknown(Schema.Array(Task))(json),
    (e) => filesIn().invalid(pinnedFiles.tasks, ParseResult.TreeFormatter.formatErrorSync(e))
  )

export type Split = "base" | "train" | "test"

/** `get_tasks(split)`: the tasks of a split in tasks.json order (default "base": all 114). */
export const tasksOfSplit = (tasks: ReadonlyArray<Task>, splits: Splits, split: Split = "base"): ReadonlyArray<Task> => {
  const ids = new Set(splits[split] ?? [])
  return tasks.filter((t) => ids.has(t.id))
}

/** The content id of a task's decoded value (what per-task caches are keyed by). */
export const taskContentId: (task: Task) => string = contentIdOnce((task: Task) => Schema.encodeSync(Task)(task))

/**
 * `set_state(None, initialization_actions, [])` on a fresh environment: each action through
 * `run_env_function_call` (sync after each), then one more sync. Left: the action that failed
 * (upstream would raise out of set_state).
 */
export const taskInitialWorld = (fresh: World.World, task: Task, options: ToolOptions = counterBillIds): Either.Either<World.World, string> => {
  let world = World.fork(fresh)
  for (const a of task.initial_state?.initialization_actions ?? []) {
    const out = runEnvFunction(world, a.env_type, a.func_name, a.arguments as Args, options)
    if (out.error) return Either.left(`${task.id}: initialization ${a.env_type}.${a.func_name} failed: ${out.output}`)
    world = out.world
  }
  const last = syncEnvironment(world, options)
  return last.error ? Either.left(`${task.id}: sync after initialization failed: ${last.output}`) : Either.right(last.world)
}

const initialCache = new Map<string, World.World>()

/** `taskInitialWorld`, cached per (fresh world, task). Every Attempt forks it. */
export const taskInitialWorldCached = (fresh: World.World, task: Task): Either.Either<World.World, string> => {
  const key = `${World.digest(fresh)}|${taskContentId(task)}`
  const hit = initialCache.get(key)
  if (hit !== undefined) return Either.right(hit)
  const made = taskInitialWorld(fresh, task)
  if (Either.isRight(made)) initialCache.set(key, made.right)
  return made
}

/**
 * How gold actions are replayed:
 * - "live": each through `get_response` with a sync after it, as a perfect conversation runs
 *   them (and as upstream's evaluator replays the trajectory it grades);
 * - "upstream-eval": through `make_tool_call` without syncs, as upstream's evaluator builds its
 *   reference environment (in 6 payment tasks the paid bill then stays unpaid).
 */
export type GoldPath = "live" | "upstream-eval"

/** The gold world: the task's initial state, then its gold actions (errors kept as upstream keeps them). */
export const goldWorld = (fresh: World.World, task: Task, path: GoldPath = "live"): Either.Either<World.World, string> =>
  Either.map(taskInitialWorldCached(fresh, task), (start) => {
    let world = start
    for (const a of task.evaluation_criteria?.actions ?? []) {
      const step = path === "live" ? call : callWithoutSync
      world = step(world, a.name, a.requestor, a.arguments as Args).world
    }
    return world
  })

/** The world without the state upstream keeps outside its two DBs. */
const dbPart = (world: World.World): World.World => World.set(world, envTable, envKey, null)

/** Digest of the two DBs (agent and user): what upstream's DB check compares, by hash. */
export const dbDigest = (world: World.World): string => World.digest(dbPart(world))

const goldDigests = new Map<string, string>()

/** The gold world's DB digest, computed once per (fresh world, task, path). */
export const goldDigest = (fresh: World.World, task: Task, path: GoldPath = "upstream-eval"): Either.Either<string, string> => {
  const key = `${World.digest(fresh)}|${taskContentId(task)}|${path}`
  const hit = goldDigests.get(key)
  if (hit !== undefined) return Either.right(hit)
  return Either.map(goldWorld(fresh, task, path), (w) => {
    const d = dbDigest(w)
    goldDigests.set(key, d)
    return d
  })
}

/**
 * DB check: the final world's two DBs equal the gold world's. `path` "upstream-eval" (the
 * default) reproduces upstream's `db_match`, which is false after a perfect run in 71 tasks
 * (user DB) because upstream's reference skips syncs; "live" compares with a perfect run.
 * Passes outright when a task has neither actions nor env assertions, as upstream.
 */
export const dbCheck = (fresh: World.World, task: Task, finalWorld: World.World, path: GoldPath = "upstream-eval"): boolean => {
  const criteria = task.evaluation_criteria
  if (criteria === null) return true
  if (criteria.actions === null && criteria.env_assertions === null) return true
  const gold = goldDigest(fresh, task, path)
  return Either.isRight(gold) && gold.right === dbDigest(finalWorld)
}

export interface CheckResult<C> {
  /** 1 when every expectation is met (or there is none), else 0. */
  readonly reward: 0 | 1
  readonly checks: ReadonlyArray<C>
}

/** ENV_ASSERTION: the task's assertions on the final world, in order. */
export const envAssertionCheck = (task: Task, finalWorld: World.World): CheckResult<AssertionResult> => {
  const [, results] = runEnvAssertions(finalWorld, task.evaluation_criteria?.env_assertions ?? [])
  return { reward: results.every((r) => r.met) ? 1 : 0, checks: results }
}

/** Python `==` on decoded JSON with marked floats: `2 == 2.0`, `True == 1`, dicts without order. */
export const pyEq: (a: unknown, b: unknown) => boolean = pyEqualsWith((x) => (isPyFloat(x) ? x.value : undefined))

/** A tool call of the trajectory (either side's), as the ACTION check sees it. */
export interface TrajectoryToolCall {
  readonly name: string
  readonly arguments: { readonly [key: string]: unknown }
}

/** `Action.compare_with_tool_call`: same name, and the compared arguments equal as Python dicts. */
export const actionMatches = (action: Action, toolCall: TrajectoryToolCall): boolean => {
  if (action.name !== toolCall.name) return false
  const compareArgs = action.compare_args ?? Object.keys(toolCall.arguments)
  if (compareArgs.length === 0) return true
  const pick = (args: { readonly [key: string]: unknown }) => Object.fromEntries(Object.entries(args).filter(([k]) => compareArgs.includes(k)))
  return pyEq(pick(toolCall.arguments), pick(action.arguments))
}

export interface ActionCheck {
  readonly actionId: string
  readonly name: string
  readonly matched: boolean
}

/** ACTION: each gold action matched by some tool call of the trajectory. */
export const actionCheck = (task: Task, toolCalls: ReadonlyArray<TrajectoryToolCall>): CheckResult<ActionCheck> => {
  const checks = (task.evaluation_criteria?.actions ?? []).map((a) => ({
    actionId: a.action_id,
    name: a.name,
    matched: toolCalls.some((c) => actionMatches(a, c))
  }))
  return { reward: checks.every((c) => c.matched) ? 1 : 0, checks }
}

export interface GoldReplay {
  readonly task: Task
  readonly finalWorld: World.World
  readonly envAssertions: CheckResult<AssertionResult>
  readonly actions: CheckResult<ActionCheck>
  readonly dbMatch: boolean
  /** Product over the task's reward basis of its deterministic checks (DB, ENV_ASSERTION, ACTION). */
  readonly reward: 0 | 1
}

/** Replay a task's gold actions on a fork of its initial state and check it as upstream would. */
export const replayGold = (fresh: World.World, task: Task): Either.Either<GoldReplay, string> =>
  Either.map(goldWorld(fresh, task, "live"), (finalWorld) => {
    const envAssertions = envAssertionCheck(task, finalWorld)
    const gold = task.evaluation_criteria?.actions ?? []
    const actions = actionCheck(task, gold.map((a) => ({ name: a.name, arguments: a.arguments })))
    const dbMatch = dbCheck(fresh, task, finalWorld)
    const basis = task.evaluation_criteria?.reward_basis ?? []
    const parts: Array<0 | 1> = []
    if (basis.includes("DB")) parts.push(dbMatch ? 1 : 0)
    if (basis.includes("ENV_ASSERTION")) parts.push(envAssertions.reward)
    if (basis.includes("ACTION")) parts.push(actions.reward)
    return { task, finalWorld, envAssertions, actions, dbMatch, reward: parts.every((p) => p === 1) ? 1 : 0 }
  })
