/**
 * The viewer's pages, rendered on the server as HTML with inline SVG (the report's own plots and
 * tables, from Report.ts). Every page works without JavaScript; one small script, served by the
 * viewer itself, refreshes the parts marked `data-live` while a run is writing.
 */
import { escapeHtml, formatCost, formatCount, formatInterval, formatScore, htmlCss, renderHtmlBody, type Report } from "../experiment/Report.ts"
import type { StoredAttempt } from "../experiment/Store.ts"
import type { CellRow, Comparison, Progress, RunBrief } from "./Data.ts"

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
${options.live === true ? `<script src="/static/live.js" defer></script>` : ""}
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

const attemptHref = (c: CellRow) => (c.attempt === null ? null : `/runs/${c.attempt.runId}/attempts/${encodeURIComponent(c.attempt.id)}`)

const cellLink = (c: CellRow) => {
  const href = attemptHref(c)
  const text = c.ended !== null ? h(c.ended) : formatScore(c.reward)
  return href === null ? text : `<a class="attempt" href="${h(href)}">${text}</a>`
}

/** Rows are tasks, columns are (run, candidate); a cell is its reward, linked to its Attempt. */
const matrix = (comparison: Comparison, options: { readonly showRun: boolean; readonly onlyDiffering: boolean }) => {
  const head = comparison.columns.map((c) => `<th class="right">${h(c.candidate)}${options.showRun ? `<br><small>${h(c.runId)}</small>` : ""}</th>`).join("")
  const rows = comparison.rows.filter((r) => !options.onlyDiffering || r.differs).map((r) => {
    const cells = r.cells.map((c) =>
      c === null
        ? `<td class="cell missing">—</td>`
        : `<td class="cell ${cellClass(c)}" data-candidate="${h(c.candidate)}" data-task="${h(c.task)}" title="${h(cellTitle(c))}">${cellLink(c)}</td>`
    )
    return `<tr class="${r.differs ? "differs" : ""}"><td class="left">${h(r.benchmark)}</td><td class="left">${h(r.task)}${r.repetition > 0 ? `#${r.repetition}` : ""}</td>${cells.join("")}</tr>`
  })
  return `<table class="matrix"><thead><tr><th class="left">benchmark</th><th class="left">task</th>${head}</tr></thead><tbody>\n${rows.join("\n")}\n</tbody></table>`
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

const briefMeta = (brief: RunBrief) =>
  `<dl class="meta"><dt>run</dt><dd>${h(brief.runId)}</dd><dt>state</dt><dd>${stateBadge(brief.state)}</dd><dt>experiment</dt><dd>${
    h(brief.experimentId)
  }</dd><dt>started</dt><dd>${time(brief.startedAt)}</dd><dt>finished</dt><dd>${time(brief.finishedAt)}</dd><dt>candidates</dt><dd>${
    h(brief.candidates.join(", "))
  }</dd></dl>`

const progressSection = (progress: Progress) => {
  const share = progress.total > 0 ? Math.min(1, progress.written / progress.total) : 0
  const rows = progress.byCandidate.map((c) =>
    `<tr><td class="left">${h(c.candidate)}</td><td class="right">${formatCount(c.written)}</td><td class="right">${formatCount(c.passed)}</td></tr>`
  )
  const latest = progress.latest.map((c) =>
    `<tr><td class="left">${h(c.candidate)}</td><td class="left">${h(c.task)}#${c.repetition}</td><td class="cell ${cellClass(c)}">${cellLink(c)}</td></tr>`
  )
  return `<section class="progress"><h2>Progress</h2>
<p><span class="written" data-written="${progress.written}" data-total="${progress.total}">${formatCount(progress.written)} of ${formatCount(progress.total)}</span> cells written by this run${
    progress.skipped > 0 ? `, ${formatCount(progress.skipped)} skipped` : ""
  }${progress.state === "running" ? "" : ` (the run is ${h(progress.state)}: run the same command again to resume it)`}</p>
<div class="bar" role="progressbar" aria-valuemin="0" aria-valuemax="${progress.total}" aria-valuenow="${progress.written}"><span style="width:${(share * 100).toFixed(1)}%"></span></div>
<h3>Per candidate</h3><table><thead><tr><th class="left">candidate</th><th class="right">written</th><th class="right">full reward</th></tr></thead><tbody>${rows.join("")}</tbody></table>
<h3>Newest cells</h3><table><thead><tr><th class="left">candidate</th><th class="left">task</th><th class="right">reward</th></tr></thead><tbody>${latest.join("")}</tbody></table>
</section>`
}

/** The headline figures of each whole-benchmark scorecard, as report --json has them, to find at a glance. */
const headline = (report: Report) =>
  `<table class="headline"><thead><tr><th class="left">benchmark</th><th class="left">candidate</th><th class="right">n</th><th class="right">mean reward</th><th class="right">95% interval</th><th class="right">cost</th></tr></thead><tbody>${
    report.scorecards.filter((s) => s.stratum === null).map((s) =>
      `<tr class="scorecard" data-candidate="${h(s.candidate)}" data-mean="${s.meanReward}" data-lo="${s.interval[0]}" data-hi="${s.interval[1]}"><td class="left">${
        h(s.benchmark)
      }</td><td class="left">${h(s.candidate)}</td><td class="right">${formatCount(s.n)}</td><td class="right">${formatScore(s.meanReward)}</td><td class="right">${
        formatInterval(s.interval)
      }</td><td class="right">${formatCost(s.costUsd)}</td></tr>`
    ).join("")
  }</tbody></table>`

export const runPage = (
  brief: RunBrief,
  report: Report | null,
  progress: Progress | null,
  cells: Comparison
): string => {
  const running = brief.state === "running"
  const parts: Array<string> = [briefMeta(brief)]
  parts.push(
    `<p><a href="/api/runs/${h(brief.runId)}">this run as JSON</a> (the document <code>assay report ${h(brief.runId)} --json</code> prints) · <a href="/compare?run=${
      h(brief.runId)
    }">compare its candidates cell by cell</a></p>`
  )
  if (progress !== null && report === null) parts.push(progressSection(progress))
  if (report !== null) parts.push(`<section class="summary"><h2>Scorecards</h2>${headline(report)}</section>`, `<div class="report">${renderHtmlBody(report)}</div>`)
  parts.push(
    `<section class="cells"><h2>Cells</h2><p class="notes">Each cell's reward links to its Attempt: transcript, recorded effects, checks.</p>${
      matrix(cells, { showRun: false, onlyDiffering: false })
    }</section>`
  )
  return page(
    `Run ${brief.runId}`,
    `<h1>Run ${h(brief.runId)}</h1>
<main id="run" data-live${running ? ` data-running data-poll="1000"` : ""}>${parts.join("\n")}${running ? `<p class="notes" id="live-status">the run is writing: this page refreshes</p>` : ""}</main>`,
    { live: true }
  )
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

const json = (value: unknown) => `<pre>${h(JSON.stringify(redact(value), null, 2) ?? "null")}</pre>`

const text = (value: string) => `<pre>${h(String(redact(value)))}</pre>`

const asRecord = (value: unknown): Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}

/** The transcript's messages (user, assistant with tool calls, tool results), or the output as JSON. */
const transcriptOf = (output: unknown): string => {
  const transcript = asRecord(output)["transcript"]
  if (!Array.isArray(transcript)) return json(output)
  const messages = transcript.map((m: unknown, i) => {
    const msg = asRecord(m)
    const role = typeof msg["role"] === "string" ? msg["role"] : "message"
    const parts: Array<string> = []
    const content = msg["content"]
    if (typeof content === "string") parts.push(role === "tool" ? text(content) : `<div>${text(content)}</div>`)
    else if (content !== null && content !== undefined) parts.push(json(content))
    const calls = Array.isArray(msg["toolCalls"]) ? msg["toolCalls"] : []
    for (const call of calls) {
      const c = asRecord(call)
      parts.push(`<div class="call">→ tool call <b>${h(String(c["name"] ?? "?"))}</b> <small>${h(String(c["id"] ?? ""))}</small>${json(c["arguments"] ?? {})}</div>`)
    }
    const rest = Object.fromEntries(Object.entries(msg).filter(([k]) => !["role", "content", "toolCalls", "name", "toolCallId", "error"].includes(k)))
    if (Object.keys(rest).length > 0) parts.push(json(rest))
    const toolLine = role === "tool" ? ` result of <b>${h(String(msg["name"] ?? "?"))}</b> <small>${h(String(msg["toolCallId"] ?? ""))}</small>${msg["error"] === true ? ` <span class="bad">error</span>` : ""}` : ""
    return `<div class="msg ${h(role)}${msg["error"] === true ? " error" : ""}" id="m${i}"><span class="role">${h(role)}</span>${toolLine}${parts.join("")}</div>`
  })
  const others = Object.fromEntries(Object.entries(asRecord(output)).filter(([k]) => k !== "transcript"))
  return messages.join("\n") + (Object.keys(others).length > 0 ? `<h3>Result</h3>${json(others)}` : "")
}

export const attemptPage = (stored: StoredAttempt): string => {
  const a = stored.attempt
  const faulted = new Set(a.faults.map((f) => `${f.key}#${f.occurrence}`))
  const checks = Object.entries(a.verdict.checks).map(([check, ok]) =>
    `<tr><td class="left">${h(check)}</td><td class="left">${ok ? `<span class="ok">passed</span>` : `<span class="bad">failed</span>`}</td></tr>`
  )
  for (const check of a.verdict.notEvaluated) checks.push(`<tr><td class="left">${h(check)}</td><td class="left">not evaluated</td></tr>`)
  const effects = a.recording.map((e) => {
    const isFault = faulted.has(`${e.key}#${e.occurrence}`) || faulted.has(`${e.kind}:${e.key}#${e.occurrence}`)
    const outcome = "error" in e.outcome ? `<span class="bad">${h(e.outcome.error.reason)}</span>: ${h(e.outcome.error.message)}` : `<details><summary>ok</summary>${json(e.outcome.ok)}</details>`
    return `<tr class="${isFault ? "fault" : ""}"><td class="left">${h(e.kind)}</td><td class="left">${h(e.key)}</td><td class="right">${e.occurrence}</td><td class="left">${
      isFault ? "<b>fault injected</b>" : ""
    }</td><td class="left"><details><summary>request</summary>${json(e.request)}</details></td><td class="left">${outcome}</td></tr>`
  })
  const u = a.usage
  const ended = a.verdict.ended
  const body = `<h1>Attempt: ${h(a.candidate)} on ${h(a.task)}#${a.repetition}</h1>
<dl class="meta"><dt>benchmark</dt><dd>${h(a.benchmark)}${a.stratum !== null ? ` / ${h(a.stratum)}` : ""}</dd><dt>run</dt><dd><a href="/runs/${h(stored.runId)}">${
    h(stored.runId)
  }</a></dd><dt>attempt</dt><dd>${h(stored.id)}</dd><dt>inputs id</dt><dd class="inputs-id">${h(a.inputsId)}</dd><dt>environment</dt><dd>${h(a.environmentId)}</dd><dt>agent</dt><dd>${
    h(a.agentId)
  }</dd><dt>started</dt><dd>${time(a.startedAt)}</dd><dt>library</dt><dd>${h(a.receipt.library)}</dd></dl>
<section class="verdict"><h2>Verdict</h2><p>reward <b class="reward">${formatScore(a.verdict.reward)}</b> · trust ${h(a.verdict.trust)}${
    ended !== null ? ` · <span class="bad">ended: ${h(ended.reason)}</span> ${h(ended.detail)}${ended.injected === true ? " (injected)" : ""}` : ""
  }</p>
<table><thead><tr><th class="left">check</th><th class="left">result</th></tr></thead><tbody>${checks.join("")}</tbody></table>${
    a.verdict.details !== undefined ? `<details><summary>details</summary>${json(a.verdict.details)}</details>` : ""
  }</section>
<section class="usage"><h2>Usage and cost</h2><table><tbody>
<tr><td class="left">input tokens</td><td class="right">${formatCount(u.inputTokens)}</td></tr>
<tr><td class="left">output tokens</td><td class="right">${formatCount(u.outputTokens)}</td></tr>
<tr><td class="left">cache read / write tokens</td><td class="right">${formatCount(u.cacheReadTokens)} / ${formatCount(u.cacheWriteTokens)}</td></tr>
<tr><td class="left">model calls (retries)</td><td class="right">${formatCount(u.calls)} (${formatCount(u.retries)})</td></tr>
<tr><td class="left">list-price cost</td><td class="right">${formatCost(u.costUsd)}</td></tr>
<tr><td class="left">wall time</td><td class="right">${u.wallSeconds.toFixed(2)}s</td></tr>
${a.judging !== undefined ? `<tr><td class="left">judging (calls, tokens in/out, cost)</td><td class="right">${a.judging.calls}, ${a.judging.inputTokens}/${a.judging.outputTokens}, ${formatCost(a.judging.costUsd)}</td></tr>` : ""}
</tbody></table></section>
<section class="transcript"><h2>Transcript</h2>${transcriptOf(a.output)}</section>
<section class="effects"><h2>Recorded effects</h2>${
    a.faults.length > 0
      ? `<p><span class="bad">${a.faults.length} faults</span>: ${a.faults.map((f) => `${h(f.key)} #${f.occurrence} (${h(f.reason)})`).join(", ")}</p>`
      : "<p>No fault met.</p>"
  }${
    effects.length === 0
      ? "<p>No effect recorded.</p>"
      : `<table><thead><tr><th class="left">kind</th><th class="left">key</th><th class="right">#</th><th class="left">fault</th><th class="left">request</th><th class="left">outcome</th></tr></thead><tbody>\n${
        effects.join("\n")
      }\n</tbody></table>`
  }</section>
<section class="evidence"><h2>Setup evidence</h2>${json(a.evidence)}</section>
<p><a href="/api/runs/${h(stored.runId)}/attempts/${encodeURIComponent(stored.id)}">this Attempt as JSON</a></p>`
  return page(`Attempt ${a.candidate} ${a.task}`, body)
}

export const errorPage = (status: number, message: string): string =>
  page(status === 404 ? "Not found" : "Error", `<h1>${status === 404 ? "Not found" : "Something went wrong"}</h1><p>${h(message)}</p><p><a href="/">All runs</a></p>`)
