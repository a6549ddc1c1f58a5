/**
 * The runner's own cost: 10,000 cells of `gold` on ledger into a fresh home, the bookkeeping
 * per cell beyond the Attempts themselves (planning, store commits, results.jsonl, progress,
 * scorecards), and, in this process, the runner run again on the finished experiment (the command
 * as the user waits on it is the nothing-to-run section).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { provider } from "../providers/ledger/index.ts"
import { makePlan, run as runExperiment, silent } from "../src/experiment/Runner.ts"
import * as Store from "../src/experiment/Store.ts"

const CELLS = Number(process.env["ASSAY_BENCH_CELLS"] ?? 10_000)

export const run = async (): Promise<void> => {
  const home = mkdtempSync(join(tmpdir(), "assay-bench-"))
  try {
    const program = Effect.gen(function*() {
      const environments = yield* provider.environments
      const reps = Math.ceil(CELLS / environments.length)
      const lane = {
        provider,
        environments,
        candidates: [{ def: provider.rosterDef("gold"), registryEntry: null, agentFor: (env: (typeof environments)[number]) => provider.scripted("gold", env) }]
      }
      const t0 = performance.now()
      const plan = yield* makePlan([lane], reps)
      const tPlan = performance.now() - t0
      const t1 = performance.now()
      const outcome = yield* runExperiment(plan, { parallel: 1, maxUsd: null, handlers: {}, progress: silent, settings: {} })
      const tRun = performance.now() - t1
      const attemptSeconds = outcome.attempts.reduce((s, a) => s + a.usage.wallSeconds, 0)
      const cells = plan.cells.length
      const again = []
      for (let i = 0; i < 3; i++) {
        const t2 = performance.now()
        const outcome = yield* runExperiment(plan, { parallel: 1, maxUsd: null, handlers: {}, progress: silent, settings: {} })
        again.push({ ms: performance.now() - t2, ran: outcome.report.cells.ran })
      }
      console.log(`${cells} cells of gold on ledger (parallel 1)`)
      console.log(`  whole run ${(tRun / 1000).toFixed(1)} s = ${(tRun / cells).toFixed(2)} ms per cell; Attempts themselves ${(attemptSeconds * 1000 / cells).toFixed(2)} ms per cell`)
      console.log(`  bookkeeping per cell (run less Attempts): ${((tRun - attemptSeconds * 1000) / cells).toFixed(2)} ms; planning ${(tPlan / cells * 1000).toFixed(0)} µs per cell`)
      console.log(
        `  the runner again on the finished experiment, in this process (not the command): ${again.map((a) => `${a.ms.toFixed(0)} ms`).join(", ")} ` +
          `(the first stores the figures, the others read them back; ${again.map((a) => a.ran).join("/")} cells ran)`
      )
    }).pipe(Effect.provide(Store.layer(home)))
    await Effect.runPromise(program)
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}
