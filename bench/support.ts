/**
 * What the bench sections share: medians, the machine's load beside every figure, and timing a
 * command as the user waits on it (a child process, its wall time, and its own CPU and peak RSS).
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("..", import.meta.url))
export const assayBin = join(root, "bin", "assay.js")

export const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length === 0 ? Number.NaN : s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** "median 0.81 s (0.74–1.20, 5 runs)" */
export const spread = (xs: ReadonlyArray<number>, unit: (n: number) => string): string =>
  `median ${unit(median(xs))} (${unit(Math.min(...xs))}–${unit(Math.max(...xs))}, ${xs.length} runs)`

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`
export const millis = (ms: number): string => `${ms.toFixed(ms < 10 ? 2 : 0)} ms`
export const count = (n: number): string => Math.round(n).toLocaleString("en-US")

/** A line to print beside figures taken on a shared machine: how busy it was. */
export const machine = (): string => `load average ${loadavg()[0]?.toFixed(1)} on ${cpus().length} CPUs`

/**
 * How fast this machine runs JavaScript this minute, contention included: a fixed single-threaded
 * task (200,000 seeded numbers sorted, a JSON round trip of 20,000 records), the best of 5, in ms.
 * The load average does not show it: on the same 2-CPU machine at load 1-2, the same command's CPU
 * for the same cells was 1.8× as much in one session as in the next. Printed beside each section's
 * figures, so a slow machine shows as one rather than as a slower build.
 */
export const yardstick = (): number => {
  let best = Infinity
  for (let round = 0; round < 5; round++) {
    const t0 = performance.now()
    let seed = 1
    const numbers = Array.from({ length: 200_000 }, () => (seed = (seed * 48271) % 2147483647) / 2147483647)
    numbers.sort((a, b) => a - b)
    const records = Array.from({ length: 20_000 }, (_, i) => ({ i, name: `record-${i}`, tags: ["a", "b"], value: numbers[i * 10] }))
    const back = JSON.parse(JSON.stringify(records)) as ReadonlyArray<{ readonly i: number }>
    if (back.length !== records.length) throw new Error("yardstick: the JSON round trip lost records")
    best = Math.min(best, performance.now() - t0)
  }
  return best
}

export interface CommandRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** From spawning to the child's exit, as the user waits on it. */
  readonly wallMs: number
  /** The child's own CPU time (all its threads), peak RSS and uptime, reported as it exits. */
  readonly cpuMs: number
  readonly maxRssKiB: number
  readonly uptimeMs: number
}

const exitReport = fileURLToPath(new URL("./exit-report.mjs", import.meta.url))

/** Runs `node <args>` (or `command <args>`) as a child, the way a user's shell would, and times it. */
export const timeNode = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}, command: string = process.execPath): Promise<CommandRun> => {
  const dir = mkdtempSync(join(tmpdir(), "assay-bench-exit-"))
  const report = join(dir, "report.json")
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(command, args, {
      cwd: root,
      env: {
        ...process.env,
        ...env,
        ASSAY_BENCH_EXIT_REPORT: report,
        NODE_OPTIONS: `${process.env["NODE_OPTIONS"] ?? ""} --import=${JSON.stringify(exitReport).slice(1, -1)}`.trim()
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", reject)
    child.on("close", (code) => {
      const wallMs = performance.now() - started
      let own = { cpuMs: Number.NaN, maxRssKiB: Number.NaN, uptimeMs: Number.NaN }
      try {
        own = JSON.parse(readFileSync(report, "utf8")) as typeof own
      } catch {
        // the child died before its exit handler ran: its own figures are unknown
      }
      rmSync(dir, { recursive: true, force: true })
      resolve({ code, stdout, stderr, wallMs, ...own })
    })
  })
}

/** `assay ARGS` through bin/assay.js, as installed. */
export const timeAssay = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}): Promise<CommandRun> =>
  // The file itself, as the installed `assay` runs: its first line gives node its flags.
  timeNode(args, env, assayBin)

/** Fails loudly when a timed command did not succeed: a figure of a failed command means nothing. */
export const succeeded = (run: CommandRun, what: string): CommandRun => {
  if (run.code !== 0) throw new Error(`${what} exited ${run.code}: ${run.stderr.slice(-2000)}`)
  return run
}

/** Heap in use after full collections (needs node --expose-gc; NaN without). */
export const heapAfterGc = (): number => {
  if (globalThis.gc === undefined) return Number.NaN
  // Twice: the first pass may leave finalized objects for the second.
  globalThis.gc()
  globalThis.gc()
  return process.memoryUsage().heapUsed
}

/**
 * What `build()` keeps alive, after collections: the heap with its value held, less the heap once
 * the value is dropped. Never below 0: dropping a value frees at most what it held (what else the
 * process allocates meanwhile is its noise, and is reported as 0 rather than a negative size).
 * `build` should read its own inputs (files, texts), so what the value keeps of them is counted.
 */
export const retainedBytes = <A>(build: () => A, check: (a: A) => void = () => {}): number => {
  let value: A | undefined = build()
  const held = heapAfterGc()
  check(value)
  value = undefined
  return Math.max(0, held - heapAfterGc())
}

export const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(2)} MiB`
