/**
 * `assay run` again on a finished experiment, as the user waits on it: the command in a child
 * process, its wall time from spawn to exit, and its own CPU time and peak RSS. The home is built
 * once, by the same command (gold and echo on ledger: 20 tasks x 2 candidates x reps), so the
 * timed runs plan exactly the experiment it holds and have every cell to keep.
 *
 * Beside it, what every command pays before it does anything (`assay --version`) and what
 * `assay plan` pays (start-up, plan, classify against the store; no run, no report): the rest of
 * `run` is the run's own bookkeeping and its report. With BFCL's data in the data folder, also
 * `assay plan --benchmark bfcl` (3,491 tasks from its prepared plan form, warmed by an untimed run).
 *
 * ASSAY_BENCH_CELLS (default 10,000; a multiple of 40) sets the experiment's size.
 * ASSAY_BENCH_LARGE=1 adds the same `assay run` again at 100,000 cells (goal: < 3 s). Its home is
 * built by the command too, which takes minutes, so it is not part of the default run.
 * ASSAY_BENCH_HOMES=DIR keeps the homes in DIR (DIR/cells-N) and reuses one already there, so a
 * large home is built once; without it each home is a temporary folder, removed at the end.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { dataRoot } from "../src/evaluation/DataRoot.ts"
import { type CommandRun, count, machine, median, root, seconds, spread, succeeded, timeAssay } from "./support.ts"

const CELLS = Number(process.env["ASSAY_BENCH_CELLS"] ?? 10_000)
const LARGE = process.env["ASSAY_BENCH_LARGE"] === "1" ? 100_000 : null
const HOMES = process.env["ASSAY_BENCH_HOMES"] ?? null
const TIMED = 5

/** The build bin/assay.js will start from: another engineer's edit makes the next start rebuild. */
const buildEntry = (): string | null => {
  const manifest = join(root, "node_modules", ".assay", "manifest.json")
  try {
    return existsSync(manifest) ? (JSON.parse(readFileSync(manifest, "utf8")) as { entry: string }).entry : null
  } catch {
    return null
  }
}

/** `runs` timed runs of a command, each started from an unchanged build (a run that rebuilt is run again). */
const timed = async (args: ReadonlyArray<string>, what: string, runs = TIMED): Promise<Array<CommandRun>> => {
  const out: Array<CommandRun> = []
  let rebuilt = 0
  while (out.length < runs) {
    const before = buildEntry()
    const r = succeeded(await timeAssay(args), what)
    if (buildEntry() !== before) {
      if (++rebuilt > runs) throw new Error(`${what}: the build kept changing under the bench (files being edited?)`)
      continue
    }
    out.push(r)
  }
  return out
}

const line = (label: string, runs: ReadonlyArray<CommandRun>): string =>
  `  ${label.padEnd(34)} wall ${spread(runs.map((r) => r.wallMs), seconds)}; CPU ${spread(runs.map((r) => r.cpuMs), seconds)}; ` +
  `peak RSS median ${(runs.map((r) => r.maxRssKiB).sort((a, b) => a - b)[runs.length >> 1]! / 1024).toFixed(0)} MiB`

/** The home of an experiment of `cells` cells: a kept one under ASSAY_BENCH_HOMES, else a temporary folder. */
const homeFor = (cells: number): { readonly dir: string; readonly kept: boolean } => {
  if (HOMES === null) return { dir: mkdtempSync(join(tmpdir(), "assay-bench-nothing-")), kept: false }
  const dir = join(HOMES, `cells-${cells}`)
  mkdirSync(dir, { recursive: true })
  return { dir, kept: true }
}

/** Builds (or finds) the finished experiment and runs it once more untimed; its selection and cell count. */
const finished = async (cells: number, home: string) => {
  const reps = Math.max(1, Math.round(cells / 40))
  const selection = ["--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--reps", String(reps), "--home", home]
  const stored = existsSync(join(home, "assay.sqlite"))
  const built = succeeded(await timeAssay(["run", ...selection, "--parallel", "4", "--yes", "--json"]), "building the home")
  const first = JSON.parse(built.stdout) as { cells: { total: number; ran: number } }
  console.log(`assay run again on a finished experiment of ${count(first.cells.total)} cells (gold and echo on ledger, ${reps} reps); ${machine()}`)
  console.log(`  ${stored ? "the kept home's first run" : "building the home (the first run, --parallel 4)"}: ${seconds(built.wallMs)} wall for ${count(first.cells.ran)} cells run`)
  // The first run stored the report's figures under its set of Attempts; every later run reads them.
  const again = succeeded(await timeAssay(["run", ...selection, "--yes", "--json"]), "running again")
  const kept = (JSON.parse(again.stdout) as { cells: { total: number; ran: number; kept: number } }).cells
  if (kept.ran !== 0 || kept.kept !== kept.total) throw new Error(`running again ran ${kept.ran} cells and kept ${kept.kept} of ${kept.total}`)
  console.log(`  the first run again (untimed warm-up): ${seconds(again.wallMs)} wall, ${seconds(again.cpuMs)} CPU`)
  return { selection, total: kept.total }
}

/** `assay plan --benchmark bfcl` timed after one untimed run (which writes the plan form if there is none); null without BFCL's data. */
const bfclPlan = async (home: string): Promise<Array<CommandRun> | null> => {
  if (!existsSync(join(dataRoot(), "bfcl", "v4"))) return null
  const args = ["plan", "--benchmark", "bfcl", "--home", join(home, "bfcl"), "--json"]
  succeeded(await timeAssay(args), "assay plan --benchmark bfcl (warm-up)")
  return timed(args, "assay plan --benchmark bfcl")
}

export const run = async (): Promise<void> => {
  const home = homeFor(CELLS)
  try {
    const { selection, total } = await finished(CELLS, home.dir)
    const version = await timed(["--version"], "assay --version")
    const plan = await timed(["plan", ...selection, "--json"], "assay plan")
    const runs = await timed(["run", ...selection, "--yes", "--json"], "assay run (nothing to run)")
    const text = await timed(["run", ...selection, "--yes"], "assay run (nothing to run, text report)")
    const bfcl = await bfclPlan(home.dir)
    console.log(line("assay --version (start-up alone)", version))
    console.log(line("assay plan (start-up, plan, classify)", plan))
    console.log(line("assay run --yes --json (nothing to run)", runs))
    console.log(line("assay run --yes (text report)", text))
    if (bfcl !== null) console.log(line("assay plan --benchmark bfcl", bfcl))
    // Side by side rather than a difference of medians, which noise on a shared machine can make negative.
    console.log(`  start-up's share of the run (medians): ${seconds(median(version.map((r) => r.cpuMs)))} of ${seconds(median(runs.map((r) => r.cpuMs)))} CPU, ` +
      `${seconds(median(version.map((r) => r.wallMs)))} of ${seconds(median(runs.map((r) => r.wallMs)))} wall, for ${count(total)} kept cells`)
  } finally {
    if (!home.kept) rmSync(home.dir, { recursive: true, force: true })
  }
  if (LARGE === null) {
    console.log("  (ASSAY_BENCH_LARGE=1 adds the 100,000-cell case: its home takes minutes to build)")
    return
  }
  const large = homeFor(LARGE)
  try {
    const { selection } = await finished(LARGE, large.dir)
    console.log(line("assay run --yes --json (nothing to run)", await timed(["run", ...selection, "--yes", "--json"], "assay run (nothing to run, 100,000 cells)")))
  } finally {
    if (!large.kept) rmSync(large.dir, { recursive: true, force: true })
  }
}
