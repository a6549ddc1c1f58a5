/**
 * Scorecards and paired comparisons from the Attempts that count: one per cell, current (not
 * stale). Intervals are seeded, so the same Attempts always give the same report.
 *
 * Everything here reads a cell's Attempt only through its summary (`CellSummary`): the store
 * keeps one per cell beside the record, so a report of 10,000 kept cells needs no Attempt decoded.
 */
import { Array as Arr, Option, Schema } from "effect"
import type { Attempt } from "../schema/Attempt.ts"
import { cliAgrees, CliUsage, Judging } from "../schema/Attempt.ts"
import { failuresOf } from "../schema/Verdict.ts"
import type { FaultSpec } from "../schema/EnvironmentDef.ts"
import { PanelRecord, recordOf } from "../evaluation/JudgePanel.ts"
import { agreement, type PairedDecision, selfConsistency } from "./Agreement.ts"
import type { CandidateCliUsage, CandidateFaults, CellFault, CellResult, Comparison, Faults, JudgeAgreement, JudgeConsistency, Judges, OutageCell, ProviderFailedCell, Scorecard } from "../schema/Report.ts"
import {
  clusteredMean,
  holm,
  taskMeanInterval,
  minimumDetectable,
  noiseFloor,
  type NoiseFloor,
  pairedClustered,
  pairedVariance,
  passHatK,
  type Repetitions,
  tasksNeeded,
  FEWEST_SIGNIFICANT_TASKS,
  z80,
  z95
} from "./Statistics.ts"

/**
 * What scorecards, comparisons, the fault section and the cell list read of one Attempt. Written
 * to the store with the Attempt (its `cells` table), so they can be computed without the record.
 */
export const CellSummary = Schema.Struct({
  environmentId: Schema.String,
  benchmark: Schema.String,
  task: Schema.String,
  stratum: Schema.NullOr(Schema.String),
  candidate: Schema.String,
  repetition: Schema.Int,
  reward: Schema.Number,
  /** The checks the verdict failed. */
  failures: Schema.Array(Schema.String),
  /** `verdict.ended.reason`; null when the Attempt was evaluated. */
  ended: Schema.NullOr(Schema.String),
  /**
   * For a cell that ended in a fault: whether it was an outage (met live: an unreachable
   * endpoint, a rate limit or server error retries did not outlast) rather than injected. Absent
   * in summaries stored before it was written; `isOutage` reads those from `injected`.
   */
  outage: Schema.optionalWith(Schema.Boolean, { exact: true }),
  /**
   * The benchmark's own code failed (setup, protocol, grade: `verdict.ended.provider`): not the
   * candidate's result, so never scored, and the next run runs it again. Absent otherwise.
   */
  providerFailed: Schema.optionalWith(Schema.Boolean, { exact: true }),
  /** Faults injected into the Attempt's effects (its `faults`). */
  injected: Schema.Int,
  /** Every fault the Attempt met, injected and live. */
  faults: Schema.Array(Schema.Struct({ effect: Schema.String, occurrence: Schema.Int, reason: Schema.String, injected: Schema.Boolean })),
  usage: Schema.Struct({
    inputTokens: Schema.Int,
    outputTokens: Schema.Int,
    costUsd: Schema.NullOr(Schema.Number),
    wallSeconds: Schema.Number
  }),
  judging: Schema.optionalWith(Judging, { exact: true }),
  /** A harness cell's tokens as its CLI reported them, beside assay's. */
  cliUsage: Schema.optionalWith(CliUsage, { exact: true }),
  /** Every judge's decisions, when the verdict has more than one call's (a second judge, repetitions). */
  judges: Schema.optionalWith(PanelRecord, { exact: true })
})
export type CellSummary = typeof CellSummary.Type

