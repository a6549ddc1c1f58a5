/**
 * Retail tasks (upstream's task schema, ../common/task.ts) decoded, and the DB check of upstream's
 * evaluator (common/dbDomain.ts `dbChecks` over retail's tools).
 */
import { Effect, ParseResult, Schema } from "effect"
import { dbChecks } from "../common/dbDomain.ts"
import { Task } from "../common/task.ts"
import type { PinnedData } from "../../../src/index.ts"
import { filesIn, pinnedFiles } from "./data.ts"
import { step } from "./tools.ts"

// bench/tau2.ts reads the type here.
export type { Task }

/** tasks.json decoded, in file order. */
export const decodeTasks = (json: unknown): Effect.Effect<ReadonlyArray<Task>, PinnedData.DataError> =>
  Effect.mapError(
    Schema.decodeUnknown(Schema.Array(Task))(json),
    (e) => filesIn().invalid(pinnedFiles.tasks, ParseResult.TreeFormatter.formatErrorSync(e))
  )

/** Retail's DB check and gold world (common/dbDomain.ts). */
export const { dbCheck, goldDigest, goldOf, goldWorld } = dbChecks(step)
