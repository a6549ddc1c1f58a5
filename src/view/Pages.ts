/**
 * The viewer's pages, rendered on the server as HTML with inline SVG (the report's own plots and
 * tables, from Report.ts). Every page reads without JavaScript; the viewer's one script
 * (Script.ts) sorts, filters and searches a run's cells, folds transcripts, and follows a running
 * run; the runs list refreshes its `data-live` part with `liveScript`.
 */
import {
  escapeHtml,
  formatCost,
  formatCount,
  formatFaultSpec,
  formatInterval,
  formatP,
  formatPercent,
  formatScore,
  formatSigned,
  formatSpend,
  htmlCss,
  renderHtmlBody,
  type Report
} from "../experiment/Report.ts"
import type { StoredAttempt } from "../experiment/Store.ts"
import { SESSION_ENDED_KIND } from "../schema/Attempt.ts"
import { type CallStep, type CellRow, type Comparison, type Pair, type Progress, type RunBrief, timelineOf, transcriptOf } from "./Data.ts"

const h = escapeHtml

const viewerCss = `
body { padding-top: 12px; }
nav.top { display: flex; gap: 18px; align-items: baseline; padding: 0 0 10px; margin-bottom: 14px; border-bottom: 1px solid var(--rule); }
nav.top b { font-size: 16px; }
nav.top a { color: #0b5cad; text-decoration: none; }
a { color: #0b5cad; }
.state { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; border: 1px solid var(--rule); background: var(--panel); }
.state.running { background: #e7f1ff; border-color: #7aa7e0; }
.state.finished { background: #e9f7ef; border-color: #6fbf8e; }
.state.stopped, .state.stopped-by-preflight { background: #fff4e5; border-color: #f0b45b; }
table.matrix td.cell { text-align: center; min-width: 54px; }
td.pass { background: #dff3e6; }
td.fail { background: #fbe3e1; }
td.ended { background: #fff0d6; }
td.missing { color: var(--muted); }
tr.differs td.left { font-weight: 600; }
.bar { width: 420px; height: 14px; background: var(--panel); border: 1px solid var(--rule); border-radius: 7px; overflow: hidden; }
.bar span { display: block; height: 100%; background: #0072B2; }
.msg { border: 1px solid var(--rule); border-radius: 6px; padding: 6px 10px; margin: 6px 0; max-width: 980px; }
.msg .role { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; }
.msg.user { background: #f6f8fa; }
.msg.assistant { background: #fff; }
.msg.tool { background: #fbfbf4; }
.msg.error { border-color: #e0837a; }
pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0; font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; }
tr.fault td { background: #fbe3e1; }
.ok { color: #1a7f37; font-weight: 600; }
.bad { color: #b42318; font-weight: 600; }
form.pick { margin: 8px 0 16px; }
form.pick fieldset { border: 1px solid var(--rule); border-radius: 6px; margin: 6px 0; }
header.run h1 { display: flex; gap: 12px; align-items: center; }
p.links { margin: 4px 0 0; }
section.block { margin-top: 8px; }
form.filters { display: flex; flex-wrap: wrap; gap: 6px 10px; align-items: end; margin: 6px 0 8px; padding: 8px 10px; background: var(--panel); border: 1px solid var(--rule); border-radius: 6px; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
form.filters input, form.filters select { font: inherit; font-size: 13px; padding: 2px 4px; min-width: 8em; }
form.filters input[name=q] { min-width: 16em; }
.cell-count { font-weight: 600; }
table.cells-table { width: 100%; }
table.cells-table th[data-sort] { cursor: pointer; user-select: none; }
table.cells-table th[aria-sort=ascending]::after { content: " ▲"; font-size: 10px; }
table.cells-table th[aria-sort=descending]::after { content: " ▼"; font-size: 10px; }
table.cells-table td.failed { white-space: normal; color: #b42318; }
.vbadge { font-size: 12px; padding: 0 6px; border-radius: 8px; }
.vbadge.pass { background: #dff3e6; }
.vbadge.fail, .vbadge.partial { background: #fbe3e1; }
.vbadge.ended { background: #fff0d6; }
td.partial { background: #fbe3e1; }
.pager { display: flex; gap: 10px; align-items: center; }
details.report > summary, details.fold > summary { cursor: pointer; font-weight: 600; margin: 24px 0 6px; font-size: 16px; }
.msg > summary { cursor: pointer; list-style: revert; }
.msg > summary .preview { color: var(--muted); font-weight: 400; margin-left: 8px; }
.msg .call { margin: 6px 0 2px; }
.call.same { opacity: 0.75; }
.call.diverge { outline: 2px solid #d55e00; outline-offset: 2px; }
.divergence { border-left: 4px solid #d55e00; background: #fff4e5; padding: 6px 10px; }
.toolbar { display: flex; gap: 8px; margin: 4px 0 8px; }
details.j { display: inline-block; vertical-align: top; }
details.j > summary { cursor: pointer; color: var(--muted); display: inline; }
.j-body { margin-left: 14px; border-left: 1px dotted var(--rule); padding-left: 8px; font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; }
.j-row { white-space: pre-wrap; word-break: break-word; }
.j-key { color: #6f42c1; }
.j-str { color: #0a6b2d; }
.j-num { color: #0b5cad; }
.j-lit { color: #b35900; }
.json { font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; margin: 4px 0; }
tr.check.failed td { background: #fdf0ef; }
table.expected td { vertical-align: top; white-space: normal; max-width: 520px; }
tr.fault.injected td { background: #fbe3e1; }
tr.fault.live td { background: #fff0d6; }
.timeline td { vertical-align: top; }
.grid2 { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; align-items: start; }
.grid2 > div { min-width: 0; }
.grid2 .msg { max-width: none; }
`

