/**
 * The report of a run rendered: aligned text, Markdown and one self-contained HTML file with SVG
 * plots, and the store query that completes an older stored report. The document itself (its
 * schemas and JSON) is src/schema/Report.ts. Rendering is pure: the same report gives the same
 * bytes, so a report re-rendered from the store is identical to the one printed by the run.
 */
import { Effect } from "effect"
import type {
  CandidateFaults,
  CellCounts,
  Comparison,
  Faults,
  FrontierEntry,
  Interval,
  Judges,
  NoiseFloor,
  OutageCell,
  PassHatK,
  Recommendation,
  RecommendationPick,
  Report,
  Scorecard,
  SkippedCell,
  Spend
} from "../schema/Report.ts"
import { cellResults as cellResultsOf } from "./Scorecards.ts"
import { frontier } from "./Statistics.ts"
import { Store, type StoreError } from "./Store.ts"

export * from "../schema/Report.ts"

/**
 * A stored report with what runs stored before these fields existed lack, read from the store:
 * the skipped cells with their reasons, and (with `cells`) the per-cell list from the run's own Attempts (the
 * cells it kept from earlier runs cannot be found again then, and a warning says so). A report
 * that has them is returned as it is.
 */
export const completeReport = (report: Report, options: { readonly cells?: boolean } = {}): Effect.Effect<Report, StoreError, Store> =>
  Effect.gen(function*() {
    const wantCells = options.cells === true
    if (report.skipped !== undefined && (report.cellResults !== undefined || !wantCells)) return report
    const store = yield* Store
    const attempts = (yield* store.attemptsOfRun(report.runId)).map((s) => s.attempt)
    const taskOf = new Map(attempts.map((a) => [a.environmentId, a.task]))
    const skipped = report.skipped ??
      (yield* store.skippedOfRun(report.runId)).map((s) => ({ ...s, task: taskOf.get(s.environmentId) ?? null }))
    if (report.cellResults !== undefined || !wantCells) return { ...report, skipped }
    const partial = report.cells.kept > 0
      ? [`this run was stored before reports kept their cells: the ${report.cells.kept} cells it kept from earlier runs are not listed`]
      : []
    return {
      ...report,
      skipped,
      cellResults: cellResultsOf(attempts),
      ...(partial.length > 0 ? { warnings: [...(report.warnings ?? []), ...partial] } : {})
    }
  })

/** Each benchmark's frontier over its whole-benchmark scorecards (the `frontier` field). */
export const frontiers = (scorecards: ReadonlyArray<Scorecard>): ReadonlyArray<FrontierEntry> =>
  benchmarksOf(scorecards).map((benchmark) => ({
    benchmark,
    candidates: frontierOf(wholeOf(scorecards, benchmark)).map((s) => s.candidate)
  }))

// ---------------------------------------------------------------------------------------------
// Layout shared by the renderers

const distinct = (values: Iterable<string>): ReadonlyArray<string> => [...new Set(values)]

const benchmarksOf = (scorecards: ReadonlyArray<Scorecard>): ReadonlyArray<string> =>
  distinct(scorecards.map((s) => s.benchmark))

const candidatesOf = (report: Report): ReadonlyArray<string> =>
  distinct([...report.scorecards.map((s) => s.candidate), ...report.comparisons.flatMap((c) => [c.a, c.b])])

/** The strata of a benchmark: the whole benchmark (null) first, then strata as they appear. */
const strataOf = (scorecards: ReadonlyArray<Scorecard>, benchmark: string): ReadonlyArray<string | null> => {
  const named = distinct(scorecards.flatMap((s) => (s.benchmark === benchmark && s.stratum !== null ? [s.stratum] : [])))
  const hasWhole = scorecards.some((s) => s.benchmark === benchmark && s.stratum === null)
  return hasWhole ? [null, ...named] : named
}

const cardsOf = (scorecards: ReadonlyArray<Scorecard>, benchmark: string, stratum: string | null) =>
  scorecards.filter((s) => s.benchmark === benchmark && s.stratum === stratum)

/** The whole-benchmark scorecards (`stratum: null`) of a benchmark. */
const wholeOf = (scorecards: ReadonlyArray<Scorecard>, benchmark: string): ReadonlyArray<Scorecard> =>
  cardsOf(scorecards, benchmark, null)

/**
 * Failures per check and candidate on a benchmark: from the whole-benchmark scorecards, or, when
 * the run made none, the strata's counts added up.
 */
const failuresOf = (
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

const frontierOf = (cards: ReadonlyArray<Scorecard>): ReadonlyArray<Scorecard> =>
  frontier(cards.filter((card) => card.reference !== true).map((card) => ({ id: card.candidate, score: card.meanReward, cost: card.costUsd, card }))).map(
    (p) => p.card
  )

const stratumTitle = (benchmark: string, stratum: string | null): string =>
  stratum === null ? `${benchmark}, whole benchmark` : `${benchmark}, ${stratum}`

// ---------------------------------------------------------------------------------------------
// Numbers as people read them

const isNumber = (x: number): boolean => Number.isFinite(x)
const dash = "—"

export const formatScore = (x: number): string => (isNumber(x) ? x.toFixed(3) : dash)

export const formatInterval = ([lo, hi]: Interval, signed = false): string =>
  `[${signed ? formatSigned(lo) : formatScore(lo)}, ${signed ? formatSigned(hi) : formatScore(hi)}]`

const formatSigned = (x: number): string => (isNumber(x) ? `${x > 0 ? "+" : x < 0 ? "−" : ""}${Math.abs(x).toFixed(3)}` : dash)

export const formatPercent = (x: number): string => (isNumber(x) ? `${(x * 100).toFixed(1)}%` : dash)

/** Dollars: "unknown" for null, never "$0"; cents from ten cents up, four decimals below. */
export const formatCost = (usd: number | null): string => {
  if (usd === null) return "unknown"
  if (!isNumber(usd)) return dash
  return `$${usd === 0 || Math.abs(usd) >= 0.1 ? groupDigits(usd.toFixed(2)) : usd.toFixed(4)}`
}

/** Digits grouped by thousands with commas, whatever the machine's locale. */
const groupDigits = (text: string): string => {
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

const formatPassHatK = (passHatK: ReadonlyArray<PassHatK> | undefined): string =>
  passHatK === undefined || passHatK.length === 0 ? dash : passHatK.map((p) => `^${p.k} ${p.value.toFixed(2)}`).join(" ")

/** The run's wall time beside its cells' summed time, which is what the Scorecards' "cell time" adds up. */
const timeLine = (report: Report): string => {
  const summed = report.scorecards.filter((c) => c.stratum === null).reduce((sum, c) => sum + c.wallSeconds, 0)
  return `${formatSeconds(report.wallSeconds ?? 0)} wall time; ${formatSeconds(summed)} of cell time summed over the cells scored`
}

const formatCells = (cells: CellCounts): string =>
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
    ...(spec.only === null ? [] : [`only ${spec.only.join(", ")}`])
  ].join(" · ")
}

