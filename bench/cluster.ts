/**
 * Three workers against one: latency-bound cells on a cluster (issue 19: "with three workers,
 * latency-bound cells finish at least 2.7× faster than with one"). A Postgres of the bench's own
 * (test/support/postgres.ts), a loopback model answering every call after 3 s, and the same
 * ledger cells (120, then 240) run by `assay run --cluster` on one `assay worker`, then on three, each worker
 * with the same --concurrency, each run in a fresh database. The model's latency is the bound, not
 * the CPU: on a 2-core machine shared with other work the workers' CPU is printed beside the walls.
 *
 * Figures: the command's wall (spawn to exit, as the user waits) and the calls' window (the first
 * request's arrival at a server to the last answer), each for one and three workers, and their
 * ratios, all from this run. The run starts once the workers' shards have settled, as on a cluster
 * that is already up; how long freshly started workers took to settle is printed apart (three
 * started at once pass shards to each other for a few seconds, and a submitter started in that
 * time waits for it, up to 10 s). Each worker has
 * a model server of its own, the same script, so the calls each server answered are the cells its
 * worker ran.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import * as LoopbackServer from "../src/testkit/LoopbackServer.ts"
import * as Postgres from "../test/support/postgres.ts"
import { assayBin, machine, root, seconds, succeeded, timeAssay } from "./support.ts"

// Latency-bound on a 2-core machine: a cell costs ~90 ms of CPU across the workers, the
// submitter and Postgres (measured here), so 30 slots at 1.5 s asked ~1.8 cores and the CPU was
// the bound (1.76x); 15 slots at 3 s ask ~0.45.
const ANSWER_MS = 3000
// ledger has 20 environments: 6 repetitions are 120 cells (24 s of calls on three workers), 12
// are 240 (48 s). Both are run: the command's fixed part (its start, the plan, a cell's two hops
// and the worker's plan of the run, ~2 s before the first call) weighs on the shorter one.
const SHAPES = (process.env["ASSAY_BENCH_CLUSTER_REPS"] ?? "6,12").split(",").map(Number)
const CONCURRENCY = 5
// The submitter keeps twice the cluster's slots submitted (two a lane), so a slot that frees
// finds its next cell already on its worker.
const PARALLEL = 30

/** A worker's own CPU so far (user + system), from /proc. */
const cpuMsOf = (pid: number): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10 // clock ticks of 10 ms (USER_HZ 100)
  } catch {
    return Number.NaN
  }
}

/** Starts `assay worker` (kept in `into` at once, to be stopped whatever happens) and resolves once it has said it joined. */
const startWorker = (into: Array<ChildProcess>, url: string, home: string, env: Record<string, string>): Promise<ChildProcess> =>
  new Promise((ok, fail) => {
    const child = spawn(process.execPath, [assayBin, "worker", "--store", url, "--home", home, "--host", "127.0.0.1", "--concurrency", String(CONCURRENCY)], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"]
    })
    into.push(child)
    let err = ""
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString()
      if (err.includes("assay: worker on port")) ok(child)
    })
    // "close", not "exit": the exit can come before the last of stderr is read, cutting the reason short.
    child.on("close", (code) => fail(new Error(`worker exited ${code}: ${err.slice(-2000)}`)))
  })

/**
 * Waits until `n` workers' lanes have settled, by the submitter's own test (settledLanes in
 * src/cluster/Cluster.ts): each worker names lanes and holds shards, and together they hold all
 * 300. Returns how long that took.
 */
const settle = async (url: string, n: number): Promise<number> => {
  const started = performance.now()
  const query = "SELECT count(*), coalesce(sum(shards), 0), coalesce(min(shards), 0) FROM assay_lanes WHERE updated_at > now() - interval '5 seconds'"
  for (;;) {
    const r = spawnSync(join(Postgres.binDir(), "psql"), [url, "-At", "-F", " ", "-c", query], { encoding: "utf8" })
    const [rows, held, least] = r.status === 0 ? r.stdout.trim().split(" ").map(Number) : [0, 0, 0]
    if (rows === n && held === 300 && (least ?? 0) > 0) return performance.now() - started
    if (performance.now() - started > 60_000) throw new Error(`the workers' shards did not settle in 60 s (${r.stderr || r.stdout})`)
    await new Promise((ok) => setTimeout(ok, 100))
  }
}

const stopAll = (workers: ReadonlyArray<ChildProcess>): Promise<void> =>
  Promise.all(workers.map((w) =>
    w.exitCode !== null ? Promise.resolve() : new Promise<void>((ok) => {
      w.removeAllListeners("exit")
      w.once("exit", () => ok())
      w.kill("SIGTERM")
      setTimeout(() => w.kill("SIGKILL"), 10_000).unref()
    })
  )).then(() => undefined)

interface Measured {
  readonly workers: number
  readonly wallMs: number
  readonly submitterCpuMs: number
  readonly workersCpuMs: number
  readonly windowMs: number
  readonly calls: number
  readonly perWorker: ReadonlyArray<number>
  readonly cellsPerWorker: ReadonlyArray<number>
  /** From the command's spawn to the first call's arrival (at its answer less the latency). */
  readonly leadMs: number
  /** From the last answer to the command's exit. */
  readonly tailMs: number
  /** Each worker's last answer, from the command's spawn. */
  readonly lastAnswerMs: ReadonlyArray<number>
  /** From the workers' joining to their shards' settling (before the command's spawn). */
  readonly settleMs: number
}