/** The page around a view: nav, the report's stylesheet, and the live script (only where asked). */
export const page = (title: string, body: string, options: { readonly live?: boolean } = {}): string =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'self'; connect-src 'self'">
<title>${h(title)} · assay view</title>
<style>${htmlCss}${viewerCss}</style>
${options.live === true ? `<script src="/static/live.js" defer></script>` : ""}<script src="/static/view.js" defer></script>
</head>
<body>
<nav class="top"><b>assay view</b><a href="/">Runs</a><a href="/compare">Compare</a><a href="/api/runs">JSON</a></nav>
${body}
</body>
</html>
`

/**
 * Refreshes every element with `data-live` and an id from the same page fetched again, every
 * `data-poll` milliseconds while the page has an element so marked (the runs list; a run that is writing).
 */
export const liveScript = `"use strict";
(function () {
  var polls = 0;
  var status = function (text) {
    var el = document.getElementById("live-status");
    if (el) el.textContent = text;
  };
  var every = function () {
    var el = document.querySelector("[data-poll]");
    return el ? Number(el.getAttribute("data-poll")) || 1000 : 0;
  };
  var tick = function () {
    if (every() === 0) return;
    fetch(location.href, { headers: { accept: "text/html" }, cache: "no-store" })
      .then(function (res) { return res.text(); })
      .then(function (text) {
        var fresh = new DOMParser().parseFromString(text, "text/html");
        document.querySelectorAll("[data-live]").forEach(function (el) {
          var next = fresh.getElementById(el.id);
          if (!next) return;
          // What the reader has checked stays checked across a refresh.
          var checked = {};
          el.querySelectorAll("input[type=checkbox]:checked").forEach(function (i) { checked[i.name + "=" + i.value] = true; });
          next.querySelectorAll("input[type=checkbox]").forEach(function (i) { if (checked[i.name + "=" + i.value]) i.checked = true; });
          el.replaceWith(document.importNode(next, true));
        });
        polls += 1;
        document.body.setAttribute("data-polls", String(polls));
        status("updated " + new Date().toLocaleTimeString());
      }, function (e) { status("the viewer did not answer (" + e + "); trying again"); })
      .then(function () { if (every() > 0) setTimeout(tick, every()); });
  };
  if (every() > 0) setTimeout(tick, every());
})();
`

const stateBadge = (state: string) => `<span class="state ${h(state.replace(/ /g, "-"))}">${h(state)}</span>`

const short = (id: string) => (id.startsWith("sha256:") ? `${id.slice(0, 19)}…` : id)

const time = (iso: string | null) => (iso === null ? "—" : h(iso.replace("T", " ").replace(/\.\d+Z$/, "Z")))

// ---------------------------------------------------------------------------------------------
// Runs

export const runsPage = (runs: ReadonlyArray<RunBrief>, home: string): string => {
  const running = runs.some((r) => r.state === "running")
  const rows = runs.map((r) =>
    `<tr data-run="${h(r.runId)}"><td class="left"><input type="checkbox" name="run" value="${h(r.runId)}" aria-label="compare ${h(r.runId)}"></td>` +
    `<td class="left"><a href="/runs/${h(r.runId)}">${h(r.runId)}</a></td><td class="left">${time(r.startedAt)}</td>` +
    `<td class="left">${stateBadge(r.state)}</td><td class="left" title="${h(r.experimentId)}">${h(short(r.experimentId))}</td>` +
    `<td class="left">${h(r.benchmarks.join(", "))}</td><td class="left">${h(r.candidates.join(", "))}</td>` +
    `<td class="right">${formatCount(r.cells.written)}${r.cells.kept !== null && r.cells.kept > 0 ? ` + ${formatCount(r.cells.kept)} kept` : ""} of ${formatCount(r.cells.total)}</td>` +
    `<td class="right">${formatCount(r.cells.skipped)}</td></tr>`
  )
  const table = runs.length === 0
    ? `<p>No run in this store yet: <code>assay run … --yes</code> writes one.</p>`
    : `<form class="pick" method="get" action="/compare"><table><thead><tr><th></th><th class="left">run</th><th class="left">started</th>` +
      `<th class="left">state</th><th class="left">experiment</th><th class="left">benchmarks</th><th class="left">candidates</th>` +
      `<th class="right">cells written</th><th class="right">skipped</th></tr></thead><tbody>\n${rows.join("\n")}\n</tbody></table>` +
      `<button type="submit">Compare the checked runs cell by cell</button></form>`
  return page(
    "Runs",
    `<h1>Runs</h1><p class="notes">Store: ${h(home)} · newest first</p>
<section id="runs" data-live data-poll="${running ? 1000 : 3000}"${running ? " data-running" : ""}>${table}${running ? `<p class="notes" id="live-status">a run is writing: this list refreshes</p>` : ""}</section>`,
    { live: true }
  )
}

// ---------------------------------------------------------------------------------------------
// A run

const cellClass = (c: CellRow) => (c.ended !== null ? "ended" : c.reward >= 1 ? "pass" : "fail")

const cellTitle = (c: CellRow) =>
  [
    `${c.candidate} on ${c.task}#${c.repetition}: reward ${formatScore(c.reward)}`,
    c.ended !== null ? `ended: ${c.ended}` : "",
    c.failed.length > 0 ? `failed: ${c.failed.join(", ")}` : "",
    c.faults > 0 ? `${c.faults} faults` : ""
  ].filter((x) => x !== "").join("; ")

const attemptHref = (c: { readonly runId: string; readonly id: string }) => `/runs/${encodeURIComponent(c.runId)}/attempts/${encodeURIComponent(c.id)}`

const cellLink = (c: CellRow) => {
  const text = c.ended !== null ? h(c.ended) : formatScore(c.reward)
  return c.attempt === null ? text : `<a class="attempt" href="${h(attemptHref(c.attempt))}">${text}</a>`
}

const pairHref = (a: { readonly runId: string; readonly id: string }, b: { readonly runId: string; readonly id: string }) =>
  `/pair?ra=${encodeURIComponent(a.runId)}&a=${encodeURIComponent(a.id)}&rb=${encodeURIComponent(b.runId)}&b=${encodeURIComponent(b.id)}`

/**
 * Rows are tasks, columns are (run, candidate); a cell is its reward, linked to its Attempt. With
 * two columns or more, each row links the first two columns' transcripts side by side.
 */
