/**
 * Airline tasks (upstream's task schema, ../common/task.ts) decoded, and the DB check of upstream's
 * evaluator (common/dbDomain.ts `dbChecks` over airline's tools). Every airline task is graded on
 * DB and COMMUNICATE (the shared checks); none has an initial state.
 */
import { Effect, ParseResult, Schema } from "effect"
import type { Canonical, PinnedData } from "../../../src/index.ts"
import { dbChecks } from "../common/dbDomain.ts"
import { Task as TaskSchema } from "../common/task.ts"
import { filesIn, pinnedFiles } from "./data.ts"
import { step } from "./tools.ts"

/** The shared tau2 task schema. */
export const Task = TaskSchema
export type Task = typeof TaskSchema.Type

/** tasks.json decoded, in file order; a task with an initial state is refused (no airline task has one). */
export const decodeTasks = (json: unknown): Effect.Effect<ReadonlyArray<Task>, PinnedData.DataError> =>
  Effect.gen(function*() {
    const invalid = (detail: string) => filesIn().invalid(pinnedFiles.tasks, detail)
    const tasks = yield* Effect.mapError(Schema.decodeUnknown(Schema.Array(Task))(json), (e) => invalid(ParseResult.TreeFormatter.formatErrorSync(e)))
    const withState = tasks.find((t) => t.initial_state !== null)
    if (withState !== undefined) return yield* Effect.fail(invalid(`task ${withState.id} has an initial_state, which this transcription does not apply`))
    return tasks
  })

/** The tasks of a split (upstream `get_tasks(split)`), in tasks.json order. */
export { type Split, tasksOfSplit } from "../common/task.ts"

/** A task's gold actions as tasks.json carries them (every one requested by the agent). */
export const goldCalls = (task: Task): ReadonlyArray<{ readonly name: string; readonly arguments: { readonly [key: string]: Canonical.Json } }> =>
  (task.evaluation_criteria?.actions ?? []).map((a) => ({ name: a.name, arguments: a.arguments as { readonly [key: string]: Canonical.Json } }))

/** Airline's DB check and gold world (common/dbDomain.ts). */
export const { dbCheck, goldDigest, goldOf, goldWorld } = dbChecks(step)
