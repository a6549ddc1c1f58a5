/**
 * Equivalence with upstream: every line of an oracle corpus (retail/oracle/gold.jsonl,
 * fuzz-dev.jsonl, or any file in that format) is replayed from a fresh fork of the initial DB
 * through the TypeScript tools; each call's content string and error flag, and the final DB's
 * two hashes, must equal upstream's byte for byte.
 */
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { Effect, Either, ParseResult, Schema } from "effect"
import type { Json } from "../../../src/content/Canonical.ts"
import * as World from "../../../src/world/World.ts"
import { loadRetailData, tau2Dir, type Tau2DataError } from "./data.ts"
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

export interface Disagreement {
  /** 1-based line number in the corpus. */
  readonly line: number
  readonly taskId: string
  /** The first field that differs: `actions[i].content`, `actions[i].error`, `final_db_sha256`, `upstream_db_hash`. */
  readonly field: string
  readonly expected: string
  readonly actual: string
}

export interface EquivalenceReport {
  readonly benchmark: "tau2-retail"
  readonly corpus: string
  readonly lines: number
  readonly agree: number
  readonly disagree: ReadonlyArray<Disagreement>
}

export class CorpusError extends Schema.TaggedError<CorpusError>()("CorpusError", {
  corpus: Schema.String,
  line: Schema.Number,
  reason: Schema.Literal("unreadable", "malformed"),
  detail: Schema.String
}) {
  override get message() {
    return this.reason === "unreadable"
      ? `cannot read corpus ${this.corpus}: ${this.detail}`
      : `corpus ${this.corpus} line ${this.line} is not an oracle line: ${this.detail}`
  }
}

/** The provider's own corpora, under `$ASSAY_DATA_DIR/tau2/retail/oracle/`. */
export const defaultCorpora = (dataDir?: string): ReadonlyArray<string> => [
  join(tau2Dir(dataDir), "retail", "oracle", "gold.jsonl"),
  join(tau2Dir(dataDir), "retail", "oracle", "fuzz-dev.jsonl")
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
  Effect.gen(function* () {
    const text = yield* Effect.tryPromise({
      try: () => readFile(corpusPath, "utf8"),
      catch: (e) => new CorpusError({ corpus: corpusPath, line: 0, reason: "unreadable", detail: String(e) })
    })
    const rows = text.split("\n").filter((l) => l.length > 0)
    const disagree: Array<Disagreement> = []
    for (let n = 0; n < rows.length; n++) {
      const decoded = decodeLine(rows[n]!)
      if (Either.isLeft(decoded)) {
        return yield* new CorpusError({ corpus: corpusPath, line: n + 1, reason: "malformed", detail: ParseResult.TreeFormatter.formatErrorSync(decoded.left) })
      }
      const d = checkLine(initial, decoded.right, n + 1)
      if (d !== undefined) disagree.push(d)
    }
    return { benchmark: "tau2-retail", corpus: corpusPath, lines: rows.length, agree: rows.length - disagree.length, disagree }
  })

/**
 * `assay equivalence tau2-retail [--corpus FILE]`: load the pinned data, then run the corpus, or
 * with no corpus both of the provider's own (gold.jsonl then fuzz-dev.jsonl: 614 lines) as one
 * report whose `corpus` lists both files. Line numbers count from 1 across the files in order.
 */
export const runEquivalence = (
  corpusPath?: string | ReadonlyArray<string>,
  dataDir?: string
): Effect.Effect<EquivalenceReport, CorpusError | Tau2DataError> =>
  Effect.gen(function* () {
    const data = yield* loadRetailData(dataDir)
    const paths = corpusPath === undefined ? defaultCorpora(dataDir) : typeof corpusPath === "string" ? [corpusPath] : corpusPath
    let lines = 0
    const disagree: Array<Disagreement> = []
    for (const path of paths) {
      const report = yield* runCorpus(data.initialWorld, path)
      for (const d of report.disagree) disagree.push({ ...d, line: d.line + lines })
      lines += report.lines
    }
    return { benchmark: "tau2-retail", corpus: paths.join(","), lines, agree: lines - disagree.length, disagree }
  })
