/**
 * banking_knowledge tasks (upstream `get_tasks`: tasks/task_*.json sorted by file name), decoded
 * with the shared tau2 task schema (retail/tasks.ts), plus what banking adds: the user tools a
 * task offers, its required documents, its initial agent data and the read-log allowlist
 * derived from its gold actions (upstream runner/build.py `_derive_read_log_allowlist`).
 *
 * The DB check (evaluator_env.py): the final world's DB equals the gold world's, the gold world
 * being the gold actions replayed with their requestors on a fresh fork of the task's initial
 * world. Both compare `World.digest` of the DB tables (the `$session` table, which holds the
 * agent's unlocked tools, is left out as upstream keeps that state outside the DB). The gold
 * digest is computed once per task content id.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { type Canonical, type PinnedData, World } from "../../../src/index.ts"
import { contentIdOnce } from "../common/taskIds.ts"
import { Task, type Task as TaskType } from "../common/task.ts"
import { applyAgentData, type BankingData, invalid } from "./data.ts"
import { floatTag, isDict, type Py } from "./pyvalue.ts"
import { dbWorld, step, withReadLogAllowlist, type Environment, type Requestor } from "./tools.ts"

/** A gold action as replayed (arguments keep Python's int/float distinction). */
export interface GoldAction {
  readonly name: string
  readonly requestor: Requestor
  readonly arguments: { readonly [key: string]: Canonical.Json }
}

export interface BankingTask {
  /** The shared tau2 task (evaluation criteria, user scenario); numbers are plain JSON numbers. */
  readonly task: TaskType
  readonly id: string
  /**
   * Names of the user tools the simulated user is offered (`user_tools`; null offers all 6, as
   * upstream's `get_user_tools(include=None)`). Every user tool stays callable whatever is offered.
   */
  readonly userTools: ReadonlyArray<string> | null
  readonly requiredDocuments: ReadonlyArray<string>
  /** `initial_state.initialization_data.agent_data`, or null. */
  readonly agentData: Py | null
  /** Sorted names of the discoverable tools the gold actions call through `call_discoverable_agent_tool`. */
  readonly readLogAllowlist: ReadonlyArray<string>
  readonly goldActions: ReadonlyArray<GoldAction>
}

/** A parsed value with Python floats as plain numbers (what the shared task schema expects). */
export const plain = (v: Py): Canonical.Json => {
  if (Array.isArray(v)) return v.map(plain)
  if (v !== null && typeof v === "object") {
    const f = floatTag(v)
    if (f !== undefined) return f
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]))
  }
  return v
}


const strings = (v: Py | undefined): ReadonlyArray<string> => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [])

/** One task file's parsed JSON to a BankingTask. */
export const decodeTask = (json: Py): Either.Either<BankingTask, string> => {
  if (!isDict(json)) return Either.left("a task is not an object")
  const decoded = Schema.decodeUnknownEither(Task)(plain(json))
  if (Either.isLeft(decoded)) return Either.left(ParseResult.TreeFormatter.formatErrorSync(decoded.left))
  const task = decoded.right
  const st = json["initial_state"]
  const init = isDict(st) ? st["initialization_data"] : undefined
  const agentData = isDict(init) && init["agent_data"] !== undefined ? init["agent_data"]! : null
  if (isDict(st)) {
    for (const k of ["initialization_actions", "message_history"]) {
      const v = st[k]
      if (v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0)) return Either.left(`${task.id}: initial_state.${k} is not supported`)
    }
  }
  const criteria = json["evaluation_criteria"]
  const rawActions = isDict(criteria) && Array.isArray(criteria["actions"]) ? criteria["actions"] : []
  const goldActions: Array<GoldAction> = []
  for (const a of rawActions) {
    if (!isDict(a) || typeof a["name"] !== "string" || !isDict(a["arguments"])) return Either.left(`${task.id}: a gold action needs name and arguments`)
    goldActions.push({ name: a["name"], requestor: a["requestor"] === "user" ? "user" : "assistant", arguments: a["arguments"] })
  }
  const allow = new Set<string>()
  for (const a of goldActions) {
    const name = a.arguments["agent_tool_name"]
    if (a.name === "call_discoverable_agent_tool" && typeof name === "string" && name.length > 0) allow.add(name)
  }
  return Either.right({
    task,
    id: task.id,
    userTools: Array.isArray(json["user_tools"]) ? strings(json["user_tools"]) : null,
    requiredDocuments: strings(json["required_documents"]),
    agentData,
    readLogAllowlist: [...allow].sort(),
    goldActions
  })
}

/** Every task, in upstream order. */
export const decodeTasks = (data: BankingData): Effect.Effect<ReadonlyArray<BankingTask>, PinnedData.DataError> =>
  Effect.forEach(data.tasksJson, (json, i) =>
    Either.mapLeft(decodeTask(json), (detail) => invalid(`tau2/banking_knowledge/tasks (task ${i + 1})`, detail))
  )

/**
 * The world an Attempt on `task` starts from: db.json, the task's agent data deep-merged, and
 * the read-log allowlist set (as `get_environment(read_log_allowlist=...)` does).
 */
export const initialWorld = (data: BankingData, task: BankingTask): Either.Either<World.World, string> => {
  const merged = task.agentData === null ? Either.right(data.initialWorld) : applyAgentData(data.initialWorld, task.agentData)
  return Either.map(merged, (w) => withReadLogAllowlist(w, task.readLogAllowlist))
}

/** The gold world: the gold actions replayed (an erroring action keeps the writes it made). */
export const goldWorld = (env: Environment, initial: World.World, task: BankingTask): World.World =>
  World.replay(World.fork(initial), task.goldActions, (world, a) => step(world, env, a.requestor, a.name, a.arguments)[0])

/** The content id of a task (its decoded record and gold actions): what per-task caches are keyed by. */
export const taskContentId: (task: BankingTask) => string = contentIdOnce((task: BankingTask) => ({
  task: Schema.encodeSync(Task)(task.task) as unknown as Canonical.Json,
  gold: task.goldActions as unknown as Canonical.Json
}))

const goldDigests = new Map<string, string>()

/** The gold DB's digest, computed once per (initial world, task content id). */
export const goldDigest = (env: Environment, initial: World.World, task: BankingTask): string => {
  const key = `${World.digest(initial)}|${taskContentId(task)}`
  let digest = goldDigests.get(key)
  if (digest === undefined) {
    digest = World.digest(dbWorld(goldWorld(env, initial, task)))
    goldDigests.set(key, digest)
  }
  return digest
}

/** DB check: the final DB equals the gold DB. Upstream passes a task without actions or env assertions. */
export const dbCheck = (env: Environment, initial: World.World, task: BankingTask, finalWorld: World.World): boolean => {
  const criteria = task.task.evaluation_criteria
  if (criteria === null) return true
  if (criteria.actions === null && criteria.env_assertions === null) return true
  return World.digest(dbWorld(finalWorld)) === goldDigest(env, initial, task)
}