/** The summary of one Attempt: what the functions below read of it. */
export const summaryOf = (a: Attempt): CellSummary => ({
  environmentId: a.environmentId,
  benchmark: a.benchmark,
  task: a.task,
  stratum: a.stratum,
  candidate: a.candidate,
  repetition: a.repetition,
  reward: a.verdict.reward,
  failures: failuresOf(a.verdict),
  ended: a.verdict.ended?.reason ?? null,
  ...(a.verdict.ended?.reason === "fault"
    ? { outage: a.verdict.ended.injected === false || (a.verdict.ended.injected === undefined && a.faults.length === 0) }
    : {}),
  ...(a.verdict.ended?.provider !== undefined ? { providerFailed: true } : {}),
  injected: a.faults.length,
  faults: faultsOfAttempt(a),
  usage: { inputTokens: a.usage.inputTokens, outputTokens: a.usage.outputTokens, costUsd: a.usage.costUsd, wallSeconds: a.usage.wallSeconds },
  ...(a.judging !== undefined ? { judging: a.judging } : {}),
  ...(a.cliUsage !== undefined ? { cliUsage: a.cliUsage } : {}),
  ...judgesOf(a)
})

const judgesOf = (a: Attempt): { readonly judges?: PanelRecord } => {
  const record = a.verdict.ended === null && a.judging !== undefined ? recordOf(a.verdict.details) : undefined
  return record === undefined ? {} : { judges: record }
}

/**
 * Summaries of Attempts, and a predicate on Attempts read on their summaries: the Attempt-taking
 * functions below are the summary-taking ones after this.
 */
const summarize = (attempts: ReadonlyArray<Attempt>, impassable: (a: Attempt) => boolean) => {
  const apart = new Set<CellSummary>()
  const cells = attempts.map((a) => {
    const c = summaryOf(a)
    if (impassable(a)) apart.add(c)
    return c
  })
  return { cells, impassable: (c: CellSummary) => apart.has(c) }
}

const SEED = 20261130

/** Candidates the provider plays itself are calibration references, not contenders. */
export const isReference = (candidate: string): boolean => ["gold", "echo", "none"].includes(candidate)

/**
 * A cell that ended in an infrastructure fault met live (an outage): it says nothing of the
 * candidate, so it is left out of every figure and the next run runs it again. A cell ended by
 * an injected fault is a robustness run's result and counts. Summaries stored before `outage`
 * was written count as an outage when the Attempt had no fault injected at all.
 */
export const isOutage = (cell: CellSummary): boolean => cell.ended === "fault" && (cell.outage ?? cell.injected === 0)

/**
 * A cell the benchmark's own code failed (provider-failed): the store runs it again and it is not
 * the candidate's score, so, as an outage, it is left out of every figure and counted apart.
 */
export const isProviderFailed = (cell: CellSummary): boolean => cell.providerFailed === true

/** A cell that says nothing of the candidate: an outage or the provider's failure. */
export const isUnscored = (cell: CellSummary): boolean => isOutage(cell) || isProviderFailed(cell)

/** Each task's rewards (all its repetitions) with the repetition numbers, in first-seen order. */
const byTaskOf = (cells: ReadonlyArray<CellSummary>): ReadonlyArray<Repetitions> =>
  Array.from(groupBy(cells, (a) => a.environmentId).values(), (group) => group.map((a) => [a.repetition, a.reward] as const))

