/**
 * BFCL checker throughput over the dev oracle corpus (parse excluded and included); the gold
 * check of all 3,491 tasks; and the gold run of all 3,491 tasks through the experiment runner
 * (plan, Attempts, store, scorecards).
 *
 * The checker keeps memos for the life of the process (normal forms of strings, per-task answer
 * types), so the first pass over the corpus is timed in a fresh process (bench/bfcl-pass.ts),
 * apart from the later ones, which reuse them. With ASSAY_BENCH_UPSTREAM_BFCL=DIR (gorilla's
 * berkeley-function-call-leaderboard folder at the pinned commit) upstream's own checker entry
 * functions run over the same answers (bench/upstream/bfcl_checker.py), in fresh processes
 * interleaved with assay's, and the table gives both and the ratio from this run.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { provider } from "../providers/bfcl/index.ts"
import { makePlan, run as runExperiment, silent } from "../src/experiment/Runner.ts"
import * as Store from "../src/experiment/Store.ts"
import { check } from "../providers/bfcl/checker.ts"
import { loadAll } from "../providers/bfcl/data.ts"
import { type CorpusEntry, parseCorpus, tasksById } from "../providers/bfcl/equivalence.ts"
import { goldAnswer } from "../providers/bfcl/gold.ts"
import { checkLine } from "./bfcl-line.ts"
import { goalLines, noSideBySide, runChild, runDriver, type Row, table, timeDriver, upstreamFrom } from "./side-by-side.ts"
import { machine, succeeded, timeAssay } from "./support.ts"

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] as number
}

// Wall time and process CPU time of each pass: on a shared machine the wall figure includes time
// spent waiting for a CPU, the CPU figure (user + system, all threads, so GC helpers too) does not.
interface Pass {
  readonly wallMs: number
  readonly cpuMs: number
}
const passes = (n: number, f: () => void): Array<Pass> => {
  const out: Array<Pass> = []
  for (let i = 0; i < n; i++) {
    const start = performance.now()
    const cpu = process.cpuUsage()
    f()
    const used = process.cpuUsage(cpu)
    out.push({ wallMs: performance.now() - start, cpuMs: (used.user + used.system) / 1000 })
  }
  return out
}
const wall = (ps: ReadonlyArray<Pass>): number => median(ps.map((p) => p.wallMs))
const cpu = (ps: ReadonlyArray<Pass>): number => median(ps.map((p) => p.cpuMs))

const fmt = (n: number): string => Math.round(n).toLocaleString("en-US")

export const run = async (): Promise<void> => {
  const dataDir = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"
  const corpus = join(dataDir, "bfcl", "oracle", "verdicts-dev.jsonl")
  const loadStart = performance.now()
  const tasks = await Effect.runPromise(loadAll({ dataDir }))
  const loadMs = performance.now() - loadStart
  const byId = tasksById(tasks)
  const text = await readFile(corpus, "utf8")
  const entries: ReadonlyArray<CorpusEntry> = await Effect.runPromise(parseCorpus(corpus, text))
  const pairs = entries.map((e) => ({ task: byId.get(e.id), outcome: e.outcome }))

  let sink = 0
  // Each answer parsed from its line and graded in turn, as a stream of answers would be.
  const lines = text.split("\n").filter((l) => l.length > 0)
  const withParsePasses = (
    passes(9, () => {
      for (const line of lines) if (checkLine(line, byId)?.valid === true) sink++
    })
  )
  const checkOnlyPasses = (
    passes(9, () => {
      for (const p of pairs) if (p.task !== undefined && check(p.task, p.outcome).valid) sink++
    })
  )
  // Errors are built lazily; this pass reads every error string too, as upstream always builds them.
  const withErrorsPasses = (
    passes(9, () => {
      for (const p of pairs) if (p.task !== undefined) sink += check(p.task, p.outcome).errors.length
    })
  )
  const rate = (ms: number): number => (entries.length / ms) * 1000
  // The first pass of the first row meets the checker's memos empty only when the section runs
  // alone; every later pass reuses what the earlier ones kept, as grading many answers in one process does.
  const row = (label: string, ps: ReadonlyArray<Pass>, cold: boolean): void => {
    const later = cold ? ps.slice(1) : ps
    console.log(
      `  ${label.padEnd(24)}` +
        (cold ? `first pass here ${fmt(rate(ps[0]!.wallMs))} answers/s wall (${ps[0]!.wallMs.toFixed(1)} ms); then ` : "") +
        `median ${fmt(rate(wall(later)))} answers/s wall (${wall(later).toFixed(1)} ms/pass), ${fmt(rate(cpu(later)))} per CPU-second`
    )
  }

  const goldPasses = (
    passes(5, () => {
      for (const t of tasks) if (check(t, { _tag: "Decoded", value: goldAnswer(t) }).valid) sink++
    })
  )

  await sideBySide(dataDir)
  console.log(`bfcl checker over the dev oracle corpus (${fmt(entries.length)} answers) in this process, after the corpus was parsed here, 9 passes each, in the order run; ${machine()}`)
  row("parse line + check", withParsePasses, true)
  row("check only", checkOnlyPasses, false)
  row("check + error strings", withErrorsPasses, false)
  console.log("bfcl gold (all tasks)")
  console.log(`  load 11 categories          ${loadMs.toFixed(0)} ms (${fmt(tasks.length)} tasks, sha256 checked)`)
  console.log(`  gold build + check          ${wall(goldPasses).toFixed(1)} ms wall, ${cpu(goldPasses).toFixed(1)} ms CPU (${((wall(goldPasses) * 1000) / tasks.length).toFixed(2)} µs/task wall)`)
  await goldRun()
  if (sink < 0) console.log(sink)
}

/** What bench/bfcl-pass.ts and bench/upstream/bfcl_checker.py print. */
interface FreshPasses {
  readonly answers: number
  readonly agree?: number
  readonly parse: Pass | null
  readonly passes: ReadonlyArray<Pass>
  readonly stubbed?: ReadonlyArray<string>
}

