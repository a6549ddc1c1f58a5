/**
 * What the report's renderers share: its layout (benchmarks, strata, candidates), numbers as people
 * read them, and the tables text and Markdown both print.
 */
import type { CandidateCliUsage, CandidateFaults, CellCounts, Comparison, Faults, Interval, Judges, NoiseFloor, OutageCell, PassHatK, Recommendation, RecommendationPick, Report, Scorecard, SkippedCell } from "../../schema/Report.ts"
import { cliUsageOfCells, isReference } from "../Scorecards.ts"
import { frontier } from "../Statistics.ts"

// ---------------------------------------------------------------------------------------------
// Layout shared by the renderers

export const distinct = (values: Iterable<string>): ReadonlyArray<string> => [...new Set(values)]

export const benchmarksOf = (scorecards: ReadonlyArray<Scorecard>): ReadonlyArray<string> =>
  distinct(scorecards.map((s) => s.benchmark))

export const candidatesOf = (report: Report): ReadonlyArray<string> =>
  distinct([...report.scorecards.map((s) => s.candidate), ...report.comparisons.flatMap((c) => [c.a, c.b])])

/** The strata of a benchmark: the whole benchmark (null) first, then strata as they appear. */
export const strataOf = (scorecards: ReadonlyArray<Scorecard>, benchmark: string): ReadonlyArray<string | null> => {
  const named = distinct(scorecards.flatMap((s) => (s.benchmark === benchmark && s.stratum !== null ? [s.stratum] : [])))
  const hasWhole = scorecards.some((s) => s.benchmark === benchmark && s.stratum === null)
  return hasWhole ? [null, ...named] : named
}

export const cardsOf = (scorecards: ReadonlyArray<Scorecard>, benchmark: string, stratum: string | null) =>
  scorecards.filter((s) => s.benchmark === benchmark && s.stratum === stratum)

/** The whole-benchmark scorecards (`stratum: null`) of a benchmark. */
export const wholeOf = (scorecards: ReadonlyArray<Scorecard>, benchmark: string): ReadonlyArray<Scorecard> =>
  cardsOf(scorecards, benchmark, null)

/**
 * Failures per check and candidate on a benchmark: from the whole-benchmark scorecards, or, when
 * the run made none, the strata's counts added up.
 */
export const failuresOf = (
  scorecards: ReadonlyArray<Scorecard>,
  benchmark: string
): { readonly checks: ReadonlyArray<string>; readonly byCandidate: ReadonlyArray<readonly [string, ReadonlyMap<string, number>]> } => {
  const whole = wholeOf(scorecards, benchmark)
  const source = whole.length > 0 ? whole : scorecards.filter((s) => s.benchmark === benchmark)
  const byCandidate = new Map<string, Map<string, number>>()
  for (const card of source) {
    const counts = byCandidate.get(card.candidate) ?? new Map<string, number>()
    for (const [check, count] of Object.entries(card.failures)) counts.set(check, (counts.get(check) ?? 0) + count)
    byCandidate.set(card.candidate, counts)
  }
  const checks = distinct(source.flatMap((s) => Object.keys(s.failures)))
  return { checks, byCandidate: [...byCandidate.entries()] }
}

export const frontierOf = (cards: ReadonlyArray<Scorecard>): ReadonlyArray<Scorecard> =>
  frontier(cards.filter((card) => card.reference !== true).map((card) => ({ id: card.candidate, score: card.meanReward, cost: card.costUsd, card }))).map(
    (p) => p.card
  )

export const stratumTitle = (benchmark: string, stratum: string | null): string =>
  stratum === null ? `${benchmark}, whole benchmark` : `${benchmark}, ${stratum}`

// ---------------------------------------------------------------------------------------------
// Numbers as people read them

export const isNumber = (x: number): boolean => Number.isFinite(x)
export const dash = "—"

export const formatScore = (x: number): string => (isNumber(x) ? x.toFixed(3) : dash)

