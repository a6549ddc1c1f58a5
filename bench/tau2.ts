/**
 * tau2-retail: the cost of grading one task's DB, i.e. fork the initial world, replay the gold
 * actions through the tools and compare digests with the task's cached gold digest, over the
 * 114 tasks; and the memory one world retains (with whatever it keeps of the db.json text it was
 * read from) and what 1,000 live forks with one write each retain beyond it.
 *
 * Upstream's own timing of the same work is a reference figure from another machine (README's
 * table, from the oracle README); no ratio to it is printed here.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Either } from "effect"
import type { Json } from "../src/content/Canonical.ts"
import * as World from "../src/world/World.ts"
import { preparedWorld } from "../providers/tau2/common/prepared.ts"
import { loadRetailData, pinnedFiles, readPinned, retailWorld, tau2Dir, worldFromDbText } from "../providers/tau2/retail/data.ts"
import { upstreamDbHash } from "../providers/tau2/retail/hash.ts"
import { dbCheck, decodeTasks, goldDigest, type Task } from "../providers/tau2/retail/tasks.ts"
import { step } from "../providers/tau2/retail/tools.ts"
import { fileURLToPath } from "node:url"
import { mib, retainedBytes, succeeded, timeNode } from "./support.ts"

const ms = (ns: bigint): number => Number(ns) / 1e6

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}


/** Wall and CPU time of one call, with its result's `source` when it has one. */
type Timed = { readonly ms: number; readonly cpuMs: number; readonly source: string }
const timed = <A>(f: () => A): Timed => {
  const cpu = process.cpuUsage()
  const t = process.hrtime.bigint()
  const result = f() as { readonly source?: unknown }
  const wall = ms(process.hrtime.bigint() - t)
  const used = process.cpuUsage(cpu)
  return { ms: wall, cpuMs: (used.user + used.system) / 1000, source: typeof result?.source === "string" ? `from ${result.source === "prepared" ? "the prepared form" : "the full parse"}` : "" }
}

const timedAsync = async <A>(f: () => Promise<A>): Promise<Timed> => {
  const cpu = process.cpuUsage()
  const t = process.hrtime.bigint()
  const result = (await f()) as { readonly source?: unknown }
  const wall = ms(process.hrtime.bigint() - t)
  const used = process.cpuUsage(cpu)
  return { ms: wall, cpuMs: (used.user + used.system) / 1000, source: typeof result?.source === "string" ? `from ${result.source === "prepared" ? "the prepared form" : "the full parse"}` : "" }
}

/** Upstream's own figure, as the oracle README states it (a reference from another machine). */
const upstreamFreshEnv = (): string => {
  try {
    const readme = readFileSync(join(tau2Dir(), "retail", "oracle", "README.md"), "utf8")
    const m = /fresh environment from db\.json, median of (\d+): ([\d.]+) s/.exec(readme)
    return m === null ? "not found in retail/oracle/README.md" : `median ${(Number(m[2]) * 1000).toFixed(0)} ms of ${m[1]} (retail/oracle/README.md)`
  } catch {
    return "retail/oracle/README.md not found"
  }
}

const goldCalls = (task: Task) =>
  (task.evaluation_criteria?.actions ?? []).map((a) => [a.name, a.arguments as { readonly [key: string]: Json }] as const)

/** fork + gold replay + DB check for one task; returns whether it passed. */
const gradeGold = (initial: World.World, task: Task): boolean => {
  let world = World.fork(initial)
  for (const [name, args] of goldCalls(task)) world = step(world, name, args)[0]
  return dbCheck(initial, task, world)
}

/**
 * In a cache folder of its own, so the first load (no prepared form: the full parse, which then
 * stores the form) and later loads (from the form) are both measured, whatever the user's cache holds.
 */
export const run = async (): Promise<void> => {
  const savedCache = process.env["XDG_CACHE_HOME"]
  const cacheDir = mkdtempSync(join(tmpdir(), "assay-bench-tau2-"))
  process.env["XDG_CACHE_HOME"] = cacheDir
  try {
    await measure()
  } finally {
    if (savedCache === undefined) delete process.env["XDG_CACHE_HOME"]
    else process.env["XDG_CACHE_HOME"] = savedCache
    rmSync(cacheDir, { recursive: true, force: true })
  }
}

