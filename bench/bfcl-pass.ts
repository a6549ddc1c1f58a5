/**
 * Run by bench/bfcl.ts as a child process, so its first pass meets what a fresh process has:
 * no memos of the checker, no compiled code for it. Parses each answer from its line of the dev
 * oracle corpus, checks it and reads every error text (as upstream always builds them), 9 passes;
 * prints the passes' wall and CPU times as one JSON line.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { loadAll } from "../providers/bfcl/data.ts"
import { tasksById } from "../providers/bfcl/equivalence.ts"
import { checkLine } from "./bfcl-line.ts"

const dataDir = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"
const tasks = await Effect.runPromise(loadAll({ dataDir }))
const byId = tasksById(tasks)
const lines = readFileSync(join(dataDir, "bfcl", "oracle", "verdicts-dev.jsonl"), "utf8").split("\n").filter((l) => l.length > 0)

let sink = 0
let answers = 0
const pass = (): void => {
  answers = 0
  for (const line of lines) {
    const verdict = checkLine(line, byId)
    if (verdict === undefined) continue
    if (verdict.valid) sink++
    for (const e of verdict.errors) sink += e.length
    answers++
  }
}

const passes: Array<{ readonly wallMs: number; readonly cpuMs: number }> = []
for (let i = 0; i < 9; i++) {
  const start = performance.now()
  const cpu = process.cpuUsage()
  pass()
  const used = process.cpuUsage(cpu)
  passes.push({ wallMs: performance.now() - start, cpuMs: (used.user + used.system) / 1000 })
}
process.stdout.write(JSON.stringify({ answers, passes, sink }) + "\n")
