/**
 * Several workers on one Postgres store, as users start them: `assay worker` processes and a
 * submitting `assay run --cluster`, against a real Postgres and a loopback model that answers
 * each call after 500 ms. One worker is SIGKILLed mid-run (bin/assay.js runs the command in its
 * own process, so the signal reaches the runner itself).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createServer, type AddressInfo } from "node:net"
import { loadavg } from "node:os"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "@effect/sql"
import * as Sharding from "@effect/cluster/Sharding"
import * as Snowflake from "@effect/cluster/Snowflake"
import * as Cluster from "../../src/cluster/Cluster.ts"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import type { Model } from "../../src/model/Model.ts"
import * as Registry from "../../src/model/Registry.ts"
import * as RateLimit from "../../src/cluster/RateLimit.ts"
import * as Store from "../../src/experiment/Store.ts"
import { assay, bin, root, tempDir } from "../cli/support.ts"
import * as Postgres from "../support/postgres.ts"
import * as Arrivals from "./arrivals.ts"

let scope: Scope.CloseableScope
let server: Postgres.PgServer
let model: LoopbackServer.LoopbackServer
// The worker that is killed talks to a server of its own: the kill waits until it has calls there.
let doomedModel: LoopbackServer.LoopbackServer
const children = new Set<ChildProcess>()

// One model call per cell, answered after 500 ms: latency-bound cells.
const script = [{ text: "Done.", usage: { input: 400, output: 10 }, repeat: true, delayMs: 500 }]

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  server = await Effect.runPromise(Scope.extend(Postgres.start, scope))
  model = await Effect.runPromise(Scope.extend(LoopbackServer.start(script), scope))
  doomedModel = await Effect.runPromise(Scope.extend(LoopbackServer.start(script), scope))
})
afterAll(async () => {
  await Promise.all([...children].map((child) => stop(child, "SIGKILL")))
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const modelEnv = () => ({ OPENAI_BASE_URL: model.openAiBaseUrl, OPENAI_API_KEY: "sk-test-SECRET123" })

/** Starts `assay worker` and resolves once it says it has joined. */
const startWorker = (url: string, concurrency: number, env: Record<string, string> = modelEnv()): Promise<ChildProcess> =>
  new Promise((ok, fail) => {
    const child = spawn(process.execPath, [bin, "worker", "--store", url, "--home", tempDir(), "--host", "127.0.0.1", "--concurrency", String(concurrency)], {
      cwd: root,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ASSAY_DATA_DIR: process.env["ASSAY_DATA_DIR"] ?? "", ...env },
      stdio: ["ignore", "ignore", "pipe"]
    })
    track(child)
    let err = ""
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString()
      if (err.includes("assay: worker on port")) ok(child)
    })
    // "close", not "exit": the exit can come before the last of stderr is read, cutting the reason short.
    child.on("close", (code) => fail(new Error(`worker exited ${code}: ${err}`)))
  })

// A child's exit as seen by its "exit" event (exitCode alone was not enough under Deno, where a
// worker SIGTERMed at a test's end was left running after the suite).
const exited = new WeakSet<ChildProcess>()
const track = (child: ChildProcess) => {
  children.add(child)
  child.once("exit", () => exited.add(child))
}

/** Sends `signal` (a SIGTERM becomes a SIGKILL after 10 s); resolves once the child has exited. */
const stop = (child: ChildProcess, signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> =>
  new Promise((ok) => {
    if (exited.has(child)) return ok()
    const killer = signal === "SIGTERM" ? setTimeout(() => child.kill("SIGKILL"), 10_000) : undefined
    child.once("exit", () => {
      clearTimeout(killer)
      ok()
    })
    child.kill(signal)
  })

const query = <Row extends object>(url: string, text: string): Promise<ReadonlyArray<Row>> =>
  Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Row>(text)).pipe(Effect.provide(Store.postgresClient(url)), Effect.scoped))

