/**
 * Run by bench/bfcl.ts as a child process, so its first pass meets what a fresh process has:
 * no memos of the checker, no compiled code for it. Parses each answer from its line of the dev
 * oracle corpus, checks it and reads every error text (as upstream always builds them), 9 passes;
 * prints the passes' wall and CPU times as one JSON line.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { check, type DecodeOutcome } from "../providers/bfcl/checker.ts"
import { loadAll } from "../providers/bfcl/data.ts"
import { tasksById } from "../providers/bfcl/equivalence.ts"
import { parsePyJson } from "../providers/bfcl/pyjson.ts"

const dataDir = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"
const tasks = await Effect.runPromise(loadAll({ dataDir }))
const byId = tasksById(tasks)
const lines = readFileSync(join(dataDir, "bfcl", "oracle", "verdicts-dev.jsonl"), "utf8").split("\n").filter((l) => l.length > 0)

let sink = 0
let answers = 0
const pass = (): void => {
  answers = 0
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
    const verdict = check(t, outcome)
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
