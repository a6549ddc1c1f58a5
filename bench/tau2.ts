/**
 * tau2-retail: the cost of grading one task's DB, i.e. fork the initial world, replay the gold
 * actions through the tools and compare digests with the task's cached gold digest, over the
 * 114 tasks; and the memory one world retains (with whatever it keeps of the db.json text it was
 * read from) and what 1,000 live forks with one write each retain beyond it.
 *
 * Upstream's own timing of the same work is a reference figure from another machine (README's
 * table, from the oracle README); no ratio to it is printed here.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either } from "effect"
import type { Json } from "../src/content/Canonical.ts"
import * as World from "../src/world/World.ts"
import { loadRetailData, pinnedFiles, tau2Dir, worldFromDbText } from "../providers/tau2/retail/data.ts"
import { upstreamDbHash } from "../providers/tau2/retail/hash.ts"
import { dbCheck, decodeTasks, goldDigest, type Task } from "../providers/tau2/retail/tasks.ts"
import { step } from "../providers/tau2/retail/tools.ts"
import { mib, retainedBytes } from "./support.ts"

const ms = (ns: bigint): number => Number(ns) / 1e6

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
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

  // A fresh world from the db.json text (parse, decode, per-record digests), as the first load builds it.
  const dbText = readFileSync(join(tau2Dir(), pinnedFiles.db.name), "utf8")
  const worldLoads: Array<number> = []
  for (let r = 0; r < 7; r++) {
    const t = process.hrtime.bigint()
    Either.getOrThrow(worldFromDbText(dbText))
    worldLoads.push(ms(process.hrtime.bigint() - t))
  }

  const out = (s: string) => process.stdout.write(s + "\n")
  out(`tau2-retail: load + verify + decode the pinned files once: ${loadMs.toFixed(0)} ms; 114 gold digests cached in ${cacheMs.toFixed(0)} ms`)
  out(`a fresh world from the db.json text: median ${median(worldLoads).toFixed(1)} ms (min ${Math.min(...worldLoads).toFixed(1)}, max ${Math.max(...worldLoads).toFixed(1)}) over ${worldLoads.length} loads; an Attempt forks it (the identity)`)
  out(`fork + gold replay + DB check, ${tasks.length} tasks (${passed} pass), median of ${rounds} runs per task:`)
  out(`  median ${(med * 1000).toFixed(1)} us per task; total ${total.toFixed(1)} ms for the ${tasks.length}`)
  out(`  with upstream's full-DB hash instead of the digest: median ${median(hashTimes).toFixed(1)} ms per task (first 20 tasks)`)

  if (globalThis.gc === undefined) {
    out("memory: not measured (run node with --expose-gc, as npm run bench does)")
    return
  }
  // Retained sizes after full GCs. The world is built from the file read inside the measurement,
  // so whatever it keeps of the db.json text is counted with it.
  const dbFile = join(tau2Dir(), pinnedFiles.db.name)
  const textBytes = retainedBytes(() => readFileSync(dbFile, "utf8"))
  const oneBytes = retainedBytes(() => Either.getOrThrow(worldFromDbText(readFileSync(dbFile, "utf8"))))
  const one = Either.getOrThrow(worldFromDbText(readFileSync(dbFile, "utf8")))
  const orders = World.entries(one, "orders")
  const forksBytes = retainedBytes(() => {
    const forks: Array<World.World> = []
    for (let i = 0; i < 1000; i++) {
      const [key, order] = orders[i % orders.length]!
      forks.push(World.set(World.fork(one), "orders", key, { ...(order as Record<string, Json>), status: "cancelled" }))
    }
    return forks
  }, (forks) => {
    if (forks.length !== 1000) throw new Error("unreachable")
  })
  out(`memory retained after GC (held less dropped):`)
  out(`  the db.json text alone ${mib(textBytes)}; one world read from it, with what it keeps of the text: ${mib(oneBytes)}`)
  out(`  1,000 live forks with one order write each, beyond that world: ${mib(forksBytes)} = ${(forksBytes / 1000 / 1024).toFixed(1)} KiB per fork, ${((forksBytes / oneBytes) * 100).toFixed(1)}% of one world for all 1,000 (copies: 100,000%)`)
  if (World.size(one, "orders") !== 1000) out("  (unexpected world size)")
}
