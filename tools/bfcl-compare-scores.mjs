#!/usr/bin/env node
// Compares an imported BFCL run (assay import bfcl) with BFCL's own score files of the same result
// files, per category: accuracy, the failed ids, and the error types of the entries both fail.
//
//   node tools/bfcl-compare-scores.mjs SCORE_DIR --home HOME [--run RUN_ID] [--candidate import:NAME]
//
// SCORE_DIR holds BFCL_v4_<category>_score.json files (searched a few folders deep): their first line
// is {"accuracy", "correct_count", "total_count"}, each later line one failed entry with its "id" and,
// where upstream gives it, "error_type". The run is read from HOME/runs/RUN_ID/results.jsonl (default:
// the newest run holding an import: candidate). When the import holds only some of a category's lines,
// only those ids are compared (the row says how many). Prints a Markdown table, then every
// disagreement; exits 1 when there is one, 2 on a usage error.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { parseArgs } from "node:util"

const usage = (message) => {
  process.stderr.write(`bfcl-compare-scores: ${message}\nusage: node tools/bfcl-compare-scores.mjs SCORE_DIR --home HOME [--run RUN_ID] [--candidate import:NAME]\n`)
  process.exit(2)
}

let parsed
try {
  parsed = parseArgs({ allowPositionals: true, options: { home: { type: "string" }, run: { type: "string" }, candidate: { type: "string" } } })
} catch (e) {
  usage(e.message)
}
const { values, positionals } = parsed
if (positionals.length !== 1) usage("give one SCORE_DIR")
if (values.home === undefined) usage("--home is required")
const scoreDir = positionals[0]
const runsDir = join(values.home, "runs")
if (!existsSync(runsDir)) usage(`${runsDir}: no runs there`)

const jsonLines = (path) =>
  readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "").map((l, i) => {
    try {
      return JSON.parse(l)
    } catch {
      usage(`${path}:${i + 1} is not JSON`)
    }
  })

// The score files, by category.
const SCORE = /^BFCL_v4_(.+)_score\.json$/
const scoreFiles = []
const walk = (dir, depth) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && depth < 4) walk(join(dir, entry.name), depth + 1)
    else if (entry.isFile() && SCORE.test(entry.name)) scoreFiles.push(join(dir, entry.name))
  }
}
if (!existsSync(scoreDir) || !statSync(scoreDir).isDirectory()) usage(`${scoreDir}: no such folder`)
walk(scoreDir, 0)
if (scoreFiles.length === 0) usage(`${scoreDir}: no BFCL_v4_<category>_score.json file`)
const upstream = new Map()
for (const path of scoreFiles) {
  const [head, ...failed] = jsonLines(path)
  const category = SCORE.exec(path.split("/").at(-1))[1]
  upstream.set(category, {
    accuracy: head.accuracy,
    correct: head.correct_count,
    total: head.total_count,
    failed: new Map(failed.map((f) => [f.id, f.error_type ?? null]))
  })
}

// The run's Attempts of the imported candidate, by category (the stratum).
const runs = readdirSync(runsDir).filter((r) => existsSync(join(runsDir, r, "results.jsonl")))
const linesOf = (run) => jsonLines(join(runsDir, run, "results.jsonl"))
let run = values.run
if (run === undefined) {
  const withImport = runs.filter((r) => linesOf(r).some((l) => String(l.candidate).startsWith("import:")))
  if (withImport.length === 0) usage(`${values.home}: no run with an import: candidate`)
  run = withImport.sort((a, b) => statSync(join(runsDir, b)).mtimeMs - statSync(join(runsDir, a)).mtimeMs)[0]
} else if (!runs.includes(run)) usage(`${values.home}: no run ${run}`)
const lines = linesOf(run)
const candidates = [...new Set(lines.map((l) => l.candidate).filter((c) => String(c).startsWith("import:")))]
const candidate = values.candidate ?? (candidates.length === 1 ? candidates[0] : usage(`run ${run} has ${candidates.length} import: candidates (${candidates.join(", ")}): give --candidate`))
const assay = new Map()
for (const line of lines.filter((l) => l.candidate === candidate)) {
  const category = line.stratum
  const entry = assay.get(category) ?? { total: 0, correct: 0, graded: new Set(), failed: new Map() }
  entry.total++
  entry.graded.add(line.task)
  // BFCL grades each entry pass or fail: a reward under 1 is a failure.
  if (line.verdict?.reward === 1) entry.correct++
  else entry.failed.set(line.task, line.verdict?.details?.errorType ?? line.verdict?.ended?.reason ?? null)
  assay.set(category, entry)
}

const pct = (correct, total) => (total === 0 ? "-" : `${((100 * correct) / total).toFixed(2)}% (${correct}/${total})`)
const rows = []
const disagreements = []
const notes = []
for (const category of [...new Set([...upstream.keys(), ...assay.keys()])].sort()) {
  const up = upstream.get(category)
  const ours = assay.get(category)
  if (up === undefined) {
    rows.push([category, "no score file", pct(ours.correct, ours.total), "-", "-", "-", "-"])
    continue
  }
  if (ours === undefined) {
    rows.push([category, pct(up.correct, up.total), "not imported", "-", "-", "-", "-"])
    continue
  }
  if (up.failed.size !== up.total - up.correct) {
    notes.push(`${category}: the score file lists ${up.failed.size} failed entries, its counts ${up.total - up.correct}`)
  }
  // Some of the category's lines only: compare those ids, and the accuracies are not comparable.
  const subset = ours.total < up.total
  const upFailed = [...up.failed.keys()].filter((id) => !subset || ours.graded.has(id))
  const onlyUpstream = upFailed.filter((id) => !ours.failed.has(id))
  const onlyAssay = [...ours.failed.keys()].filter((id) => !up.failed.has(id))
  const typeDiffers = upFailed.filter((id) => ours.failed.has(id) && up.failed.get(id) !== null && up.failed.get(id) !== ours.failed.get(id))
  const compared = subset ? `${ours.total} of ${up.total} ids` : `all ${up.total}`
  rows.push([category, pct(up.correct, up.total), pct(ours.correct, ours.total), compared, String(onlyUpstream.length), String(onlyAssay.length), String(typeDiffers.length)])
  if (ours.total > up.total) disagreements.push(`${category}: BFCL scored ${up.total} entries, assay graded ${ours.total}`)
  if (!subset && ours.correct !== up.correct) disagreements.push(`${category}: BFCL counts ${up.correct} correct, assay ${ours.correct}`)
  for (const id of onlyUpstream) disagreements.push(`${category}: ${id} fails in BFCL's score file (${up.failed.get(id)}) and passes in assay`)
  for (const id of onlyAssay) disagreements.push(`${category}: ${id} fails in assay (${ours.failed.get(id)}) and is not among BFCL's failures`)
  for (const id of typeDiffers) disagreements.push(`${category}: ${id} fails in both, BFCL ${up.failed.get(id)}, assay ${ours.failed.get(id)}`)
}

const header = ["category", "BFCL score file", `assay (${candidate})`, "ids compared", "failed only in BFCL", "failed only in assay", "error type differs"]
const table = [header, header.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n")
process.stdout.write(`run ${run}, ${candidate}; score files ${scoreDir}\n\n${table}\n\n`)
if (notes.length > 0) process.stdout.write(`${notes.map((n) => `note: ${n}`).join("\n")}\n`)
process.stdout.write(disagreements.length === 0 ? "no disagreement\n" : `${disagreements.length} disagreements:\n${disagreements.map((d) => `- ${d}`).join("\n")}\n`)
process.exit(disagreements.length === 0 ? 0 : 1)
