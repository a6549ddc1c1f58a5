/**
 * BFCL multi-turn fresh-world cost: per task, its instances loaded from the task's initial config
 * (what the Attempt's setup makes), the world set up with its evidence (the instances' state
 * sha256), and an Attempt's fork of it plus its first call. Every task of every category (long
 * context only when upstream's long_context.py is in the data folder or ASSAY_BFCL_LONG_CONTEXT).
 */
import { Effect, Either } from "effect"
import { isLongContextTask } from "../providers/bfcl/multiturn/checker.ts"
import { loadLongContext } from "../providers/bfcl/multiturn/longContext.ts"
import { CATEGORIES, loadTasks } from "../providers/bfcl/multiturn/tasks.ts"
import { initialSession, taskWorld } from "../providers/bfcl/multiturn/world.ts"
import * as World from "../src/world/World.ts"

const micros = (f: () => unknown): number => {
  const t = process.hrtime.bigint()
  f()
  return Number(process.hrtime.bigint() - t) / 1000
}

const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}

export const run = async (): Promise<void> => {
  const tasks = await Effect.runPromise(loadTasks())
  const longContext = Either.getOrUndefined(await Effect.runPromise(Effect.either(loadLongContext())))
  const usable = tasks.filter((t) => !isLongContextTask(t.id) || longContext !== undefined)
  const lc = (id: string) => (isLongContextTask(id) ? longContext : undefined)
  // Warm-up: every task once, so the figures are a warm process's (a run sets up many tasks).
  for (const t of usable) taskWorld(t, lc(t.id))
  const rows: Array<{ readonly category: string; readonly load: number; readonly setup: number; readonly fork: number }> = []
  for (const t of usable) {
    const load = micros(() => initialSession(t, lc(t.id)))
    let made: ReturnType<typeof taskWorld> | undefined
    const setup = micros(() => (made = taskWorld(t, lc(t.id))))
    const { tools, world } = made!
    // An Attempt's fork, and its first call (which reads the instances the world stands for)
    const fork = micros(() => World.apply(World.fork(world), tools[0]!.run(World.fork(world), { call: "no_such_function()" }).writes))
    rows.push({ category: t.category, load, setup, fork })
  }
  console.log(`fresh worlds per task (µs, warm process; median / p95 / max over the tasks${longContext === undefined ? "; long_context.py absent: its tasks left out" : ""}):`)
  console.log("  category                   tasks   instances loaded        set up (+ state sha256)   fork + first call")
  for (const c of CATEGORIES) {
    const of = rows.filter((r) => r.category === c)
    if (of.length === 0) continue
    const cell = (xs: ReadonlyArray<number>) => `${quantile(xs, 0.5).toFixed(0)} / ${quantile(xs, 0.95).toFixed(0)} / ${Math.max(...xs).toFixed(0)}`.padStart(22)
    console.log(`  ${c.padEnd(25)} ${String(of.length).padStart(6)}   ${cell(of.map((r) => r.load))}   ${cell(of.map((r) => r.setup))}   ${cell(of.map((r) => r.fork))}`)
  }
}
