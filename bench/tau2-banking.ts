/**
 * tau2-banking (banking_knowledge, bm25 variant): the cost of grading one task's DB (fork the
 * task's initial world, replay the gold actions through the tools with their requestors, compare
 * the DB digest with the task's cached gold digest) over the 97 tasks; and BM25 queries per
 * second over the 1,000 kb-search-dev queries.
 *
 * Upstream's own timings are reference figures from another machine (docs/performance.md's table, from the
 * banking oracle README); no ratio to them is printed here.
 */
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { Effect, Either } from "effect"
import * as World from "../src/world/World.ts"
import { buildIndex, search } from "../providers/tau2/banking/bm25.ts"
import { bankingDir, loadBankingData } from "../providers/tau2/banking/data.ts"
import { upstreamDbHash } from "../providers/tau2/banking/hash.ts"
import { dbCheck, decodeTasks, goldDigest, goldWorld, initialWorld, type BankingTask } from "../providers/tau2/banking/tasks.ts"
import type { Environment } from "../providers/tau2/banking/tools.ts"

const ms = (ns: bigint): number => Number(ns) / 1e6

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

export const run = async (): Promise<void> => {
  const out = (s: string) => process.stdout.write(s + "\n")
  const loadStart = process.hrtime.bigint()
  const data = await Effect.runPromise(loadBankingData())
  const loadMs = ms(process.hrtime.bigint() - loadStart)
  const indexStart = process.hrtime.bigint()
  const index = buildIndex(data.documents)
  const indexMs = ms(process.hrtime.bigint() - indexStart)
  const env: Environment = { index, discoverable: data.discoverableTools }
  const tasks = await Effect.runPromise(decodeTasks(data))
  const initials = new Map<BankingTask, World.World>(tasks.map((t) => [t, Either.getOrThrow(initialWorld(data, t))]))

  // Cold: the first grading of a task also replays its gold actions for the gold digest.
  const cold: Array<number> = []
  for (const task of tasks) {
    const t = process.hrtime.bigint()
    const init = initials.get(task)!
    dbCheck(env, init, task, goldWorld(env, World.fork(init), task))
    cold.push(ms(process.hrtime.bigint() - t))
  }
  for (const task of tasks) goldDigest(env, initials.get(task)!, task)

  const rounds = 7
  const perTask: Array<number> = []
  let passed = 0
  for (const task of tasks) {
    const init = initials.get(task)!
    const samples: Array<number> = []
    for (let r = 0; r < rounds; r++) {
      const t = process.hrtime.bigint()
      const ok = dbCheck(env, init, task, goldWorld(env, World.fork(init), task))
      samples.push(ms(process.hrtime.bigint() - t))
      if (ok && r === 0) passed++
    }
    perTask.push(median(samples))
  }
  const med = median(perTask)
  const total = perTask.reduce((a, b) => a + b, 0)

  // The same replay with upstream's full-DB hash instead of the digest (what equivalence runs).
  const hashTimes = tasks.slice(0, 20).map((task) => {
    const t = process.hrtime.bigint()
    upstreamDbHash(goldWorld(env, initials.get(task)!, task), data.notes)
    return ms(process.hrtime.bigint() - t)
  })

  // BM25: the 1,000 dev queries, repeated for at least one second.
  const text = await readFile(join(bankingDir(), "oracle", "kb-search-dev.jsonl"), "utf8")
  const queries = text
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => (JSON.parse(l) as { readonly query: string }).query)
  let n = 0
  const qStart = process.hrtime.bigint()
  let elapsed = 0
  while (elapsed < 1000) {
    for (const q of queries) search(index, q)
    n += queries.length
    elapsed = ms(process.hrtime.bigint() - qStart)
  }
  const qps = (n / elapsed) * 1000

  out(`tau2-banking: load + verify the pinned files (db, 698 documents, 97 tasks): ${loadMs.toFixed(0)} ms; BM25 index: ${indexMs.toFixed(0)} ms`)
  out(`  (built once per process, then shared by every Attempt)`)
  out(`fork + gold replay + DB check, ${tasks.length} tasks (${passed} pass), median of ${rounds} runs per task, gold digest cached:`)
  out(`  median ${(med * 1000).toFixed(1)} us per task; total ${total.toFixed(1)} ms for the ${tasks.length}`)
  out(`  first grading of a task (gold digest computed too): median ${median(cold).toFixed(2)} ms`)
  out(`  with upstream's full-DB hash instead of the digest: median ${median(hashTimes).toFixed(1)} ms per task (first 20 tasks)`)
  out(`BM25 KB_search ranking (top 10 of 698 documents): ${qps.toFixed(0)} queries/s (${((1 / qps) * 1e6).toFixed(0)} us per query, ${n} queries)`)
}