/**
 * Fresh processes, assay's and upstream's in turn (A B A B), each making 9 passes over the
 * corpus: its first pass meets a cold checker (and, in assay's, code not yet compiled), the
 * next 8 are warm. Rounds: ASSAY_BENCH_ROUNDS (default 3).
 */
const sideBySide = async (dataDir: string): Promise<void> => {
  const upstream = upstreamFrom("ASSAY_BENCH_UPSTREAM_BFCL", join("bfcl_eval", "eval_checker", "eval_runner.py"))
  const rounds = Math.max(1, Number(process.env["ASSAY_BENCH_ROUNDS"] ?? 3))
  const assayLine: Array<FreshPasses> = []
  const assayParsed: Array<FreshPasses> = []
  const upLine: Array<FreshPasses> = []
  const upParsed: Array<FreshPasses> = []
  const env = { ASSAY_DATA_DIR: dataDir }
  // The whole command a user waits on: `assay equivalence bfcl` (node's start, the command's
  // modules, the task files read and sha256-checked, the corpus parsed, checked and compared),
  // against upstream's driver making one pass (Python's start, bfcl_eval's imports, the task files
  // read, the corpus parsed and checked). Once untimed first, so the command's cached build is
  // made (bin/assay.js), as it is on any start after the first.
  const equivalence = async () => succeeded(await timeAssay(["equivalence", "bfcl"], env), "assay equivalence bfcl")
  await equivalence()
  const assayCommand: Array<number> = []
  const upCommand: Array<number> = []
  for (let r = 0; r < rounds; r++) {
    assayLine.push(await runChild<FreshPasses>("bfcl-pass.ts", ["line"], env))
    if (upstream) upLine.push(await runDriver<FreshPasses>(upstream, "bfcl_checker.py", [dataDir, "line"]))
    assayParsed.push(await runChild<FreshPasses>("bfcl-pass.ts", ["parsed"], env))
    if (upstream) upParsed.push(await runDriver<FreshPasses>(upstream, "bfcl_checker.py", [dataDir, "parsed"]))
    assayCommand.push((await equivalence()).wallMs)
    if (upstream) upCommand.push((await timeDriver(upstream, "bfcl_checker.py", [dataDir, "line", "1"])).wallMs)
  }
  const first = (xs: ReadonlyArray<FreshPasses>) => xs.map((x) => x.passes[0]!.wallMs)
  const firstCpu = (xs: ReadonlyArray<FreshPasses>) => xs.map((x) => x.passes[0]!.cpuMs)
  const warm = (xs: ReadonlyArray<FreshPasses>) => xs.map((x) => wall(x.passes.slice(1)))
  const parse = (xs: ReadonlyArray<FreshPasses>) => xs.map((x) => x.parse!.wallMs)
  const u = upstream ? upLine : undefined
  const p = upstream ? upParsed : undefined
  console.log(
    `bfcl checker over the dev oracle corpus (${fmt(assayLine[0]!.answers)} answers), fresh processes, ${rounds} round${rounds > 1 ? "s" : ""}${upstream ? " of assay then upstream" : ""}; ` +
      `each figure the median over the rounds (range); ${machine()}`
  )
  const rows: ReadonlyArray<Row> = [
    {
      measure: "parse line + check + error text, first pass in a fresh process",
      upstream: u && first(u),
      assay: first(assayLine),
      goal: { name: "first pass", atLeast: 2 }
    },
    { measure: "the same, its CPU (assay's counts V8's compiler threads too)", upstream: u && firstCpu(u), assay: firstCpu(assayLine) },
    { measure: "the same, warm: median of the process's next 8 passes", upstream: u && warm(u), assay: warm(assayLine), goal: { name: "warm, by line", atLeast: 4 } },
    {
      measure: "check + error text over answers parsed first, first pass",
      upstream: p && first(p),
      assay: first(assayParsed),
      goal: { name: "check-only first pass", atLeast: 1 }
    },
    { measure: "the same, warm", upstream: p && warm(p), assay: warm(assayParsed) },
    { measure: "parsing the whole corpus before those passes, every field", upstream: p && parse(p), assay: parse(assayParsed) },
    {
      measure: "end to end, start to exit: `assay equivalence bfcl` against upstream's driver making one pass",
      upstream: upstream ? upCommand : undefined,
      assay: assayCommand
    }
  ]
  for (const line of [...table(rows), ...goalLines(rows)]) console.log(line)
  if (upstream) {
    const agree = [...upLine, ...upParsed].map((x) => x.agree ?? 0)
    console.log(
      `  upstream: ${upstream.dir} through bench/upstream/bfcl_checker.py (${upstream.python}); its verdicts agree with the corpus's on ${fmt(Math.min(...agree))} of ${fmt(upLine[0]!.answers)} answers; ` +
        `stood in for (imported, never called on the checker's path): ${upLine[0]!.stubbed?.join(", ") || "nothing"}`
    )
  } else console.log(noSideBySide("ASSAY_BENCH_UPSTREAM_BFCL"))
}


