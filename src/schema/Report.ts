/**
 * The report of a run as data: the document `assay run --json` and `assay report --json` print
 * (DESIGN.md, "`--json` of `run` and `report`"), its parts (Scorecard, Comparison, faults, judges)
 * and its JSON encoding. The experiment's logic (Scorecards, the Runner) builds it; the renderers
 * (src/experiment/Report.ts) and the viewer read it.
 */
import { Effect, Schema } from "effect"
import type { ParseError } from "effect/ParseResult"
import { CliUsage, TokenCounts } from "./Attempt.ts"
import { FaultSpec } from "./EnvironmentDef.ts"

// ---------------------------------------------------------------------------------------------
// The document

/** A closed interval `[lo, hi]`. */
export const Interval = Schema.Tuple(Schema.Finite, Schema.Finite)
export type Interval = typeof Interval.Type

const Count = Schema.NonNegativeInt

/** What happened to the experiment's cells in this run. */
export const CellCounts = Schema.Struct({
  total: Count,
  ran: Count,
  kept: Count,
  stale: Count,
  skipped: Count,
  faulted: Count
})
export type CellCounts = typeof CellCounts.Type

/** tau-bench's pass^k for one k. */
export const PassHatK = Schema.Struct({ k: Schema.Int.pipe(Schema.positive()), value: Schema.Finite })
export type PassHatK = typeof PassHatK.Type

/** How noisy a candidate is from one repetition to the next (Statistics.noiseFloor). */
export const NoiseFloor = Schema.Struct({
  repetitions: Count,
  /** Tasks with two or more repetitions. */
  tasks: Count,
  /** Share of those tasks whose verdict (full reward or not) differs between repetitions. */
  flipRate: Schema.Finite,
  /** Standard deviation across repetition numbers of the benchmark mean of one repetition; null with one. */
  repetitionSd: Schema.NullOr(Schema.Finite),
  /** Share of the interval's variance from within-task noise; the rest is task sampling. Null when nothing varies. */
  withinShare: Schema.NullOr(Schema.Finite)
})
export type NoiseFloor = typeof NoiseFloor.Type

/** One candidate on one benchmark, whole (`stratum: null`) or one stratum of it. */
export const Scorecard = Schema.Struct({
  candidate: Schema.String,
  benchmark: Schema.String,
  /** A BFCL category, a tau2 domain; null for the whole benchmark. */
  stratum: Schema.NullOr(Schema.String),
  /** Cells counted (with a verdict, not stale, not an outage). */
  n: Count,
  /** Tasks the cells are of: the unit the interval resamples. Absent in reports stored before it. */
  tasks: Schema.optionalWith(Count, { exact: true }),
  /** Mean over tasks of each task's mean reward over its repetitions (each task weighs the same). */
  meanReward: Schema.Finite,
  /**
   * 95% interval of the mean reward clustered by task (Wilson on the effective number of tasks,
   * within [0, 1]); null with one task, which says nothing of how tasks vary.
   */
  interval: Schema.NullOr(Interval),
  /** With repetitions: the flip rate, the spread across repetitions, the within-task share. */
  noise: Schema.optionalWith(NoiseFloor, { exact: true }),
  /** Cells that ended in an outage (met live, not injected): left out of every figure here, run again next time. */
  outages: Schema.optionalWith(Count, { exact: true }),
  /** Cells the benchmark's own code failed (setup, protocol, grader): left out of every figure here, run again next time. */
  providerFailed: Schema.optionalWith(Count, { exact: true }),
  /** Mean over tasks of each task's share of repetitions with full reward (the share of cells, with even repetitions). */
  passRate: Schema.Finite,
  /** 95% interval of the pass rate, clustered by task as `interval` is; null with one task. */
  passRateInterval: Schema.optionalWith(Schema.NullOr(Interval), { exact: true }),
  /** pass^k for the k the repetitions allow. */
  passHatK: Schema.optionalWith(Schema.Array(PassHatK), { exact: true }),
  /** Cells failing each check. */
  failures: Schema.Record({ key: Schema.String, value: Count }),
  tokens: Schema.Struct({ input: Count, output: Count }),
  /** List-price dollars; null when any call's price is unknown (never 0 for unknown). */
  costUsd: Schema.NullOr(Schema.Finite),
  wallSeconds: Schema.Finite,
  /**
   * What judging these cells cost (judge model calls, paid outside the candidate's wallet and
   * not in `tokens`/`costUsd`); absent when no judge was asked.
   */
  judging: Schema.optionalWith(
    Schema.Struct({ calls: Count, tokens: Schema.Struct({ input: Count, output: Count }), costUsd: Schema.NullOr(Schema.Finite) }),
    { exact: true }
  ),
  /** A scripted baseline (gold, echo): shown for calibration, left out of the frontier. */
  reference: Schema.optionalWith(Schema.Boolean, { exact: true })
})
export type Scorecard = typeof Scorecard.Type

