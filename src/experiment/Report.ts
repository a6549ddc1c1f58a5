/**
 * The report of a run: the store query that completes an older stored report, the frontiers, and
 * the renderers (aligned text, Markdown, one self-contained HTML file with SVG plots; each in a
 * module of its own under report/, over report/Layout.ts). The document itself (its schemas and
 * JSON) is src/schema/Report.ts. Rendering is pure: the same report gives the same bytes, so a
 * report re-rendered from the store is identical to the one printed by the run.
 */
import { Effect } from "effect"
import type { FrontierEntry, Report, Scorecard } from "../schema/Report.ts"
import { cellResults as cellResultsOf } from "./Scorecards.ts"
import { benchmarksOf, frontierOf, wholeOf } from "./report/Layout.ts"
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

// The renderers, each in a module of its own under report/.
export { formatCost, formatCount, formatFaultSpec, formatHarnesses, formatInterval, formatP, formatPercent, formatScore, formatSeconds, formatSigned } from "./report/Layout.ts"
export { formatSpend, renderNoise, renderPower, renderText } from "./report/Text.ts"
export { renderMarkdown } from "./report/Markdown.ts"
export { escapeHtml, htmlCss, renderHtml, renderHtmlBody } from "./report/Html.ts"
