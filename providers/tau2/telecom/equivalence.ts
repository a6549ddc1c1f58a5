/**
 * Equivalence with upstream: every line of a telecom oracle corpus (telecom/oracle/gold.jsonl,
 * fuzz-dev.jsonl, or a held-out file in that format) is replayed through the TypeScript port
 * from its task's initial state: each call's content and error flag, the final hashes of both
 * DBs, the env assertions' results and, for gold lines, the initial hashes and upstream
 * evaluator's reference hashes (gold actions without syncs) must equal upstream's byte for byte.
 * Lines are parsed with floats marked, since `2.0` and `2` give different texts upstream.
 */
import { join } from "node:path"
import { Effect, Either, ParseResult, Schema } from "effect"
import { type PinnedData, World } from "../../../src/index.ts"
import {
  CorpusError,
  corpusErrorOf,
  runCorpusLines,
  runGivenOrOwn,
  type Disagreement,
  type EquivalenceReport as Report
} from "../common/equivalence.ts"
import { runEnvAssertions, EnvAssertion } from "./assertions.ts"
import { dataRoot, loadTelecomData } from "./data.ts"
import { dbSha256, upstreamDbHash, upstreamUserDbHash, userDbSha256 } from "./hash.ts"
import { parsePyJson } from "./pyjsonParse.ts"
import { decodeTasks, taskInitialWorld, type Task } from "./tasks.ts"
import { call, callWithoutSync, type Args } from "./tools.ts"

const OracleAction = Schema.Struct({
  name: Schema.String,
  requestor: Schema.Literal("user", "assistant"),
  arguments: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  error: Schema.Boolean,
  content: Schema.String
})

export const OracleLine = Schema.Struct({
  task_id: Schema.String,
  seed: Schema.optional(Schema.Number),
  init_task_id: Schema.optional(Schema.String),
  initial_db_sha256: Schema.optional(Schema.String),
  initial_user_db_sha256: Schema.optional(Schema.String),
  actions: Schema.Array(OracleAction),
  final_db_sha256: Schema.String,
  final_user_db_sha256: Schema.String,
  final_upstream_db_hash: Schema.String,
  final_upstream_user_db_hash: Schema.String,
  eval_upstream_db_hash: Schema.optional(Schema.String),
  eval_upstream_user_db_hash: Schema.optional(Schema.String),
  env_assertions: Schema.Array(Schema.extend(EnvAssertion, Schema.Struct({ met: Schema.Boolean })))
})
export type OracleLine = typeof OracleLine.Type

export type { Disagreement }

export type EquivalenceReport = Report<"tau2-telecom">

export { CorpusError }

const corpusError = corpusErrorOf("a telecom oracle line")

/** The provider's own corpora, under `$ASSAY_DATA_DIR/tau2/telecom/oracle/`. */
export const defaultCorpora = (dataDir?: string): ReadonlyArray<string> => [
  join(dataRoot(dataDir), "tau2", "telecom", "oracle", "gold.jsonl"),
  join(dataRoot(dataDir), "tau2", "telecom", "oracle", "fuzz-dev.jsonl")
]