const scorecardOf = (
  candidate: string,
  benchmark: string,
  stratum: string | null,
  cells: ReadonlyArray<CellSummary>,
  outages: number,
  providerFailed: number
): Scorecard => {
  const rewards = cells.map((a) => a.reward)
  const failures: Record<string, number> = {}
  for (const a of cells) for (const check of a.failures) failures[check] = (failures[check] ?? 0) + 1
  let cost: number | null = 0
  let input = 0
  let output = 0
  let wall = 0
  let judging: { calls: number; tokens: { input: number; output: number }; costUsd: number | null } | undefined
  for (const a of cells) {
    if (a.judging !== undefined) {
      const j = judging ?? { calls: 0, tokens: { input: 0, output: 0 }, costUsd: 0 }
      judging = {
        calls: j.calls + a.judging.calls,
        tokens: { input: j.tokens.input + a.judging.inputTokens, output: j.tokens.output + a.judging.outputTokens },
        costUsd: j.costUsd === null || a.judging.costUsd === null ? null : j.costUsd + a.judging.costUsd
      }
    }
    cost = cost === null || a.usage.costUsd === null ? null : cost + a.usage.costUsd
    input += a.usage.inputTokens
    output += a.usage.outputTokens
    wall += a.usage.wallSeconds
  }
  // Per task: its repetitions. The mean and its interval are over tasks (Statistics.clusteredMean).
  const tasks = byTaskOf(cells)
  const trials = tasks.map((t) => ({ n: t.length, c: t.filter(([, r]) => r >= 1).length }))
  const minReps = trials.reduce((least, t) => Math.min(least, t.n), Number.POSITIVE_INFINITY)
  const passHat = minReps >= 2
    ? Arr.filterMap(Arr.range(1, minReps), (k) => Option.map(passHatK(trials, k), (value) => ({ k, value })))
    : []
  const n = rewards.length
  const clustered = clusteredMean(tasks.map((t) => t.map(([, r]) => r)), { seed: SEED })
  // The pass rate as the mean: over tasks of each task's share of full-reward repetitions, its
  // interval clustered by task the same way (repetitions of a task are not independent trials).
  const passShares = tasks.map((t) => t.map(([, r]) => (r >= 1 ? 1 : 0)))
  const passRate = clusteredMean(passShares, { seed: SEED }).mean
  const noise = noiseFloor(tasks)
  return {
    candidate,
    benchmark,
    stratum,
    n,
    tasks: clustered.tasks,
    meanReward: n > 0 ? clustered.mean : 0,
    interval: clustered.interval,
    passRate: n > 0 ? passRate : 0,
    passRateInterval: taskMeanInterval(passShares),
    ...(passHat.length > 0 ? { passHatK: passHat } : {}),
    ...(noise !== null ? { noise } : {}),
    ...(outages > 0 ? { outages } : {}),
    ...(providerFailed > 0 ? { providerFailed } : {}),
    failures,
    tokens: { input, output },
    costUsd: cost,
    wallSeconds: wall,
    ...(judging !== undefined ? { judging } : {}),
    ...(isReference(candidate) ? { reference: true } : {})
  }
}

const groupBy = <A>(items: ReadonlyArray<A>, key: (a: A) => string): Map<string, Array<A>> => {
  const out = new Map<string, Array<A>>()
  for (const item of items) {
    const k = key(item)
    const group = out.get(k)
    if (group) group.push(item)
    else out.set(k, [item])
  }
  return out
}

/** The stratum under which tasks no answer can pass are reported, apart from the rest. */
export const IMPASSABLE = "impassable"

/**
 * One scorecard per candidate and benchmark, and one per stratum when there are several. Tasks
 * no answer can pass are left out of both and get a scorecard of their own.
 */
export const scorecards = (
  attempts: ReadonlyArray<Attempt>,
  impassable: (a: Attempt) => boolean = () => false
): ReadonlyArray<Scorecard> => {
  const s = summarize(attempts, impassable)
  return scorecardsOfCells(s.cells, s.impassable)
}

/** `scorecards` of cells' summaries, in the same order. */
export const scorecardsOfCells = (
  cells: ReadonlyArray<CellSummary>,
  impassable: (c: CellSummary) => boolean = () => false
): ReadonlyArray<Scorecard> => {
  const out: Array<Scorecard> = []
  for (const [, every] of groupBy(cells, (a) => `${a.benchmark}\u0000${a.candidate}`)) {
    const first = every[0]!
    // Outages and the provider's failures are counted on the scorecard and listed in the report,
    // never scored (isOutage, isProviderFailed).
    const all = every.filter((a) => !isUnscored(a))
    const countIn = (which: (c: CellSummary) => boolean) => (stratum: string | null, apartToo: boolean) =>
      every.filter((a) => which(a) && impassable(a) === apartToo && (stratum === null || a.stratum === stratum)).length
    const outagesIn = countIn(isOutage)
    const failedIn = countIn((a) => !isOutage(a) && isProviderFailed(a))
    const apart = all.filter(impassable)
    const group = apart.length > 0 ? all.filter((a) => !impassable(a)) : all
    if (group.length > 0) {
      out.push(scorecardOf(first.candidate, first.benchmark, null, group, outagesIn(null, false), failedIn(null, false)))
    }
    const strata = groupBy(group.filter((a) => a.stratum !== null), (a) => a.stratum ?? "")
    if (strata.size > 1) {
      for (const [stratum, members] of [...strata].sort(([a], [b]) => a.localeCompare(b))) {
        out.push(scorecardOf(first.candidate, first.benchmark, stratum, members, outagesIn(stratum, false), failedIn(stratum, false)))
      }
    }
    if (apart.length > 0) {
      out.push(scorecardOf(first.candidate, first.benchmark, IMPASSABLE, apart, outagesIn(null, true), failedIn(null, true)))
    }
  }
  return out
}