/**
 * `a` against `b` on the tasks both have: the mean over tasks of (a's mean on the task − b's),
 * with the interval and p of a sign-flip test over tasks (Statistics.signFlip).
 */
export const Comparison = Schema.Struct({
  a: Schema.String,
  b: Schema.String,
  /** Tasks both candidates have (graded cells on); reports stored before clustering counted cell pairs. */
  n: Count,
  difference: Schema.Finite,
  /** 95% interval of the difference, within [−1, 1]: below 0.05 `p` exactly when it leaves out 0; null with one task. */
  interval: Schema.NullOr(Interval),
  /** Two-sided sign-flip p-value of no difference over tasks; never 0; absent with one task. */
  p: Schema.optionalWith(Schema.Finite, { exact: true }),
  /** The smallest true difference this comparison detects with 80% power at 95% confidence. */
  minimumDetectable: Schema.optionalWith(Schema.Finite, { exact: true }),
  /** With more than two candidates on the benchmark: whether it stays significant after Holm's correction. */
  holm: Schema.optionalWith(Schema.Boolean, { exact: true }),
  benchmark: Schema.optionalWith(Schema.String, { exact: true }),
  stratum: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true })
})
export type Comparison = typeof Comparison.Type

/**
 * Two judges on one benchmark's judged inputs (`--judge A --judge B`): each input's first answer
 * of each, pooled over candidates; the intervals resample tasks (src/experiment/Agreement.ts).
 */
export const JudgeAgreement = Schema.Struct({
  benchmark: Schema.String,
  /** The judge that graded, then the one it is compared with. */
  judges: Schema.Tuple(Schema.String, Schema.String),
  /** Inputs both decided (an NL assertion, a listed entry). */
  decisions: Count,
  tasks: Count,
  agree: Count,
  /** Raw agreement: agree / decisions. */
  agreement: Schema.Finite,
  /** 95% percentile bootstrap resampling tasks; null with fewer than 2 tasks. */
  agreementInterval: Schema.NullOr(Interval),
  /** Cohen's kappa; null when it is undefined (both judges gave one same answer to every input). */
  kappa: Schema.NullOr(Schema.Finite),
  kappaInterval: Schema.NullOr(Interval)
})
export type JudgeAgreement = typeof JudgeAgreement.Type

/** One judge asked the same input several times (`--judge-reps K`) on one benchmark. */
export const JudgeConsistency = Schema.Struct({
  benchmark: Schema.String,
  judge: Schema.String,
  repetitions: Count,
  /** Inputs asked at least twice. */
  inputs: Count,
  /** Share of inputs on which all its answers were the same. */
  unanimous: Schema.Finite,
  /** Mean over inputs of the share of pairs of its answers that agree. */
  pairwise: Schema.Finite
})
export type JudgeConsistency = typeof JudgeConsistency.Type

export const Judges = Schema.Struct({ agreement: Schema.Array(JudgeAgreement), consistency: Schema.Array(JudgeConsistency) })
export type Judges = typeof Judges.Type

/** The candidates on one benchmark's score–cost frontier, cheapest first. */
export const FrontierEntry = Schema.Struct({ benchmark: Schema.String, candidates: Schema.Array(Schema.String) })
export type FrontierEntry = typeof FrontierEntry.Type

/** A harness candidate's standing in one role (see src/harness/Recommend.ts). */
export const Standing = Schema.Struct({
  candidate: Schema.String,
  score: Schema.Finite,
  /** Median over the candidate's runs; null when any of them has an unknown cost. */
  medianCostUsd: Schema.NullOr(Schema.Finite),
  medianWallMs: Schema.Finite,
  runs: Count,
  /** Fewest scored runs of this candidate on one task. */
  smallestCell: Count
})
export type Standing = typeof Standing.Type

export const RecommendationPick = Schema.Struct({ ...Standing.fields, basis: Schema.String })

