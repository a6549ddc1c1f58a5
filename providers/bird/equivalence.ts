/**
 * Equivalence with upstream: grades every line of an oracle corpus (the line format of
 * `bird/oracle/verdicts-dev.jsonl`) on the fixture databases and compares EX, soft F1 (to 1e-9),
 * error vs no error and timeout with the verdict upstream's own code gave. The provider's own
 * corpus is the dev verdicts and the probes; the probes' prediction and gold files also check how
 * the SQL is taken from each entry.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Schema } from "effect"
import { DataRoot } from "../../src/index.ts"
import { fixturePath, PROBES, VERDICTS } from "./data.ts"
import { engine, type ExecutorError, isOracleEngine, oracleEngineHint } from "./executor.ts"
import { goldLineOf, gradePair, type PairVerdict, predictedSqlOf } from "./grade.ts"

const OracleLine = Schema.Struct({
  db_id: Schema.String,
  predicted_sql: Schema.String,
  gold_sql: Schema.String,
  ex: Schema.Literal(0, 1),
  f1: Schema.Number,
  error: Schema.NullOr(Schema.String),
  timed_out: Schema.Boolean,
  idx: Schema.Int,
  timeout_s: Schema.optional(Schema.Number),
  source: Schema.optional(Schema.String),
  probe: Schema.optional(Schema.String),
  question_id: Schema.optional(Schema.Int),
  pred_digest: Schema.optional(Schema.NullOr(Schema.String)),
  gold_digest: Schema.optional(Schema.NullOr(Schema.String)),
  tags: Schema.optional(Schema.Array(Schema.String))
})
type OracleLine = typeof OracleLine.Type

export interface Disagreement {
  readonly corpus: string
  readonly line: number
  readonly idx: number
  readonly source: string
  /** The first field that differs: ex, f1, error (present or not), timed_out. */
  readonly field: "ex" | "f1" | "error" | "timed_out"
  readonly expected: { readonly ex: number; readonly f1: number; readonly error: string | null; readonly timed_out: boolean }
  readonly actual: { readonly ex: number; readonly f1: number; readonly error: string | null; readonly timed_out: boolean }
  /** Whether this engine returned exactly upstream's rows (digest of types, values and order). */
  readonly sameRows: { readonly pred: boolean | null; readonly gold: boolean | null }
}

export interface BirdEquivalence {
  readonly benchmark: "bird"
  readonly corpus: string
  readonly lines: number
  readonly agree: number
  readonly disagree: ReadonlyArray<Disagreement>
  /** Lines not graded, by reason (none: the clock is frozen, so time-dependent lines are graded too). */
  readonly skipped: Readonly<Record<string, number>>
  /** Lines tagged time_dependent, graded under the frozen clock. */
  readonly timeDependent: number
  /** Lines whose result digests (prediction and gold) equal upstream's. */
  readonly rowsAgree: number
  /** Probe entries whose extracted prediction and gold SQL equal upstream's (null when the corpus is not the probes'). */
  readonly extraction: { readonly entries: number; readonly agree: number } | null
  /** The SQLite the grader ran on, the better-sqlite3 it came with, and whether it is the oracle's 3.40. */
  readonly engine: { readonly sqlite: string | null; readonly module: string; readonly oracle: boolean }
  /** One line naming the engine and, when it is not the oracle's, how to get that one. */
  readonly notes: ReadonlyArray<string>
}

export class CorpusError extends Schema.TaggedError<CorpusError>()("CorpusError", {
  corpus: Schema.String,
  line: Schema.Number,
  detail: Schema.String
}) {
  override get message(): string {
    return `oracle corpus ${this.corpus}${this.line > 0 ? ` line ${this.line}` : ""}: ${this.detail}`
  }
}

const decodeLine = Schema.decodeUnknownEither(Schema.parseJson(OracleLine))

const readCorpus = (corpus: string): Effect.Effect<ReadonlyArray<{ readonly line: number; readonly entry: OracleLine }>, CorpusError> =>
  Effect.gen(function*() {
    const text = yield* Effect.try({
      try: () => readFileSync(corpus, "utf8"),
      catch: (e) =>
        new CorpusError({
          corpus,
          line: 0,
          detail: `${e instanceof Error ? e.message : String(e)}; the oracle has no download URL: run \`assay data pull bird --from DIR\` with DIR holding bird/oracle/, or pass --corpus FILE`
        })
    })
    const out: Array<{ line: number; entry: OracleLine }> = []
    const lines = text.split("\n")
    for (let i = 0; i < lines.length; i++) {
      if (lines[i]!.trim() === "") continue
      const decoded = decodeLine(lines[i]!)
      if (decoded._tag === "Left") return yield* new CorpusError({ corpus, line: i + 1, detail: decoded.left.message.split("\n")[0] ?? "" })
      out.push({ line: i + 1, entry: decoded.right })
    }
    return out
  })