/** Paired comparisons between every two candidates of a benchmark, on the cells both have. */
export const comparisons = (
  attempts: ReadonlyArray<Attempt>,
  impassable: (a: Attempt) => boolean = () => false
): ReadonlyArray<Comparison> => {
  const s = summarize(attempts, impassable)
  return comparisonsOfCells(s.cells, s.impassable)
}

/** `comparisons` of cells' summaries. */
export const comparisonsOfCells = (
  cells: ReadonlyArray<CellSummary>,
  impassable: (c: CellSummary) => boolean = () => false
): ReadonlyArray<Comparison> => {
  const out: Array<Comparison> = []
  for (const [benchmark, group] of groupBy(cells.filter((a) => !impassable(a) && !isUnscored(a)), (a) => a.benchmark)) {
    const byCandidate = groupBy(group, (a) => a.candidate)
    const names = [...byCandidate.keys()]
    const family: Array<Comparison> = []
    for (let i = 0; i < names.length; i++) {
      for (let j = i + 1; j < names.length; j++) {
        const a = names[i]!
        const b = names[j]!
        // Paired by task: each candidate's mean over its repetitions of the task (Statistics.pairedClustered).
        const bTasks = groupBy(byCandidate.get(b)!, (x) => x.environmentId)
        const tasks = Array.from(groupBy(byCandidate.get(a)!, (x) => x.environmentId), ([env, xs]) => ({
          a: xs.map((x) => x.reward),
          b: (bTasks.get(env) ?? []).map((x) => x.reward)
        }))
        const d = pairedClustered(tasks, { seed: SEED })
        if (d.tasks === 0) continue
        family.push({
          a,
          b,
          n: d.tasks,
          difference: d.difference,
          interval: d.interval,
          benchmark,
          // One task says nothing of the spread: no p, nothing detectable (and not in Holm's family as
          // significant). Nothing is detectable either when the differences do not vary (SE 0: the
          // formula would say ±0) or when no p this many tasks can give reaches 5% (≤ 5 tasks).
          ...(d.tasks >= 2 ? { p: d.p } : {}),
          ...(d.tasks >= 2 && d.standardError > 0 && d.smallestP < 0.05 ? { minimumDetectable: minimumDetectable(d.standardError) } : {})
        })
      }
    }
    // With more than one comparison, those of a benchmark are one family for Holm's correction. A
    // scripted reference (gold, echo) is a calibration, not a contender: with two or more
    // contenders its comparisons stay out of the family (as plan --detect sizes contenders only).
    const contenders = names.filter((n) => !isReference(n)).length
    const inFamily = (c: Comparison) => contenders < 2 || (!isReference(c.a) && !isReference(c.b))
    const members = family.filter(inFamily)
    const kept = members.length > 1 ? holm(members.map((c) => c.p ?? 1)) : null
    for (const c of family) out.push(kept !== null && inFamily(c) ? { ...c, holm: kept[members.indexOf(c)] ?? false } : c)
  }
  return out
}

/**
 * The cells left out as outages, each with what it met: the report lists them apart, and the
 * next run of the experiment runs them again.
 */
export const outagesOfCells = (cells: ReadonlyArray<CellSummary>): ReadonlyArray<OutageCell> =>
  cells.filter(isOutage).map((a) => ({
    benchmark: a.benchmark,
    task: a.task,
    candidate: a.candidate,
    repetition: a.repetition,
    reasons: [...new Set(a.faults.filter((f) => !f.injected).map((f) => f.reason))]
  }))

/**
 * The cells the benchmark's own code failed, each with how it ended: the report lists them apart
 * from the scores, and the next run of the experiment runs them again.
 */
export const providerFailedOfCells = (cells: ReadonlyArray<CellSummary>): ReadonlyArray<ProviderFailedCell> =>
  cells.filter((a) => !isOutage(a) && isProviderFailed(a)).map((a) => ({
    benchmark: a.benchmark,
    task: a.task,
    candidate: a.candidate,
    repetition: a.repetition,
    reason: a.ended ?? "failed"
  }))

