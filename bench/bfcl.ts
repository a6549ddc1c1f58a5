/**
 * BFCL checker throughput over the dev oracle corpus (parse excluded and included); the gold
 * check of all 3,491 tasks; and the gold run of all 3,491 tasks through the experiment runner
 * (plan, Attempts, store, scorecards).
 *
 * The checker keeps memos for the life of the process (normal forms of strings, per-task answer
 * types), so the first pass over the corpus is shown apart from the later ones, which reuse them.
 * Upstream's own rate is a reference figure from another machine (docs/performance.md's table); no ratio to it
 * is printed here.
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
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { machine, succeeded, timeNode } from "./support.ts"

/** Upstream's rate as the oracle README states it (a reference figure from another machine). */
const upstreamRate = (dataDir: string): string => {
  try {
    const readme = readFileSync(join(dataDir, "bfcl", "oracle", "README.md"), "utf8")
    const section = readme.slice(readme.indexOf("Speed of upstream's checker"))
    const m = /([\d,]+) answers\/s/.exec(section)
    return m === null ? "not found in bfcl/oracle/README.md" : `~${m[1]} answers/s over both halves of its corpus, median of 9 passes in one process (bfcl/oracle/README.md)`
  } catch {
    return "bfcl/oracle/README.md not found"
  }
}

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

  // The first pass in a process of its own: this one has loaded and parsed the corpus already (and
  // may have run other sections), the child has only loaded the tasks.
  const freshChild = async (mode: "line" | "parsed") => {
    const child = succeeded(await timeNode(["--import", "tsx", fileURLToPath(new URL("./bfcl-pass.ts", import.meta.url)), mode]), `bench/bfcl-pass.ts ${mode}`)
    return JSON.parse(child.stdout.trim().split("\n").pop() ?? "{}") as {
      readonly answers: number
      readonly parse: Pass | null
      readonly passes: ReadonlyArray<Pass>
    }
  }
  const fresh = await freshChild("line")
  const parsed = await freshChild("parsed")
  const freshRate = (ms: number): number => (fresh.answers / ms) * 1000
  const warm = fresh.passes.slice(1)

  console.log(`bfcl checker over the dev oracle corpus (${fmt(entries.length)} answers), 9 passes each, in the order run; ${machine()}`)
  console.log(
    `  parse line + check + error text, in a fresh process (bench/bfcl-pass.ts line): first pass ${fmt(freshRate(fresh.passes[0]!.wallMs))} answers/s wall ` +
      `(${fresh.passes[0]!.wallMs.toFixed(1)} ms, ${fresh.passes[0]!.cpuMs.toFixed(1)} ms CPU = ${fmt(freshRate(fresh.passes[0]!.cpuMs))} per CPU-second); ` +
      `warm, its next 8: median ${fmt(freshRate(wall(warm)))} answers/s wall (${wall(warm).toFixed(1)} ms/pass), ${fmt(freshRate(cpu(warm)))} per CPU-second`
  )
  // As upstream's anchor was timed: the answers in memory before the clock starts, the checker cold.
  const parsedRate = (ms: number): number => (parsed.answers / ms) * 1000
  console.log(
    `  check + error text over answers parsed first, in a fresh process (bench/bfcl-pass.ts parsed): parse ${parsed.parse!.wallMs.toFixed(1)} ms wall; ` +
      `then the checker's first pass ${fmt(parsedRate(parsed.passes[0]!.wallMs))} answers/s wall (${parsed.passes[0]!.wallMs.toFixed(1)} ms, ` +
      `${parsed.passes[0]!.cpuMs.toFixed(1)} ms CPU = ${fmt(parsedRate(parsed.passes[0]!.cpuMs))} per CPU-second); ` +
      `its next 8: median ${fmt(parsedRate(wall(parsed.passes.slice(1))))} answers/s wall`
  )
  console.log(`  upstream's checker, same answers (README reference, another machine): ${upstreamRate(dataDir)}`)
  console.log("  in this process, after the corpus was parsed here:")
  row("parse line + check", withParsePasses, true)
  row("check only", checkOnlyPasses, false)
  row("check + error strings", withErrorsPasses, false)
  console.log("bfcl gold (all tasks)")
  console.log(`  load 11 categories          ${loadMs.toFixed(0)} ms (${fmt(tasks.length)} tasks, sha256 checked)`)
  console.log(`  gold build + check          ${wall(goldPasses).toFixed(1)} ms wall, ${cpu(goldPasses).toFixed(1)} ms CPU (${((wall(goldPasses) * 1000) / tasks.length).toFixed(2)} µs/task wall)`)
  await goldRun()
  if (sink < 0) console.log(sink)
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
