/**
 * Run by bench/bfcl.ts as a child process, so its first pass meets what a fresh process has:
 * no memos of the checker, no compiled code for it. Two modes, each in a process of its own:
 *
 * - `line` (default): parses each answer from its line of the dev oracle corpus, checks it and
 *   reads every error text (as upstream always builds them), 9 passes.
 * - `parsed`: parses the whole corpus first (timed apart), then 9 passes of check + error text
 *   over the parsed answers: the checker's first pass cold, its input already in memory, as
 *   upstream's per-entry functions were timed (their answers loaded before the clock started).
 *
 * Prints the passes' wall and CPU times (and, for `parsed`, the parse's) as one JSON line.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { check } from "../providers/bfcl/checker.ts"
import { loadAll } from "../providers/bfcl/data.ts"
import { parseCorpus, tasksById } from "../providers/bfcl/equivalence.ts"
import { checkLine } from "./bfcl-line.ts"

const mode = process.argv[2] === "parsed" ? "parsed" : "line"
const dataDir = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"
const tasks = await Effect.runPromise(loadAll({ dataDir }))
const byId = tasksById(tasks)
const corpus = join(dataDir, "bfcl", "oracle", "verdicts-dev.jsonl")
const text = readFileSync(corpus, "utf8")

interface Timed {
  readonly wallMs: number
  readonly cpuMs: number
}
const timed = (f: () => void): Timed => {
  const start = performance.now()
  const cpu = process.cpuUsage()
  f()
  const used = process.cpuUsage(cpu)
  return { wallMs: performance.now() - start, cpuMs: (used.user + used.system) / 1000 }
}

let sink = 0
let answers = 0
let pass: () => void
let parse: Timed | null = null
if (mode === "line") {
  const lines = text.split("\n").filter((l) => l.length > 0)
  pass = () => {
    answers = 0
    for (const line of lines) {
      const verdict = checkLine(line, byId)
      if (verdict === undefined) continue
      if (verdict.valid) sink++
      for (const e of verdict.errors) sink += e.length
      answers++
    }
  }
} else {
  let pairs: ReadonlyArray<{ readonly task: ReturnType<typeof byId.get>; readonly outcome: Parameters<typeof check>[1] }> = []
  parse = timed(() => {
    pairs = Effect.runSync(parseCorpus(corpus, text)).map((e) => ({ task: byId.get(e.id), outcome: e.outcome }))
  })
  pass = () => {
    answers = 0
    for (const p of pairs) {
      if (p.task === undefined) continue
      const verdict = check(p.task, p.outcome)
      if (verdict.valid) sink++
      for (const e of verdict.errors) sink += e.length
      answers++
    }
  }
}

const passes: Array<Timed> = []
for (let i = 0; i < 9; i++) passes.push(timed(pass))
process.stdout.write(JSON.stringify({ mode, answers, parse, passes, sink }) + "\n")