const matrix = (comparison: Comparison, options: { readonly showRun: boolean; readonly onlyDiffering: boolean }) => {
  const head = comparison.columns.map((c) => `<th class="right">${h(c.candidate)}${options.showRun ? `<br><small>${h(c.runId)}</small>` : ""}</th>`).join("")
  const sideBySide = comparison.columns.length >= 2
  const rows = comparison.rows.filter((r) => !options.onlyDiffering || r.differs).map((r) => {
    const cells = r.cells.map((c) =>
      c === null
        ? `<td class="cell missing">—</td>`
        : `<td class="cell ${cellClass(c)}" data-candidate="${h(c.candidate)}" data-task="${h(c.task)}" title="${h(cellTitle(c))}">${cellLink(c)}</td>`
    )
    const a = r.cells[0]?.attempt
    const b = r.cells[1]?.attempt
    const pair = !sideBySide ? "" : `<td class="left">${a != null && b != null ? `<a class="pair" href="${h(pairHref(a, b))}">side by side</a>` : ""}</td>`
    return `<tr class="${r.differs ? "differs" : ""}"><td class="left">${h(r.benchmark)}</td><td class="left">${h(r.task)}${r.repetition > 0 ? `#${r.repetition}` : ""}</td>${
      cells.join("")
    }${pair}</tr>`
  })
  const pairHead = sideBySide ? `<th class="left">${h(label(comparison, 0, options.showRun))} ⇆ ${h(label(comparison, 1, options.showRun))}</th>` : ""
  return `<table class="matrix"><thead><tr><th class="left">benchmark</th><th class="left">task</th>${head}${pairHead}</tr></thead><tbody>\n${rows.join("\n")}\n</tbody></table>`
}

const label = (comparison: Comparison, i: number, showRun: boolean) => {
  const c = comparison.columns[i]
  return c === undefined ? "?" : showRun ? `${c.candidate} (${c.runId})` : c.candidate
}

/** For each pair of columns: tasks both pass, only one passes, neither. */
const pairTable = (comparison: Comparison, showRun: boolean) =>
  comparison.pairs.length === 0
    ? ""
    : `<table><thead><tr><th class="left">a</th><th class="left">b</th><th class="right">a passes, b fails</th><th class="right">b passes, a fails</th><th class="right">both pass</th><th class="right">neither</th></tr></thead><tbody>\n${
      comparison.pairs.map((p) =>
        `<tr><td class="left">${h(label(comparison, p.a, showRun))}</td><td class="left">${h(label(comparison, p.b, showRun))}</td><td class="right">${
          formatCount(p.aOnly)
        }</td><td class="right">${formatCount(p.bOnly)}</td><td class="right">${formatCount(p.both)}</td><td class="right">${formatCount(p.neither)}</td></tr>`
      ).join("\n")
    }\n</tbody></table>`

/** The run's facts, once: what the report's own header would repeat is shown here instead. */
const runMeta = (brief: RunBrief, report: Report | null) =>
  `<dl class="meta"><dt>experiment</dt><dd>${h(brief.experimentId)}</dd><dt>started</dt><dd>${time(brief.startedAt)}</dd><dt>finished</dt><dd>${
    time(brief.finishedAt)
  }</dd><dt>benchmarks</dt><dd>${h(brief.benchmarks.join(", "))}</dd><dt>candidates</dt><dd>${h(brief.candidates.join(", "))}</dd>${
    report === null
      ? ""
      : `<dt>home</dt><dd>${h(report.home)}</dd><dt>faults</dt><dd>${h(formatFaultSpec(report.faults))}</dd>${
        report.spend !== undefined ? `<dt>spend</dt><dd>${h(formatSpend(report.spend))}</dd>` : ""
      }`
  }</dl>`

const interimRows = (progress: Progress) =>
  progress.interim.map((s) =>
    `<tr class="interim" data-candidate="${h(s.candidate)}" data-n="${s.n}"><td class="left">${h(s.benchmark)}</td><td class="left">${h(s.candidate)}</td><td class="right">${s.n}</td><td class="right">${
      formatScore(s.meanReward)
    }</td><td class="right">${s.passed}</td><td class="right">${s.ended}</td></tr>`
  ).join("")

/** A run without a report: its progress and interim scorecards, followed by the page's script while it runs. */
const progressSection = (progress: Progress) => {
  const share = progress.total > 0 ? Math.min(1, progress.written / progress.total) : 0
  const running = progress.state === "running"
  return `<section class="progress block" id="progress" data-run="${h(progress.runId)}"${running ? ` data-progress data-running data-poll="1000"` : ""}><h2>Progress</h2>
<p><span class="written" data-written="${progress.written}" data-total="${progress.total}">${formatCount(progress.written)} of ${formatCount(progress.total)}</span> cells written by this run<span class="skipped">${
    progress.skipped > 0 ? `, ${formatCount(progress.skipped)} skipped` : ""
  }</span>${running ? "" : ` (the run is ${h(progress.state)}: run the same command again to resume it)`}</p>
<div class="bar" role="progressbar" aria-valuemin="0" aria-valuemax="${progress.total}" aria-valuenow="${progress.written}"><span style="width:${(share * 100).toFixed(1)}%"></span></div>
<h3>Interim scorecards</h3><p class="notes">Of the cells written so far; the intervals come with the report once the run is finished.</p>
<table><thead><tr><th class="left">benchmark</th><th class="left">candidate</th><th class="right">cells</th><th class="right">mean reward</th><th class="right">full reward</th><th class="right">ended early</th></tr></thead><tbody class="interim">${
    interimRows(progress)
  }</tbody></table>${running ? `<p class="notes" id="live-status">the run is writing: this page follows it</p>` : ""}
</section>`
}

/** The headline figures of each whole-benchmark scorecard, as report --json has them; strata and the rest are in the report below. */
const headline = (report: Report) =>
  `<table class="headline"><thead><tr><th class="left">benchmark</th><th class="left">candidate</th><th class="right">n</th><th class="right">mean reward</th><th class="right">95% interval</th><th class="right">pass rate</th><th class="right">cost</th></tr></thead><tbody>${
    report.scorecards.filter((s) => s.stratum === null).map((s) =>
      `<tr class="scorecard" data-candidate="${h(s.candidate)}" data-mean="${s.meanReward}" data-lo="${s.interval?.[0] ?? ""}" data-hi="${s.interval?.[1] ?? ""}"><td class="left">${
        h(s.benchmark)
      }</td><td class="left">${h(s.candidate)}</td><td class="right">${formatCount(s.n)}</td><td class="right">${formatScore(s.meanReward)}</td><td class="right">${
        formatInterval(s.interval)
      }</td><td class="right">${formatPercent(s.passRate)}</td><td class="right">${formatCost(s.costUsd)}</td></tr>`
    ).join("")
  }</tbody></table>`

/**
 * The report's paired comparisons, each linked to its two candidates cell by cell (the tasks that
 * split them), where each task opens both transcripts side by side. The whole-benchmark ones only.
 */
const pairedLinks = (runId: string, report: Report) => {
  const whole = report.comparisons.filter((c) => c.stratum === undefined || c.stratum === null)
  if (whole.length === 0) return ""
  return `<h3>Paired comparisons</h3><table class="paired"><thead><tr><th class="left">a</th><th class="left">b</th><th class="left">benchmark</th><th class="right">tasks</th><th class="right">a − b</th><th class="right">95% interval</th><th class="right">p</th><th class="left">Holm</th><th class="left"></th></tr></thead><tbody>${
    // Signed, with p and Holm's mark, as the report's own comparison table has them.
    whole.map((c) =>
      `<tr><td class="left">${h(c.a)}</td><td class="left">${h(c.b)}</td><td class="left">${h(c.benchmark ?? "")}</td><td class="right">${formatCount(c.n)}</td><td class="right">${
        formatSigned(c.difference)
      }</td><td class="right">${formatInterval(c.interval, true)}</td><td class="right">${c.p === undefined ? "—" : formatP(c.p)}</td><td class="left">${
        c.holm === undefined ? "" : c.holm ? "significant" : "not significant"
      }</td><td class="left"><a class="paired" href="/compare?run=${encodeURIComponent(runId)}&amp;candidate=${
        encodeURIComponent(c.a)
      }&amp;candidate=${encodeURIComponent(c.b)}&amp;differ=1">the tasks that split them, side by side</a></td></tr>`
    ).join("")
  }</tbody></table>`
}

/**
 * The HTML report's sections as the run page shows them: without the report's own title and run
 * facts (the page's header has them), and without a cost plot that would be empty because no
 * candidate has a known cost (the headline's cost column says "unknown").
 */
export const reportSections = (report: Report): string => renderHtmlBody(report, { header: false, emptyPlots: false })

/** Cells as the page's script reads them: a JSON block that cannot close its script element. */
const jsonBlock = (id: string, value: unknown) => `<script type="application/json" id="${id}">${JSON.stringify(value).replace(/</g, "\\u003c")}</script>`

/** Rows the server draws before the script takes over (and all a reader without JavaScript sees). */
const FIRST_PAGE = 100

const verdictOf = (c: CellRow) => (c.ended !== null ? "ended" : c.reward >= 1 ? "pass" : c.reward > 0 ? "partial" : "fail")

const cellRow = (c: CellRow, showBenchmark: boolean) => {
  const v = verdictOf(c)
  const faults = [c.injected > 0 ? `${c.injected} injected` : "", c.live > 0 ? `${c.live} live` : ""].filter((x) => x !== "").join(", ")
  const reward = c.attempt === null ? formatScore(c.reward) : `<a class="attempt" href="${h(attemptHref(c.attempt))}">${formatScore(c.reward)}</a>`
  return `<tr class="cell-row ${v}" data-candidate="${h(c.candidate)}" data-task="${h(c.task)}">${showBenchmark ? `<td class="left">${h(c.benchmark)}</td>` : ""}<td class="left task">${
    h(c.task)
  }</td><td class="left">${h(c.stratum ?? "")}</td><td class="left">${h(c.candidate)}</td><td class="right">${c.repetition}</td><td class="right cell ${v}">${reward}</td><td class="left"><span class="vbadge ${v}">${v}</span></td><td class="left">${
    h(c.ended ?? "")
  }</td><td class="left">${h(faults)}</td><td class="left failed">${h(c.failed.join(", "))}</td></tr>`
}

const select = (name: string, text: string, fixed: ReadonlyArray<readonly [string, string]>) =>
  `<label>${h(text)}<select name="${name}" data-fixed="${fixed.length}">${fixed.map(([v, t]) => `<option value="${h(v)}">${h(t)}</option>`).join("")}</select></label>`

/** The cell table: filters, sortable headings, a page of rows, and every cell as data for the script. */
export const cellsSection = (cells: ReadonlyArray<CellRow>): string => {
  const benchmarks = new Set(cells.map((c) => c.benchmark))
  const showBenchmark = benchmarks.size > 1
  const headings: ReadonlyArray<readonly [string, string, string]> = [
    ...(showBenchmark ? [["benchmark", "benchmark", "left"] as const] : []),
    ["task", "task", "left"],
    ["stratum", "stratum", "left"],
    ["candidate", "candidate", "left"],
    ["repetition", "rep", "right"],
    ["reward", "reward", "right"],
    ["verdict", "verdict", "left"],
    ["ended", "ended", "left"],
    ["faults", "faults", "left"],
    ["failed", "checks failed", "left"]
  ]
  const filters = `<form class="filters" role="search">
<label>search<input type="search" name="q" placeholder="task, candidate, check…" autocomplete="off"></label>
${select("candidate", "candidate", [["", "any"]])}
<label>task<input name="task" placeholder="id or glob: *debit*" autocomplete="off"></label>
${select("stratum", "stratum", [["", "any"]])}
${select("verdict", "verdict", [["", "any"], ["pass", "pass (full reward)"], ["partial", "partial"], ["fail", "fail (no reward)"], ["ended", "ended early"]])}
${select("ended", "ended", [["", "any"], ["(none)", "evaluated (not ended)"]])}
${select("fault", "fault", [["", "any"], ["none", "no fault"], ["any", "met a fault"], ["injected", "injected"], ["live", "live (outage)"]])}
${select("check", "check failed", [["", "any"]])}
<button type="reset">clear</button>
</form>`
  return `<section class="cell-list block" id="cells" data-page-size="${FIRST_PAGE}"${showBenchmark ? " data-benchmarks" : ""}><h2>Cells</h2>
<p class="notes">Each cell's reward links to its Attempt: transcript, checks, effects and faults. Click a heading to sort.</p>
${filters}
<p><span class="cell-count">${formatCount(cells.length)} cells</span></p>
<table class="cells-table"><thead><tr>${headings.map(([key, text, align]) => `<th class="${align}" data-sort="${key}">${h(text)}</th>`).join("")}</tr></thead>
<tbody>${cells.slice(0, FIRST_PAGE).map((c) => cellRow(c, showBenchmark)).join("")}</tbody></table>
<p class="pager"><button type="button" data-page="prev">previous</button><span class="range">${
    cells.length > FIRST_PAGE ? `the first ${formatCount(FIRST_PAGE)} of ${formatCount(cells.length)} (the page's script pages through the rest; all of them: <code>assay report --json --cells</code>)` : ""
  }</span><button type="button" data-page="next">next</button></p>
${jsonBlock("cells-data", cells)}
</section>`
}

export const runPage = (brief: RunBrief, report: Report | null, progress: Progress | null, cells: ReadonlyArray<CellRow>): string => {
  const parts: Array<string> = [
    `<header class="run"><h1>Run ${h(brief.runId)} ${stateBadge(brief.state)}</h1>${runMeta(brief, report)}<p class="links"><a href="/api/runs/${
      h(brief.runId)
    }">this run as JSON</a> (what <code>assay report ${h(brief.runId)} --json</code> prints) · <a href="/compare?run=${
      h(brief.runId)
    }">compare its candidates cell by cell</a></p></header>`
  ]
  if (report === null && progress !== null) parts.push(progressSection(progress))
  if (report !== null) parts.push(`<section class="summary block" id="scorecards"><h2>Scorecards</h2>${headline(report)}${pairedLinks(brief.runId, report)}</section>`)
  parts.push(cellsSection(cells))
  if (report !== null) {
    parts.push(
      `<details class="report" id="report"><summary>The full report: plots, strata, noise floor, failures per check, comparisons, faults</summary>${
        reportSections(report)
      }</details>`
    )
  }
  return page(`Run ${brief.runId}`, `<main id="run"${brief.state === "running" ? " data-running" : ""}>${parts.join("\n")}</main>`)
}

