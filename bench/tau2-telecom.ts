/**
 * tau2-telecom: the cost of grading one task, i.e. fork the fresh environment, run the task's
 * initialization actions (with syncs), replay its gold actions (agent and user tools, with
 * syncs), then check it (env assertions, ACTION, DB digest against the cached gold digest),
 * over the 114 tasks; and the same from the cached initial state of each task, which is what an
 * Attempt forks.
 *
 * Upstream's own timing is a reference figure from another machine (docs/performance.md's table, from the
 * oracle README); no ratio to it is printed here.
 */
import { Effect, Either } from "effect"
import * as World from "../src/world/World.ts"
import { loadTelecomData } from "../providers/tau2/telecom/data.ts"
import { upstreamDbHash, upstreamUserDbHash } from "../providers/tau2/telecom/hash.ts"
import {
  actionCheck,
  dbCheck,
  decodeTasks,
  envAssertionCheck,
  goldDigest,
  taskInitialWorld,
  taskInitialWorldCached,
  type Task
} from "../providers/tau2/telecom/tasks.ts"
import { call, type Args } from "../providers/tau2/telecom/tools.ts"

const ms = (ns: bigint): number => Number(ns) / 1e6

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** Gold calls, then every deterministic check; whether the task passes. */
const replayAndCheck = (fresh: World.World, start: World.World, task: Task): boolean => {
  let world = World.fork(start)
  const gold = task.evaluation_criteria?.actions ?? []
  for (const a of gold) world = call(world, a.name, a.requestor, a.arguments as Args).world
  const env = envAssertionCheck(task, world)
  const actions = actionCheck(task, gold)
  dbCheck(fresh, task, world)
  return env.reward === 1 && actions.reward === 1
}

const fromFresh = (fresh: World.World, task: Task): boolean => {
  const start = taskInitialWorld(fresh, task)
  return Either.isRight(start) && replayAndCheck(fresh, start.right, task)
}

const fromCached = (fresh: World.World, task: Task): boolean => {
  const start = taskInitialWorldCached(fresh, task)
  return Either.isRight(start) && replayAndCheck(fresh, start.right, task)
}

const timeTasks = (tasks: ReadonlyArray<Task>, grade: (task: Task) => boolean, rounds: number) => {
  const perTask: Array<number> = []
  let passed = 0
  let totalMs = 0
  for (let r = 0; r < rounds; r++) {
    const roundStart = process.hrtime.bigint()
    for (const task of tasks) {
      const t0 = process.hrtime.bigint()
      if (grade(task) && r === 0) passed++
      perTask.push(ms(process.hrtime.bigint() - t0))
    }
    totalMs += ms(process.hrtime.bigint() - roundStart)
  }
  return { medianMs: median(perTask), totalMs: totalMs / rounds, passed }
}

export const run = async (): Promise<void> => {
  const loadStart = process.hrtime.bigint()
  const data = await Effect.runPromise(loadTelecomData())
  const loadMs = ms(process.hrtime.bigint() - loadStart)
  const tasks = await Effect.runPromise(decodeTasks(data.tasksJson))
  const fresh = data.initialWorld

  // Gold digests are computed once per task (cached by content id), as the evaluator does.
  const cacheStart = process.hrtime.bigint()
  for (const task of tasks) goldDigest(fresh, task)
  const cacheMs = ms(process.hrtime.bigint() - cacheStart)

  for (const task of tasks) fromCached(fresh, task) // warm-up
  const rounds = 5
  const a = timeTasks(tasks, (t) => fromFresh(fresh, t), rounds)
  const b = timeTasks(tasks, (t) => fromCached(fresh, t), rounds)

  // Upstream's own hashes serialize both DBs: an equivalence cost, not a grading one.
  const hashStart = process.hrtime.bigint()
  for (let i = 0; i < 200; i++) {
    upstreamDbHash(fresh)
    upstreamUserDbHash(fresh)
  }
  const hashMs = ms(process.hrtime.bigint() - hashStart) / 200

  console.log("tau2-telecom: per-task fork + gold replay + check (114 tasks, median of 5 rounds)")
  console.log(`  load + hash-check + decode pinned files: ${loadMs.toFixed(1)} ms (once)`)
  console.log(`  gold digests, all tasks (cached after):  ${cacheMs.toFixed(1)} ms`)
  console.log(
    `  from fresh env (init actions + gold + checks): median ${(a.medianMs * 1000).toFixed(0)} µs/task, ${a.totalMs.toFixed(1)} ms for 114, passed ${a.passed}/114`
  )
  console.log(
    `  from cached task initial state:              median ${(b.medianMs * 1000).toFixed(0)} µs/task, ${b.totalMs.toFixed(1)} ms for 114, passed ${b.passed}/114`
  )
  console.log(`  upstream-format DB + user DB hashes: ${(hashMs * 1000).toFixed(0)} µs per pair`)
}
