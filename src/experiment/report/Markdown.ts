/** The report as Markdown. */
import type { Report } from "../../schema/Report.ts"
import { benchmarksOf, cliUsageCaption, cliUsageOf, cliUsageTable, cardsOf, comparisonLines, comparisonTable, failureTable, failuresOf, faultRows, faultTable, formatCells, formatFaultSpec, formatHarnesses, frontierLine, judgeSections, noiseCaption, noiseTable, outageLine, outageTable, recommendationLines, scorecardTable, skippedTable, standingTable, strataOf, timeLine, wholeOf, type Table } from "./Layout.ts"
import { formatSpend } from "./Text.ts"

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
  if (cliUsageOf(report).length > 0) out.push("", "## Agent CLIs' own usage", "", markdownTable(cliUsageTable(cliUsageOf(report))), "", markdownCell(cliUsageCaption))
  if ((report.skipped ?? []).length > 0) out.push("", "## Skipped cells", "", markdownTable(skippedTable(report.skipped ?? [])))
  if (report.recommendation !== undefined) {
    const rec = report.recommendation
    out.push("", "## Recommendation", "", ...recommendationLines(rec).map((l) => `- ${markdownCell(l)}`))
    if (standingTable(rec).rows.length > 0) out.push("", markdownTable(standingTable(rec)))
  }
  if ((report.notes ?? []).length > 0) out.push("", "## Notes", "", ...(report.notes ?? []).map((n) => `- ${markdownCell(n)}`))
  return out.join("\n") + "\n"
}