// ---------------------------------------------------------------------------------------------
// Comparison

export const comparePage = (
  runs: ReadonlyArray<RunBrief>,
  chosen: ReadonlyArray<string>,
  candidates: ReadonlyArray<string>,
  comparison: Comparison | null,
  onlyDiffering: boolean
): string => {
  const showRun = chosen.length > 1
  const allCandidates = [...new Set(runs.filter((r) => chosen.includes(r.runId)).flatMap((r) => r.candidates))]
  const form = `<form class="pick" method="get" action="/compare">
<fieldset><legend>Runs</legend>${
    runs.map((r) =>
      `<label><input type="checkbox" name="run" value="${h(r.runId)}"${chosen.includes(r.runId) ? " checked" : ""}> ${h(r.runId)} <small>${h(short(r.experimentId))} · ${
        h(r.candidates.join(", "))
      }</small></label><br>`
    ).join("")
  }</fieldset>
${
    allCandidates.length > 0
      ? `<fieldset><legend>Candidates (none checked: all)</legend>${
        allCandidates.map((c) => `<label><input type="checkbox" name="candidate" value="${h(c)}"${candidates.includes(c) ? " checked" : ""}> ${h(c)}</label> `).join("")
      }</fieldset>`
      : ""
  }
<label><input type="checkbox" name="differ" value="1"${onlyDiffering ? " checked" : ""}> only tasks where one passes and another does not</label>
<button type="submit">Compare</button></form>`
  const body = comparison === null
    ? `<p>Check one run (to compare its candidates) or several runs of the same experiment (to compare candidates across them).</p>`
    : `<h2>Passes and failures, pair by pair</h2>${pairTable(comparison, showRun)}<h2>Cell by cell</h2>
<p class="notes">${formatCount(comparison.rows.filter((r) => r.differs).length)} of ${formatCount(comparison.rows.length)} tasks have one candidate passing and another not (in bold).</p>
${matrix(comparison, { showRun, onlyDiffering })}`
  return page("Compare", `<h1>Compare candidates</h1>${form}${body}`)
}

