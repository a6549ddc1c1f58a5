/**
 * tau2-retail: the cost of grading one task's DB, i.e. fork the initial world, replay the gold
 * actions through the tools and compare digests with the task's cached gold digest, over the
 * 114 tasks; and the memory of 1,000 live forks with one write each next to one world.
 *
 * Upstream (Python 3.11, 2 CPUs, oracle README): load + validate db.json, replay, get_db_hash:
 * median 0.271 s per task, 32.1 s for the 114. The target here is under 3 ms per task.
 */
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { Effect, Either } from "effect"
import type { Json } from "../src/content/Canonical.ts"
import * as World from "../src/world/World.ts"
import { loadRetailData, pinnedFiles, tau2Dir, worldFromDbText } from "../providers/tau2/retail/data.ts"
import { upstreamDbHash } from "../providers/tau2/retail/hash.ts"
import { dbCheck, decodeTasks, goldDigest, type Task } from "../providers/tau2/retail/tasks.ts"
import { step } from "../providers/tau2/retail/tools.ts"

const UPSTREAM_MEDIAN_S = 0.271
const UPSTREAM_TOTAL_S = 32.1

const ms = (ns: bigint): number => Number(ns) / 1e6

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

const heap = (): number => {
  globalThis.gc?.()
  globalThis.gc?.()
  return process.memoryUsage().heapUsed
}

const goldCalls = (task: Task) =>
  (task.evaluation_criteria?.actions ?? []).map((a) => [a.name, a.arguments as { readonly [key: string]: Json }] as const)

/** fork + gold replay + DB check for one task; returns whether it passed. */
const gradeGold = (initial: World.World, task: Task): boolean => {
  let world = World.fork(initial)
  for (const [name, args] of goldCalls(task)) world = step(world, name, args)[0]
  return dbCheck(initial, task, world)
}

export const run = async (): Promise<void> => {
  const loadStart = process.hrtime.bigint()
  const data = await Effect.runPromise(loadRetailData())
  const loadMs = ms(process.hrtime.bigint() - loadStart)
  const tasks = await Effect.runPromise(decodeTasks(data.tasksJson))
  const initial = data.initialWorld

  // Gold digests are computed once per task (the evaluator caches them by content id).
  const cacheStart = process.hrtime.bigint()
  for (const task of tasks) goldDigest(initial, task)
  const cacheMs = ms(process.hrtime.bigint() - cacheStart)

  for (const task of tasks) gradeGold(initial, task) // warm-up
  const rounds = 7
  const perTask: Array<number> = []
  let passed = 0
  for (const task of tasks) {
    const samples: Array<number> = []
    for (let r = 0; r < rounds; r++) {
      const t = process.hrtime.bigint()
      if (gradeGold(initial, task) && r === 0) passed++
      samples.push(ms(process.hrtime.bigint() - t))
    }
    perTask.push(median(samples))
  }
  const med = median(perTask)
  const total = perTask.reduce((a, b) => a + b, 0)

  // The same work with upstream's own hash instead of the digest (what equivalence runs).
  const hashTimes = tasks.slice(0, 20).map((task) => {
    const t = process.hrtime.bigint()
    let world = World.fork(initial)
    for (const [name, args] of goldCalls(task)) world = step(world, name, args)[0]
    upstreamDbHash(world)
    return ms(process.hrtime.bigint() - t)
  })

  const out = (s: string) => process.stdout.write(s + "\n")
  out(`tau2-retail: load + verify + decode the pinned files once: ${loadMs.toFixed(0)} ms; 114 gold digests cached in ${cacheMs.toFixed(0)} ms`)
  out(`fork + gold replay + DB check, ${tasks.length} tasks (${passed} pass), median of ${rounds} runs per task:`)
  out(`  median ${(med * 1000).toFixed(1)} us per task   (upstream ${UPSTREAM_MEDIAN_S * 1000} ms: ${(UPSTREAM_MEDIAN_S * 1000 / med).toFixed(0)}x faster; target < 3 ms)`)
  out(`  total  ${total.toFixed(1)} ms for the 114  (upstream ${UPSTREAM_TOTAL_S} s: ${((UPSTREAM_TOTAL_S * 1000) / total).toFixed(0)}x)`)
  out(`  with upstream's full-DB hash instead of the digest: median ${median(hashTimes).toFixed(1)} ms per task (first 20 tasks)`)

  // Memory: one world built from db.json, then 1,000 live forks with one order write each.
  const text = await readFile(join(tau2Dir(), pinnedFiles.db.name), "utf8")
  const before = heap()
  const one = Either.getOrThrow(worldFromDbText(text))
  const oneWorld = heap() - before
  const orders = World.entries(one, "orders")
  const forksBefore = heap()
  const forks: Array<World.World> = []
  for (let i = 0; i < 1000; i++) {
    const [key, order] = orders[i % orders.length]!
    forks.push(World.set(World.fork(one), "orders", key, { ...(order as Record<string, Json>), status: "cancelled" }))
  }
  const forksBytes = heap() - forksBefore
  const gcNote = globalThis.gc ? "after gc" : "heap deltas without gc (run node --expose-gc for exact figures)"
  out(`memory (${gcNote}):`)
  out(`  one world: ${(oneWorld / 1e6).toFixed(1)} MB; 1,000 live forks with one write each: ${(forksBytes / 1e6).toFixed(2)} MB`)
  out(`  = ${(forksBytes / 1000 / 1024).toFixed(1)} KiB per fork, ${((forksBytes / oneWorld) * 100).toFixed(1)}% of one world for all 1,000 (copies would be 100,000%)`)
  if (forks.length !== 1000 || World.size(one, "orders") !== 1000) out("  (unexpected world size)")
}
