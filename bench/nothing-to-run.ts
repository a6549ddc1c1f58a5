/**
 * `assay run` again on a finished experiment, as the user waits on it: the command in a child
 * process, its wall time from spawn to exit, and its own CPU time and peak RSS. The home is built
 * once, by the same command (gold and echo on ledger: 20 tasks x 2 candidates x reps), so the
 * timed runs plan exactly the experiment it holds and have every cell to keep.
 *
 * Beside it, what every command pays before it does anything (`assay --version`) and what
 * `assay plan` pays (start-up, plan, classify against the store; no run, no report): the rest of
 * `run` is the run's own bookkeeping and its report.
 *
 * ASSAY_BENCH_CELLS (default 10,000; a multiple of 40) sets the experiment's size.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type CommandRun, count, machine, median, root, seconds, spread, succeeded, timeAssay } from "./support.ts"

const CELLS = Number(process.env["ASSAY_BENCH_CELLS"] ?? 10_000)
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

export const run = async (): Promise<void> => {
  const reps = Math.max(1, Math.round(CELLS / 40))
  const home = mkdtempSync(join(tmpdir(), "assay-bench-nothing-"))
  const selection = ["--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--reps", String(reps), "--home", home]
  try {
    const built = succeeded(await timeAssay(["run", ...selection, "--parallel", "4", "--yes", "--json"]), "building the home")
    const first = JSON.parse(built.stdout) as { cells: { total: number; ran: number } }
    console.log(`assay run again on a finished experiment of ${count(first.cells.total)} cells (gold and echo on ledger, ${reps} reps); ${machine()}`)
    console.log(`  building the home (the first run, --parallel 4): ${seconds(built.wallMs)} wall for ${count(first.cells.ran)} cells`)
    // The first run stored the report's figures under its set of Attempts; every later run reads them.
    const again = succeeded(await timeAssay(["run", ...selection, "--yes", "--json"]), "running again")
    const cells = (JSON.parse(again.stdout) as { cells: { total: number; ran: number; kept: number } }).cells
    if (cells.ran !== 0 || cells.kept !== cells.total) throw new Error(`running again ran ${cells.ran} cells and kept ${cells.kept} of ${cells.total}`)
    console.log(`  the first run again (untimed warm-up): ${seconds(again.wallMs)} wall, ${seconds(again.cpuMs)} CPU`)
    const version = await timed(["--version"], "assay --version")
    const plan = await timed(["plan", ...selection, "--json"], "assay plan")
    const runs = await timed(["run", ...selection, "--yes", "--json"], "assay run (nothing to run)")
    const text = await timed(["run", ...selection, "--yes"], "assay run (nothing to run, text report)")
    console.log(line("assay --version (start-up alone)", version))
    console.log(line("assay plan (start-up, plan, classify)", plan))
    console.log(line("assay run --yes --json (nothing to run)", runs))
    console.log(line("assay run --yes (text report)", text))
    // Side by side rather than a difference of medians, which noise on a shared machine can make negative.
    console.log(`  start-up's share of the run (medians): ${seconds(median(version.map((r) => r.cpuMs)))} of ${seconds(median(runs.map((r) => r.cpuMs)))} CPU, ` +
      `${seconds(median(version.map((r) => r.wallMs)))} of ${seconds(median(runs.map((r) => r.wallMs)))} wall, for ${count(cells.total)} kept cells`)
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}