// ---------------------------------------------------------------------------------------------
// One Attempt

/** Field names whose values are credentials: shown as "[redacted]" wherever they appear. */
const SECRET_KEY = /^(authorization|proxy-authorization|x-api-key|api[-_]?key|x-goog-api-key|password|secret|access[-_]?token|cookie|set-cookie)$/i
const SECRET_TEXT = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/g

/** A value with anything that looks like a credential replaced: keys never reach a page. */
export const redact = (value: unknown): unknown => {
  if (typeof value === "string") return value.replace(SECRET_TEXT, "$1[redacted]")
  if (Array.isArray(value)) return value.map(redact)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) ? "[redacted]" : redact(v)]))
  }
  return value
}

const asRecord = (value: unknown): Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}

/** A string longer than this is folded to its first line. */
const LONG_STRING = 300
/** A JSON array or object lists at most this many entries (the rest: in the Attempt's JSON). */
const MOST_ENTRIES = 500

const jsonString = (text: string) =>
  text.length <= LONG_STRING
    ? `<span class="j-str">${h(JSON.stringify(text))}</span>`
    : `<details class="j"><summary><span class="j-str">${h(JSON.stringify(text.slice(0, 80)).slice(0, -1))}…"</span> (${formatCount(text.length)} characters)</summary><pre>${h(text)}</pre></details>`