const measure = async (pg: Postgres.PgServer, n: number, home: string, reps: number): Promise<Measured> => {
  const scope = await Effect.runPromise(Scope.make())
  const workers: Array<ChildProcess> = []
  try {
    // A model server for each worker, the same script: what each answers is what its worker ran.
    const servers = await Promise.all(Array.from({ length: n }, () =>
      Effect.runPromise(Scope.extend(LoopbackServer.start([{ repeat: true, text: "Done.", usage: { input: 400, output: 10 }, delayMs: ANSWER_MS }]), scope))
    ))
    const envOf = (i: number) => ({ OPENAI_BASE_URL: servers[i]!.openAiBaseUrl, OPENAI_API_KEY: "sk-bench" })
    const env = envOf(0)
    const url = pg.database(`bench_${reps}_${n}`)
    await Promise.all(Array.from({ length: n }, (_, i) => startWorker(workers, url, join(home, `w${reps}-${n}-${i}`), envOf(i))))
    const settleMs = await settle(url, n)
    const cpuBefore = workers.map((w) => cpuMsOf(w.pid!))
    // The servers log a call as they answer: each answer's time, polled every 5 ms.
    const answers: Array<number> = []
    const lastOf = servers.map(() => 0)
    const seen = servers.map(() => 0)
    const poll = setInterval(() => {
      servers.forEach((server, i) => {
        const log = server.requests()
        for (; seen[i]! < log.length; seen[i]!++) {
          if (log[seen[i]!]!.status === 200) {
            answers.push(performance.now())
            lastOf[i] = performance.now()
          }
        }
      })
    }, 5)
    const spawnedAt = performance.now()
    const run = await timeAssay(
      ["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--reps", String(reps), "--home", join(home, `submit${reps}-${n}`), "--store", url, "--cluster", "--parallel", String(PARALLEL), "--yes", "--json"],
      env
    ).finally(() => clearInterval(poll))
    succeeded(run, `assay run --cluster on ${n} worker(s)`)
    const report = JSON.parse(run.stdout) as { cells: { total: number; ran: number } }
    if (report.cells.ran !== reps * 20) throw new Error(`ran ${report.cells.ran} of ${reps * 20} cells`)
    const perWorker = workers.map((w, i) => cpuMsOf(w.pid!) - cpuBefore[i]!)
    return {
      workers: n,
      wallMs: run.wallMs,
      submitterCpuMs: run.cpuMs,
      workersCpuMs: perWorker.reduce((a, b) => a + b, 0),
      windowMs: Math.max(...answers) - (Math.min(...answers) - ANSWER_MS),
      calls: answers.length,
      perWorker,
      cellsPerWorker: servers.map((server) => server.requests().filter((r) => r.status === 200).length),
      leadMs: Math.min(...answers) - ANSWER_MS - spawnedAt,
      tailMs: spawnedAt + run.wallMs - Math.max(...answers),
      lastAnswerMs: lastOf.map((t) => t - spawnedAt),
      settleMs
    }
  } finally {
    await stopAll(workers)
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

export const run = async (): Promise<void> => {
  const home = mkdtempSync(join(tmpdir(), "assay-bench-cluster-"))
  const scope = await Effect.runPromise(Scope.make())
  try {
    const pg = await Effect.runPromise(Scope.extend(Postgres.start, scope))
    for (const reps of SHAPES) {
      const cells = reps * 20
      const ideal = (n: number) => Math.ceil(cells / (n * CONCURRENCY)) * ANSWER_MS
      const results: Array<Measured> = []
      for (const n of [1, 3]) {
        const r = await measure(pg, n, home, reps)
        results.push(r)
        console.log(`${cells} ledger cells on ${n} worker(s) x --concurrency ${CONCURRENCY}, --parallel ${PARALLEL}, the model answering in ${ANSWER_MS / 1000} s; ${machine()}`)
        console.log(`  the workers' shards settled ${seconds(r.settleMs)} after they joined (before the command; not in its wall)`)
        console.log(`  the command ${seconds(r.wallMs)} wall, ${seconds(r.submitterCpuMs)} CPU; calls' window ${seconds(r.windowMs)} (ideal ${seconds(ideal(n))}), ${r.calls} calls`)
        console.log(`  first call ${seconds(r.leadMs)} after the spawn, the exit ${seconds(r.tailMs)} after the last answer; each worker's last answer at ${r.lastAnswerMs.map((t) => seconds(t)).join(", ")}`)
        console.log(`  per cell: ${(r.wallMs / cells).toFixed(0)} ms of wall, ${(r.workersCpuMs / cells).toFixed(1)} ms of workers' CPU (workers: ${r.perWorker.map((c) => seconds(c)).join(", ")} CPU; calls ${r.cellsPerWorker.join(", ")})`)
      }
      const [one, three] = results as [Measured, Measured]
      console.log(`  three workers against one: ${(one.wallMs / three.wallMs).toFixed(2)}x on the command's wall, ${(one.windowMs / three.windowMs).toFixed(2)}x on the calls' window (goal >= 2.7x)`)
    }
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    rmSync(home, { recursive: true, force: true })
  }
}