/** An interval as "[lo, hi]"; "—" when there is none (one task says nothing of the spread). */
export const formatInterval = (interval: Interval | null, signed = false): string =>
  interval === null
    ? dash
    : `[${signed ? formatSigned(interval[0]) : formatScore(interval[0])}, ${signed ? formatSigned(interval[1]) : formatScore(interval[1])}]`

export const formatSigned = (x: number): string => (isNumber(x) ? `${x > 0 ? "+" : x < 0 ? "−" : ""}${Math.abs(x).toFixed(3)}` : dash)

export const formatPercent = (x: number): string => (isNumber(x) ? `${(x * 100).toFixed(1)}%` : dash)

/** Dollars: "unknown" for null, never "$0"; cents from ten cents up, four decimals below. */
export const formatCost = (usd: number | null): string => {
  if (usd === null) return "unknown"
  if (!isNumber(usd)) return dash
  return `$${usd === 0 || Math.abs(usd) >= 0.1 ? groupDigits(usd.toFixed(2)) : usd.toFixed(4)}`
}

/** Digits grouped by thousands with commas, whatever the machine's locale. */
export const groupDigits = (text: string): string => {
  const [whole = "", fraction] = text.split(".")
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  return fraction === undefined ? grouped : `${grouped}.${fraction}`
}

export const formatCount = (x: number): string => (isNumber(x) ? groupDigits(Math.round(x).toString()) : dash)

export const formatSeconds = (seconds: number): string => {
  if (!isNumber(seconds)) return dash
  if (seconds < 60) return `${seconds.toFixed(1)}s`
  const s = Math.round(seconds)
  const pad = (x: number) => x.toString().padStart(2, "0")
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`
  return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`
}

export const formatPassHatK = (passHatK: ReadonlyArray<PassHatK> | undefined): string =>
  passHatK === undefined || passHatK.length === 0 ? dash : passHatK.map((p) => `^${p.k} ${p.value.toFixed(2)}`).join(" ")

/** The run's wall time beside its cells' summed time, which is what the Scorecards' "cell time" adds up. */
export const timeLine = (report: Report): string => {
  const summed = report.scorecards.filter((c) => c.stratum === null).reduce((sum, c) => sum + c.wallSeconds, 0)
  // Kept cells ran in earlier runs: their time is in the sum, not in this run's wall time.
  const kept = report.cells.kept > 0 ? `, the ${formatCount(report.cells.kept)} kept from earlier runs included` : ""
  return `${formatSeconds(report.wallSeconds ?? 0)} wall time; ${formatSeconds(summed)} of cell time summed over the cells scored${kept}`
}

export const formatCells = (cells: CellCounts): string =>
  `total ${cells.total} · ran ${cells.ran} · kept ${cells.kept} · stale ${cells.stale} · skipped ${cells.skipped} · faulted ${cells.faulted}`

/** The fault spec as one line: what was injected, or "none"; "not recorded" for older reports. */
/** "claude 2.0.14, codex 0.46.0": the agent CLIs a run's harness candidates ran. */
export const formatHarnesses = (versions: Readonly<Record<string, string>>): string =>
  Object.entries(versions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, version]) => `${name} ${version}`).join(", ")

export const formatFaultSpec = (faults: Faults | undefined): string => {
  if (faults === undefined) return "not recorded with this run"
  const spec = faults.spec
  if (spec === null) return "none"
  return [
    `seed ${spec.seed}`,
    `rate ${spec.rate}`,
    `kinds ${spec.kinds.join(", ")}`,
    ...(spec.only === null ? [] : [`only ${spec.only.join(", ")}`]),
    // A draw is of (seed, task, site, occurrence): repetitions repeat it, so pass^k and the noise
    // floor are the candidate's own variation under the same faults.
    "the same draws in every repetition"
  ].join(" · ")
}

/** Candidates with something to say about faults: all of them when faults were injected. */
export const faultRows = (faults: Faults | undefined): ReadonlyArray<CandidateFaults> =>
  faults === undefined ? [] : faults.spec !== null ? faults.candidates : faults.candidates.filter((c) => c.cellsWithFaults > 0 || c.endedInFault > 0)