// ---------------------------------------------------------------------------------------------
// The noise floor and power, from any list of graded cells (a run's summaries, a stored report's
// cell list): `assay noise` and `assay plan --detect` read them.

/** What the noise floor and the power plan read of a cell. */
export interface GradedCell {
  readonly benchmark: string
  readonly task: string
  readonly candidate: string
  readonly repetition: number
  readonly reward: number
}

/**
 * The graded cells of a stored report's cell list: outages left out (a cell that ended in a fault
 * with none of its faults injected), as the report's figures leave them out.
 */
export const gradedOfResults = (cells: ReadonlyArray<CellResult>): ReadonlyArray<GradedCell> =>
  cells.filter((c) => !(c.ended === "fault" && !c.faults.some((f) => f.injected)))

/** The graded cells of summaries: outages and the provider's failures left out (isUnscored). */
export const gradedOfSummaries = (cells: ReadonlyArray<CellSummary>): ReadonlyArray<GradedCell> => cells.filter((c) => !isUnscored(c))

export interface CandidateNoise extends NoiseFloor {
  readonly benchmark: string
  readonly candidate: string
}

/** The noise floor of each candidate on each benchmark whose tasks have repetitions. */
export const noiseOfCells = (cells: ReadonlyArray<GradedCell>): ReadonlyArray<CandidateNoise> =>
  Array.from(groupBy(cells, (c) => `${c.benchmark}\u0000${c.candidate}`).values()).flatMap((group) => {
    const first = group[0]!
    const noise = noiseFloor(Array.from(groupBy(group, (c) => c.task).values(), (t) => t.map((c) => [c.repetition, c.reward] as const)))
    return noise === null ? [] : [{ benchmark: first.benchmark, candidate: first.candidate, ...noise }]
  })

/** Repetitions the power plan gives the tasks needed for. */
const PLANNED_REPETITIONS = [1, 2, 3, 5, 10] as const

export interface PowerPlan {
  readonly benchmark: string
  readonly a: string
  readonly b: string
  /** Tasks both have pilot cells on, and the most repetitions a task had there. */
  readonly pilot: { readonly tasks: number; readonly repetitions: number }
  /** Variance of the true per-task difference (between) and of one repetition (within, both candidates). */
  readonly between: number
  readonly within: number
  /**
   * The smallest difference the pilot's own size detects (80% power, 95% confidence); null, as in
   * the report, when its differences do not vary or it has too few tasks for any p to reach 5%.
   */
  readonly minimumDetectable: number | null
  /** Tasks needed to detect the difference at each number of repetitions; null when the pilot shows no variance. */
  readonly needed: ReadonlyArray<{ readonly repetitions: number; readonly tasks: number | null }>
  /** Tasks the benchmark has; null when not known. */
  readonly available: number | null
  /** Tasks needed even with endless repetitions (only task sampling left); null when the pilot shows no variance. */
  readonly floorTasks: number | null
  /** The benchmark has fewer tasks than the floor: no number of repetitions detects the difference. */
  readonly tooFewTasks: boolean
}

/**
 * For each two candidates of a benchmark with pilot cells on the same tasks: the tasks × repetitions
 * needed to detect `detect` with 80% power at 95% confidence, from the variance of their paired
 * per-task differences split into between-task and within-task parts (Statistics.pairedVariance).
 * Reference candidates (gold, echo) are left out when two or more contenders remain.
 */
