/**
 * Equivalence with upstream: every line of an oracle corpus (airline/oracle/gold.jsonl,
 * fuzz-dev.jsonl, or any file in that format) is replayed from a fresh fork of the initial DB
 * through the TypeScript tools; each call's content string and error flag, and the final DB's
 * two hashes, must equal upstream's byte for byte.
 */
import { join } from "node:path"
import { Effect, Either, ParseResult, Schema } from "effect"
import type { Json } from "../../../src/content/Canonical.ts"
import * as World from "../../../src/world/World.ts"
import {
  corpusErrorFields,
  corpusErrorMessage,
  runCorpora,
  runCorpusLines,
  type Disagreement,
  type EquivalenceReport as Report
} from "../common/equivalence.ts"
import { type AirlineDataError, dataRoot, loadAirlineData } from "./data.ts"
import { finalDbSha256, upstreamDbHash } from "./hash.ts"
import { step } from "./tools.ts"

export const OracleLine = Schema.Struct({
  task_id: Schema.String,
  seed: Schema.optional(Schema.Number),
  actions: Schema.Array(
    Schema.Struct({
      name: Schema.String,
      arguments: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
      error: Schema.Boolean,
      content: Schema.String
    })
  ),
  final_db_sha256: Schema.String,
  upstream_db_hash: Schema.String
})
export type OracleLine = typeof OracleLine.Type

export type { Disagreement }

export type EquivalenceReport = Report<"tau2-airline">

export class CorpusError extends Schema.TaggedError<CorpusError>()("CorpusError", corpusErrorFields) {
  override get message() {
    return corpusErrorMessage("an airline oracle line", this)
  }
}

/** The provider's own corpora, under `$ASSAY_DATA_DIR/tau2/airline/oracle/`. */
export const defaultCorpora = (dataDir?: string): ReadonlyArray<string> => [
  join(dataRoot(dataDir), "tau2", "airline", "oracle", "gold.jsonl"),
  join(dataRoot(dataDir), "tau2", "airline", "oracle", "fuzz-dev.jsonl")
]

/** Replay one oracle line from `initial`; the first differing field, or undefined if it agrees. */
export const checkLine = (initial: World.World, line: OracleLine, lineNumber: number): Disagreement | undefined => {
  let world = World.fork(initial)
  const differ = (field: string, expected: string, actual: string): Disagreement => ({ line: lineNumber, taskId: line.task_id, field, expected, actual })
  for (let i = 0; i < line.actions.length; i++) {
    const action = line.actions[i]!
    const [next, outcome] = step(world, action.name, action.arguments as { readonly [key: string]: Json })
    world = next
    if (outcome.output !== action.content) return differ(`actions[${i}].content`, action.content, outcome.output)
    if (outcome.error !== action.error) return differ(`actions[${i}].error`, String(action.error), String(outcome.error))
  }
  const sha = finalDbSha256(world)
  if (sha !== line.final_db_sha256) return differ("final_db_sha256", line.final_db_sha256, sha)
  const upstream = upstreamDbHash(world)
  if (upstream !== line.upstream_db_hash) return differ("upstream_db_hash", line.upstream_db_hash, upstream)
  return undefined
}

const decodeLine = Schema.decodeUnknownEither(Schema.parseJson(OracleLine))

/** Run a corpus against the initial world. */
export const runCorpus = (initial: World.World, corpusPath: string): Effect.Effect<EquivalenceReport, CorpusError> =>
  runCorpusLines(
    "tau2-airline",
    corpusPath,
    (row, n) => Either.map(Either.mapLeft(decodeLine(row), (e) => ParseResult.TreeFormatter.formatErrorSync(e)), (line) => checkLine(initial, line, n)),
    (fields) => new CorpusError(fields)
  )

/**
 * `assay equivalence tau2-airline [--corpus FILE]`: load the pinned data, then run the corpus, or
 * with no corpus both of the provider's own (gold.jsonl then fuzz-dev.jsonl: 550 lines) as one
 * report whose `corpus` lists both files. Line numbers count from 1 across the files in order.
 */
export const runEquivalence = (
  corpusPath?: string | ReadonlyArray<string> | null,
  dataDir?: string
): Effect.Effect<EquivalenceReport, CorpusError | AirlineDataError> =>
  Effect.gen(function*() {
    const data = yield* loadAirlineData(dataDir)
    const paths = corpusPath === undefined || corpusPath === null ? defaultCorpora(dataDir) : typeof corpusPath === "string" ? [corpusPath] : corpusPath
    return yield* runCorpora("tau2-airline", paths, (path) => runCorpus(data.initialWorld, path))
  })