// ---------------------------------------------------------------------------------------------
// Tables, shared by text and Markdown

export type Align = "left" | "right"
export interface Table {
  readonly headers: ReadonlyArray<string>
  readonly align: ReadonlyArray<Align>
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
}

export const withModels = (rec: Recommendation, candidate: string): string => {
  const models = rec.models[candidate] ?? []
  return models.length === 0 || models.every((m) => candidate.endsWith(`:${m}`)) ? candidate : `${candidate} (${models.join(", ")})`
}

export const standingTable = (rec: Recommendation): Table => ({
  headers: ["role", "candidate", "score", "median cost", "median wall", "runs", "smallest cell"],
  align: ["left", "left", "right", "right", "right", "right", "right"],
  rows: (["orchestrator", "worker"] as const).flatMap((role) =>
    rec.standings[role].map((s) => [
      role,
      withModels(rec, s.candidate),
      formatScore(s.score),
      formatCost(s.medianCostUsd),
      formatSeconds(s.medianWallMs / 1000),
      formatCount(s.runs),
      formatCount(s.smallestCell)
    ])
  )
})

/** The recommendation as lines: the picks with why, the sample size, the judge. */
export const recommendationLines = (rec: Recommendation): ReadonlyArray<string> => {
  const pick = (role: string, p: typeof RecommendationPick.Type | null) =>
    p === null ? `${role}: none (no scored run in this role)` : `${role}: ${withModels(rec, p.candidate)}, score ${formatScore(p.score)}, median cost ${formatCost(p.medianCostUsd)} (${p.basis})`
  return [
    pick("orchestrator", rec.orchestrator),
    pick("worker", rec.worker),
    `smallest sample per cell: ${rec.smallestSample === null ? "none" : formatCount(rec.smallestSample)}`,
    `judge: ${rec.judge === null ? "none" : `${rec.judge.ref}${rec.judge.alsoCandidate ? " (also a candidate)" : ""}`}`,
    ...rec.warnings.map((w) => `warning: ${w}`)
  ]
}

export const scorecardTable = (cards: ReadonlyArray<Scorecard>): Table => {
  // The judging column only where a judge was asked: most benchmarks grade without one.
  const judged = cards.some((c) => c.judging !== undefined)
  // The outage column only where some cell ended in one: they are not in n, and say so here.
  const outages = cards.some((c) => (c.outages ?? 0) > 0)
  return {
    headers: ["candidate", "n", ...(outages ? ["outages"] : []), "tasks", "mean", "95% interval", "pass", "pass^k", "tokens in", "tokens out", "cost", "cell time", ...(judged ? ["judging"] : [])],
    align: ["left", "right", ...(outages ? ["right" as const] : []), "right", "right", "left", "right", "left", "right", "right", "right", "right", ...(judged ? ["right" as const] : [])],
    rows: cards.map((c) => [
      c.candidate,
      formatCount(c.n),
      ...(outages ? [formatCount(c.outages ?? 0)] : []),
      c.tasks === undefined ? dash : formatCount(c.tasks),
      formatScore(c.meanReward),
      formatInterval(c.interval),
      formatPercent(c.passRate),
      formatPassHatK(c.passHatK),
      formatCount(c.tokens.input),
      formatCount(c.tokens.output),
      formatCost(c.costUsd),
      formatSeconds(c.wallSeconds),
      ...(judged ? [c.judging === undefined ? "" : `${formatCost(c.judging.costUsd)} (${formatCount(c.judging.calls)} calls)`] : [])
    ])
  }
}

export const failureTable = (failures: ReturnType<typeof failuresOf>): Table => ({
  headers: ["check", ...failures.byCandidate.map(([candidate]) => candidate)],
  align: ["left", ...failures.byCandidate.map((): Align => "right")],
  rows: failures.checks.map((check) => [
    check,
    ...failures.byCandidate.map(([, counts]) => formatCount(counts.get(check) ?? 0))
  ])
})

/**
 * A p-value in three decimals, but never rounded up to 0.05 from below it: 0.0499 prints as such,
 * not as 0.050 beside an interval that leaves out 0.
 */
