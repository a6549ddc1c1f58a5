/**
 * Airline tasks (upstream src/tau2/data_model/tasks.py, the shared tau2 task schema of
 * retail/tasks.ts), upstream's splits, and the DB check of upstream's evaluator: the final world's
 * digest equals the digest after replaying the gold actions on a fresh fork of the initial DB
 * (evaluator_env.py); the gold digest is computed once per task, cached by content id. Every
 * airline task is graded on DB and COMMUNICATE (the shared checks); none has an initial state.
 */
import { Effect, ParseResult, Schema } from "effect"
import { type Canonical, World } from "../../../src/index.ts"
import { contentIdOnce } from "../common/taskIds.ts"
import { Task as TaskSchema } from "../retail/tasks.ts"
import { AirlineDataError, pinnedFiles } from "./data.ts"
import { step } from "./tools.ts"

/** The shared tau2 task schema. */
export const Task = TaskSchema
export type Task = typeof TaskSchema.Type

/** tasks.json decoded, in file order; a task with an initial state is refused (no airline task has one). */
export const decodeTasks = (json: unknown): Effect.Effect<ReadonlyArray<Task>, AirlineDataError> =>
  Effect.gen(function*() {
    const invalid = (detail: string) => new AirlineDataError({ file: pinnedFiles.tasks.name, reason: "invalid", detail })
    const tasks = yield* Effect.mapError(Schema.decodeUnknown(Schema.Array(Task))(json), (e) => invalid(ParseResult.TreeFormatter.formatErrorSync(e)))
    const withState = tasks.find((t) => t.initial_state !== null)
    if (withState !== undefined) return yield* Effect.fail(invalid(`task ${withState.id} has an initial_state, which this transcription does not apply`))
    return tasks
  })

/** The tasks of a split (upstream `get_tasks(split)`), in tasks.json order. */
export { type Split, tasksOfSplit } from "../common/dbDomain.ts"

const taskContentId: (task: Task) => string = contentIdOnce((task: Task) => Schema.encodeSync(Task)(task))

/** A task's gold actions as tasks.json carries them (every one requested by the agent). */
export const goldCalls = (task: Task): ReadonlyArray<{ readonly name: string; readonly arguments: { readonly [key: string]: Canonical.Json } }> =>
  (task.evaluation_criteria?.actions ?? []).map((a) => ({ name: a.name, arguments: a.arguments as { readonly [key: string]: Canonical.Json } }))

/**
 * The gold world: the gold actions replayed on a fresh fork of `initial`. A gold action that
 * errors is kept as upstream keeps it (its writes, if any, applied); an action requested by the
 * user fails upstream (airline has no user tools) and changes nothing.
 */
export const goldWorld = (initial: World.World, task: Task): World.World =>
  World.replay(World.fork(initial), task.evaluation_criteria?.actions ?? [], (world, action) =>
    action.requestor === "user" ? world : step(world, action.name, action.arguments as { readonly [key: string]: Canonical.Json })[0])

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
