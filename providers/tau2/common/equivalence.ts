/**
 * What the tau2 domains' equivalence runs share: an oracle corpus is a JSONL file replayed line
 * by line, the first differing field of each line is a Disagreement, and several corpora make one
 * report whose line numbers count across the files in order. Each domain checks its own lines.
 */
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { Effect, Either, ParseResult, Schema } from "effect"
import { type Canonical, type Tool, World } from "../../../src/index.ts"
import { dataRoot } from "./pinned.ts"

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

/** A corpus that cannot be read, or a line of it that is not `lineKind`, e.g. "a telecom oracle line". */
export class CorpusError extends Schema.TaggedError<CorpusError>()("CorpusError", { ...corpusErrorFields, lineKind: Schema.String }) {
  override get message() {
    return corpusErrorMessage(this.lineKind, this)
  }
}

/** The CorpusError of a domain whose lines are `lineKind`. */
export const corpusErrorOf = (lineKind: string) => (fields: CorpusFailure): CorpusError => new CorpusError({ ...fields, lineKind })

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

/**
 * A line of a DB domain's oracle (retail, airline): the calls in order, each with upstream's
 * content and error flag, then the final DB's two hashes (see the domain's oracle/README.md).
 */
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

/** Replays one oracle line from `initial`: the first differing field, or undefined if it agrees. */
export type LineCheck = (initial: World.World, line: OracleLine, lineNumber: number) => Disagreement | undefined

/**
 * The check of a DB domain's oracle lines: each call through `step` from a fresh fork of the
 * initial world, its content and error flag compared, then the final world's two hashes.
 */
export const lineChecker = (
  step: (world: World.World, name: string, args: { readonly [key: string]: Canonical.Json }) => readonly [World.World, Tool.ToolOutcome],
  finalDbSha256: (world: World.World) => string,
  upstreamDbHash: (world: World.World) => string
): LineCheck =>
(initial, line, lineNumber) => {
  let world = World.fork(initial)
  const differ = (field: string, expected: string, actual: string): Disagreement => ({ line: lineNumber, taskId: line.task_id, field, expected, actual })
  for (let i = 0; i < line.actions.length; i++) {
    const action = line.actions[i]!
    const [next, outcome] = step(world, action.name, action.arguments as { readonly [key: string]: Canonical.Json })
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

const decodeOracleLine = Schema.decodeUnknownEither(Schema.parseJson(OracleLine))

/** Runs one corpus of oracle lines against `initial` with `check`. */
export const runOracleCorpus = <Benchmark extends string, E>(
  benchmark: Benchmark,
  check: LineCheck,
  initial: World.World,
  corpusPath: string,
  corpusError: (fields: CorpusFailure) => E
): Effect.Effect<EquivalenceReport<Benchmark>, E> =>
  runCorpusLines(
    benchmark,
    corpusPath,
    (row, n) => Either.map(Either.mapLeft(decodeOracleLine(row), (e) => ParseResult.TreeFormatter.formatErrorSync(e)), (line) => check(initial, line, n)),
    corpusError
  )

/** A domain's own corpora in its `oracle/` folder, in the order `assay equivalence` runs them: gold.jsonl, then fuzz-dev.jsonl. */
export const oracleCorpora = (oracleFolder: string): ReadonlyArray<string> => [join(oracleFolder, "gold.jsonl"), join(oracleFolder, "fuzz-dev.jsonl")]

/** The corpora of a run as one report: the given file or files, else the domain's own (`own`). */
export const runGivenOrOwn = <Benchmark extends string, E, R>(
  benchmark: Benchmark,
  given: string | ReadonlyArray<string> | null | undefined,
  own: ReadonlyArray<string>,
  runCorpus: (path: string) => Effect.Effect<EquivalenceReport<Benchmark>, E, R>
): Effect.Effect<EquivalenceReport<Benchmark>, E, R> => runCorpora(benchmark, corpusPaths(given, own), runCorpus)

/** The corpus paths of a run: the given file or files, else the domain's own. */
export const corpusPaths = (given: string | ReadonlyArray<string> | null | undefined, own: ReadonlyArray<string>): ReadonlyArray<string> =>
  given === undefined || given === null ? own : typeof given === "string" ? [given] : given

/** What a DB domain's equivalence runs with. */
export interface DbEquivalenceSpec<Benchmark extends string, E> {
  readonly benchmark: Benchmark
  /** What a malformed line is not, e.g. "an airline oracle line". */
  readonly lineKind: string
  /** The domain's oracle folder under the data root, e.g. "tau2/airline/oracle". */
  readonly oracleFolder: string
  /** Loads the domain's pinned data: its initial world. */
  readonly load: (dataDir?: string) => Effect.Effect<{ readonly initialWorld: World.World }, E>
  readonly checkLine: LineCheck
}

/**
 * A DB domain's equivalence: `runEquivalence` (`assay equivalence BENCHMARK [--corpus FILE]`)
 * loads the pinned data, then runs the given corpus, or with none the domain's own (gold.jsonl
 * then fuzz-dev.jsonl) as one report whose `corpus` lists both files; line numbers count from 1
 * across the files in order.
 */
export const dbEquivalence = <Benchmark extends string, E>(spec: DbEquivalenceSpec<Benchmark, E>) => {
  /** The domain's own corpora, under its oracle folder. */
  const defaultCorpora = (dataDir?: string): ReadonlyArray<string> => oracleCorpora(join(dataRoot(dataDir), spec.oracleFolder))
  /** Runs a corpus against the initial world. */
  const runCorpus = (initial: World.World, corpusPath: string): Effect.Effect<EquivalenceReport<Benchmark>, CorpusError> =>
    runOracleCorpus(spec.benchmark, spec.checkLine, initial, corpusPath, corpusErrorOf(spec.lineKind))
  const runEquivalence = (
    corpusPath?: string | ReadonlyArray<string> | null,
    dataDir?: string
  ): Effect.Effect<EquivalenceReport<Benchmark>, CorpusError | E> =>
    Effect.gen(function*() {
      const data = yield* spec.load(dataDir)
      return yield* runGivenOrOwn(spec.benchmark, corpusPath, defaultCorpora(dataDir), (path) => runCorpus(data.initialWorld, path))
    })
  return { defaultCorpora, checkLine: spec.checkLine, runCorpus, runEquivalence }
}
