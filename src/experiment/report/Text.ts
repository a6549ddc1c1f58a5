/** The report as aligned plain text for a terminal, and `assay noise` / `plan --detect`'s tables. */
import type { NoiseFloor, Report, Spend } from "../../schema/Report.ts"
import { benchmarksOf, cliUsageCaption, cliUsageOf, cliUsageTable, cardsOf, comparisonLines, comparisonTable, dash, failureTable, failuresOf, faultRows, faultTable, formatCells, formatCount, formatFaultSpec, formatHarnesses, frontierLine, judgeSections, noiseAlign, noiseCaption, noiseHeaders, noiseRow, noiseTable, outageLine, outageTable, recommendationLines, scorecardTable, skippedTable, standingTable, strataOf, stratumTitle, textTable, timeLine, wholeOf, type Align } from "./Layout.ts"

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
  if (cliUsageOf(report).length > 0) out.push("", "agent CLIs' own usage", textTable(cliUsageTable(cliUsageOf(report))), "", cliUsageCaption)
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
    readonly minimumDetectable: number | null
    readonly needed: ReadonlyArray<{ readonly repetitions: number; readonly tasks: number | null }>
    readonly available: number | null
    readonly floorTasks: number | null
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
        p.minimumDetectable === null ? dash : `±${p.minimumDetectable.toFixed(3)}`,
        ...p.needed.map((n) => (n.tasks === null ? dash : formatCount(n.tasks))),
        p.available === null ? dash : formatCount(p.available)
      ])
    }).split("\n").map((l) => `  ${l}`).join("\n"),
    ...plans.filter((p) => p.tooFewTasks).map((p) =>
      `  ${p.benchmark}: ${p.a} against ${p.b} needs at least ${p.floorTasks} tasks even with endless repetitions; the benchmark has ${p.available}: it cannot detect ${detect}`
    ),
    ...plans.filter((p) => p.floorTasks === null).map((p) =>
      `  ${p.benchmark}: ${p.a} against ${p.b}: the pilot's per-task differences do not vary at all, so there is no variance to size a plan from (a larger pilot, or --like a run that varies)`
    ),
    ...(plans.some((p) => p.minimumDetectable === null && p.floorTasks !== null)
      ? [`  detectable now: — where the pilot's differences do not vary or it has fewer than 6 tasks (no p can reach 5%); no plan asks for fewer than 6 tasks`]
      : [])
  ]
  return lines.join("\n") + "\n"
}
