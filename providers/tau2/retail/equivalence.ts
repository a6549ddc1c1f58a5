/**
 * Equivalence with upstream: every line of an oracle corpus (retail/oracle/gold.jsonl,
 * fuzz-dev.jsonl, or any file in that format) is replayed from a fresh fork of the initial DB
 * through the TypeScript tools; each call's content string and error flag, and the final DB's
 * two hashes, must equal upstream's byte for byte (the check is ../common/equivalence.ts `lineChecker`).
 */
import { join } from "node:path"
import { Effect, Schema } from "effect"
import type { World } from "../../../src/index.ts"
import {
  corpusErrorFields,
  corpusErrorMessage,
  corpusPaths,
  type Disagreement,
  type EquivalenceReport as Report,
  lineChecker,
  oracleCorpora,
  OracleLine,
  runCorpora,
  runOracleCorpus
} from "../common/equivalence.ts"
import { loadRetailData, tau2Dir, type Tau2DataError } from "./data.ts"
import { finalDbSha256, upstreamDbHash } from "./hash.ts"
import { step } from "./tools.ts"

export { OracleLine }
export type { Disagreement }

export type EquivalenceReport = Report<"tau2-retail">

export class CorpusError extends Schema.TaggedError<CorpusError>()("CorpusError", corpusErrorFields) {
  override get message() {
    return corpusErrorMessage("an oracle line", this)
  }
}

/** The provider's own corpora, under `$ASSAY_DATA_DIR/tau2/retail/oracle/`. */
export const defaultCorpora = (dataDir?: string): ReadonlyArray<string> => oracleCorpora(join(tau2Dir(dataDir), "retail", "oracle"))

/** Replay one oracle line from `initial`; the first differing field, or undefined if it agrees. */
export const checkLine = lineChecker(step, finalDbSha256, upstreamDbHash)

/** Run a corpus against the initial world. */
export const runCorpus = (initial: World.World, corpusPath: string): Effect.Effect<EquivalenceReport, CorpusError> =>
  runOracleCorpus("tau2-retail", checkLine, initial, corpusPath, (fields) => new CorpusError(fields))

/**
 * `assay equivalence tau2-retail [--corpus FILE]`: load the pinned data, then run the corpus, or
 * with no corpus both of the provider's own (gold.jsonl then fuzz-dev.jsonl: 614 lines) as one
 * report whose `corpus` lists both files. Line numbers count from 1 across the files in order.
 */
export const runEquivalence = (
  corpusPath?: string | ReadonlyArray<string> | null,
  dataDir?: string
): Effect.Effect<EquivalenceReport, CorpusError | Tau2DataError> =>
  Effect.gen(function*() {
    const data = yield* loadRetailData(dataDir)
    return yield* runCorpora("tau2-retail", corpusPaths(corpusPath, defaultCorpora(dataDir)), (path) => runCorpus(data.initialWorld, path))
  })