export const formatP = (p: number): string => {
  if (p < 0.001) return "<0.001"
  const text = p.toFixed(3)
  return p < 0.05 && text === "0.050" ? (Math.floor(p * 10_000) / 10_000).toFixed(4) : text
}

export const comparisonTable = (comparisons: ReadonlyArray<Comparison>): Table => {
  const holmed = comparisons.some((c) => c.holm !== undefined)
  return {
    headers: ["a", "b", "on", "tasks", "a − b", "95% interval", "p", "detectable", ...(holmed ? ["Holm"] : [])],
    align: ["left", "left", "left", "right", "right", "left", "right", "right", ...(holmed ? ["left" as const] : [])],
    rows: comparisons.map((c) => [
      c.a,
      c.b,
      c.benchmark === undefined ? "all" : c.stratum === undefined || c.stratum === null ? c.benchmark : `${c.benchmark}/${c.stratum}`,
      formatCount(c.n),
      formatSigned(c.difference),
      formatInterval(c.interval, true),
      c.p === undefined ? dash : formatP(c.p),
      c.minimumDetectable === undefined ? dash : `±${c.minimumDetectable.toFixed(3)}`,
      ...(holmed ? [c.holm === undefined ? (isReference(c.a) || isReference(c.b) ? "reference" : "") : c.holm ? "significant" : "not significant"] : [])
    ])
  }
}

/**
 * What the comparison table's columns mean, and with more than two candidates on a benchmark how
 * many comparisons were made: each at 5% would find some difference by chance, so Holm's
 * correction says which stay significant over the family.
 */
export const comparisonLines = (comparisons: ReadonlyArray<Comparison>): ReadonlyArray<string> => {
  const families = new Map<string, number>()
  for (const c of comparisons) if (c.holm !== undefined) families.set(c.benchmark ?? "all", (families.get(c.benchmark ?? "all") ?? 0) + 1)
  return [
    "paired by task (each candidate's mean over its repetitions of the task); p and interval from one sign-flip test over tasks, so p < 0.05 exactly when the interval leaves out 0 (with 5 tasks or fewer no difference can reach 5%); detectable: the smallest true difference found with 80% power at 95% confidence at this many tasks",
    ...Array.from(
      families,
      ([benchmark, m]) =>
        `${benchmark}: ${m} pairwise comparisons${
          comparisons.some((c) => (c.benchmark ?? "all") === benchmark && c.holm === undefined) ? " of contenders (those with a scripted reference, gold or echo, are left out)" : ""
        }; significant at 5% after Holm's correction: ${
          comparisons.filter((c) => (c.benchmark ?? "all") === benchmark && c.holm === true).length
        } of ${m}`
    )
  ]
}

export const percent = (x: number): string => `${Math.round(x * 100)}%`

/** The noise floor of each candidate with repetitions (whole-benchmark scorecards). */
export const noiseHeaders = ["candidate", "reps", "tasks", "flip rate", "sd across reps", "within-task share", "task-sampling share"]
export const noiseAlign: ReadonlyArray<Align> = ["left", "right", "right", "right", "right", "right", "right"]

export const noiseRow = (candidate: string, noise: NoiseFloor): ReadonlyArray<string> => [
  candidate,
  formatCount(noise.repetitions),
  formatCount(noise.tasks),
  formatPercent(noise.flipRate),
  noise.repetitionSd === null ? dash : noise.repetitionSd.toFixed(3),
  noise.withinShare === null ? dash : percent(noise.withinShare),
  noise.withinShare === null ? dash : percent(1 - noise.withinShare)
]

export const noiseTable = (cards: ReadonlyArray<Scorecard>): Table => ({
  headers: noiseHeaders,
  align: noiseAlign,
  rows: cards.flatMap((c) => (c.noise === undefined ? [] : [noiseRow(c.candidate, c.noise)]))
})