export const powerOfCells = (
  cells: ReadonlyArray<GradedCell>,
  detect: number,
  available: (benchmark: string) => number | null
): ReadonlyArray<PowerPlan> => {
  const out: Array<PowerPlan> = []
  for (const [benchmark, group] of groupBy(cells, (c) => c.benchmark)) {
    const byCandidate = groupBy(group, (c) => c.candidate)
    const all = [...byCandidate.keys()]
    const contenders = all.filter((c) => !isReference(c))
    const names = contenders.length >= 2 ? contenders : all
    for (let i = 0; i < names.length; i++) {
      for (let j = i + 1; j < names.length; j++) {
        const a = groupBy(byCandidate.get(names[i]!)!, (c) => c.task)
        const b = groupBy(byCandidate.get(names[j]!)!, (c) => c.task)
        const tasks = Array.from(a, ([task, xs]) => ({ a: xs.map((x) => x.reward), b: (b.get(task) ?? []).map((x) => x.reward) }))
        const variance = pairedVariance(tasks)
        if (variance.tasks < 2) continue
        const repetitions = tasks.reduce((most, t) => (t.b.length > 0 ? Math.max(most, t.a.length, t.b.length) : most), 0)
        const have = available(benchmark)
        const varies = variance.observed > 0 || variance.within > 0
        const floorTasks = varies ? Math.max(FEWEST_SIGNIFICANT_TASKS, Math.ceil(((z95 + z80) ** 2 * variance.between) / (detect * detect))) : null
        out.push({
          benchmark,
          a: names[i]!,
          b: names[j]!,
          pilot: { tasks: variance.tasks, repetitions },
          between: variance.between,
          within: variance.within,
          // As the report's comparison has it: from the per-task differences as observed, with its guards.
          minimumDetectable: variance.observed > 0 && variance.tasks >= FEWEST_SIGNIFICANT_TASKS
            ? minimumDetectable(Math.sqrt(variance.observed / variance.tasks))
            : null,
          needed: PLANNED_REPETITIONS.map((k) => ({ repetitions: k, tasks: tasksNeeded(variance, detect, k) })),
          available: have,
          floorTasks,
          tooFewTasks: have !== null && floorTasks !== null && floorTasks > have
        })
      }
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Faults

const faultReasons = new Set(["rate-limit", "server-error", "timeout", "unreachable"])

/**
 * The faults an Attempt met: those the run injected (its `faults`, keyed `<kind>:<effect key>`)
 * and those met live, which reached the handler and so are in its recording.
 */
export const faultsOfAttempt = (attempt: Attempt): ReadonlyArray<CellFault> => [
  ...attempt.faults.map((f) => ({ effect: f.key, occurrence: f.occurrence, reason: f.reason, injected: true })),
  ...attempt.recording.flatMap((r) =>
    "error" in r.outcome && faultReasons.has(r.outcome.error.reason)
      ? [{ effect: `${r.kind}:${r.key}`, occurrence: r.occurrence, reason: r.outcome.error.reason, injected: false }]
      : []
  )
]

const endedInFault = (cell: CellSummary): boolean => cell.ended === "fault"

/** Ends that are not the candidate's doing: an outage, the spend cap, a broken setup or grader, the benchmark's own failure. */
const notTheCandidates = new Set(["fault", "spend-cap", "setup-failed", "evaluator-failed"])
const failed = (cell: CellSummary): boolean => cell.reward < 1 && !notTheCandidates.has(cell.ended ?? "") && !isProviderFailed(cell)

/**
 * The fault section of a report: the spec the run injected with (null: none) and, per candidate
 * and benchmark, the faults injected, the cells that ended in one, and the failed cells apart:
 * those that met a fault on the way and those that met none (the candidate's own failures).
 */
export const faultSummary = (attempts: ReadonlyArray<Attempt>, spec: FaultSpec | null): Faults =>
  faultSummaryOfCells(attempts.map(summaryOf), spec)

/** `faultSummary` of cells' summaries. */
export const faultSummaryOfCells = (cells: ReadonlyArray<CellSummary>, spec: FaultSpec | null): Faults => {
  const candidates: Array<CandidateFaults> = []
  for (const [, group] of groupBy(cells, (a) => `${a.benchmark}\u0000${a.candidate}`)) {
    const first = group[0]!
    candidates.push({
      candidate: first.candidate,
      benchmark: first.benchmark,
      cells: group.length,
      injected: group.reduce((n, a) => n + a.injected, 0),
      cellsWithFaults: group.filter((a) => a.faults.length > 0).length,
      endedInFault: group.filter(endedInFault).length,
      failedAfterFault: group.filter((a) => failed(a) && a.faults.length > 0).length,
      failedWithoutFault: group.filter((a) => failed(a) && a.faults.length === 0).length
    })
  }
  return { spec, candidates }
}

/** Each cell with its reward, how it ended and its faults: the `--cells` list. */
export const cellResults = (attempts: ReadonlyArray<Attempt>): ReadonlyArray<CellResult> => cellResultsOfCells(attempts.map(summaryOf))

/** `cellResults` of cells' summaries. */
export const cellResultsOfCells = (cells: ReadonlyArray<CellSummary>): ReadonlyArray<CellResult> =>
  cells.map((a) => ({
    benchmark: a.benchmark,
    task: a.task,
    candidate: a.candidate,
    repetition: a.repetition,
    reward: a.reward,
    ended: a.ended,
    faults: a.faults,
    ...(a.cliUsage !== undefined ? { cliUsage: a.cliUsage } : {})
  }))

/**
 * Per harness candidate, its cells' tokens as assay counted them and as the CLI reported them (over
 * the cells the CLI gave an account of), and the cells where they differ.
 */
export const cliUsageOfCells = (
  cells: ReadonlyArray<{ readonly candidate: string; readonly cliUsage?: CliUsage | undefined }>
): ReadonlyArray<CandidateCliUsage> => {
  const zero = () => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 })
  const add = (sum: { -readonly [k in keyof CliUsage["assay"]]: number }, u: CliUsage["assay"]) => {
    sum.inputTokens += u.inputTokens
    sum.outputTokens += u.outputTokens
    sum.cacheReadTokens += u.cacheReadTokens
    sum.cacheWriteTokens += u.cacheWriteTokens
  }
  const by = new Map<string, { cells: number; differ: number; unreported: number; assay: ReturnType<typeof zero>; cli: ReturnType<typeof zero> }>()
  for (const c of cells) {
    if (c.cliUsage === undefined) continue
    const row = by.get(c.candidate) ?? { cells: 0, differ: 0, unreported: 0, assay: zero(), cli: zero() }
    row.cells++
    if (c.cliUsage.cli === null) row.unreported++
    else {
      // Summed over the cells the CLI gave an account of: the two sums compare like with like.
      add(row.assay, c.cliUsage.assay)
      add(row.cli, c.cliUsage.cli)
      if (!cliAgrees(c.cliUsage)) row.differ++
    }
    by.set(c.candidate, row)
  }
  return [...by.entries()].map(([candidate, row]) => ({ candidate, ...row }))
}

// ---------------------------------------------------------------------------------------------
// Judges

/**
 * The judges' agreement and self-consistency per benchmark, from the cells whose verdicts keep
 * more than one judge call (src/evaluation/JudgePanel.ts); undefined when none does, so a run
 * with one judge asked once has no such section. Inputs are pooled over candidates and clustered
 * by task: the same task's inputs share its conversation.
 */
export const judgesOfCells = (cells: ReadonlyArray<CellSummary>): Judges | undefined => {
  const judged = cells.filter((c): c is CellSummary & { readonly judges: PanelRecord } => c.judges !== undefined && !isUnscored(c))
  if (judged.length === 0) return undefined
  const agreements: Array<JudgeAgreement> = []
  const consistency: Array<JudgeConsistency> = []
  for (const [, group] of groupBy(judged, (c) => JSON.stringify([c.benchmark, c.judges.judges]))) {
    const benchmark = group[0]!.benchmark
    const judges = group[0]!.judges.judges
    const [first, second] = judges
    if (first !== undefined && second !== undefined) {
      const pairs: Array<PairedDecision> = group.flatMap((c) =>
        c.judges.inputs.flatMap((i) => {
          const a = i.decisions[0]?.[0]
          const b = i.decisions[1]?.[0]
          return a === undefined || b === undefined ? [] : [{ cluster: `${c.benchmark}/${c.task}`, a, b }]
        })
      )
      const agreed = agreement(pairs, { seed: SEED })
      if (agreed.n > 0) {
        agreements.push({
          benchmark,
          judges: [first, second],
          decisions: agreed.n,
          tasks: agreed.clusters,
          agree: agreed.agree,
          agreement: agreed.observed,
          agreementInterval: agreed.observedInterval,
          kappa: Number.isNaN(agreed.kappa) ? null : agreed.kappa,
          kappaInterval: agreed.kappaInterval
        })
      }
    }
    judges.forEach((judge, j) => {
      const found = selfConsistency(group.flatMap((c) => c.judges.inputs.map((i) => i.decisions[j] ?? [])))
      if (found !== null) consistency.push({ benchmark, judge, ...found })
    })
  }
  return { agreement: agreements, consistency }
}
