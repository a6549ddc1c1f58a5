/**
 * Whether `--parallel N` keeps N model calls in flight: ledger cells of one model candidate
 * against the loopback server (in this process) answering every call in 2 s, the command in a
 * child process. Each cell makes one call (the model answers with text and no tool call), so
 * with every slot busy the calls take ceil(cells / N) x 2 s.
 *
 * Busy share: in-flight calls averaged over the window from the first call's start to the last
 * answer, divided by N. The server logs a call when it answers, 2 s after it arrived; the log is
 * polled every 5 ms, so each call's interval is [answer - 2 s, answer] to within a poll.
 *
 * A `--parallel` slot is one model call in flight (docs/running.md, "Parallel slots"): the busy share is
 * exactly what the slots are for.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import * as LoopbackServer from "../src/testkit/LoopbackServer.ts"
import { count, machine, seconds, succeeded, timeAssay } from "./support.ts"

const ANSWER_MS = 2000
const POLL_MS = 5

interface Case {
  readonly cells: number
  readonly parallel: number
}

const cases: ReadonlyArray<Case> = [
  { cells: 500, parallel: 100 },
  { cells: 5000, parallel: 1000 }
]

const measure = (c: Case) =>
  Effect.gen(function*() {
    const server = yield* LoopbackServer.start([{ repeat: true, text: "done", usage: { input: 100, output: 10 }, delayMs: ANSWER_MS }])
    const home = mkdtempSync(join(tmpdir(), "assay-bench-slots-"))
    const answers: Array<number> = []
    let serverCpuMs = 0
    let seen = 0
    const poll = setInterval(() => {
      const fresh = server.requestsFrom(seen)
      const now = performance.now()
      seen += fresh.length
      for (const r of fresh) if (r.method === "POST" && r.status === 200) answers.push(now)
    }, POLL_MS)
    const reps = Math.ceil(c.cells / 20)
    const started = performance.now()
    // The server shares the machine with the command: its CPU is said, so a server that could not
    // keep up shows as such rather than as empty slots of the command's.
    const serverCpu0 = process.cpuUsage()
    const run = yield* Effect.promise(() =>
      timeAssay(
        ["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--reps", String(reps), "--parallel", String(c.parallel), "--home", home, "--yes", "--json"],
        { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-bench" }
      )
    ).pipe(Effect.ensuring(Effect.sync(() => {
      const used = process.cpuUsage(serverCpu0)
      serverCpuMs = (used.user + used.system) / 1000
      clearInterval(poll)
      rmSync(home, { recursive: true, force: true })
    })))
    succeeded(run, `assay run --parallel ${c.parallel}`)
    const report = JSON.parse(run.stdout) as { cells: { total: number; ran: number } }
    if (answers.length !== report.cells.ran) throw new Error(`${answers.length} calls answered for ${report.cells.ran} cells run: not one call per cell`)
    const sorted = [...answers].sort((a, b) => a - b)
    const first = sorted[0]! - ANSWER_MS
    const last = sorted[sorted.length - 1]!
    const window = last - first
    const busy = (answers.length * ANSWER_MS) / (c.parallel * window)
    const ideal = Math.ceil(answers.length / c.parallel) * ANSWER_MS
    // In flight at each 100 ms of the window: where slots stand empty, and when.
    const profile: Array<number> = []
    for (let t = first + 50; t < last; t += 100) profile.push(answers.filter((a) => a - ANSWER_MS <= t && t < a).length)
    const firstCall = first - started
    // How long the first N calls took to go out, and the last N to come back: the window is about
    // 10 s plus these, whatever the middle does.
    const wave = Math.min(c.parallel, sorted.length)
    const firstWave = sorted[wave - 1]! - sorted[0]!
    const lastWave = last - sorted[sorted.length - wave]!
    return { c, run, calls: answers.length, window, busy, ideal, firstCall, profile, serverCpuMs, firstWave, lastWave }
  }).pipe(Effect.scoped)

/** In-flight calls per second of the window: the least and the most of each second's samples. */
const shape = (profile: ReadonlyArray<number>): string => {
  const out: Array<string> = []
  for (let i = 0; i < profile.length; i += 10) {
    const s = profile.slice(i, i + 10)
    out.push(`${Math.min(...s)}-${Math.max(...s)}`)
  }
  return out.join(" ")
}

/**
 * Effect operations per cell (src/observability/OpCount.ts): one model call a cell, the model
 * answering at once, a 1,000-cell run's count less a 20-cell run's over the 980 cells between
 * (start-up and the report cancel out). Unlike the timings above it hardly moves between runs.
 */
const operationsPerCell = Effect.gen(function*() {
  const server = yield* LoopbackServer.start([{ repeat: true, text: "done", usage: { input: 100, output: 10 } }])
  const countOf = (reps: number) =>
    Effect.promise(async () => {
      const home = mkdtempSync(join(tmpdir(), "assay-bench-ops-"))
      const file = join(home, "ops.txt")
      try {
        const r = await timeAssay(
          ["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--reps", String(reps), "--parallel", "1000", "--home", home, "--yes", "--json"],
          { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-bench", ASSAY_COUNT_OPS: file }
        )
        succeeded(r, `assay run --reps ${reps} counting operations`)
        return Number(readFileSync(file, "utf8").trim())
      } finally {
        rmSync(home, { recursive: true, force: true })
      }
    })
  const few = yield* countOf(1)
  const many = yield* countOf(50)
  if (!(many > few)) throw new Error(`operation counts ${few} (20 cells) and ${many} (1,000 cells): the larger run should count more`)
  return { few, many, perCell: (many - few) / 980 }
}).pipe(Effect.scoped)

export const run = async (): Promise<void> => {
  const only = process.env["ASSAY_BENCH_SLOTS"] // e.g. "500:100" runs one case
  for (const c of cases.filter((k) => only === undefined || only === `${k.cells}:${k.parallel}`)) {
    const r = await Effect.runPromise(measure(c))
    console.log(`${count(r.calls)} ledger cells at --parallel ${c.parallel}, the model answering in ${ANSWER_MS / 1000} s; ${machine()}`)
    console.log(`  busy share ${r.busy.toFixed(2)} (in flight averaged over the calls' window / ${c.parallel})`)
    console.log(`  calls' window ${seconds(r.window)} against an ideal ${seconds(r.ideal)}; the command ${seconds(r.run.wallMs)} wall ` +
      `(first call sent ${seconds(r.firstCall)} after spawn), ${seconds(r.run.cpuMs)} CPU (${(r.run.cpuMs / r.calls).toFixed(1)} ms per cell, start-up included), ` +
      `peak RSS ${(r.run.maxRssKiB / 1024).toFixed(0)} MiB; the loopback server (this process) ${seconds(r.serverCpuMs)} CPU`)
    console.log(`  the first ${c.parallel} calls went out over ${seconds(r.firstWave)}, the last ${c.parallel} came back over ${seconds(r.lastWave)}`)
    console.log(`  in flight, least-most per second of the window: ${shape(r.profile)}`)
  }
  const ops = await Effect.runPromise(operationsPerCell)
  console.log(`Effect operations per ledger cell of one model call, answered at once: ${ops.perCell.toFixed(0)} ` +
    `(${count(ops.many)} for 1,000 cells less ${count(ops.few)} for 20, over the 980 between)`)
}