const measure = async (): Promise<void> => {
  const loadStart = process.hrtime.bigint()
  const data = await Effect.runPromise(loadRetailData())
  const loadMs = ms(process.hrtime.bigint() - loadStart)
  const againStart = process.hrtime.bigint()
  await Effect.runPromise(loadRetailData())
  const againMs = ms(process.hrtime.bigint() - againStart)
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

  // A fresh world from db.json as a load makes it: read the file, check its sha256, make the world.
  const freshWorld = async () => {
    const text = await Effect.runPromise(readPinned(pinnedFiles.db))
    return Either.getOrThrow(preparedWorld(retailWorld, text, pinnedFiles.db.sha256))
  }
  process.env["XDG_CACHE_HOME"] = join(process.env["XDG_CACHE_HOME"] ?? tmpdir(), "empty") // no form yet
  const firstLoad = await timedAsync(freshWorld)
  const loads: Array<Timed> = []
  for (let i = 0; i < 9; i++) loads.push(await timedAsync(freshWorld))
  const dbText = readFileSync(join(tau2Dir(), pinnedFiles.db.name), "utf8")
  const fullParses = Array.from({ length: 7 }, () => timed(() => Either.getOrThrow(worldFromDbText(dbText))))
  // What the load defers: every record of a fresh world read once (the first full-DB hash does it).
  const readAll: Array<number> = []
  for (let i = 0; i < 5; i++) {
    const w = (await freshWorld()).world
    readAll.push(timed(() => { for (const t of World.tableNames(w)) World.entries(w, t) }).ms)
  }
  const sameWorld = World.equals((await freshWorld()).world, data.initialWorld) && World.equals(Either.getOrThrow(worldFromDbText(dbText)), data.initialWorld)
  const upstream = upstreamFreshEnv()
  // A process's first load, as a command meets it: 5 child processes, the form in the cache.
  const childLoads: Array<{ readonly ms: number; readonly cpuMs: number; readonly source: string }> = []
  for (let i = 0; i < 5; i++) {
    const child = succeeded(await timeNode(["--import", "tsx", fileURLToPath(new URL("./tau2-load.ts", import.meta.url))]), "bench/tau2-load.ts")
    childLoads.push(JSON.parse(child.stdout.trim().split("\n").pop() ?? "{}") as { ms: number; cpuMs: number; source: string })
  }

  const out = (s: string) => process.stdout.write(s + "\n")
  out(`tau2-retail: load + verify + decode the pinned files: ${loadMs.toFixed(0)} ms the first time (no prepared form), ${againMs.toFixed(0)} ms again; 114 gold digests cached in ${cacheMs.toFixed(0)} ms`)
  const msOf = (xs: ReadonlyArray<{ readonly ms: number }>) => xs.map((x) => x.ms)
  const cpuOf = (xs: ReadonlyArray<{ readonly cpuMs: number }>) => xs.map((x) => x.cpuMs)
  out(`a fresh world from db.json (read, sha256 check, world from the prepared form in the user's cache):`)
  out(`  median ${median(msOf(loads)).toFixed(1)} ms wall (min ${Math.min(...msOf(loads)).toFixed(1)}, max ${Math.max(...msOf(loads)).toFixed(1)}), ${median(cpuOf(loads)).toFixed(1)} ms CPU, over ${loads.length} loads; ${loads[0]!.source}`)
  out(`  the first load of a fresh process (bench/tau2-load.ts, 5 processes): median ${median(childLoads.map((c) => c.ms)).toFixed(1)} ms wall (min ${Math.min(...childLoads.map((c) => c.ms)).toFixed(1)}), ${median(childLoads.map((c) => c.cpuMs)).toFixed(1)} ms CPU; from ${[...new Set(childLoads.map((c) => c.source))].join(", ")}`)
  out(`  upstream's fresh environment from db.json (README reference, another machine): ${upstream}`)
  out(`  the first load (no prepared form yet: full parse and check, form stored): ${firstLoad.ms.toFixed(1)} ms wall, ${firstLoad.cpuMs.toFixed(1)} ms CPU; ${firstLoad.source}`)
  out(`  the full parse and check alone (also what a damaged or stale form falls back to): median ${median(msOf(fullParses)).toFixed(1)} ms wall, ${median(cpuOf(fullParses)).toFixed(1)} ms CPU over ${fullParses.length}`)
  out(`  deferred: reading every record of a fresh world once (as the first full-DB hash does): median ${median(readAll).toFixed(1)} ms`)
  out(`  same world (digest) from the form, the full parse and the provider's load: ${sameWorld}; an Attempt forks it (the identity)`)
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
  const fromForm = () => Either.getOrThrow(preparedWorld(retailWorld, readFileSync(dbFile, "utf8"), pinnedFiles.db.sha256)).world
  const parsedBytes = retainedBytes(() => Either.getOrThrow(worldFromDbText(readFileSync(dbFile, "utf8"))))
  const oneBytes = retainedBytes(fromForm)
  const readBytes = retainedBytes(() => {
    const w = fromForm()
    for (const t of World.tableNames(w)) World.entries(w, t)
    return w
  })
  const one = fromForm()
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
  out(`  the db.json text alone ${mib(textBytes)}; one world with what it keeps of the text: from the full parse ${mib(parsedBytes)}; from the prepared form ${mib(oneBytes)} fresh, ${mib(readBytes)} once every record is read`)
  out(`  1,000 live forks with one order write each, beyond that world: ${mib(forksBytes)} = ${(forksBytes / 1000 / 1024).toFixed(1)} KiB per fork, ${((forksBytes / oneBytes) * 100).toFixed(1)}% of one world for all 1,000 (copies: 100,000%)`)
  if (World.size(one, "orders") !== 1000) out("  (unexpected world size)")
}