const sameF1 = (a: number, b: number) => Math.abs(a - b) <= 1e-9

const firstDifference = (expected: OracleLine, actual: PairVerdict): Disagreement["field"] | null =>
  expected.ex !== actual.ex
    ? "ex"
    : !sameF1(expected.f1, actual.f1)
    ? "f1"
    : (expected.error === null) !== (actual.error === null)
    ? "error"
    : expected.timed_out !== actual.timedOut
    ? "timed_out"
    : null

/** The probes' raw files, extracted as upstream's package_sqls does, against the probes' recorded SQL. */
const checkExtraction = (root: string, probes: ReadonlyArray<OracleLine>): { entries: number; agree: number } | null => {
  let predictions: Record<string, unknown>
  let gold: ReadonlyArray<string>
  try {
    predictions = JSON.parse(readFileSync(join(root, "bird/oracle/probes-predictions.json"), "utf8")) as Record<string, unknown>
    gold = readFileSync(join(root, "bird/oracle/probes-gold.sql"), "utf8").split("\n")
  } catch {
    return null
  }
  // Upstream pairs entries by file order; these keys are "0".."58" in order, which JS keeps too.
  const entries = Object.values(predictions)
  let agree = 0
  entries.forEach((entry, i) => {
    const probe = probes[i]
    const g = gold[i] !== undefined ? goldLineOf(gold[i]!) : null
    if (probe !== undefined && predictedSqlOf(entry) === probe.predicted_sql && g?.sql === probe.gold_sql && g.dbId === probe.db_id) agree++
  })
  return { entries: entries.length, agree }
}

const engineLine = (sqlite: string | null, module: string, oracle: boolean): string =>
  oracle
    ? `engine: SQLite ${sqlite}, the oracle's (better-sqlite3 at ${module})`
    : `engine: SQLite ${sqlite ?? "(not started)"} (better-sqlite3 at ${module}), not the oracle's 3.40.1 ` +
      `(tied rows can come back in another order); ${oracleEngineHint()}`

/** Grades the corpora's lines and compares them with upstream's verdicts. */
export const runEquivalence = (
  corpora: ReadonlyArray<string>,
  root: string = DataRoot.dataRoot()
): Effect.Effect<BirdEquivalence, CorpusError | ExecutorError> =>
  Effect.gen(function*() {
    let lines = 0
    let agree = 0
    let rowsAgree = 0
    let timeDependent = 0
    const disagree: Array<Disagreement> = []
    let extraction: BirdEquivalence["extraction"] = null
    for (const corpus of corpora) {
      const entries = yield* readCorpus(corpus)
      if (corpus.endsWith("probes.jsonl")) extraction = checkExtraction(root, entries.map((e) => e.entry))
      for (const { line, entry } of entries) {
        lines++
        if (entry.tags?.includes("time_dependent")) timeDependent++
        const verdict = yield* gradePair(join(root, fixturePath(entry.db_id)), entry.predicted_sql, entry.gold_sql, {
          timeoutS: entry.timeout_s ?? 30
        })
        const samePred = entry.pred_digest === undefined ? null : entry.pred_digest === verdict.predDigest
        const sameGold = entry.gold_digest === undefined ? null : entry.gold_digest === verdict.goldDigest
        if (samePred !== false && sameGold !== false) rowsAgree++
        const field = firstDifference(entry, verdict)
        if (field === null) {
          agree++
          continue
        }
        disagree.push({
          corpus,
          line,
          idx: entry.idx,
          source: entry.source ?? entry.probe ?? "",
          field,
          expected: { ex: entry.ex, f1: entry.f1, error: entry.error, timed_out: entry.timed_out },
          actual: { ex: verdict.ex, f1: verdict.f1, error: verdict.error, timed_out: verdict.timedOut },
          sameRows: { pred: samePred, gold: sameGold }
        })
      }
    }
    const ran = engine()
    const oracle = isOracleEngine(ran.sqlite)
    return {
      benchmark: "bird" as const,
      corpus: corpora.join(", "),
      lines,
      agree,
      disagree,
      skipped: {},
      timeDependent,
      rowsAgree,
      extraction,
      engine: { ...ran, oracle },
      notes: [engineLine(ran.sqlite, ran.module, oracle)]
    }
  })

/** The provider's own corpora: the dev verdicts and the probes. */
export const defaultCorpora = (root: string = DataRoot.dataRoot()): ReadonlyArray<string> => [join(root, VERDICTS), join(root, PROBES)]
