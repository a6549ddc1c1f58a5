/**
 * BFCL checker throughput over the dev oracle corpus (parse excluded and included), next to
 * upstream's ~38,000 answers/s in one Python process; and the gold check of all 3,491 tasks.
 */
import { readFile } from "node:fs/promises"
import { cpus, loadavg } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { check, type DecodeOutcome } from "../providers/bfcl/checker.ts"
import { loadAll } from "../providers/bfcl/data.ts"
import { type CorpusEntry, parseCorpus, tasksById } from "../providers/bfcl/equivalence.ts"
import { goldAnswer } from "../providers/bfcl/gold.ts"
import { parsePyJson } from "../providers/bfcl/pyjson.ts"

const UPSTREAM_PER_SECOND = 38_000
const TARGET_PER_SECOND = 150_000

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] as number
}

const passes = (n: number, f: () => void): Array<number> => {
  const ms: Array<number> = []
  for (let i = 0; i < n; i++) {
    const start = performance.now()
    f()
    ms.push(performance.now() - start)
  }
  return ms
}

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
  const checkOnly = median(
    passes(9, () => {
      for (const p of pairs) if (p.task !== undefined && check(p.task, p.outcome).valid) sink++
    })
  )
  // Errors are built lazily; this pass reads every error string too, as upstream always builds them.
  const withErrors = median(
    passes(9, () => {
      for (const p of pairs) if (p.task !== undefined) sink += check(p.task, p.outcome).errors.length
    })
  )
  // Each answer parsed from its line and graded in turn, as a stream of answers would be.
  const lines = text.split("\n").filter((l) => l.length > 0)
  const withParse = median(
    passes(9, () => {
      for (const line of lines) {
        const r = parsePyJson(line)
        if (!r.ok || !(r.value instanceof Map)) continue
        const id = r.value.get("id")
        const answer = r.value.get("answer")
        const t = typeof id === "string" ? byId.get(id) : undefined
        if (t === undefined || answer === undefined) continue
        let outcome: DecodeOutcome = { _tag: "Decoded", value: answer }
        if (t.possibleAnswer === null && answer instanceof Map) {
          const d = answer.get("decoded")
          const m = answer.get("decode_error")
          outcome = d !== undefined ? { _tag: "Decoded", value: d } : { _tag: "DecodeError", message: typeof m === "string" ? m : "" }
        }
        if (check(t, outcome).valid) sink++
      }
    })
  )
  const checkRate = (entries.length / checkOnly) * 1000
  const errorsRate = (entries.length / withErrors) * 1000
  const parseRate = (entries.length / withParse) * 1000

  const goldMs = median(
    passes(5, () => {
      for (const t of tasks) if (check(t, { _tag: "Decoded", value: goldAnswer(t) }).valid) sink++
    })
  )

  console.log(`bfcl checker (dev oracle corpus, median of 9 passes; load average ${loadavg()[0]?.toFixed(1)} on ${cpus().length} CPUs)`)
  console.log(`  answers                     ${fmt(entries.length)}`)
  console.log(`  check only                  ${fmt(checkRate)} answers/s (${checkOnly.toFixed(1)} ms/pass)`)
  console.log(`  check + error strings       ${fmt(errorsRate)} answers/s (${withErrors.toFixed(1)} ms/pass)`)
  console.log(`  parse + check               ${fmt(parseRate)} answers/s (${withParse.toFixed(1)} ms/pass)`)
  console.log(`  upstream (Python, 1 proc)   ~${fmt(UPSTREAM_PER_SECOND)} answers/s; target ${fmt(TARGET_PER_SECOND)}`)
  console.log(`  check only / upstream       ${(checkRate / UPSTREAM_PER_SECOND).toFixed(1)}x`)
  console.log(`  check + errors / upstream   ${(errorsRate / UPSTREAM_PER_SECOND).toFixed(1)}x`)
  console.log(`  parse + check / upstream    ${(parseRate / UPSTREAM_PER_SECOND).toFixed(1)}x`)
  console.log("bfcl gold (all tasks)")
  console.log(`  load 11 categories          ${loadMs.toFixed(0)} ms (${fmt(tasks.length)} tasks, sha256 checked)`)
  console.log(`  gold build + check          ${goldMs.toFixed(1)} ms (${((goldMs * 1000) / tasks.length).toFixed(2)} µs/task)`)
  if (sink < 0) console.log(sink)
}

// Run directly: `npx tsx bench/bfcl.ts`.
if (import.meta.url === `file://${process.argv[1]}`) await run()