/** Two judges' agreement on a benchmark (`--judge A --judge B`). */
export const agreementTable = (judges: Judges | undefined, benchmark: string): Table => ({
  headers: ["graded by", "compared with", "decisions", "tasks", "agree", "agreement", "95% interval", "kappa", "95% interval"],
  align: ["left", "left", "right", "right", "right", "right", "left", "right", "left"],
  rows: (judges?.agreement ?? []).filter((a) => a.benchmark === benchmark).map((a) => [
    a.judges[0],
    a.judges[1],
    formatCount(a.decisions),
    formatCount(a.tasks),
    formatCount(a.agree),
    formatPercent(a.agreement),
    a.agreementInterval === null ? "none (one task)" : `[${formatPercent(a.agreementInterval[0])}, ${formatPercent(a.agreementInterval[1])}]`,
    a.kappa === null ? dash : formatSigned(a.kappa),
    a.kappaInterval === null ? dash : formatInterval(a.kappaInterval, true)
  ])
})

/** Each judge's agreement with itself when asked again (`--judge-reps K`). */
export const consistencyTable = (judges: Judges | undefined, benchmark: string): Table => ({
  headers: ["judge", "asked", "inputs", "all answers alike", "pairs alike"],
  align: ["left", "right", "right", "right", "right"],
  rows: (judges?.consistency ?? []).filter((c) => c.benchmark === benchmark).map((c) => [
    c.judge,
    `${c.repetitions}×`,
    formatCount(c.inputs),
    formatPercent(c.unanimous),
    formatPercent(c.pairwise)
  ])
})

export const agreementCaption = "Each judged input (an NL assertion, a listed entry) decided by both judges, their first answers, over every candidate; " +
  "the first judge's answers are the score. Intervals resample tasks (a task's inputs share its conversation); kappa corrects agreement " +
  "for chance (1: always alike, 0: as alike as chance makes two judges with these rates of yes; none when both said one same answer to everything)."

export const consistencyCaption = "The same judge asked the same input again: the share of inputs on which every answer was alike, and of pairs of answers that were."

/** The judges' sections of one benchmark: [title, table, caption] for each that has rows. */
export const judgeSections = (judges: Judges | undefined, benchmark: string): ReadonlyArray<readonly [string, Table, string]> =>
  [
    ["judges' agreement", agreementTable(judges, benchmark), agreementCaption] as const,
    ["judge self-consistency", consistencyTable(judges, benchmark), consistencyCaption] as const
  ].filter(([, table]) => table.rows.length > 0)

export const noiseCaption =
  "flip rate: tasks whose verdict differs between repetitions; sd across reps: how far the benchmark mean of one repetition moves from the next; shares: of the interval's variance, from tasks disagreeing with themselves (more repetitions shrink it) and from which tasks were sampled (only more tasks shrink it)"

/** At most this many outage cells are listed in text, Markdown and HTML (`--json` has them all). */
export const OUTAGES_LISTED = 50

export const outageLine = (outages: ReadonlyArray<OutageCell>): string =>
  `${outages.length} cells ended in an outage (${
    distinct(outages.flatMap((o) => o.reasons)).join(", ") || "a fault met live"
  }): they are not scored, not in n, the means, intervals, pass rates or comparisons; running the experiment again runs them`

export const outageTable = (outages: ReadonlyArray<OutageCell>): Table => ({
  headers: ["benchmark", "task", "candidate", "rep", "met"],
  align: ["left", "left", "left", "right", "left"],
  rows: [
    ...outages.slice(0, OUTAGES_LISTED).map((o) => [o.benchmark, o.task, o.candidate, formatCount(o.repetition), o.reasons.join(", ")]),
    ...(outages.length > OUTAGES_LISTED ? [["…", `${outages.length - OUTAGES_LISTED} more (--json lists them all)`, "", "", ""]] : [])
  ]
})

/** A count as assay made it and as the agent CLI reported it: one figure when they agree, both and ≠ when not. */
const againstCli = (assay: number, cli: number, reported: boolean): string =>
  !reported ? `${formatCount(assay)} · CLI ${dash}` : assay === cli ? formatCount(assay) : `${formatCount(assay)} ≠ CLI ${formatCount(cli)}`

