/**
 * Overhead of a harness run around the agent CLI itself: fixture copy, process group, transcript
 * parse, diff and graders, measured with the fake CLI (so the agent's own time is ~node start-up).
 * Figures: ms per run, and the share of it that is not the bare CLI process.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { codex } from "../src/harness/adapters/index.ts"
import { loadTask } from "../src/harness/Corpus.ts"
import { diffTrees } from "../src/harness/Diff.ts"
import { findPython } from "../src/harness/Graders.ts"
import { runProcess } from "../src/harness/Process.ts"
import { runHarness } from "../src/harness/Run.ts"

const fake = fileURLToPath(new URL("../test/harness/fake-harness.mjs", import.meta.url))
const corpus = fileURLToPath(new URL("../src/harness/corpus", import.meta.url))

const timeIt = async (n: number, f: () => Promise<unknown>): Promise<number> => {
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await f()
  return (performance.now() - t0) / n
}

export const run = async (): Promise<void> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "assay-bench-harness-"))
  const bin = path.join(dir, "codex")
  fs.writeFileSync(bin, `#!/bin/sh\nexec '${process.execPath}' '${fake}' "$@"\n`, { mode: 0o755 })
  const script = path.join(dir, "script.json")
  fs.writeFileSync(script, JSON.stringify({ answer: "The total is 139.72", writes: { "summary.json": '{"by_category":{},"total":0}' } }))
  const env = { PATH: process.env.PATH ?? "", FAKE_HARNESS_SCRIPT: script }
  const python = await Effect.runPromise(findPython())
  const task = await Effect.runPromise(loadTask(path.join(corpus, "csv-summary")))
  const n = 10
  const bare = await timeIt(n, () =>
    Effect.runPromise(runProcess({ command: bin, args: ["exec", "--json", "x"], cwd: dir, env, timeoutMs: 30_000 }))
  )
  const full = await timeIt(n, () =>
    Effect.runPromise(
      runHarness({ adapter: codex, binary: bin, task, model: "m", endpoint: { baseUrl: "http://127.0.0.1:9", apiKey: "k" }, timeoutMs: 30_000, python, baseEnv: env })
    )
  )
  const bigA = path.join(dir, "a")
  const bigB = path.join(dir, "b")
  fs.mkdirSync(bigA)
  fs.mkdirSync(bigB)
  const lines = Array.from({ length: 2000 }, (_, i) => `line ${i}`)
  fs.writeFileSync(path.join(bigA, "f.txt"), lines.join("\n"))
  fs.writeFileSync(path.join(bigB, "f.txt"), lines.map((l, i) => (i % 50 === 25 ? `${l} changed` : l)).join("\n"))
  const diff = await timeIt(n, async () => diffTrees(bigA, bigB))
  fs.rmSync(dir, { recursive: true, force: true })
  console.log(`bare fake CLI process:               ${bare.toFixed(1)} ms/run`)
  console.log(`full run (csv-summary, 2 graders):    ${full.toFixed(1)} ms/run (${(full / bare).toFixed(2)}x the bare process; python ${python?.version ?? "absent"})`)
  console.log(`diff of a 2000-line file, 40 changes: ${diff.toFixed(1)} ms`)
}