/** Replay one oracle line; the first differing field, or undefined if it agrees. */
export const checkLine = (
  fresh: World.World,
  tasks: ReadonlyMap<string, Task>,
  line: OracleLine,
  lineNumber: number
): Disagreement | undefined => {
  const differ = (field: string, expected: string, actual: string): Disagreement => ({ line: lineNumber, taskId: line.task_id, field, expected, actual })
  const taskId = line.init_task_id ?? line.task_id
  const task = tasks.get(taskId)
  if (task === undefined) return differ("task_id", taskId, "no such task in tasks.json")
  const start = taskInitialWorld(fresh, task)
  if (Either.isLeft(start)) return differ("initial_state", "initialized", start.left)
  const hashes = (w: World.World, fields: ReadonlyArray<readonly [string | undefined, string, (w: World.World) => string]>) => {
    for (const [expected, field, hash] of fields) {
      if (expected === undefined) continue
      const actual = hash(w)
      if (actual !== expected) return differ(field, expected, actual)
    }
    return undefined
  }
  const initial = hashes(start.right, [
    [line.initial_db_sha256, "initial_db_sha256", dbSha256],
    [line.initial_user_db_sha256, "initial_user_db_sha256", userDbSha256]
  ])
  if (initial) return initial
  let world = start.right
  for (let i = 0; i < line.actions.length; i++) {
    const a = line.actions[i]!
    const out = call(world, a.name, a.requestor, a.arguments as Args)
    world = out.world
    if (out.output !== a.content) return differ(`actions[${i}].content`, a.content, out.output)
    if (out.error !== a.error) return differ(`actions[${i}].error`, String(a.error), String(out.error))
  }
  const final = hashes(world, [
    [line.final_db_sha256, "final_db_sha256", dbSha256],
    [line.final_user_db_sha256, "final_user_db_sha256", userDbSha256],
    [line.final_upstream_db_hash, "final_upstream_db_hash", upstreamDbHash],
    [line.final_upstream_user_db_hash, "final_upstream_user_db_hash", upstreamUserDbHash]
  ])
  if (final) return final
  const expectedAssertions = line.env_assertions
  const [, results] = runEnvAssertions(world, task.evaluation_criteria?.env_assertions ?? [])
  if (results.length !== expectedAssertions.length) return differ("env_assertions.length", String(expectedAssertions.length), String(results.length))
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!
    const e = expectedAssertions[i]!
    if (r.assertion.func_name !== e.func_name) return differ(`env_assertions[${i}].func_name`, e.func_name, r.assertion.func_name)
    if (r.met !== e.met) return differ(`env_assertions[${i}].met`, String(e.met), `${r.met}${r.error === null ? "" : ` (${r.error})`}`)
  }
  if (line.eval_upstream_db_hash !== undefined || line.eval_upstream_user_db_hash !== undefined) {
    // Upstream's evaluator reference: the same initial state, gold actions without syncs.
    let ref = start.right
    for (const a of line.actions) ref = callWithoutSync(ref, a.name, a.requestor, a.arguments as Args).world
    const evalHashes = hashes(ref, [
      [line.eval_upstream_db_hash, "eval_upstream_db_hash", upstreamDbHash],
      [line.eval_upstream_user_db_hash, "eval_upstream_user_db_hash", upstreamUserDbHash]
    ])
    if (evalHashes) return evalHashes
  }
  return undefined
}

const decodeLine = Schema.decodeUnknownEither(OracleLine)

/** Run one corpus file. */
export const runCorpus = (
  fresh: World.World,
  tasks: ReadonlyMap<string, Task>,
  corpusPath: string
): Effect.Effect<EquivalenceReport, CorpusError> =>
  runCorpusLines(
    "tau2-telecom",
    corpusPath,
    (row, n) => {
      const parsed = parsePyJson(row)
      if (Either.isLeft(parsed)) return Either.left(`JSON syntax at offset ${parsed.left.offset}`)
      const decoded = decodeLine(parsed.right)
      if (Either.isLeft(decoded)) return Either.left(ParseResult.TreeFormatter.formatErrorSync(decoded.left))
      return Either.right(checkLine(fresh, tasks, decoded.right, n))
    },
    corpusError
  )

/**
 * `assay equivalence tau2-telecom [--corpus FILE]`: load the pinned data, then run the corpus,
 * or with null/undefined both of the provider's own (gold.jsonl then fuzz-dev.jsonl: 314 lines)
 * as one report whose `corpus` lists both files. Line numbers count from 1 across the files.
 */
export const runEquivalence = (
  corpusPath?: string | ReadonlyArray<string> | null,
  dataDir?: string
): Effect.Effect<EquivalenceReport, CorpusError | PinnedData.DataError> =>
  Effect.gen(function* () {
    const data = yield* loadTelecomData(dataDir)
    const tasks = new Map((yield* decodeTasks(data.tasksJson)).map((t) => [t.id, t] as const))
    return yield* runGivenOrOwn("tau2-telecom", corpusPath, defaultCorpora(dataDir), (path) => runCorpus(data.initialWorld, tasks, path))
  })