const selection = ["--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--reps", "15"]
const oneRep = ["--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--reps", "1"]

interface Card {
  readonly candidate: string
  readonly stratum: string | null
  readonly n: number
  readonly meanReward: number
  readonly tokens: { readonly input: number; readonly output: number }
  readonly costUsd: number | null
}
interface RunJson {
  readonly runId: string
  readonly cells: Record<string, number>
  readonly scorecards: ReadonlyArray<Card>
  readonly spend: { readonly experimentUsd: number; readonly calls: number }
}

const figures = (r: RunJson) => r.scorecards.map((s) => ({ candidate: s.candidate, stratum: s.stratum, n: s.n, meanReward: s.meanReward, tokens: s.tokens, costUsd: s.costUsd }))

describe("a cluster of workers", () => {
  it("with no worker alive, run --cluster says so, runs nothing and exits 1", async () => {
    const url = server.database("lonely")
    const result = await assay(["run", ...oneRep, "--home", tempDir(), "--store", url, "--cluster", "--yes"], modelEnv())
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("no worker is alive")
    expect(model.requests().length).toBe(0)
  })

  // A port taken by someone else: the library's own message is only "Open" (seen in CI, where a
  // port found free was taken before the runner listened: without --port another is now tried).
  it("a worker whose --port is taken says which port and why in one line, and exits 1", async () => {
    const taken = createServer()
    const port = await new Promise<number>((ok) => taken.listen(0, "0.0.0.0", () => ok((taken.address() as AddressInfo).port)))
    try {
      const result = await assay(["worker", "--store", server.database("taken"), "--home", tempDir(), "--host", "127.0.0.1", "--port", String(port)], modelEnv())
      expect(result.code).toBe(1)
      expect(result.stderr.trim().split("\n")).toEqual([
        `assay: the worker cannot listen on port ${port} (listen EADDRINUSE: address already in use 0.0.0.0:${port}): pass a free one with --port P, or leave --port out to have one found`
      ])
    } finally {
      await new Promise((ok) => taken.close(ok))
    }
  }, 60_000)

  // @effect/cluster makes its tables unlocked as a runner starts: workers started together on a
  // fresh database raced on Postgres's catalog and one died at start (seen in CI).
  it("four workers started at once on a fresh database all join", async () => {
    const url = server.database("together")
    const started = await Promise.allSettled([0, 1, 2, 3].map(() => startWorker(url, 1)))
    try {
      expect(started.map((s) => (s.status === "rejected" ? String(s.reason) : "joined"))).toEqual(Array(4).fill("joined"))
    } finally {
      await Promise.all(started.flatMap((s) => (s.status === "fulfilled" ? [stop(s.value)] : [])))
    }
  }, 120_000)

  it("a submitter makes its message ids with a machine id no worker has: with half of them taken, each of 5 clients gets a free one", async () => {
    const url = server.database("submitter_ids")
    const machineIdOfClient = Effect.scoped(Effect.flatMap(Layer.build(Cluster.clientLayer(url)), (context) =>
      Effect.map(Context.get(context, Sharding.Sharding).getSnowflake, Snowflake.machineId)))
    // The tables first, then workers' rows as @effect/cluster numbers them: every odd id up to
    // 1,023, long dead (a Sharding reads only runners with a recent heartbeat).
    await Effect.runPromise(machineIdOfClient)
    await query(url, `INSERT INTO cluster_runners (machine_id, address, runner, healthy, last_heartbeat)
      SELECT i, '127.0.0.1:' || (20000 + i), '{}', false, '2000-01-01' FROM generate_series(1, 1023, 2) AS i`)
    // Registrations draw from the sequence, again-registering workers too: the next workers take 2,001 on.
    await query(url, "SELECT setval(pg_get_serial_sequence('cluster_runners', 'machine_id'), 2000)")
    const ids: Array<number> = []
    for (let i = 0; i < 5; i++) ids.push(await Effect.runPromise(machineIdOfClient))
    // Free: the even ids but the next 64 workers joining would take (2,001-2,064, that is 977-1,023
    // and 0-16 of 1,024). A client drawing at random (as @effect/cluster's own does) passes 5 in a
    // row 2% of the time.
    expect(ids.filter((id) => id % 2 === 1 || id >= 977 || id <= 16)).toEqual([])
  }, 60_000)

  it("300 cells on three workers, one SIGKILLed mid-run: every cell certified once, the same report as one process, the spend the server answered", async () => {
    const price = (await Effect.runPromise(Registry.resolve("openai:gpt-4o-mini").pipe(Effect.provide(Registry.layer)))).model.cost!
    const costOf = (requests: ReadonlyArray<LoopbackServer.LoggedRequest>) =>
      requests.filter((r) => r.status === 200).reduce((sum, r) => sum + ((r.usage?.input ?? 0) * price.input + (r.usage?.output ?? 0) * price.output) / 1e6, 0)

    // Where the time goes (printed): the one-process run, the workers' start, the cluster's run.
    const t0 = performance.now()
    const phase = (from: number) => `${((performance.now() - from) / 1000).toFixed(1)} s`
    // One process, the home's SQLite store: the report to match, its 300 calls in one wave; the
    // workers start meanwhile (they wait on the cluster's own database).
    const url = server.database("cluster")
    const doomedEnv = { OPENAI_BASE_URL: doomedModel.openAiBaseUrl, OPENAI_API_KEY: "sk-test-SECRET123" }
    const starting = Promise.allSettled([startWorker(url, 10, doomedEnv), startWorker(url, 10), startWorker(url, 10)])
    const local = await assay(["run", ...selection, "--home", tempDir(), "--parallel", "300", "--yes", "--json"], modelEnv())
    const localTook = phase(t0)
    const started = await starting
    const startTook = phase(t0)
    expect(local.code, local.stderr).toBe(0)
    const alone = JSON.parse(local.stdout) as RunJson
    expect(alone.cells).toMatchObject({ total: 300, ran: 300 })
    const workers = started.map((s) => {
      if (s.status === "rejected") throw s.reason
      return s.value
    })
    const before = model.requests().length
    const t2 = performance.now()
    const clusterRequests = () => [...model.requestsFrom(before), ...doomedModel.requests()]
    try {
      const submitted = assay(["run", ...selection, "--home", tempDir(), "--store", url, "--cluster", "--parallel", "60", "--yes", "--json"], modelEnv())
      // Mid-run: once the servers have answered 60 of the cluster's calls and the first worker
      // has calls waiting on its answers, that worker dies.
      for (let i = 0; i < 1200 && (clusterRequests().length < 60 || doomedModel.delayed() === 0); i++) await new Promise((r) => setTimeout(r, 50))
      const caught = doomedModel.delayed()
      workers[0]!.kill("SIGKILL")
      const killedAt = phase(t2)
      const result = await submitted
      console.log(`kill test: one process ${localTook}; workers started ${startTook} (beside it); cluster run ${phase(t2)} (SIGKILL at ${killedAt}, ${caught} of its calls in flight); load ${loadavg()[0]!.toFixed(1)}`)
      expect(caught).toBeGreaterThan(0)
      expect(result.code, result.stderr).toBe(0)
      const clustered = JSON.parse(result.stdout) as RunJson
      expect(clustered.cells).toMatchObject({ total: 300, ran: 300, skipped: 0 })
      expect(figures(clustered)).toEqual(figures(alone))

      // Certified exactly once: one Attempt per cell in the store.
      const perCell = await query<{ cell: string; n: string }>(url, "SELECT cell, count(*) AS n FROM attempts GROUP BY cell")
      expect(perCell).toHaveLength(300)
      expect(perCell.every((r) => Number(r.n) === 1)).toBe(true)

      // The kill caught calls in flight, so the servers were asked more than once for some cell
      // (a call the dead worker never saw answered is logged 499, not 200).
      const answered = clusterRequests()
      expect(answered.length).toBeGreaterThan(300)
      // The ledger holds what the server answered the cluster, the dead worker's calls included,
      // but for the answers that reached it in its last moment (a call's spend is written when
      // its answer arrives): at most its 10 calls in flight. Never more than the server answered.
      const ok = answered.filter((r) => r.status === 200)
      const perCall = costOf(ok) / ok.length
      expect(ok.length).toBeGreaterThanOrEqual(300)
      expect(clustered.spend.calls).toBeLessThanOrEqual(ok.length)
      expect(clustered.spend.calls).toBeGreaterThanOrEqual(ok.length - 10)
      expect(clustered.spend.experimentUsd).toBeCloseTo(clustered.spend.calls * perCall, 10)
      expect(clustered.spend.experimentUsd).toBeLessThanOrEqual(costOf(ok) + 1e-12)
    } finally {
      await Promise.all(workers.map((w) => stop(w)))
    }
  }, 420_000)

  it("--max-usd holds across three workers: what the server answered, at list price, never passes it", async () => {
    // Dear answers (4,000 output tokens, $0.00246 a call): each worker's own wallet would let it
    // spend up to the cap, three times the cap in all; the shared wallet stops them all at it.
    const dear = [{ text: "Done.", usage: { input: 400, output: 4000 }, repeat: true, delayMs: 200 }]
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const server2 = yield* LoopbackServer.start(dear)
      const env = { OPENAI_BASE_URL: server2.openAiBaseUrl, OPENAI_API_KEY: "sk-test-SECRET123" }
      const url = server.database("capped")
      const workers = yield* Effect.promise(() => Promise.all([0, 1, 2].map(() => startWorker(url, 4, env))))
      try {
        const capUsd = 0.05
        const result = yield* Effect.promise(() =>
          assay(["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--reps", "3", "--home", tempDir(), "--store", url, "--cluster", "--parallel", "60", "--max-usd", String(capUsd), "--yes", "--json"], env)
        )
        expect(result.code, result.stderr).toBe(0)
        const report = JSON.parse(result.stdout) as RunJson
        const price = (yield* Registry.resolve("openai:gpt-4o-mini").pipe(Effect.provide(Registry.layer))).model.cost!
        const served = server2.requests().filter((r) => r.status === 200)
        const usd = served.reduce((sum, r) => sum + ((r.usage?.input ?? 0) * price.input + (r.usage?.output ?? 0) * price.output) / 1e6, 0)
        expect(usd).toBeLessThanOrEqual(capUsd)
        expect(served.length).toBeGreaterThan(0)
        expect(report.cells["skipped"]).toBeGreaterThan(0)
        expect(report.spend.experimentUsd).toBeLessThanOrEqual(capUsd)
      } finally {
        yield* Effect.promise(() => Promise.all(workers.map((w) => stop(w))))
      }
    })))
  }, 300_000)

  // What the user relies on: the provider saw at most 20 requests in every 1 s window of arrival
  // times (sliding), three workers sending. The old fixed-window limiter failed this (35 in 1 s).
  it("--rate openai=20/s on three workers: every 1 s window of the server's arrival times holds at most 20 requests", async () => {
    const fast = [{ text: "Done.", usage: { input: 400, output: 10 }, repeat: true }]
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const server3 = yield* Arrivals.startRecorded(fast)
      const env = { OPENAI_BASE_URL: server3.openAiBaseUrl, OPENAI_API_KEY: "sk-test-SECRET123" }
      const url = server.database("rated")
      const workers = yield* Effect.promise(() => Promise.all([0, 1, 2].map(() => startWorker(url, 10, env))))
      try {
        const result = yield* Effect.promise(() =>
          assay(["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--reps", "6", "--home", tempDir(), "--store", url, "--cluster", "--parallel", "60", "--rate", "openai=20/s", "--yes", "--json"], env)
        )
        expect(result.code, result.stderr).toBe(0)
        expect((JSON.parse(result.stdout) as RunJson).cells).toMatchObject({ total: 120, ran: 120 })
        const arrivals = server3.arrivals()
        expect(arrivals).toHaveLength(120)
        const most = Arrivals.maxInWindow(arrivals, 1000)
        const span = Arrivals.tightestSpan(arrivals, 20)
        const took = arrivals[arrivals.length - 1]! - arrivals[0]!
        console.log(`--rate openai=20/s, 3 workers: at most ${most} arrivals in a 1 s window; 21 in a row spanned at least ${span.toFixed(0)} ms; ${(119_000 / took).toFixed(1)} calls/s`)
        expect(most).toBeLessThanOrEqual(20)
        // The limit is what paced them: without it 120 instant calls on 30 slots take well under 1 s.
        expect(took).toBeGreaterThan(119 * 50)
      } finally {
        yield* Effect.promise(() => Promise.all(workers.map((w) => stop(w))))
      }
    })))
  }, 600_000)

  // The limiter alone, in three processes sharing the store, firing as fast as it lets them: it
  // binds however loaded the machine is (the cells above may come slower than 20/s when the
  // machine is busy). Each driver sends through the live client a worker uses and says when the
  // limiter let each call go. The fixed-window limiter `--rate` used before fails the same check.
  const driven = (mode: "spaced" | "fixed") =>
    Effect.gen(function*() {
      const recorded = yield* Arrivals.startRecorded([{ text: "ok", repeat: true }])
      const url = server.database(`driven_${mode}`)
      const drivers = [0, 1, 2].map(() => {
        const child = spawn(process.execPath, ["--import", "tsx", "test/cluster/rateDriver.ts", url, "40", "10", "20", mode], {
          cwd: root,
          env: { ...process.env, OPENAI_BASE_URL: recorded.openAiBaseUrl, OPENAI_API_KEY: "sk-test-SECRET123" },
          stdio: ["pipe", "pipe", "pipe"]
        })
        track(child)
        return child
      })
      const exits = drivers.map((child) => new Promise<number | null>((ok) => child.once("close", (code) => ok(code))))
      let err = ""
      const outs = drivers.map(() => "")
      drivers.forEach((child, i) => {
        child.stderr!.on("data", (d: Buffer) => (err += d.toString()))
        child.stdout!.on("data", (d: Buffer) => (outs[i] += d.toString()))
      })
      yield* Effect.promise(() => Promise.all(drivers.map((child, i) => new Promise<void>((ok) => child.stdout!.on("data", () => outs[i]!.includes("ready") && ok())))))
      for (const child of drivers) child.stdin!.write("go\n")
      const codes = yield* Effect.promise(() => Promise.all(exits))
      expect(codes, err).toEqual([0, 0, 0])
      const sent = outs.flatMap((out) => JSON.parse(/^sent (.*)$/m.exec(out)![1]!) as Array<number>).sort((a, b) => a - b)
      const arrivals = [...recorded.arrivals()].sort((a, b) => a - b)
      expect(arrivals).toHaveLength(120)
      expect(sent).toHaveLength(120)
      // Calls are ~57 ms apart and take a few ms to arrive: the k-th sent is the k-th to arrive.
      const transit = arrivals.map((t, k) => t - sent[k]!).sort((a, b) => a - b)
      return {
        most: Arrivals.maxInWindow(arrivals, 1000),
        mostSent: Arrivals.maxInWindow(sent, 1000),
        span: Arrivals.tightestSpan(arrivals, 20),
        took: arrivals[119]! - arrivals[0]!,
        transit: { median: transit[60]!, spread: transit[119]! - transit[0]! }
      }
    }).pipe(Effect.scoped)

  // A process's first call is the slowest from the limiter to the server (code run for the first
  // time, a connection opened): the slot after it stays empty, once per process and provider.
  it("the --rate limiter: a process's first call for a provider leaves the slot after its own empty; later calls take one slot each", async () => {
    const url = server.database("first_slot")
    const at = await Effect.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const sent: Array<number> = []
      const inner: Model = {
        generate: (request) =>
          Effect.sync(() => {
            sent.push(performance.now())
            return { text: "ok", toolCalls: [], usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }, finishReason: "stop" as const, model: request.model }
          })
      }
      const limited = yield* RateLimit.limitModel(inner, [{ provider: "openai", perSecond: 5 }]).pipe(Effect.provide(RateLimit.layerStoreSql(sql)))
      const request = { provider: "openai", model: "gpt-4o-mini", system: "", messages: [], tools: [] }
      for (let i = 0; i < 4; i++) yield* limited.generate(request)
      return sent
    }).pipe(Effect.provide(Store.postgresClient(url)), Effect.scoped))
    const spacing = Duration.toMillis(RateLimit.spacingOf(5))
    const gaps = at.slice(1).map((t, i) => t - at[i]!)
    // A call goes some time after its slot, never before: the reservation's answer comes back over
    // the database connection and the wait starts then. That lateness varies between calls (13 ms
    // seen on a loaded 2-core CI machine) by at most what the spacing's headroom budgets for it.
    const late = Duration.toMillis(RateLimit.wakeTolerance)
    const said = `gaps ${gaps.map((g) => g.toFixed(0)).join(", ")} ms, slots ${spacing} ms apart, lateness allowed to vary by ${late} ms`
    expect(gaps[0]!, said).toBeGreaterThanOrEqual(2 * spacing - late)
    for (const gap of gaps) expect(gap, said).toBeGreaterThanOrEqual(spacing - late)
    // One slot each after the first (a wake past the tolerance, on a loaded machine, takes two).
    expect(Math.min(...gaps.slice(1)), said).toBeLessThan(2 * spacing - 100)
  }, 60_000)

  it("the --rate limiter in three processes at 20/s: every 1 s window of arrivals holds at most 20; the old fixed windows let more through", async () => {
    const spaced = await Effect.runPromise(driven("spaced"))
    const fixed = await Effect.runPromise(driven("fixed"))
    const said = `rate limiter alone, 3 processes x 10 at once, 20/s: spaced: at most ${spaced.most} in a 1 s window of arrivals (${spaced.mostSent} of sends), 21 in a row spanned at least ${spaced.span.toFixed(0)} ms, ${(119_000 / spaced.took).toFixed(1)} calls/s, from limiter to server ${spaced.transit.median.toFixed(1)} ms median, varying by ${spaced.transit.spread.toFixed(0)} ms; fixed windows: at most ${fixed.most}; load ${loadavg()[0]!.toFixed(1)}`
    console.log(said)
    // What the limiter itself decides: when calls go. Slots 57.5 ms apart, each sent within 75 ms of its own.
    expect(spaced.mostSent, said).toBeLessThanOrEqual(20)
    // What the provider sees: held while the way from the limiter to the server varies by under
    // 75 ms, with a spacing more for each process's first call, the slowest (RateLimit.ts). Past
    // that (CI saw one call take 1.4 s from the limiter to a server on the same loaded machine) no
    // limiter decides arrivals, so the check of arrivals applies only within the budget it keeps.
    if (spaced.transit.spread < 75) expect(spaced.most, said).toBeLessThanOrEqual(20)
    else console.log(`arrivals not checked: the way from the limiter to the server varied by ${spaced.transit.spread.toFixed(0)} ms, past the 75 ms the limiter budgets for`)
    // The same drivers on the same machine, the old limiter: the check tells them apart.
    expect(fixed.most, said).toBeGreaterThan(20)
  }, 300_000)
})
