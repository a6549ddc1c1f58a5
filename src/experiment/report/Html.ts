/** The report as one self-contained HTML file with SVG plots, and its body for `assay view`. */
import type { Interval, Report, Scorecard } from "../../schema/Report.ts"
import { benchmarksOf, cliUsageCaption, cliUsageOf, cliUsageTable, candidatesOf, cardsOf, comparisonLines, comparisonTable, failureTable, failuresOf, faultRows, faultTable, formatCost, formatCount, formatFaultSpec, formatHarnesses, formatInterval, formatScore, formatSigned, frontierOf, isNumber, judgeSections, noiseCaption, noiseTable, outageLine, outageTable, recommendationLines, scorecardTable, skippedTable, standingTable, strataOf, timeLine, wholeOf, width, type Table } from "./Layout.ts"
import { formatSpend } from "./Text.ts"

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
  rows: ReadonlyArray<{ readonly label: string; readonly value: number; readonly interval: Interval | null; readonly color: string; readonly note: string }>,
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
    // No interval (one task): the dot alone.
    if (row.interval !== null) {
      parts.push(
        `<line class="whisker" x1="${num(x(row.interval[0]))}" y1="${num(cy)}" x2="${num(x(row.interval[1]))}" y2="${num(cy)}" stroke="${row.color}"/>`
      )
      for (const end of row.interval) {
        parts.push(`<line class="whisker" x1="${num(x(end))}" y1="${num(cy - 6)}" x2="${num(x(end))}" y2="${num(cy + 6)}" stroke="${row.color}"/>`)
      }
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

/**
 * The HTML report's sections without the page around them (what `assay view` shows of a run). A page that shows the run's facts itself (the viewer) leaves out the title and
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
    }${report.wallSeconds !== undefined ? `<dt>time</dt><dd>${escapeHtml(timeLine(report))}</dd>` : ""}</dl>`
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
    const lo = Math.min(-0.25, ...all.map((x) => x.interval?.[0] ?? x.difference))
    const hi = Math.max(0.25, ...all.map((x) => x.interval?.[1] ?? x.difference))
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
        "a − b (95% sign-flip interval over tasks)",
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
  if (cliUsageOf(report).length > 0) {
    body.push(`<section class="cli-usage"><h2>Agent CLIs' own usage</h2>`, htmlTable(cliUsageTable(cliUsageOf(report))), `<p class="caption">${escapeHtml(cliUsageCaption)}</p>`, `</section>`)
  }
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