/** The report's harness candidates' own usage, or, in a report that lacks it, as its cells give it. */
export const cliUsageOf = (report: Report): ReadonlyArray<CandidateCliUsage> => report.cliUsage ?? cliUsageOfCells(report.cellResults ?? [])

/** Harness candidates' tokens, assay's count beside the CLI's own (`≠` marks a disagreement). */
export const cliUsageTable = (rows: ReadonlyArray<CandidateCliUsage>): Table => ({
  headers: ["candidate", "cells reported", "input", "output", "cache read", "cache write", "cells differing", "cells unreported"],
  align: ["left", "right", "right", "right", "right", "right", "right", "right"],
  rows: rows.map((r) => {
    const reported = r.unreported < r.cells
    return [
      r.candidate,
      formatCount(r.cells - r.unreported),
      againstCli(r.assay.inputTokens, r.cli.inputTokens, reported),
      againstCli(r.assay.outputTokens, r.cli.outputTokens, reported),
      againstCli(r.assay.cacheReadTokens, r.cli.cacheReadTokens, reported),
      againstCli(r.assay.cacheWriteTokens, r.cli.cacheWriteTokens, reported),
      r.differ > 0 ? `≠ ${formatCount(r.differ)}` : "0",
      formatCount(r.unreported)
    ]
  })
})

export const cliUsageCaption =
  "The tokens of the agent CLIs' model calls as assay counted them (what its proxy answered them; the report's figures are assay's) and as each CLI reported them in its own output and session files, summed over the cells the CLI gave an account of. ≠ marks a count where the two differ; a cell whose CLI was ended before it gave one is unreported."

export const faultTable = (rows: ReadonlyArray<CandidateFaults>): Table => ({
  headers: ["candidate", "benchmark", "cells", "faults injected", "cells with faults", "ended in a fault", "failed after a fault", "failed, no fault"],
  align: ["left", "left", "right", "right", "right", "right", "right", "right"],
  rows: rows.map((c) => [
    c.candidate,
    c.benchmark,
    formatCount(c.cells),
    formatCount(c.injected),
    formatCount(c.cellsWithFaults),
    formatCount(c.endedInFault),
    formatCount(c.failedAfterFault),
    formatCount(c.failedWithoutFault)
  ])
})

export const skippedTable = (skipped: ReadonlyArray<SkippedCell>): Table => ({
  headers: ["task", "candidate", "rep", "reason"],
  align: ["left", "left", "right", "left"],
  rows: skipped.map((s) => [s.task ?? s.environmentId, s.candidate, formatCount(s.repetition), s.reason])
})

export const width = (text: string): number => [...text].length

export const textTable = (table: Table): string => {
  const widths = table.headers.map((h, i) => Math.max(width(h), ...table.rows.map((r) => width(r[i] ?? ""))))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, i) => {
        const pad = " ".repeat(Math.max(0, (widths[i] ?? 0) - width(cell)))
        return table.align[i] === "right" ? pad + cell : cell + pad
      })
      .join("  ")
      .trimEnd()
  return [line(table.headers), ...table.rows.map(line)].join("\n")
}

export const frontierLine = (cards: ReadonlyArray<Scorecard>): string => {
  const onFrontier = frontierOf(cards)
  const unknown = cards.filter((c) => c.costUsd === null).map((c) => c.candidate)
  // Scripted references (gold, echo) show $0.00 in the table but are never placed: say so.
  const references = cards.filter((c) => c.reference === true && c.costUsd !== null).map((c) => c.candidate)
  const parts = [
    onFrontier.length === 0
      ? references.length > 0 && cards.every((c) => c.reference === true || c.costUsd === null)
        ? `none placed: ${references.join(", ")} ${references.length === 1 ? "is a scripted reference" : "are scripted references"}, not contenders`
        : "no candidate with a known cost"
      : onFrontier.map((c) => `${c.candidate} (${formatScore(c.meanReward)} at ${formatCost(c.costUsd)})`).join(" → ")
  ]
  if (unknown.length > 0) parts.push(`cost unknown, not placed: ${unknown.join(", ")}`)
  return parts.join("; ")
}