/** JSON pretty-printed as a tree that folds: the top level open, small nodes near it open, the rest folded with a count. */
const jsonTree = (value: unknown, depth = 0): string => {
  if (value === null || value === undefined || typeof value === "boolean") return `<span class="j-lit">${String(value ?? null)}</span>`
  if (typeof value === "number") return `<span class="j-num">${String(value)}</span>`
  if (typeof value === "string") return jsonString(value)
  if (typeof value !== "object") return h(String(value))
  const isArray = Array.isArray(value)
  const entries: ReadonlyArray<readonly [string, unknown]> = isArray ? value.map((v, i) => [String(i), v] as const) : Object.entries(value)
  if (entries.length === 0) return `<span class="j-lit">${isArray ? "[]" : "{}"}</span>`
  const open = depth === 0 || (entries.length <= 6 && depth < 3)
  const names = entries.slice(0, 4).map(([k]) => k).join(", ")
  const label = isArray ? `[ ${formatCount(entries.length)} items ]` : `{ ${names}${entries.length > 4 ? `, … ${formatCount(entries.length)} keys` : ""} }`
  const rows = entries.slice(0, MOST_ENTRIES).map(([k, v]) => `<div class="j-row">${isArray ? "" : `<span class="j-key">${h(k)}</span>: `}${jsonTree(v, depth + 1)}</div>`)
  if (entries.length > MOST_ENTRIES) rows.push(`<div class="j-row notes">… ${formatCount(entries.length - MOST_ENTRIES)} more (in the Attempt's JSON)</div>`)
  return `<details class="j"${open ? " open" : ""}><summary>${h(label)}</summary><div class="j-body">${rows.join("")}</div></details>`
}

const json = (value: unknown) => `<div class="json">${jsonTree(redact(value))}</div>`

const text = (value: string) => `<pre>${h(String(redact(value)))}</pre>`

/** A tool result or message body: JSON text as a folding tree, other text as it is. */
const contentHtml = (content: string) => {
  const trimmed = content.trim()
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return json(JSON.parse(trimmed))
    } catch {
      // Not JSON after all (a bracketed sentence): shown as the text it is.
    }
  }
  return text(content)
}

const preview = (value: string) => {
  const line = value.replace(/\s+/g, " ").trim()
  return line.length > 110 ? `${line.slice(0, 110)}…` : line
}

/** Tool results longer than this start folded. */
const FOLD_RESULT = 400

/** How a side-by-side view marks the candidate's n-th tool call: agreeing, the first that differs, or after it. */
type CallMark = (step: number) => { readonly className: string; readonly id: string | null }

/**
 * The transcript's messages, each a fold (user, assistant with its tool calls, tool results);
 * tool results long or JSON start folded. Without a transcript, the output as JSON.
 */