/** Which harness-and-model stack to use as orchestrator and which as worker, and how sure. */
export const Recommendation = Schema.Struct({
  orchestrator: Schema.NullOr(RecommendationPick),
  worker: Schema.NullOr(RecommendationPick),
  standings: Schema.Struct({ orchestrator: Schema.Array(Standing), worker: Schema.Array(Standing) }),
  /** Fewest scored runs in any (candidate, task) cell; null when nothing was scored. */
  smallestSample: Schema.NullOr(Count),
  warnings: Schema.Array(Schema.String),
  /** The models each candidate's transcripts show (a default-model candidate names its model here). */
  models: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) }),
  /** The judge, and whether it is also a candidate. */
  judge: Schema.NullOr(Schema.Struct({ ref: Schema.String, alsoCandidate: Schema.Boolean }))
})
export type Recommendation = typeof Recommendation.Type

/**
 * What faults did to one candidate's cells on one benchmark. Injected faults are the run's
 * doing; a cell that ended in a fault (injected or met live) says nothing of the candidate, so it
 * is counted apart from the cells the candidate itself failed.
 */
export const CandidateFaults = Schema.Struct({
  candidate: Schema.String,
  benchmark: Schema.String,
  cells: Count,
  /** Faults injected into these cells' effects. */
  injected: Count,
  /** Cells that met at least one fault (injected or live). */
  cellsWithFaults: Count,
  /** Cells that ended in an infrastructure fault: no verdict on the candidate. */
  endedInFault: Count,
  /**
   * Cells failed (reward below 1) that went on after meeting a fault, shown to the candidate as
   * an error it could retry: how well it copes is what a robustness run measures.
   */
  failedAfterFault: Count,
  /** Cells the candidate failed meeting no fault at all: its own failures. */
  failedWithoutFault: Count
})
export type CandidateFaults = typeof CandidateFaults.Type

/** The run's fault injection: its spec (null: none) and what it did per candidate. */
export const Faults = Schema.Struct({
  spec: Schema.NullOr(FaultSpec),
  candidates: Schema.Array(CandidateFaults)
})
export type Faults = typeof Faults.Type

/** One fault an Attempt met: `effect` is `<kind>:<effect key>` (the role or tool, e.g. `tool/write:transfer`). */
export const CellFault = Schema.Struct({
  effect: Schema.String,
  occurrence: Schema.Int,
  reason: Schema.String,
  /** false for a fault met live (a real outage), true for one the run injected. */
  injected: Schema.Boolean
})
export type CellFault = typeof CellFault.Type

/** One cell of the report as `report --json --cells` lists it. */
export const CellResult = Schema.Struct({
  benchmark: Schema.String,
  task: Schema.String,
  candidate: Schema.String,
  repetition: Schema.Int,
  reward: Schema.Finite,
  /** `verdict.ended.reason` (fault, refused, budget-exceeded, ...); null when evaluated. */
  ended: Schema.NullOr(Schema.String),
  faults: Schema.Array(CellFault),
  /** A harness cell: its tokens as the agent CLI reported them, beside assay's own count. */
  cliUsage: Schema.optionalWith(CliUsage, { exact: true })
})
export type CellResult = typeof CellResult.Type

/**
 * A harness candidate's tokens over its cells, as assay counted them (the answers its proxy passed
 * to the CLI) and as the CLI reported them: a cross-check, the report's figures being assay's.
 */
export const CandidateCliUsage = Schema.Struct({
  candidate: Schema.String,
  cells: Schema.Int,
  /** cells where the CLI's count is not assay's */
  differ: Schema.Int,
  /** cells where the CLI reported no usage (in neither sum) */
  unreported: Schema.Int,
  /** over the cells the CLI reported usage for */
  assay: TokenCounts,
  cli: TokenCounts
})
export type CandidateCliUsage = typeof CandidateCliUsage.Type

/** A cell that ended in an outage: listed, not scored, run again by the next run. */
export const OutageCell = Schema.Struct({
  benchmark: Schema.String,
  task: Schema.String,
  candidate: Schema.String,
  repetition: Schema.Int,
  /** What was met live: unreachable, rate-limit, server-error, timeout. */
  reasons: Schema.Array(Schema.String)
})
export type OutageCell = typeof OutageCell.Type

/** A cell the benchmark's own code failed: listed, not scored, run again by the next run. */
export const ProviderFailedCell = Schema.Struct({
  benchmark: Schema.String,
  task: Schema.String,
  candidate: Schema.String,
  repetition: Schema.Int,
  /** How the Attempt ended (`setup-failed`, `protocol-failed`, `evaluator-failed`, ...). */
  reason: Schema.String
})
export type ProviderFailedCell = typeof ProviderFailedCell.Type

/** A cell the run did not run, and why (the spend cap, an admission refusal, no agent). */
export const SkippedCell = Schema.Struct({
  environmentId: Schema.String,
  /** null when the store no longer tells which task the environment was. */
  task: Schema.NullOr(Schema.String),
  candidate: Schema.String,
  repetition: Schema.Int,
  reason: Schema.String
})
export type SkippedCell = typeof SkippedCell.Type

