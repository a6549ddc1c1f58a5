/**
 * What the tau2 domains' equivalence runs share: an oracle corpus is a JSONL file replayed line
 * by line, the first differing field of each line is a Disagreement, and several corpora make one
 * report whose line numbers count across the files in order. Each domain checks its own lines.
 */
import { readFile } from "node:fs/promises"
import { Effect, Either, Schema } from "effect"

export interface Disagreement {
  /** 1-based line number across the corpora, in order. */
  readonly line: number
  readonly taskId: string
  /** The first field that differs, e.g. `actions[3].content` or `final_db_sha256` (see the domain's checkLine). */
  readonly field: string
  readonly expected: string
  readonly actual: string
}

export interface EquivalenceReport<Benchmark extends string> {
  readonly benchmark: Benchmark
  readonly corpus: string
  readonly lines: number
  readonly agree: number
  readonly disagree: ReadonlyArray<Disagreement>
}

/** The fields of every domain's `CorpusError`. */
export const corpusErrorFields = {
  corpus: Schema.String,
  line: Schema.Number,
  reason: Schema.Literal("unreadable", "malformed"),
  detail: Schema.String
}

export type CorpusFailure = Schema.Struct.Type<typeof corpusErrorFields>

/** A `CorpusError` message; `lineKind` names the line a malformed one is not, e.g. "a telecom oracle line". */
export const corpusErrorMessage = (lineKind: string, e: CorpusFailure): string =>
  e.reason === "unreadable"
    ? `cannot read corpus ${e.corpus}: ${e.detail}`
    : `corpus ${e.corpus} line ${e.line} is not ${lineKind}: ${e.detail}`

/**
 * Run one corpus file: each non-empty line through `check` (a Left says why it is malformed,
 * which stops the run), counting agreements.
 */
export const runCorpusLines = <Benchmark extends string, E>(
  benchmark: Benchmark,
  corpusPath: string,
  check: (row: string, lineNumber: number) => Either.Either<Disagreement | undefined, string>,
  corpusError: (fields: CorpusFailure) => E
): Effect.Effect<EquivalenceReport<Benchmark>, E> =>
  Effect.gen(function* () {
    const text = yield* Effect.tryPromise({
      try: () => readFile(corpusPath, "utf8"),
      catch: (e) => corpusError({ corpus: corpusPath, line: 0, reason: "unreadable", detail: String(e) })
    })
    const rows = text.split("\n").filter((l) => l.length > 0)
    const disagree: Array<Disagreement> = []
    for (let n = 0; n < rows.length; n++) {
      const checked = check(rows[n]!, n + 1)
      if (Either.isLeft(checked)) return yield* Effect.fail(corpusError({ corpus: corpusPath, line: n + 1, reason: "malformed", detail: checked.left }))
      if (checked.right !== undefined) disagree.push(checked.right)
    }
    return { benchmark, corpus: corpusPath, lines: rows.length, agree: rows.length - disagree.length, disagree }
  })

/** The corpora run in order as one report: `corpus` lists the files, line numbers count across them. */
export const runCorpora = <Benchmark extends string, E, R>(
  benchmark: Benchmark,
  paths: ReadonlyArray<string>,
  runCorpus: (path: string) => Effect.Effect<EquivalenceReport<Benchmark>, E, R>
): Effect.Effect<EquivalenceReport<Benchmark>, E, R> =>
  Effect.gen(function* () {
    let lines = 0
    const disagree: Array<Disagreement> = []
    for (const path of paths) {
      const report = yield* runCorpus(path)
      for (const d of report.disagree) disagree.push({ ...d, line: d.line + lines })
      lines += report.lines
    }
    return { benchmark, corpus: paths.join(","), lines, agree: lines - disagree.length, disagree }
  })