const messagesHtml = (output: unknown, mark?: CallMark): string => {
  const transcript = transcriptOf(output)
  if (transcript === null) return json(output)
  let step = 0
  const messages = transcript.map((msg, i) => {
    const role = typeof msg["role"] === "string" ? msg["role"] : "message"
    const parts: Array<string> = []
    const content = msg["content"]
    if (typeof content === "string") parts.push(role === "tool" ? contentHtml(content) : text(content))
    else if (content !== null && content !== undefined) parts.push(json(content))
    const calls = role === "assistant" && Array.isArray(msg["toolCalls"]) ? msg["toolCalls"] : []
    const names: Array<string> = []
    let diverges = false
    for (const call of calls) {
      const c = asRecord(call)
      const name = String(c["name"] ?? "?")
      names.push(name)
      const m = mark?.(step) ?? { className: "", id: null }
      if (m.id !== null) diverges = true
      parts.push(
        `<div class="call ${m.className}"${m.id !== null ? ` id="${m.id}"` : ""} data-step="${step}">→ tool call <b>${h(name)}</b> <small>${h(String(c["id"] ?? ""))}</small>${
          json(c["arguments"] ?? {})
        }</div>`
      )
      step += 1
    }
    // A simulated user's own tool calls (tau2) are the environment's, shown but not counted as the candidate's.
    if (role !== "assistant" && Array.isArray(msg["toolCalls"]) && msg["toolCalls"].length > 0) parts.push(json(msg["toolCalls"]))
    const rest = Object.fromEntries(
      Object.entries(msg).filter(([k]) => !["role", "content", "toolCalls", "name", "toolCallId", "id", "error", "isError", "requestor"].includes(k))
    )
    if (Object.keys(rest).length > 0) parts.push(json(rest))
    const failedTool = msg["error"] === true || msg["isError"] === true
    const toolLine = role === "tool"
      ? ` result of <b>${h(String(msg["name"] ?? "?"))}</b> <small>${h(String(msg["toolCallId"] ?? msg["id"] ?? ""))}</small>${failedTool ? ` <span class="bad">error</span>` : ""}`
      : ""
    const body = typeof content === "string" ? content : ""
    const summaryText = names.length > 0 ? `${body !== "" ? `${preview(body)} · ` : ""}calls ${names.join(", ")}` : preview(body)
    const open = role !== "tool" || (body.length <= FOLD_RESULT && !/^\s*[[{]/.test(body))
    return `<details class="msg ${h(role)}${failedTool ? " error" : ""}${diverges ? " diverge" : ""}" id="m${i}"${open ? " open" : ""}><summary><span class="role">${
      h(role)
    }</span>${toolLine}<span class="preview">${h(String(redact(summaryText)))}</span></summary>${parts.join("")}</details>`
  })
  const others = Object.fromEntries(Object.entries(asRecord(output)).filter(([k]) => k !== "transcript" && k !== "messages"))
  return messages.join("\n") + (Object.keys(others).length > 0 ? `<h3>Result</h3>${json(others)}` : "")
}

const foldButtons = (target: string) =>
  `<div class="toolbar"><button type="button" data-fold="open" data-target="${target}">expand all</button><button type="button" data-fold="close" data-target="${target}">collapse all</button></div>`

/** Pairs an evaluator's details hold: `expected…`/`actual…`, `gold…`/`pred…`, `want…`/`got…`, at any depth up to 3. */
export const expectedActual = (details: unknown): ReadonlyArray<{ readonly where: string; readonly expected: unknown; readonly actual: unknown }> => {
  const out: Array<{ where: string; expected: unknown; actual: unknown }> = []
  const visit = (value: unknown, path: string, depth: number): void => {
    if (depth > 3 || typeof value !== "object" || value === null) return
    if (Array.isArray(value)) return value.slice(0, 50).forEach((v, i) => visit(v, `${path}[${i}]`, depth + 1))
    const record = asRecord(value)
    const keys = Object.keys(record)
    for (const key of keys) {
      const m = /^(expected|gold|want)(.*)$/i.exec(key)
      if (m === null) continue
      const rest = (m[2] ?? "").toLowerCase()
      const partner = keys.find((k) => k !== key && /^(actual|predicted|pred|got)(.*)$/i.exec(k)?.[2]?.toLowerCase() === rest)
      if (partner !== undefined) out.push({ where: `${path}${path !== "" && rest !== "" ? "." : ""}${m[2] ?? ""}` || "result", expected: record[key], actual: record[partner] })
    }
    for (const key of keys) visit(record[key], path === "" ? key : `${path}.${key}`, depth + 1)
  }
  visit(details, "", 0)
  return out
}

/** What the evaluator says of one check: its own entry in the details, or a judge's justification of an `nl:N` check. */
const explanationOf = (check: string, details: unknown): string => {
  const d = asRecord(details)
  if (check in d) return json(d[check])
  const nl = /^nl:(\d+)$/.exec(check)
  if (nl !== null) {
    const assertions = asRecord(d["judge"])["assertions"]
    const entry = Array.isArray(assertions) ? asRecord(assertions[Number(nl[1])]) : {}
    if (typeof entry["justification"] === "string") return h(String(redact(entry["justification"])))
  }
  return ""
}

const timelineHtml = (stored: StoredAttempt) => {
  const steps = timelineOf(stored.attempt)
  if (steps.length === 0) return "<p>No effect recorded.</p>"
  const rows = steps.map((e, i) => {
    const fault = e.fault === null
      ? ""
      : `<span class="bad">${e.fault.injected ? "injected" : "live"} ${h(e.fault.reason)}</span> → ${h(e.fault.then)}`
    const request = e.outcome === null ? `<span class="notes">not sent: the faults layer answered</span>` : `<details><summary>request</summary>${json(e.request)}</details>`
    const outcome = e.outcome === null
      ? `<span class="bad">${h(e.fault?.reason ?? "")}</span> (injected)`
      : e.kind === SESSION_ENDED_KIND && "ok" in e.outcome
      // How a bridged CLI's session ended: a note kept for replay, not an effect that succeeded.
      ? `<details><summary><span class="bad">the session ended</span></summary>${json(e.outcome.ok)}</details>`
      : "error" in e.outcome
      ? `<span class="bad">${h(e.outcome.error.reason)}</span>: ${h(e.outcome.error.message)}`
      : `<details><summary>ok</summary>${json(e.outcome.ok)}</details>`
    const cls = e.fault === null ? "" : e.fault.injected ? "fault injected" : "fault live"
    return `<tr class="${cls}"><td class="right">${i + 1}</td><td class="left">${h(e.kind)}</td><td class="left">${h(e.key)}</td><td class="right">${e.occurrence}</td><td class="left">${fault}</td><td class="left">${request}</td><td class="left">${outcome}</td></tr>`
  })
  return `<table class="timeline"><thead><tr><th class="right">step</th><th class="left">kind</th><th class="left">key</th><th class="right">#</th><th class="left">fault, and what came next</th><th class="left">request</th><th class="left">outcome</th></tr></thead><tbody>\n${
    rows.join("\n")
  }\n</tbody></table>`
}

const verdictSection = (stored: StoredAttempt) => {
  const a = stored.attempt
  const ended = a.verdict.ended
  const details = a.verdict.details
  const checks = Object.entries(a.verdict.checks).map(([check, ok]) =>
    `<tr class="check ${ok ? "passed" : "failed"}" data-check="${h(check)}"><td class="left">${h(check)}</td><td class="left">${
      ok ? `<span class="ok">passed</span>` : `<span class="bad">failed</span>`
    }</td><td class="left">${ok ? "" : explanationOf(check, details)}</td></tr>`
  )
  for (const check of a.verdict.notEvaluated) checks.push(`<tr class="check"><td class="left">${h(check)}</td><td class="left">not evaluated</td><td></td></tr>`)
  const pairs = details === undefined ? [] : expectedActual(details)
  const failing = Object.values(a.verdict.checks).some((ok) => !ok)
  const compared = pairs.length === 0
    ? ""
    : `<h3>Expected and actual${failing ? "" : " (every check passed)"}</h3><table class="expected"><thead><tr><th class="left">where</th><th class="left">expected</th><th class="left">actual</th></tr></thead><tbody>${
      pairs.map((p) => `<tr><td class="left">${h(p.where)}</td><td class="left">${json(p.expected)}</td><td class="left">${json(p.actual)}</td></tr>`).join("")
    }</tbody></table>`
  const endedLine = ended === null
    ? ""
    : ` · <span class="bad">ended: ${h(ended.reason)}</span> ${h(ended.detail)}${
      ended.reason === "fault" ? ` (${ended.injected === true ? "injected" : ended.injected === false ? "met live: an outage" : "fault"}${ended.fault !== undefined ? `, ${h(ended.fault)}` : ""})` : ""
    }`
  return `<section class="verdict block"><h2>Verdict</h2><p>reward <b class="reward">${formatScore(a.verdict.reward)}</b> · trust ${h(a.verdict.trust)}${endedLine}</p>
<table class="checks"><thead><tr><th class="left">check</th><th class="left">result</th><th class="left">what the evaluator says</th></tr></thead><tbody>${checks.join("")}</tbody></table>${compared}${
    details !== undefined ? `<details class="fold"><summary>The evaluator's details</summary>${json(details)}</details>` : ""
  }</section>`
}

export const attemptPage = (stored: StoredAttempt, siblings: ReadonlyArray<StoredAttempt> = []): string => {
  const a = stored.attempt
  const u = a.usage
  const self = { runId: stored.runId, id: stored.id }
  const beside = siblings.length === 0
    ? ""
    : `<p class="siblings">Side by side with ${
      siblings.map((s) => `<a class="pair" href="${h(pairHref(self, { runId: s.runId, id: s.id }))}">${h(s.attempt.candidate)}</a> (${formatScore(s.attempt.verdict.reward)})`).join(", ")
    } on this task</p>`
  const injected = a.faults.length
  const live = timelineOf(a).filter((e) => e.fault !== null && !e.fault.injected).length
  const body = `<h1>Attempt: ${h(a.candidate)} on ${h(a.task)}#${a.repetition}</h1>
<dl class="meta"><dt>benchmark</dt><dd>${h(a.benchmark)}${a.stratum !== null ? ` / ${h(a.stratum)}` : ""}</dd><dt>run</dt><dd><a href="/runs/${h(stored.runId)}">${
    h(stored.runId)
  }</a></dd><dt>attempt</dt><dd>${h(stored.id)}</dd><dt>inputs id</dt><dd class="inputs-id">${h(a.inputsId)}</dd><dt>environment</dt><dd>${h(a.environmentId)}</dd><dt>agent</dt><dd>${
    h(a.agentId)
  }</dd><dt>started</dt><dd>${time(a.startedAt)}</dd><dt>library</dt><dd>${h(a.receipt.library)}</dd></dl>
${beside}
${verdictSection(stored)}
<section class="transcript block" id="transcript"><h2>Transcript</h2>${foldButtons("#transcript")}${messagesHtml(a.output)}</section>
<section class="effects block"><h2>Timeline of effects</h2><p>${
    injected + live === 0 ? "No fault met." : `<span class="bad">${injected} injected, ${live} met live</span>: marked below, each with what came next.`
  }</p>${timelineHtml(stored)}</section>
<section class="usage block"><h2>Usage and cost</h2><table><tbody>
<tr><td class="left">input tokens</td><td class="right">${formatCount(u.inputTokens)}</td></tr>
<tr><td class="left">output tokens</td><td class="right">${formatCount(u.outputTokens)}</td></tr>
<tr><td class="left">cache read / write tokens</td><td class="right">${formatCount(u.cacheReadTokens)} / ${formatCount(u.cacheWriteTokens)}</td></tr>
<tr><td class="left">model calls (retries)</td><td class="right">${formatCount(u.calls)} (${formatCount(u.retries)})</td></tr>
<tr><td class="left">list-price cost</td><td class="right">${formatCost(u.costUsd)}</td></tr>
<tr><td class="left">wall time</td><td class="right">${u.wallSeconds.toFixed(2)}s</td></tr>
${a.judging !== undefined ? `<tr><td class="left">judging (calls, tokens in/out, cost)</td><td class="right">${a.judging.calls}, ${a.judging.inputTokens}/${a.judging.outputTokens}, ${formatCost(a.judging.costUsd)}</td></tr>` : ""}
</tbody></table></section>
<details class="fold evidence"><summary>Setup evidence</summary>${json(a.evidence)}</details>
<p><a href="/api/runs/${h(stored.runId)}/attempts/${encodeURIComponent(stored.id)}">this Attempt as JSON</a></p>`
  return page(`Attempt ${a.candidate} ${a.task}`, body)
}

// ---------------------------------------------------------------------------------------------
// Two Attempts side by side

const callText = (c: CallStep | undefined) => (c === undefined ? "no further tool call" : `${c.name}(${c.arguments.length > 160 ? `${c.arguments.slice(0, 160)}…` : c.arguments})`)

export const pairPage = (pair: Pair): string => {
  const k = pair.firstDifference
  const markOf = (side: "a" | "b"): CallMark => (step) =>
    k === null || step < k ? { className: "same", id: null } : step === k ? { className: "diverge", id: `diverge-${side}` } : { className: "", id: null }
  const head = (s: StoredAttempt) => {
    const a = s.attempt
    const failed = Object.entries(a.verdict.checks).filter(([, ok]) => !ok).map(([c]) => c)
    return `<div class="side-head" data-candidate="${h(a.candidate)}"><h2>${h(a.candidate)}</h2><p>reward <b>${formatScore(a.verdict.reward)}</b>${
      a.verdict.ended !== null ? ` · <span class="bad">ended: ${h(a.verdict.ended.reason)}</span>` : ""
    }${failed.length > 0 ? ` · failed: <span class="bad">${h(failed.join(", "))}</span>` : ""}</p><p class="notes">run ${h(s.runId)} · <a href="${
      h(attemptHref({ runId: s.runId, id: s.id }))
    }">the Attempt</a></p></div>`
  }
  const x = pair.a.attempt
  const y = pair.b.attempt
  const sameTask = x.benchmark === y.benchmark && x.task === y.task
  const divergence = k === null
    ? `<p class="divergence agree">Their ${formatCount(pair.callsA.length)} tool calls agree, name and arguments.</p>`
    : `<p class="divergence" data-first-difference="${k}">${
      k === 0 ? "Their first tool call differs" : `${k === 1 ? "The first tool call agrees" : `The first ${formatCount(k)} tool calls agree`}; call ${formatCount(k + 1)} differs`
    } (<a href="#diverge-a">marked</a>): <b>${h(x.candidate)}</b> ${h(callText(pair.callsA[k]))} — <b>${h(y.candidate)}</b> ${h(callText(pair.callsB[k]))}</p>`
  const body = `<h1>Side by side: ${h(x.task)}#${x.repetition}</h1>
<p class="notes">${h(x.benchmark)}${x.stratum !== null ? ` / ${h(x.stratum)}` : ""}${sameTask ? "" : ` · <span class="bad">not the same task: ${h(y.benchmark)} ${h(y.task)}#${y.repetition}</span>`}</p>
${divergence}
${foldButtons("#pair")}
<div class="grid2" id="pair"><div class="side a">${head(pair.a)}${messagesHtml(x.output, markOf("a"))}</div><div class="side b">${head(pair.b)}${messagesHtml(y.output, markOf("b"))}</div></div>`
  return page(`Side by side ${x.task}`, body)
}

export const errorPage = (status: number, message: string): string =>
  page(status === 404 ? "Not found" : "Error", `<h1>${status === 404 ? "Not found" : "Something went wrong"}</h1><p>${h(message)}</p><p><a href="/">All runs</a></p>`)