/** Candidates with something to say about faults: all of them when faults were injected. */
const faultRows = (faults: Faults | undefined): ReadonlyArray<CandidateFaults> =>
  faults === undefined ? [] : faults.spec !== null ? faults.candidates : faults.candidates.filter((c) => c.cellsWithFaults > 0 || c.endedInFault > 0)

// ---------------------------------------------------------------------------------------------
// Tables, shared by text and Markdown

type Align = "left" | "right"
interface Table {
  readonly headers: ReadonlyArray<string>
  readonly align: ReadonlyArray<Align>
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
}

const withModels = (rec: Recommendation, candidate: string): string => {
  const models = rec.models[candidate] ?? []
  return models.length === 0 || models.every((m) => candidate.endsWith(`:${m}`)) ? candidate : `${candidate} (${models.join(", ")})`
}

const standingTable = (rec: Recommendation): Table => ({
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
const recommendationLines = (rec: Recommendation): ReadonlyArray<string> => {
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

const scorecardTable = (cards: ReadonlyArray<Scorecard>): Table => {
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

const failureTable = (failures: ReturnType<typeof failuresOf>): Table => ({
  headers: ["check", ...failures.byCandidate.map(([candidate]) => candidate)],
  align: ["left", ...failures.byCandidate.map((): Align => "right")],
  rows: failures.checks.map((check) => [
    check,
    ...failures.byCandidate.map(([, counts]) => formatCount(counts.get(check) ?? 0))
  ])
})

const comparisonTable = (comparisons: ReadonlyArray<Comparison>): Table => {
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
      c.p === undefined ? dash : c.p < 0.001 ? "<0.001" : c.p.toFixed(3),
      c.minimumDetectable === undefined ? dash : `±${c.minimumDetectable.toFixed(3)}`,
      ...(holmed ? [c.holm === undefined ? "" : c.holm ? "significant" : "not significant"] : [])
    ])
  }
}

/**
 * What the comparison table's columns mean, and with more than two candidates on a benchmark how
 * many comparisons were made: each at 5% would find some difference by chance, so Holm's
 * correction says which stay significant over the family.
 */
const comparisonLines = (comparisons: ReadonlyArray<Comparison>): ReadonlyArray<string> => {
  const families = new Map<string, number>()
  for (const c of comparisons) if (c.holm !== undefined) families.set(c.benchmark ?? "all", (families.get(c.benchmark ?? "all") ?? 0) + 1)
  return [
    "paired by task (each candidate's mean over its repetitions of the task), tasks resampled; detectable: the smallest true difference found with 80% power at 95% confidence at this many tasks",
    ...Array.from(
      families,
      ([benchmark, m]) =>
        `${benchmark}: ${m} pairwise comparisons; significant at 5% after Holm's correction: ${
          comparisons.filter((c) => (c.benchmark ?? "all") === benchmark && c.holm === true).length
        } of ${m}`
    )
  ]
}

const percent = (x: number): string => `${Math.round(x * 100)}%`

/** The noise floor of each candidate with repetitions (whole-benchmark scorecards). */
const noiseHeaders = ["candidate", "reps", "tasks", "flip rate", "sd across reps", "within-task share", "task-sampling share"]
const noiseAlign: ReadonlyArray<Align> = ["left", "right", "right", "right", "right", "right", "right"]

const noiseRow = (candidate: string, noise: NoiseFloor): ReadonlyArray<string> => [
  candidate,
  formatCount(noise.repetitions),
  formatCount(noise.tasks),
  formatPercent(noise.flipRate),
  noise.repetitionSd === null ? dash : noise.repetitionSd.toFixed(3),
  percent(noise.withinShare),
  percent(1 - noise.withinShare)
]

const noiseTable = (cards: ReadonlyArray<Scorecard>): Table => ({
  headers: noiseHeaders,
  align: noiseAlign,
  rows: cards.flatMap((c) => (c.noise === undefined ? [] : [noiseRow(c.candidate, c.noise)]))
})

/** Two judges' agreement on a benchmark (`--judge A --judge B`). */
const agreementTable = (judges: Judges | undefined, benchmark: string): Table => ({
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
const consistencyTable = (judges: Judges | undefined, benchmark: string): Table => ({
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

const agreementCaption = "Each judged input (an NL assertion, a listed entry) decided by both judges, their first answers, over every candidate; " +
  "the first judge's answers are the score. Intervals resample tasks (a task's inputs share its conversation); kappa corrects agreement " +
  "for chance (1: always alike, 0: as alike as chance makes two judges with these rates of yes; none when both said one same answer to everything)."

const consistencyCaption = "The same judge asked the same input again: the share of inputs on which every answer was alike, and of pairs of answers that were."

/** The judges' sections of one benchmark: [title, table, caption] for each that has rows. */
const judgeSections = (judges: Judges | undefined, benchmark: string): ReadonlyArray<readonly [string, Table, string]> =>
  [
    ["judges' agreement", agreementTable(judges, benchmark), agreementCaption] as const,
    ["judge self-consistency", consistencyTable(judges, benchmark), consistencyCaption] as const
  ].filter(([, table]) => table.rows.length > 0)

const noiseCaption =
  "flip rate: tasks whose verdict differs between repetitions; sd across reps: how far the benchmark mean of one repetition moves from the next; shares: of the interval's variance, from tasks disagreeing with themselves (more repetitions shrink it) and from which tasks were sampled (only more tasks shrink it)"

/** At most this many outage cells are listed in text, Markdown and HTML (`--json` has them all). */
const OUTAGES_LISTED = 50

const outageLine = (outages: ReadonlyArray<OutageCell>): string =>
  `${outages.length} cells ended in an outage (${
    distinct(outages.flatMap((o) => o.reasons)).join(", ") || "a fault met live"
  }): they are not scored, not in n, the means, intervals, pass rates or comparisons; running the experiment again runs them`

const outageTable = (outages: ReadonlyArray<OutageCell>): Table => ({
  headers: ["benchmark", "task", "candidate", "rep", "met"],
  align: ["left", "left", "left", "right", "left"],
  rows: [
    ...outages.slice(0, OUTAGES_LISTED).map((o) => [o.benchmark, o.task, o.candidate, formatCount(o.repetition), o.reasons.join(", ")]),
    ...(outages.length > OUTAGES_LISTED ? [["…", `${outages.length - OUTAGES_LISTED} more (--json lists them all)`, "", "", ""]] : [])
  ]
})

const faultTable = (rows: ReadonlyArray<CandidateFaults>): Table => ({
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

const skippedTable = (skipped: ReadonlyArray<SkippedCell>): Table => ({
  headers: ["task", "candidate", "rep", "reason"],
  align: ["left", "left", "right", "left"],
  rows: skipped.map((s) => [s.task ?? s.environmentId, s.candidate, formatCount(s.repetition), s.reason])
})

const width = (text: string): number => [...text].length

const textTable = (table: Table): string => {
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

const frontierLine = (cards: ReadonlyArray<Scorecard>): string => {
  const onFrontier = frontierOf(cards)
  const unknown = cards.filter((c) => c.costUsd === null).map((c) => c.candidate)
  const parts = [
    onFrontier.length === 0
      ? "no candidate with a known cost"
      : onFrontier.map((c) => `${c.candidate} (${formatScore(c.meanReward)} at ${formatCost(c.costUsd)})`).join(" → ")
  ]
  if (unknown.length > 0) parts.push(`cost unknown, not placed: ${unknown.join(", ")}`)
  return parts.join("; ")
}

// ---------------------------------------------------------------------------------------------
// Text

/** Aligned plain text for a terminal. */
/**
 * Spend in one line: this run, the experiment, the cap, and calls of unknown price. Worst cases a
 * dead worker left unsettled are said beside the ledger's figure, never added into it: they are
 * at most what those calls cost, not what they cost.
 */
export const formatSpend = (spend: Spend): string =>
  [
    `$${spend.runUsd.toFixed(4)} this run (${spend.calls} calls)` +
    (spend.unsettledUsd > 0 ? ` recorded in the ledger, plus up to $${spend.unsettledUsd.toFixed(4)} unsettled (calls in flight when a run or worker was killed)` : ""),
    `$${spend.experimentUsd.toFixed(4)} for the experiment` +
    (spend.experimentUnsettledUsd > 0 ? `, plus up to $${spend.experimentUnsettledUsd.toFixed(4)} unsettled` : ""),
    ...(spend.capUsd !== null ? [`cap $${spend.capUsd}`] : []),
    ...(spend.unknownCalls > 0 ? [`${spend.unknownCalls} calls of unknown price, not counted`] : [])
  ].join(" · ")

export const renderText = (report: Report): string => {
  const out: Array<string> = []
  out.push(
    textTable({
      headers: ["run", report.runId],
      align: ["left", "left"],
      rows: [
        ["experiment", report.experimentId],
        ["home", report.home],
        ["cells", formatCells(report.cells)],
        ...(report.wallSeconds !== undefined ? [["time", timeLine(report)]] : []),
        ["faults", formatFaultSpec(report.faults)],
        ...(report.harnesses !== undefined ? [["agent CLIs", formatHarnesses(report.harnesses)]] : []),
        ...(report.spend !== undefined ? [["spend", formatSpend(report.spend)]] : [])
      ]
    })
  )
  for (const warning of report.warnings ?? []) out.push(`warning: ${warning}`)
  for (const benchmark of benchmarksOf(report.scorecards)) {
    for (const stratum of strataOf(report.scorecards, benchmark)) {
      out.push("", stratumTitle(benchmark, stratum), textTable(scorecardTable(cardsOf(report.scorecards, benchmark, stratum))))
    }
    const noise = noiseTable(wholeOf(report.scorecards, benchmark))
    if (noise.rows.length > 0) out.push("", `${benchmark}, noise floor`, textTable(noise), "", noiseCaption)
    const failures = failuresOf(report.scorecards, benchmark)
    if (failures.checks.length > 0) out.push("", `${benchmark}, failures per check`, textTable(failureTable(failures)))
    for (const [title, table, caption] of judgeSections(report.judges, benchmark)) out.push("", `${benchmark}, ${title}`, textTable(table), "", caption)
    out.push("", `${benchmark}, score–cost frontier: ${frontierLine(wholeOf(report.scorecards, benchmark))}`)
  }
  if (report.comparisons.length > 0) out.push("", "paired comparisons", textTable(comparisonTable(report.comparisons)), "", ...comparisonLines(report.comparisons))
  if ((report.outages ?? []).length > 0) out.push("", "outages: " + outageLine(report.outages ?? []), textTable(outageTable(report.outages ?? [])))
  const faulted = faultRows(report.faults)
  if (faulted.length > 0) out.push("", "faults per candidate", textTable(faultTable(faulted)))
  if ((report.skipped ?? []).length > 0) out.push("", "skipped cells", textTable(skippedTable(report.skipped ?? [])))
  if (report.recommendation !== undefined) {
    const rec = report.recommendation
    out.push("", "recommendation", ...recommendationLines(rec))
    if (standingTable(rec).rows.length > 0) out.push(textTable(standingTable(rec)))
  }
  if ((report.notes ?? []).length > 0) out.push("", "notes", ...(report.notes ?? []).map((n) => `- ${n}`))
  return out.join("\n") + "\n"
}

// ---------------------------------------------------------------------------------------------
// `assay noise` and `assay plan --detect`

/** The noise floor of each candidate of a run, as `assay noise` prints it. */
export const renderNoise = (
  rows: ReadonlyArray<NoiseFloor & { readonly benchmark: string; readonly candidate: string }>
): string =>
  [
    textTable({ headers: ["benchmark", ...noiseHeaders], align: ["left", ...noiseAlign], rows: rows.map((r) => [r.benchmark, ...noiseRow(r.candidate, r)]) }),
    "",
    noiseCaption
  ].join("\n") + "\n"

/** What `plan --detect D` prints: tasks × repetitions needed per pair of candidates. */
export const renderPower = (
  detect: number,
  plans: ReadonlyArray<{
    readonly benchmark: string
    readonly a: string
    readonly b: string
    readonly pilot: { readonly tasks: number; readonly repetitions: number }
    readonly minimumDetectable: number
    readonly needed: ReadonlyArray<{ readonly repetitions: number; readonly tasks: number }>
    readonly available: number | null
    readonly floorTasks: number
    readonly tooFewTasks: boolean
  }>
): string => {
  if (plans.length === 0) {
    return `  detect ${detect}: no two candidates have graded cells on the same tasks yet (run a pilot, or name a run with --like)\n`
  }
  const repetitions = plans[0]?.needed.map((n) => n.repetitions) ?? []
  const lines = [
    `  detect a difference of ${detect} in mean reward with 80% power at 95% confidence (paired by task; tasks needed at each number of repetitions):`,
    textTable({
      headers: ["benchmark", "a", "b", "pilot", "detectable now", ...repetitions.map((k) => `${k} rep${k === 1 ? "" : "s"}`), "has"],
      align: ["left", "left", "left", "right", "right", ...repetitions.map((): Align => "right"), "right"],
      rows: plans.map((p) => [
        p.benchmark,
        p.a,
        p.b,
        `${p.pilot.tasks}×${p.pilot.repetitions}`,
        `±${p.minimumDetectable.toFixed(3)}`,
        ...p.needed.map((n) => formatCount(n.tasks)),
        p.available === null ? dash : formatCount(p.available)
      ])
    }).split("\n").map((l) => `  ${l}`).join("\n"),
    ...plans.filter((p) => p.tooFewTasks).map((p) =>
      `  ${p.benchmark}: ${p.a} against ${p.b} needs at least ${p.floorTasks} tasks even with endless repetitions; the benchmark has ${p.available}: it cannot detect ${detect}`
    )
  ]
  return lines.join("\n") + "\n"
}

// ---------------------------------------------------------------------------------------------
// Markdown

const markdownCell = (text: string): string => text.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\r?\n/g, " ")

const markdownTable = (table: Table): string => {
  const row = (cells: ReadonlyArray<string>) => `| ${cells.map(markdownCell).join(" | ")} |`
  const rule = `|${table.align.map((a) => (a === "right" ? " ---: " : " --- ")).join("|")}|`
  return [row(table.headers), rule, ...table.rows.map(row)].join("\n")
}

/** Markdown (GitHub flavour): a heading and a table per benchmark stratum. */
export const renderMarkdown = (report: Report): string => {
  const out: Array<string> = []
  out.push(`# assay report ${markdownCell(report.runId)}`, "")
  out.push(`- experiment: \`${report.experimentId}\``)
  out.push(`- home: \`${report.home}\``)
  out.push(`- cells: ${formatCells(report.cells)}`)
  if (report.wallSeconds !== undefined) out.push(`- time: ${timeLine(report)}`)
  out.push(`- faults: ${markdownCell(formatFaultSpec(report.faults))}`)
  if (report.harnesses !== undefined) out.push(`- agent CLIs: ${markdownCell(formatHarnesses(report.harnesses))}`)
  if (report.spend !== undefined) out.push(`- spend: ${markdownCell(formatSpend(report.spend))}`)
  for (const warning of report.warnings ?? []) out.push("", `> **Warning:** ${markdownCell(warning)}`)
  for (const benchmark of benchmarksOf(report.scorecards)) {
    out.push("", `## ${markdownCell(benchmark)}`)
    for (const stratum of strataOf(report.scorecards, benchmark)) {
      out.push(
        "",
        `### ${markdownCell(stratum === null ? "Whole benchmark" : stratum)}`,
        "",
        markdownTable(scorecardTable(cardsOf(report.scorecards, benchmark, stratum)))
      )
    }
    const noise = noiseTable(wholeOf(report.scorecards, benchmark))
    if (noise.rows.length > 0) out.push("", "### Noise floor", "", markdownTable(noise), "", markdownCell(noiseCaption))
    const failures = failuresOf(report.scorecards, benchmark)
    if (failures.checks.length > 0) out.push("", "### Failures per check", "", markdownTable(failureTable(failures)))
    for (const [title, table, caption] of judgeSections(report.judges, benchmark)) {
      out.push("", `### ${title[0]!.toUpperCase()}${title.slice(1)}`, "", markdownTable(table), "", markdownCell(caption))
    }
    out.push("", `Score–cost frontier: ${markdownCell(frontierLine(wholeOf(report.scorecards, benchmark)))}`)
  }
  if (report.comparisons.length > 0) {
    out.push("", "## Paired comparisons", "", markdownTable(comparisonTable(report.comparisons)), "", ...comparisonLines(report.comparisons).map((l) => `- ${markdownCell(l)}`))
  }
  if ((report.outages ?? []).length > 0) {
    out.push("", "## Outages", "", markdownCell(outageLine(report.outages ?? [])), "", markdownTable(outageTable(report.outages ?? [])))
  }
  const faulted = faultRows(report.faults)
  if (faulted.length > 0) out.push("", "## Faults per candidate", "", markdownTable(faultTable(faulted)))
  if ((report.skipped ?? []).length > 0) out.push("", "## Skipped cells", "", markdownTable(skippedTable(report.skipped ?? [])))
  if (report.recommendation !== undefined) {
    const rec = report.recommendation
    out.push("", "## Recommendation", "", ...recommendationLines(rec).map((l) => `- ${markdownCell(l)}`))
    if (standingTable(rec).rows.length > 0) out.push("", markdownTable(standingTable(rec)))
  }
  if ((report.notes ?? []).length > 0) out.push("", "## Notes", "", ...(report.notes ?? []).map((n) => `- ${markdownCell(n)}`))
  return out.join("\n") + "\n"
}

// ---------------------------------------------------------------------------------------------
// HTML with SVG plots

export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c)

/** Colour-blind-safe colours (Okabe–Ito first), one per candidate across every plot. */
const palette = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#8C564B", "#7F7F7F", "#BCBD22", "#17BECF"]

const num = (x: number): string => (Math.round(x * 100) / 100).toString()

/** Up to about six round tick values covering [0, max]. */
const ticks = (max: number): ReadonlyArray<number> => {
  if (!(max > 0)) return [0, 1]
  const raw = max / 5
  const magnitude = 10 ** Math.floor(Math.log10(raw))
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude
  const out: Array<number> = []
  for (let t = 0; t <= max + step * 1e-9; t += step) out.push(Math.round(t / step) * step)
  if ((out[out.length - 1] ?? 0) < max) out.push(out.length * step)
  return out
}

const truncate = (text: string, max: number): string => ([...text].length > max ? [...text].slice(0, max - 1).join("") + "…" : text)

const labelWidth = (labels: ReadonlyArray<string>, maxChars = 36): number =>
  Math.max(80, ...labels.map((l) => Math.min(width(l), maxChars) * 7 + 16))

const svgOpen = (w: number, h: number, label: string): string =>
  `<svg viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="${escapeHtml(label)}"><title>${escapeHtml(label)}</title>`

const svgText = (x: number, y: number, text: string, attrs = ""): string =>
  `<text x="${num(x)}" y="${num(y)}"${attrs ? " " + attrs : ""}>${escapeHtml(text)}</text>`

/** Dot-and-whisker rows: a value with its interval per row, on a shared axis. */
const intervalPlot = (
  title: string,
  rows: ReadonlyArray<{ readonly label: string; readonly value: number; readonly interval: Interval; readonly color: string; readonly note: string }>,
  domain: readonly [number, number],
  axisLabel: string,
  zeroLine: boolean,
  maxLabel = 36
): string => {
  const left = labelWidth(rows.map((r) => r.label), maxLabel)
  const plotWidth = 440
  const right = 170
  const rowHeight = 28
  const top = 16
  const w = left + plotWidth + right
  const h = top + rows.length * rowHeight + 44
  const [d0, d1] = domain
  const x = (v: number) => left + ((Math.min(d1, Math.max(d0, v)) - d0) / (d1 - d0 || 1)) * plotWidth
  const parts: Array<string> = [svgOpen(w, h, title)]
  const axisY = top + rows.length * rowHeight + 4
  const span = d1 - d0
  const step = span <= 1 ? 0.25 : ticks(span)[1] ?? span
  for (let t = Math.ceil(d0 / step) * step; t <= d1 + 1e-9; t += step) {
    const tx = x(t)
    parts.push(`<line class="grid" x1="${num(tx)}" y1="${top - 6}" x2="${num(tx)}" y2="${axisY}"/>`)
    parts.push(svgText(tx, axisY + 16, formatTick(t), `class="tick" text-anchor="middle"`))
  }
  if (zeroLine && d0 < 0 && d1 > 0) parts.push(`<line class="zero" x1="${num(x(0))}" y1="${top - 6}" x2="${num(x(0))}" y2="${axisY}"/>`)
  parts.push(svgText(left + plotWidth / 2, axisY + 34, axisLabel, `class="axis" text-anchor="middle"`))
  rows.forEach((row, i) => {
    const cy = top + i * rowHeight + rowHeight / 2
    parts.push(`<g class="row">`)
    parts.push(svgText(left - 10, cy + 4, truncate(row.label, maxLabel), `class="label" text-anchor="end"`))
    parts.push(
      `<line class="whisker" x1="${num(x(row.interval[0]))}" y1="${num(cy)}" x2="${num(x(row.interval[1]))}" y2="${num(cy)}" stroke="${row.color}"/>`
    )
    for (const end of row.interval) {
      parts.push(`<line class="whisker" x1="${num(x(end))}" y1="${num(cy - 6)}" x2="${num(x(end))}" y2="${num(cy + 6)}" stroke="${row.color}"/>`)
    }
    parts.push(`<circle cx="${num(x(row.value))}" cy="${num(cy)}" r="5" fill="${row.color}"><title>${escapeHtml(`${row.label}: ${row.note}`)}</title></circle>`)
    parts.push(svgText(left + plotWidth + 12, cy + 4, row.note, `class="value"`))
    parts.push(`</g>`)
  })
  parts.push(`</svg>`)
  return parts.join("")
}

const formatTick = (t: number): string => {
  const rounded = Math.round(t * 1e6) / 1e6
  return Number.isInteger(rounded) ? rounded.toString() : rounded.toString().replace(/^0\./, "0.").replace(/^-0\./, "−0.")
}

const scorePlot = (cards: ReadonlyArray<Scorecard>, colorOf: (c: string) => string, benchmark: string): string =>
  intervalPlot(
    `Mean reward with its 95% interval per candidate, ${benchmark}`,
    cards.map((c) => ({
      label: c.candidate,
      value: c.meanReward,
      interval: c.interval,
      color: colorOf(c.candidate),
      note: `${formatScore(c.meanReward)} ${formatInterval(c.interval)}`
    })),
    [0, 1],
    "mean reward (95% interval)",
    false
  )

/** Score against list-price cost, the frontier drawn as a staircase; unknown costs listed apart. */
const costPlot = (cards: ReadonlyArray<Scorecard>, colorOf: (c: string) => string, benchmark: string): string => {
  const known = cards.filter((c): c is Scorecard & { readonly costUsd: number } => c.costUsd !== null && isNumber(c.costUsd))
  const unknown = cards.filter((c) => c.costUsd === null)
  const onFrontier = new Set(frontierOf(cards).map((c) => c.candidate))
  const left = 56
  const plotWidth = 560
  const plotHeight = 300
  const top = 16
  const right = 200
  const w = left + plotWidth + right
  const h = top + plotHeight + 48
  const costTicks = ticks(Math.max(0, ...known.map((c) => c.costUsd)))
  const maxCost = costTicks[costTicks.length - 1] ?? 1
  const x = (cost: number) => left + (cost / maxCost) * plotWidth
  const y = (score: number) => top + (1 - Math.min(1, Math.max(0, score))) * plotHeight
  const parts: Array<string> = [svgOpen(w, h, `Mean reward against list-price cost, ${benchmark}`)]
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    parts.push(`<line class="grid" x1="${left}" y1="${num(y(t))}" x2="${left + plotWidth}" y2="${num(y(t))}"/>`)
    parts.push(svgText(left - 8, y(t) + 4, formatTick(t), `class="tick" text-anchor="end"`))
  }
  for (const t of costTicks) {
    parts.push(`<line class="grid" x1="${num(x(t))}" y1="${top}" x2="${num(x(t))}" y2="${top + plotHeight}"/>`)
    parts.push(svgText(x(t), top + plotHeight + 16, `$${formatTick(t)}`, `class="tick" text-anchor="middle"`))
  }
  parts.push(svgText(left + plotWidth / 2, top + plotHeight + 36, "list-price cost (USD)", `class="axis" text-anchor="middle"`))
  parts.push(
    svgText(14, top + plotHeight / 2, "mean reward", `class="axis" text-anchor="middle" transform="rotate(-90 14 ${num(top + plotHeight / 2)})"`)
  )
  const steps = known.filter((c) => onFrontier.has(c.candidate)).sort((p, q) => p.costUsd - q.costUsd)
  if (steps.length > 0) {
    const points: Array<string> = []
    steps.forEach((c, i) => {
      const previous = steps[i - 1]
      if (previous !== undefined) points.push(`${num(x(c.costUsd))},${num(y(previous.meanReward))}`)
      points.push(`${num(x(c.costUsd))},${num(y(c.meanReward))}`)
    })
    const last = steps[steps.length - 1]
    if (last !== undefined) points.push(`${left + plotWidth},${num(y(last.meanReward))}`)
    parts.push(`<polyline class="frontier" points="${points.join(" ")}"/>`)
  }
  for (const c of known) {
    const cx = x(c.costUsd)
    const cy = y(c.meanReward)
    const note = `${c.candidate}: ${formatScore(c.meanReward)} at ${formatCost(c.costUsd)}${onFrontier.has(c.candidate) ? " (frontier)" : ""}`
    if (onFrontier.has(c.candidate)) parts.push(`<circle class="on-frontier" cx="${num(cx)}" cy="${num(cy)}" r="9"/>`)
    parts.push(`<circle cx="${num(cx)}" cy="${num(cy)}" r="5" fill="${colorOf(c.candidate)}"><title>${escapeHtml(note)}</title></circle>`)
  }
  // Labels in the right margin at their points' heights, pushed apart so that none overlap.
  const labelGap = 16
  const labelled = [...known].sort((p, q) => y(p.meanReward) - y(q.meanReward))
  const labelY: Array<number> = []
  labelled.forEach((c, i) => {
    labelY.push(Math.max(y(c.meanReward), (labelY[i - 1] ?? Number.NEGATIVE_INFINITY) + labelGap))
  })
  const overflow = (labelY[labelY.length - 1] ?? 0) - (top + plotHeight + 24)
  for (let i = labelY.length - 1; i >= 0 && overflow > 0; i--) {
    labelY[i] = Math.min(labelY[i] ?? 0, (labelY[i + 1] ?? top + plotHeight + 24 + labelGap) - labelGap)
  }
  labelled.forEach((c, i) => {
    const ly = labelY[i] ?? y(c.meanReward)
    const tag = onFrontier.has(c.candidate) ? " ★" : c.reference === true ? " (reference)" : ""
    parts.push(
      `<polyline class="leader" points="${num(x(c.costUsd) + 6)},${num(y(c.meanReward))} ${left + plotWidth + 4},${num(y(c.meanReward))} ${left + plotWidth + 10},${num(ly)}" stroke="${colorOf(c.candidate)}"/>`
    )
    parts.push(svgText(left + plotWidth + 14, ly + 4, truncate(`${c.candidate}${tag}`, 30), `class="label"`))
  })
  if (known.length === 0) {
    parts.push(svgText(left + plotWidth / 2, top + plotHeight / 2, "no candidate has a known cost", `class="empty" text-anchor="middle"`))
  }
  parts.push(`</svg>`)
  // The caption names the staircase only when one is drawn: scripted references and unknown costs are never on it.
  const legend = `<p class="caption">${
    steps.length > 0
      ? "★ on the score–cost frontier (dashed staircase): no other candidate scores higher for less."
      : "No frontier drawn: no candidate with a known cost is on it (scripted references such as gold and echo are left out)."
  }${unknown.length > 0 ? ` Cost unknown, not placed: ${unknown.map((c) => escapeHtml(c.candidate)).join(", ")}.` : ""}</p>`
  return parts.join("") + legend
}

/** Grouped horizontal bars: for each check, one bar per candidate with its failure count. */
const failurePlot = (failures: ReturnType<typeof failuresOf>, colorOf: (c: string) => string, benchmark: string): string => {
  const candidates = failures.byCandidate
  const left = labelWidth(failures.checks)
  const plotWidth = 440
  const barHeight = 12
  const groupGap = 14
  // The legend wraps onto rows as wide as the plot.
  const legend = { items: [] as Array<{ candidate: string; x: number; row: number }>, rows: 1 }
  let lx = left
  for (const [candidate] of candidates) {
    const itemWidth = Math.min(30, width(candidate)) * 6.5 + 30
    if (lx > left && lx + itemWidth > left + plotWidth + 60) {
      lx = left
      legend.rows += 1
    }
    legend.items.push({ candidate, x: lx, row: legend.rows - 1 })
    lx += itemWidth
  }
  const top = 14 + legend.rows * 18
  const groupHeight = candidates.length * barHeight + groupGap
  const w = left + plotWidth + 60
  const h = top + failures.checks.length * groupHeight + 40
  const max = Math.max(1, ...candidates.flatMap(([, counts]) => [...counts.values()]))
  const axis = ticks(max)
  const domain = axis[axis.length - 1] ?? max
  const x = (v: number) => left + (v / domain) * plotWidth
  const parts: Array<string> = [svgOpen(w, h, `Failures per check and candidate, ${benchmark}`)]
  legend.items.forEach(({ candidate, x: lx, row }) => {
    parts.push(`<rect x="${num(lx)}" y="${6 + row * 18}" width="10" height="10" fill="${colorOf(candidate)}"/>`)
    parts.push(svgText(lx + 14, 15 + row * 18, truncate(candidate, 30), `class="legend"`))
  })
  const axisY = top + failures.checks.length * groupHeight
  for (const t of axis) {
    if (!Number.isInteger(t)) continue
    parts.push(`<line class="grid" x1="${num(x(t))}" y1="${top - 4}" x2="${num(x(t))}" y2="${axisY}"/>`)
    parts.push(svgText(x(t), axisY + 16, formatTick(t), `class="tick" text-anchor="middle"`))
  }
  parts.push(svgText(left + plotWidth / 2, axisY + 34, "cells failing the check", `class="axis" text-anchor="middle"`))
  failures.checks.forEach((check, g) => {
    const gy = top + g * groupHeight
    parts.push(svgText(left - 10, gy + (candidates.length * barHeight) / 2 + 4, truncate(check, 36), `class="label" text-anchor="end"`))
    candidates.forEach(([candidate, counts], i) => {
      const count = counts.get(check) ?? 0
      const by = gy + i * barHeight
      parts.push(
        `<rect x="${left}" y="${num(by + 1)}" width="${num(Math.max(0, x(count) - left))}" height="${barHeight - 2}" fill="${colorOf(candidate)}"><title>${escapeHtml(`${candidate}, ${check}: ${count}`)}</title></rect>`
      )
      parts.push(svgText(x(count) + 4, by + barHeight - 2, formatCount(count), `class="count"`))
    })
  })
  parts.push(`</svg>`)
  return parts.join("")
}

const htmlTable = (table: Table, colorOf?: (c: string) => string): string => {
  const head = table.headers.map((h, i) => `<th class="${table.align[i] ?? "left"}">${escapeHtml(h)}</th>`).join("")
  const body = table.rows
    .map((row) => {
      const cells = row.map((cell, i) => {
        const swatch = i === 0 && colorOf !== undefined ? `<span class="swatch" style="background:${colorOf(cell)}"></span>` : ""
        const unknown = cell === "unknown" ? " unknown" : ""
        return `<td class="${table.align[i] ?? "left"}${unknown}">${swatch}${escapeHtml(cell)}</td>`
      })
      return `<tr>${cells.join("")}</tr>`
    })
    .join("\n")
  return `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`
}

const css = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #5b6570; --rule: #d8dde3; --panel: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: #fff; }
h1 { font-size: 22px; margin: 0 0 8px; }
h2 { font-size: 18px; margin: 32px 0 8px; padding-top: 12px; border-top: 2px solid var(--rule); }
h3 { font-size: 15px; margin: 20px 0 6px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0 0 12px; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; word-break: break-all; }
.cells { display: flex; flex-wrap: wrap; gap: 8px; margin: 8px 0 16px; padding: 0; list-style: none; }
.cells li { background: var(--panel); border: 1px solid var(--rule); border-radius: 6px; padding: 4px 10px; }
.cells b { font-variant-numeric: tabular-nums; }
.warning { background: #fff4e5; border: 1px solid #f0b45b; border-radius: 6px; padding: 8px 12px; margin: 8px 0; }
figure { margin: 12px 0 20px; }
figcaption { font-weight: 600; margin-bottom: 4px; }
svg { max-width: 100%; height: auto; display: block; font-size: 12px; }
svg .grid { stroke: #e6e9ed; stroke-width: 1; }
svg .zero { stroke: #8a939c; stroke-width: 1.5; stroke-dasharray: 4 3; }
svg .tick, svg .axis, svg .count { fill: var(--muted); }
svg .axis { font-size: 12px; }
svg .label, svg .value, svg .legend { fill: var(--ink); }
svg .value { font-variant-numeric: tabular-nums; }
svg .whisker { stroke-width: 2.5; }
svg .frontier { fill: none; stroke: #444; stroke-width: 1.5; stroke-dasharray: 6 4; }
svg .on-frontier { fill: none; stroke: #222; stroke-width: 1.5; }
svg .leader { fill: none; stroke-width: 1; stroke-dasharray: 1 3; opacity: 0.8; }
svg .empty { fill: var(--muted); font-style: italic; }
.caption { color: var(--muted); margin: 4px 0 0; font-size: 13px; }
table { border-collapse: collapse; margin: 6px 0 16px; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--rule); white-space: nowrap; }
th { background: var(--panel); font-weight: 600; }
.right { text-align: right; }
.left { text-align: left; }
td.unknown { color: var(--muted); font-style: italic; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; vertical-align: baseline; }
.notes { color: var(--muted); }
`

/**
 * One self-contained HTML file: inline CSS and inline SVG, no script, no font or anything else
 * fetched, so it opens offline and can be mailed or archived as it is.
 */
export const renderHtml = (report: Report): string =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>assay report ${escapeHtml(report.runId)}</title>
<style>${css}</style>
</head>
<body>
${renderHtmlBody(report)}
</body>
</html>
`

/** The report's stylesheet, for a page that shows the report's sections (assay view). */
export const htmlCss = css

/** The HTML report's sections without the page around them: what `assay view` shows of a run. */
/**
 * The report's body. A page that shows the run's facts itself (the viewer) leaves out the title and
 * facts (`header: false`) and the cost plot of a benchmark where no candidate has a known cost
 * (`emptyPlots: false`); the report file keeps both.
 */
export const renderHtmlBody = (report: Report, options: { readonly header?: boolean; readonly emptyPlots?: boolean } = {}): string => {
  const candidates = candidatesOf(report)
  const colorOf = (candidate: string): string => palette[candidates.indexOf(candidate) % palette.length] ?? "#444"
  const body: Array<string> = []
  if (options.header !== false) body.push(`<h1>assay report</h1>`)
  if (options.header !== false) body.push(
    `<dl class="meta"><dt>run</dt><dd>${escapeHtml(report.runId)}</dd><dt>experiment</dt><dd>${escapeHtml(
      report.experimentId
    )}</dd><dt>home</dt><dd>${escapeHtml(report.home)}</dd><dt>faults</dt><dd>${escapeHtml(formatFaultSpec(report.faults))}</dd>${
      report.harnesses !== undefined ? `<dt>agent CLIs</dt><dd>${escapeHtml(formatHarnesses(report.harnesses))}</dd>` : ""
    }${
      report.spend !== undefined ? `<dt>spend</dt><dd>${escapeHtml(formatSpend(report.spend))}</dd>` : ""
    }</dl>`
  )
  const c = report.cells
  body.push(
    `<ul class="cells">${(
      [
        ["total", c.total],
        ["ran", c.ran],
        ["kept", c.kept],
        ["stale", c.stale],
        ["skipped", c.skipped],
        ["faulted", c.faulted]
      ] as const
    )
      .map(([name, count]) => `<li>${name} <b>${formatCount(count)}</b></li>`)
      .join("")}</ul>`
  )
  for (const warning of report.warnings ?? []) body.push(`<p class="warning"><strong>Warning:</strong> ${escapeHtml(warning)}</p>`)
  for (const benchmark of benchmarksOf(report.scorecards)) {
    body.push(`<section class="benchmark"><h2>${escapeHtml(benchmark)}</h2>`)
    const whole = wholeOf(report.scorecards, benchmark)
    if (whole.length > 0) {
      body.push(`<figure class="plot score"><figcaption>Mean reward and 95% interval</figcaption>${scorePlot(whole, colorOf, benchmark)}</figure>`)
      if (options.emptyPlots !== false || whole.some((c) => c.costUsd !== null && isNumber(c.costUsd))) {
        body.push(`<figure class="plot cost"><figcaption>Score against cost</figcaption>${costPlot(whole, colorOf, benchmark)}</figure>`)
      }
    }
    const failures = failuresOf(report.scorecards, benchmark)
    if (failures.checks.length > 0) {
      body.push(`<figure class="plot failures"><figcaption>Failures per check</figcaption>${failurePlot(failures, colorOf, benchmark)}</figure>`)
    }
    for (const stratum of strataOf(report.scorecards, benchmark)) {
      body.push(
        `<h3>${escapeHtml(stratum === null ? "Whole benchmark" : `Stratum: ${stratum}`)}</h3>`,
        htmlTable(scorecardTable(cardsOf(report.scorecards, benchmark, stratum)), colorOf)
      )
    }
    const noise = noiseTable(whole)
    if (noise.rows.length > 0) body.push(`<h3>Noise floor</h3>`, htmlTable(noise, colorOf), `<p class="caption">${escapeHtml(noiseCaption)}</p>`)
    if (failures.checks.length > 0) body.push(`<h3>Failures per check</h3>`, htmlTable(failureTable(failures)))
    for (const [title, table, caption] of judgeSections(report.judges, benchmark)) {
      body.push(`<h3>${escapeHtml(`${title[0]!.toUpperCase()}${title.slice(1)}`)}</h3>`, htmlTable(table), `<p class="caption">${escapeHtml(caption)}</p>`)
    }
    body.push(`</section>`)
  }
  if (report.comparisons.length > 0) {
    const all = report.comparisons
    const lo = Math.min(-0.25, ...all.map((x) => x.interval[0]))
    const hi = Math.max(0.25, ...all.map((x) => x.interval[1]))
    const bound = Math.min(1, Math.ceil(Math.max(-lo, hi) * 4) / 4)
    body.push(`<section class="comparisons"><h2>Paired comparisons</h2>`)
    body.push(
      `<figure class="plot comparisons"><figcaption>Difference of mean reward, a − b, on the cells both have</figcaption>${intervalPlot(
        "Paired differences of mean reward with 95% intervals",
        all.map((x) => ({
          label: `${x.a} − ${x.b}${x.benchmark === undefined ? "" : ` (${x.benchmark}${x.stratum ? `/${x.stratum}` : ""})`}`,
          value: x.difference,
          interval: x.interval,
          color: colorOf(x.a),
          note: `${formatSigned(x.difference)} ${formatInterval(x.interval, true)}`
        })),
        [-bound, bound],
        "a − b (95% paired bootstrap interval)",
        true,
        64
      )}</figure>`
    )
    body.push(htmlTable(comparisonTable(all)), ...comparisonLines(all).map((l) => `<p class="caption">${escapeHtml(l)}</p>`), `</section>`)
  }
  if ((report.outages ?? []).length > 0) {
    const outages = report.outages ?? []
    body.push(`<section class="outages"><h2>Outages</h2><p>${escapeHtml(outageLine(outages))}</p>`, htmlTable(outageTable(outages)), `</section>`)
  }
  const faulted = faultRows(report.faults)
  if (faulted.length > 0) body.push(`<section class="faults"><h2>Faults per candidate</h2>`, htmlTable(faultTable(faulted), colorOf), `</section>`)
  if ((report.skipped ?? []).length > 0) {
    body.push(`<section class="skipped"><h2>Skipped cells</h2>`, htmlTable(skippedTable(report.skipped ?? [])), `</section>`)
  }
  if (report.recommendation !== undefined) {
    const rec = report.recommendation
    body.push(`<section class="recommendation"><h2>Recommendation</h2><ul>${recommendationLines(rec).map((l) => `<li>${escapeHtml(l)}</li>`).join("")}</ul>`)
    if (standingTable(rec).rows.length > 0) body.push(htmlTable(standingTable(rec)))
    body.push(`</section>`)
  }
  if ((report.notes ?? []).length > 0) {
    body.push(`<section class="notes"><h2>Notes</h2><ul>${(report.notes ?? []).map((n) => `<li>${escapeHtml(n)}</li>`).join("")}</ul></section>`)
  }
  return body.join("\n")
}
