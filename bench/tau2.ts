/**
 * tau2-retail: the cost of a fresh initial world from db.json, in this process and as a fresh
 * process's first load (bench/tau2-load.ts); of grading one task's DB, i.e. fork the initial
 * world, replay the gold actions through the tools and compare digests with the task's cached
 * gold digest, over the 114 tasks; and the memory one world retains (with whatever it keeps of
 * the db.json file it was read from) and what 1,000 live forks with one write each retain beyond it.
 *
 * With ASSAY_BENCH_UPSTREAM_TAU2=DIR (a tau2-bench checkout at the pinned commit) and
 * ASSAY_BENCH_PYTHON, upstream's own get_environment and get_db_hash run on the same files
 * (bench/upstream/tau2_retail.py), interleaved with assay's, and a table gives both and the ratio
 * from this run: a fresh process's first world from db.json (and later ones), the gold check per
 * task, and the fuzz sequences of oracle/fuzz-dev.jsonl. Without it, assay's figures alone.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Either, Schema } from "effect"
import type { Json } from "../src/content/Canonical.ts"
import * as World from "../src/world/World.ts"
import { preparedWorld } from "../providers/tau2/common/prepared.ts"
import { loadRetailData, pinnedFiles, readPinnedBytes, retailWorld, tau2Dir, worldFromDbText } from "../providers/tau2/retail/data.ts"
import { upstreamDbHash } from "../providers/tau2/retail/hash.ts"
import { dbCheck, decodeTasks, goldDigest, type Task } from "../providers/tau2/retail/tasks.ts"
import { step } from "../providers/tau2/retail/tools.ts"
import { fileURLToPath } from "node:url"
import { OracleLine } from "../providers/tau2/common/equivalence.ts"
import { goalLines, noSideBySide, type Row, runChild, runDriver, table, upstreamFrom } from "./side-by-side.ts"
import { machine, mib, succeeded, timeNode } from "./support.ts"

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

/** What bench/tau2-load.ts prints. */
interface ChildLoad {
  readonly ms: number
  readonly cpuMs: number
  readonly readMs: number
  readonly worldMs: number
  readonly source: string
}

/** Heap in use plus array buffers (Buffers live outside the heap), after full collections. */
const inUseAfterGc = (): number => {
  globalThis.gc?.()
  globalThis.gc?.()
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}