const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

/** `assay run --benchmark bfcl --candidate gold` without the command: the runner into a fresh home. */
const goldRun = async (): Promise<void> => {
  const home = mkdtempSync(join(tmpdir(), "assay-bench-bfcl-"))
  try {
    const program = Effect.gen(function*() {
      const measure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.gen(function*() {
          const start = performance.now()
          const cpu = process.cpuUsage()
          const value = yield* effect
          const used = process.cpuUsage(cpu)
          return { value, wallMs: performance.now() - start, cpuMs: (used.user + used.system) / 1000 }
        })
      const load = yield* measure(provider.environments)
      const environments = load.value
      const gold = { def: provider.rosterDef("gold"), registryEntry: null, agentFor: (env: (typeof environments)[number]) => provider.scripted("gold", env) }
      const plan = yield* measure(makePlan([{ provider, environments, candidates: [gold] }], 1))
      const ran = yield* measure(runExperiment(plan.value, { parallel: 1, maxUsd: null, handlers: {}, progress: silent, settings: {} }))
      const cells = plan.value.cells.length
      const attemptMs = ran.value.attempts.reduce((s, a) => s + a.usage.wallSeconds, 0) * 1000
      const whole = ran.value.report.scorecards.find((c) => c.stratum === null)
      console.log(`bfcl gold through the runner (${fmt(cells)} cells, parallel 1, fresh home; gold mean ${whole?.meanReward ?? "?"} on ${whole?.n ?? "?"} passable)`)
      console.log(`  load tasks (provider)       ${seconds(load.wallMs)} wall, ${seconds(load.cpuMs)} CPU`)
      console.log(`  plan                        ${seconds(plan.wallMs)} wall, ${seconds(plan.cpuMs)} CPU (${(plan.wallMs / cells).toFixed(2)} ms per cell)`)
      console.log(`  run                         ${seconds(ran.wallMs)} wall, ${seconds(ran.cpuMs)} CPU (${(ran.wallMs / cells).toFixed(2)} ms per cell; Attempts themselves ${(attemptMs / cells).toFixed(2)} ms per cell)`)
      console.log(`  total                       ${seconds(load.wallMs + plan.wallMs + ran.wallMs)} wall, ${seconds(load.cpuMs + plan.cpuMs + ran.cpuMs)} CPU`)
    }).pipe(Effect.provide(Store.layer(home)))
    await Effect.runPromise(program)
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

// Run directly: `npx tsx bench/bfcl.ts`.
if (import.meta.url === `file://${process.argv[1]}`) await run()