/**
 * What the model calls cost, written per call as each completed: a cell killed or refused half
 * way counts too, so this can exceed the Scorecards' sum. `capUsd` bounds `experimentUsd` plus
 * `experimentUnsettledUsd`.
 */
export const Spend = Schema.Struct({
  /** This run's calls at list price (those of known price). */
  runUsd: Schema.Number,
  /** Every run of the experiment in this home, this one included. */
  experimentUsd: Schema.Number,
  /** Calls of this run whose price is unknown: not in the sums, and not bounded by the cap. */
  unknownCalls: Schema.Int,
  calls: Schema.Int,
  capUsd: Schema.NullOr(Schema.Number),
  /**
   * Beyond `runUsd`: the worst cases of this run's calls that were in flight on a cluster worker
   * when it died, with nobody left to settle them. They may have been billed, so the cap counts
   * them; the ledger cannot. 0 when there were none (always, for a run on one machine; a report
   * stored before this field reads as 0).
   */
  unsettledUsd: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  /** The same beyond `experimentUsd`, over every run of the experiment. */
  experimentUnsettledUsd: Schema.optionalWith(Schema.Number, { default: () => 0 })
})
export type Spend = typeof Spend.Type

export const Report = Schema.Struct({
  runId: Schema.String,
  experimentId: Schema.String,
  home: Schema.String,
  cells: CellCounts,
  scorecards: Schema.Array(Scorecard),
  comparisons: Schema.Array(Comparison),
  /** For JSON readers; the renderers compute the frontier from the scorecards themselves. */
  frontier: Schema.optionalWith(Schema.Array(FrontierEntry), { exact: true }),
  /** Shown as they are, e.g. the benchmarks' attribution and licence. */
  notes: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  /** Shown prominently, e.g. an incomplete run or unpredicted inputs. */
  warnings: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  /** With a second judge or judge repetitions: their agreement and self-consistency per benchmark. */
  judges: Schema.optionalWith(Judges, { exact: true }),
  /** The version of each agent CLI the run's harness candidates ran (`claude: "2.0.14"`), as the run recorded it. */
  harnesses: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { exact: true }),
  /** Harness candidates' tokens as their CLIs reported them, beside assay's. */
  cliUsage: Schema.optionalWith(Schema.Array(CandidateCliUsage), { exact: true }),
  /** Harness runs: the orchestrator and worker picks. */
  recommendation: Schema.optionalWith(Recommendation, { exact: true }),
  /** The fault spec and what it did; absent in reports stored before faults were reported. */
  faults: Schema.optionalWith(Faults, { exact: true }),
  /** The cells skipped, each with its reason. */
  skipped: Schema.optionalWith(Schema.Array(SkippedCell), { exact: true }),
  /** Cells that ended in an outage: left out of every figure, run again by the next run. */
  outages: Schema.optionalWith(Schema.Array(OutageCell), { exact: true }),
  /** Cells the benchmark's own code failed: left out of every figure, run again by the next run. */
  providerFailed: Schema.optionalWith(Schema.Array(ProviderFailedCell), { exact: true }),
  /**
   * Every cell the report counts, with its faults. Stored with the run so that `report` lists
   * exactly the cells it scored (kept ones too); printed only when asked (`--json --cells`).
   */
  cellResults: Schema.optionalWith(Schema.Array(CellResult), { exact: true }),
  spend: Schema.optionalWith(Spend, { exact: true }),
  /**
   * The run's wall time, start to finish. A Scorecard's `wallSeconds` is its cells' times summed,
   * which cells run in parallel make larger; absent in reports stored before it was recorded.
   */
  wallSeconds: Schema.optionalWith(Schema.Finite, { exact: true })
})
export type Report = typeof Report.Type

const ReportJson = Schema.parseJson(Report, { space: 2 })

/**
 * The `--json` document; fails when a number is not finite (JSON cannot carry it). The per-cell
 * list is left out unless asked for: a run of 10,000 cells should not print them all by default.
 */
export const encodeJson = (report: Report, options: { readonly cells?: boolean } = {}): Effect.Effect<string, ParseError> => {
  const { cellResults, ...rest } = report
  return Schema.encode(ReportJson)(options.cells === true && cellResults !== undefined ? { ...rest, cellResults } : rest)
}

/** Reads a `--json` document back. */
export const decodeJson = (text: string): Effect.Effect<Report, ParseError> => Schema.decode(ReportJson)(text)

