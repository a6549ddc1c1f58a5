/**
 * Side by side with upstream's own code, in the same run: the bfcl and tau2 sections run
 * upstream's functions on the same inputs when given a checkout of it and a Python
 * (ASSAY_BENCH_UPSTREAM_BFCL=DIR, ASSAY_BENCH_UPSTREAM_TAU2=DIR, ASSAY_BENCH_PYTHON, default
 * `python3`), through the drivers in bench/upstream/ (which import upstream's functions from the
 * checkout; nothing of upstream's is copied here). Without a checkout, a section prints assay's
 * figures alone and says that no side-by-side was made: no ratio to a figure from elsewhere.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type CommandRun, median, succeeded, timeNode } from "./support.ts"

export interface Upstream {
  /** The checkout's folder as given. */
  readonly dir: string
  readonly python: string
}

/**
 * The checkout named by `variable`, or why there is none (unset; or set to a folder that does not
 * hold `marker`, which fails loudly: a side-by-side asked for and not made must not pass unnoticed).
 */
export const upstreamFrom = (variable: string, marker: string): Upstream | undefined => {
  const dir = process.env[variable]
  if (dir === undefined || dir === "") return undefined
  if (!existsSync(join(dir, marker))) throw new Error(`${variable}=${dir}: no ${marker} there (see docs/performance.md, "Side by side with upstream")`)
  return { dir, python: process.env["ASSAY_BENCH_PYTHON"] ?? "python3" }
}

/** The line a section prints when it was given no checkout. */
export const noSideBySide = (variable: string): string =>
  `  no side-by-side with upstream was made (set ${variable}=DIR and ASSAY_BENCH_PYTHON; docs/performance.md, "Side by side with upstream")`

/** Runs one of bench/upstream/*.py in a process of its own; its last stdout line is JSON. */
export const runDriver = async <A>(upstream: Upstream, script: string, args: ReadonlyArray<string>): Promise<A> => {
  const run = await timeDriver(upstream, script, args)
  return JSON.parse(run.stdout.trim().split("\n").pop() ?? "{}") as A
}

/**
 * One of bench/upstream/*.py as a user would wait on it: the whole process, start to exit (its
 * interpreter's start and imports included).
 */
export const timeDriver = async (upstream: Upstream, script: string, args: ReadonlyArray<string>): Promise<CommandRun> => {
  const path = fileURLToPath(new URL(`./upstream/${script}`, import.meta.url))
  // No __pycache__ left in bench/upstream/.
  return succeeded(await timeNode([path, upstream.dir, ...args], { PYTHONDONTWRITEBYTECODE: "1" }, upstream.python), `bench/upstream/${script} ${args.join(" ")}`)
}

/** Runs a bench child script of this folder (`node --import tsx bench/NAME ARGS`); its last stdout line is JSON. */
export const runChild = async <A>(script: string, args: ReadonlyArray<string> = [], env: Readonly<Record<string, string>> = {}): Promise<A> => {
  const path = fileURLToPath(new URL(`./${script}`, import.meta.url))
  const run = succeeded(await timeNode(["--import", "tsx", path, ...args], env), `bench/${script} ${args.join(" ")}`)
  return JSON.parse(run.stdout.trim().split("\n").pop() ?? "{}") as A
}

/** A figure of both sides: each side's samples (one per round), in ms. */
export interface Row {
  readonly measure: string
  readonly upstream: ReadonlyArray<number> | undefined
  readonly assay: ReadonlyArray<number>
  /** How the figures print (default: ms). */
  readonly unit?: (ms: number) => string
  /** The speed-up issue 45 asks of this row (upstream's median over assay's), and its short name. */
  readonly goal?: { readonly name: string; readonly atLeast: number }
}

const msText = (ms: number): string => `${ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0)} ms`

const cell = (xs: ReadonlyArray<number>, unit: (ms: number) => string): string =>
  xs.length === 1 ? unit(xs[0]!) : `${unit(median(xs))} (${unit(Math.min(...xs))}–${unit(Math.max(...xs))})`

/**
 * The rows as a table: each side's median over the rounds (with its range), and assay's speed-up,
 * upstream's median over assay's, both measured in this run; then the same ratio of each side's
 * fastest round. This machine's speed drifts by more than these ratios from one process to the
 * next (the same pass ran in 75 ms or 145 ms, in turn, on an idle machine): a round slowed by
 * it moves a median of three, while the fastest round of each side is the nearer to what the code
 * costs (Python's timeit reports the minimum for this reason).
 */
export const table = (rows: ReadonlyArray<Row>): ReadonlyArray<string> => {
  const lines = ["  | measure | upstream | assay | assay's speed-up | fastest against fastest |", "  | --- | --- | --- | --- | --- |"]
  for (const r of rows) {
    const unit = r.unit ?? msText
    const up = r.upstream === undefined ? "not run" : cell(r.upstream, unit)
    const ratio = r.upstream === undefined ? "—" : `${(median(r.upstream) / median(r.assay)).toFixed(2)}×`
    const best = r.upstream === undefined ? "—" : `${(Math.min(...r.upstream) / Math.min(...r.assay)).toFixed(2)}×`
    lines.push(`  | ${r.measure} | ${up} | ${cell(r.assay, unit)} | ${ratio} | ${best} |`)
  }
  return lines
}

/**
 * Each goal of the rows against this run's figures: met when the ratio of medians reaches it (the
 * fastest-against-fastest ratio beside it). Nothing without an upstream: no ratio was measured.
 */
export const goalLines = (rows: ReadonlyArray<Row>): ReadonlyArray<string> =>
  rows.flatMap((r) => {
    if (r.goal === undefined || r.upstream === undefined) return []
    const ratio = median(r.upstream) / median(r.assay)
    const best = Math.min(...r.upstream) / Math.min(...r.assay)
    const verdict = ratio >= r.goal.atLeast ? "met" : "not met"
    return [`  goal: ${r.goal.name} ≥ ${r.goal.atLeast}× upstream's: ${ratio.toFixed(2)}× (fastest against fastest ${best.toFixed(2)}×), ${verdict}`]
  })