/** What `build()` keeps alive (heap and buffers): held less dropped, never below 0 (other allocation is noise). */
const retained = <A>(build: () => A, check: (a: A) => void = () => {}): number => {
  let value: A | undefined = build()
  const held = inUseAfterGc()
  check(value)
  value = undefined
  return Math.max(0, held - inUseAfterGc())
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
    await sideBySide()
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

  // A fresh world from db.json as a load makes it (common/dbDomain.ts): read the file's bytes,
  // check their sha256 (or its note, when the file is as it was when last hashed), make the world.
  const freshWorld = () => {
    const bytes = Effect.runSync(readPinnedBytes(pinnedFiles.db))
    return Either.getOrThrow(preparedWorld(retailWorld, bytes, pinnedFiles.db.sha256))
  }
  process.env["XDG_CACHE_HOME"] = join(process.env["XDG_CACHE_HOME"] ?? tmpdir(), "empty") // no form, no note yet
  const firstLoad = timed(freshWorld)
  const loads: Array<Timed> = []
  for (let i = 0; i < 21; i++) loads.push(timed(freshWorld))
  const dbText = readFileSync(join(tau2Dir(), pinnedFiles.db.name), "utf8")
  const fullParses = Array.from({ length: 7 }, () => timed(() => Either.getOrThrow(worldFromDbText(dbText))))
  // What the load defers: every record of a fresh world read once (the first full-DB hash does it).
  const readAll: Array<number> = []
  for (let i = 0; i < 5; i++) {
    const w = freshWorld().world
    readAll.push(timed(() => { for (const t of World.tableNames(w)) World.entries(w, t) }).ms)
  }
  const sameWorld = World.equals(freshWorld().world, data.initialWorld) && World.equals(Either.getOrThrow(worldFromDbText(dbText)), data.initialWorld)
  // A process's first load, as a command meets it: child processes, the form and the note in the cache.
  const childLoads: Array<ChildLoad> = []
  for (let i = 0; i < 9; i++) {
    const child = succeeded(await timeNode(["--import", "tsx", fileURLToPath(new URL("./tau2-load.ts", import.meta.url))]), "bench/tau2-load.ts")
    childLoads.push(JSON.parse(child.stdout.trim().split("\n").pop() ?? "{}") as ChildLoad)
  }

  const out = (s: string) => process.stdout.write(s + "\n")
  out(`tau2-retail: load + verify + decode the pinned files: ${loadMs.toFixed(0)} ms the first time (no prepared form), ${againMs.toFixed(0)} ms again; 114 gold digests cached in ${cacheMs.toFixed(0)} ms`)
  const msOf = (xs: ReadonlyArray<{ readonly ms: number }>) => xs.map((x) => x.ms)
  const cpuOf = (xs: ReadonlyArray<{ readonly cpuMs: number }>) => xs.map((x) => x.cpuMs)
  out(`a fresh world from db.json (read its bytes, sha256 check by its note, world from the prepared form in the user's cache):`)
  out(`  in this process: median ${median(msOf(loads)).toFixed(1)} ms wall (min ${Math.min(...msOf(loads)).toFixed(1)}, max ${Math.max(...msOf(loads)).toFixed(1)}), ${median(cpuOf(loads)).toFixed(1)} ms CPU, over ${loads.length} loads; ${loads[0]!.source}`)
  const childMs = (f: (c: ChildLoad) => number) => median(childLoads.map(f)).toFixed(1)
  out(`  the first load of a fresh process (bench/tau2-load.ts, ${childLoads.length} processes, timed after its imports): median ${childMs((c) => c.ms)} ms wall (min ${Math.min(...childLoads.map((c) => c.ms)).toFixed(1)}), ${childMs((c) => c.cpuMs)} ms CPU; from ${[...new Set(childLoads.map((c) => c.source))].join(", ")}`)
  out(`    of which reading and checking db.json (readPinnedBytes) ${childMs((c) => c.readMs)} ms wall, the world from the form ${childMs((c) => c.worldMs)} ms wall`)
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
  // Retained sizes after full GCs, the heap and buffers both (a world from the form keeps the
  // file's bytes, outside the heap). The world is built from the file read inside the
  // measurement, so whatever it keeps of the db.json file is counted with it.
  const dbFile = join(tau2Dir(), pinnedFiles.db.name)
  const textBytes = retained(() => readFileSync(dbFile, "utf8"))
  const fromForm = () => Either.getOrThrow(preparedWorld(retailWorld, readFileSync(dbFile), pinnedFiles.db.sha256)).world
  const parsedBytes = retained(() => Either.getOrThrow(worldFromDbText(readFileSync(dbFile, "utf8"))))
  const oneBytes = retained(fromForm)
  const readBytes = retained(() => {
    const w = fromForm()
    for (const t of World.tableNames(w)) World.entries(w, t)
    return w
  })
  const one = fromForm()
  const orders = World.entries(one, "orders")
  const forksBytes = retained(() => {
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
  out(`  the db.json text alone ${mib(textBytes)}; one world with what it keeps of the file: from the full parse ${mib(parsedBytes)}; from the prepared form ${mib(oneBytes)} fresh, ${mib(readBytes)} once every record is read`)
  out(`  1,000 live forks with one order write each, beyond that world: ${mib(forksBytes)} = ${(forksBytes / 1000 / 1024).toFixed(1)} KiB per fork, ${((forksBytes / oneBytes) * 100).toFixed(1)}% of one world for all 1,000 (copies: 100,000%)`)
  if (World.size(one, "orders") !== 1000) out("  (unexpected world size)")
}

/** What bench/tau2-load.ts prints with `later` loads. */
interface ChildLoads extends ChildLoad {
  readonly later: ReadonlyArray<ChildLoad>
}

/** What bench/upstream/tau2_retail.py prints, by mode. */
interface UpstreamLoads {
  readonly loads: ReadonlyArray<{ readonly ms: number; readonly cpuMs: number }>
  readonly stubbed: ReadonlyArray<string>
}
interface UpstreamGold {
  readonly tasks: number
  readonly perTaskMs: ReadonlyArray<number>
}
interface UpstreamFuzz {
  readonly sequences: number
  readonly agree: number
  readonly ms: number
  readonly cpuMs: number
}

/** A cache folder of its own for one child, removed after. */
const inFreshCache = async <A>(f: (env: Readonly<Record<string, string>>) => Promise<A>): Promise<A> => {
  const dir = mkdtempSync(join(tmpdir(), "assay-bench-tau2-child-"))
  try {
    return await f({ XDG_CACHE_HOME: dir })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Assay and upstream in turn (A B A B): a fresh process's first world from db.json and 8 more in
 * it (assay: without a prepared form, by the full parse and check; with the form; upstream:
 * get_environment, which always parses and validates); the gold check of each task (assay: fork +
 * gold replay + digest check; upstream: a fresh environment + the gold actions + get_db_hash, as
 * its evaluator does); and the first ASSAY_BENCH_TAU2_FUZZ (default 100) fuzz-dev sequences (assay:
 * replayed from a fork, each call's content and both DB hashes checked against the oracle's;
 * upstream: a fresh environment, get_response per call, get_db_hash). Rounds: ASSAY_BENCH_ROUNDS
 * (default 3) for the loads, 2 for fuzz, 1 for gold.
 */
const sideBySide = async (): Promise<void> => {
  const upstream = upstreamFrom("ASSAY_BENCH_UPSTREAM_TAU2", join("src", "tau2", "domains", "retail", "environment.py"))
  const rounds = Math.max(1, Number(process.env["ASSAY_BENCH_ROUNDS"] ?? 3))
  const dataDir = join(tau2Dir(), "..")
  const full: Array<ChildLoads> = []
  const formFirst: Array<ChildLoads> = []
  const prepared: Array<ChildLoads> = []
  const up: Array<UpstreamLoads> = []
  // Each round in a cache folder of its own: the first load makes the form (and db.json's sha256
  // note); the full parse then reads the file as a second run does (sha256 by its note), as the
  // load from the form does.
  for (let r = 0; r < rounds; r++) {
    await inFreshCache(async (env) => {
      formFirst.push(await runChild<ChildLoads>("tau2-load.ts", ["first"], env))
      full.push(await runChild<ChildLoads>("tau2-load.ts", ["full", "8"], env))
      if (upstream) up.push(await runDriver<UpstreamLoads>(upstream, "tau2_retail.py", [dataDir, "load", "9"]))
      prepared.push(await runChild<ChildLoads>("tau2-load.ts", ["prepared", "8"], env))
    })
  }
  const data = await Effect.runPromise(loadRetailData())
  const initial = data.initialWorld
  const tasks = await Effect.runPromise(decodeTasks(data.tasksJson))
  // Gold per task, as measure() takes it: warmed once, then the median of 7 runs per task.
  for (const task of tasks) gradeGold(initial, task)
  const assayGold = tasks.map((task) => {
    const samples: Array<number> = []
    for (let i = 0; i < 7; i++) {
      const t = process.hrtime.bigint()
      gradeGold(initial, task)
      samples.push(ms(process.hrtime.bigint() - t))
    }
    return median(samples)
  })
  const upGold = upstream ? await runDriver<UpstreamGold>(upstream, "tau2_retail.py", [dataDir, "gold", "1"]) : undefined
  const fuzzCount = Math.max(1, Number(process.env["ASSAY_BENCH_TAU2_FUZZ"] ?? 100))
  const fuzzText = readFileSync(join(tau2Dir(), "retail", "oracle", "fuzz-dev.jsonl"), "utf8")
  const decodeLine = Schema.decodeUnknownSync(Schema.parseJson(OracleLine))
  const fuzzLines = fuzzText.split("\n").filter((l) => l.length > 0).slice(0, fuzzCount).map((l) => decodeLine(l))
  const assayFuzz: Array<number> = []
  const upFuzz: Array<UpstreamFuzz> = []
  // What upstream's driver does for a sequence, from a fork: each call through the tools (its
  // content and error flag checked against the oracle's, which upstream's driver does not do),
  // then upstream's own DB hash (get_db_hash), compared. `assay equivalence` also takes the
  // oracle's second, canonical hash of the final DB, which upstream's evaluator never computes.
  const replayFuzz = (line: OracleLine): boolean => {
    let world = World.fork(initial)
    for (const action of line.actions) {
      const [next, outcome] = step(world, action.name, action.arguments as { readonly [key: string]: Json })
      world = next
      if (outcome.output !== action.content || outcome.error !== action.error) return false
    }
    return upstreamDbHash(world) === line.upstream_db_hash
  }
  let fuzzAgree = 0
  for (let r = 0; r < 2; r++) {
    const t = process.hrtime.bigint()
    fuzzAgree = fuzzLines.filter(replayFuzz).length
    assayFuzz.push(ms(process.hrtime.bigint() - t))
    if (upstream) upFuzz.push(await runDriver<UpstreamFuzz>(upstream, "tau2_retail.py", [dataDir, "fuzz", String(fuzzCount)]))
  }

  const out = (s: string) => process.stdout.write(s + "\n")
  const firstMs = (xs: ReadonlyArray<ChildLoad>) => xs.map((x) => x.ms)
  const laterMs = (xs: ReadonlyArray<ChildLoads>) => xs.map((x) => median(x.later.map((l) => l.ms)))
  const upFirst = upstream ? up.map((u) => u.loads[0]!.ms) : undefined
  const upLater = upstream ? up.map((u) => median(u.loads.slice(1).map((l) => l.ms))) : undefined
  out(`tau2-retail${upstream ? " side by side" : ""}, ${rounds} round${rounds > 1 ? "s" : ""} of fresh processes${upstream ? ", assay then upstream" : ""}; each figure the median over the rounds (range); ${machine()}`)
  const rows: ReadonlyArray<Row> = [
    {
      measure: "a world from db.json, first in a fresh process: assay's read (sha256 by its note) + full parse and check, no prepared form; upstream's get_environment",
      upstream: upFirst,
      assay: firstMs(full),
      goal: { name: "full parse, first in a process", atLeast: 1 }
    },
    { measure: "the same, the process's next 8 (median)", upstream: upLater, assay: laterMs(full) },
    { measure: "the same, CPU of the first", upstream: upstream ? up.map((u) => u.loads[0]!.cpuMs) : undefined, assay: full.map((x) => x.cpuMs) },
    { measure: "assay's first load with no form (full parse, form made and stored), against upstream's first", upstream: upFirst, assay: firstMs(formFirst) },
    {
      measure: "assay's first load from the prepared form, against upstream's first",
      upstream: upFirst,
      assay: firstMs(prepared),
      goal: { name: "first load from the form", atLeast: 10 }
    },
    { measure: "assay's later loads from the form, against upstream's later", upstream: upLater, assay: laterMs(prepared) },
    {
      measure: `gold check per task, median over ${tasks.length} (assay: fork + replay + digest; upstream: fresh env + replay + get_db_hash)`,
      upstream: upGold && [median(upGold.perTaskMs)],
      assay: [median(assayGold)],
      goal: { name: "gold per task", atLeast: 100 }
    },
    {
      measure: `fuzz-dev, the first ${fuzzLines.length} sequences (assay: fork + replay, each call's content checked, upstream's DB hash; upstream: fresh env + get_response per call + get_db_hash)`,
      upstream: upstream ? upFuzz.map((f) => f.ms) : undefined,
      assay: assayFuzz,
      unit: (x: number) => `${(x / 1000).toFixed(2)} s`,
      goal: { name: "fuzz", atLeast: 20 }
    }
  ]
  for (const line of [...table(rows), ...goalLines(rows)]) out(line)
  out(`  assay's fuzz lines agreeing with the oracle: ${fuzzAgree} of ${fuzzLines.length}`)
  if (upstream) {
    out(
      `  upstream: ${upstream.dir} through bench/upstream/tau2_retail.py (${upstream.python}); its fuzz hashes agree with the oracle's on ${Math.min(...upFuzz.map((f) => f.agree))} of ${fuzzLines.length}; ` +
        `stood in for (imported, never called on the timed path): ${up[0]!.stubbed.join(", ") || "nothing"}`
    )
  } else out(noSideBySide("ASSAY_BENCH_UPSTREAM_TAU2"))
}

