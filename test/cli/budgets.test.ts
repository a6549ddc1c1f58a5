/**
 * Budgets and the home, through the command as a user runs it, against the loopback server: the
 * spend cap holds at any parallelism, one writer per home, a damaged store is named, and spend is
 * written as each call completes (a killed run's spend counts after resume).
 */
import { spawn } from "node:child_process"
import { readdirSync, statSync, truncateSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import * as Registry from "../../src/model/Registry.ts"
import { assay, bin, root, tempDir } from "./support.ts"

const registry = Effect.runSync(Registry.fixture)

/** What the server answered, at list price from the usage it reported. */
const answeredUsd = (server: LoopbackServer.LoopbackServer): number =>
  server.requests()
    .filter((r) => r.method === "POST" && r.status === 200 && r.usage !== null)
    .reduce((sum, r) => {
      const provider = r.api === "anthropic-messages" ? "anthropic" : "openai"
      const model = (r.body as { model: string }).model
      const resolved = Registry.resolveIn(registry, `${provider}:${model}`)
      if (Either.isLeft(resolved) || resolved.right.model.cost === undefined) throw new Error(`no price for ${provider}:${model}`)
      const cost = resolved.right.model.cost
      return sum + (r.usage!.input * cost.input + r.usage!.output * cost.output) / 1_000_000
    }, 0)

const answered = (server: LoopbackServer.LoopbackServer) => server.requests().filter((r) => r.method === "POST" && r.status === 200).length

const envOf = (server: LoopbackServer.LoopbackServer) => ({
  OPENAI_BASE_URL: server.openAiBaseUrl,
  OPENAI_API_KEY: "sk-test",
  ANTHROPIC_BASE_URL: server.anthropicBaseUrl,
  ANTHROPIC_API_KEY: "sk-ant-test"
})

const models = ["openai:gpt-4o-mini", "openai:gpt-4o", "anthropic:claude-3-5-haiku-20241022", "anthropic:sonnet"]

describe("the spend cap", () => {
  it.live("four models at --parallel 10 under --max-usd 0.05: what the server answered costs at most $0.05, the rest is skipped and runs with a larger cap", () =>
    Effect.gen(function*() {
      const home = tempDir()
      // 1,500 tokens in and out a call: $0.001 on gpt-4o-mini, $0.007 on haiku, $0.019 on gpt-4o, $0.027 on sonnet.
      const server = yield* LoopbackServer.start([{ repeat: true, text: "done", usage: { input: 1500, output: 1500 }, delayMs: 200 }])
      const args = (cap: string) => ["run", "--benchmark", "ledger", ...models.flatMap((m) => ["--model", m]), "--parallel", "10", "--max-usd", cap, "--home", home, "--yes", "--json"]
      const capped = yield* Effect.promise(() => assay(args("0.05"), envOf(server)))
      expect(capped.code, capped.stderr).toBe(0)
      const report = JSON.parse(capped.stdout)
      expect(answeredUsd(server)).toBeLessThanOrEqual(0.05)
      expect(answeredUsd(server)).toBeGreaterThan(0.02)
      expect(report.spend.experimentUsd).toBeCloseTo(answeredUsd(server), 10)
      expect(report.spend.experimentUsd).toBeLessThanOrEqual(0.05)
      expect(report.cells.skipped).toBeGreaterThan(0)
      expect(report.skipped.length).toBe(report.cells.skipped)
      expect(report.skipped.every((s: { reason: string }) => s.reason.startsWith("spend cap"))).toBe(true)
      // The same cap again sends nothing: it bounds the experiment, not each invocation. Nothing
      // ran for the cap: stopped by budget (exit 3), not done.
      const again = yield* Effect.promise(() => assay(args("0.05"), envOf(server)))
      expect(again.code, again.stderr).toBe(3)
      expect(answeredUsd(server)).toBeLessThanOrEqual(0.05)
      const larger = yield* Effect.promise(() => assay(args("5"), envOf(server)))
      expect(larger.code, larger.stderr).toBe(0)
      const done = JSON.parse(larger.stdout)
      expect(done.cells.skipped).toBe(0)
      expect(done.cells.kept + done.cells.ran).toBe(80)
      expect(done.spend.experimentUsd).toBeCloseTo(answeredUsd(server), 10)
    }).pipe(Effect.scoped), { timeout: 180_000 })
})

describe("one writer per home", () => {
  it.live("two identical runs started together: one completes, the other exits non-zero naming the lock; the server answers one run", () =>
    Effect.gen(function*() {
      const home = tempDir()
      // Each answer takes 3 s, so the winner holds the home for seconds: on a loaded machine the
      // two processes' starts can be a second or more apart, and with 300 ms answers the first
      // run was done (both exited 0) before the second asked for the lock.
      const server = yield* LoopbackServer.start([{ repeat: true, text: "done", usage: { input: 100, output: 10 }, delayMs: 3000 }])
      const args = ["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--task", "ledger-01", "--task", "ledger-02", "--task", "ledger-03", "--home", home, "--yes", "--json"]
      const [a, b] = yield* Effect.promise(() => Promise.all([assay(args, envOf(server)), assay(args, envOf(server))]))
      const codes = [a.code, b.code].sort()
      expect(codes[0]).toBe(0)
      expect(codes[1]).not.toBe(0)
      const loser = a.code === 0 ? b : a
      expect(loser.stderr).toMatch(/in use by .*pid \d+ on .*since/)
      expect(loser.stderr.trim().split("\n")).toHaveLength(1)
      expect(answered(server)).toBe(3)
    }).pipe(Effect.scoped), { timeout: 120_000 })
})

describe("a damaged store", () => {
  it("a used home whose store was truncated to zero bytes: exit 1 naming the file, and nothing runs", async () => {
    const home = tempDir()
    const args = ["run", "--benchmark", "ledger", "--candidate", "gold", "--home", home, "--yes"]
    expect((await assay(args)).code).toBe(0)
    const store = join(home, "assay.sqlite")
    truncateSync(store, 0)
    const runsBefore = readdirSync(join(home, "runs")).length
    const again = await assay(args)
    expect(again.code).toBe(1)
    expect(again.stderr.trim().split("\n")).toHaveLength(1)
    expect(again.stderr).toContain(store)
    expect(again.stderr).toContain("empty")
    expect(statSync(store).size).toBe(0)
    expect(readdirSync(join(home, "runs")).length).toBe(runsBefore)
  })
})

describe("spend written as it happens", () => {
  it.live("a SIGKILL during a model run, then resume: the experiment's spend is what the server answered", () =>
    Effect.gen(function*() {
      const home = tempDir()
      // Waves of four calls, two seconds each: the kill lands in the second wave's wait.
      const server = yield* LoopbackServer.start([{ repeat: true, text: "done", usage: { input: 1000, output: 1000 }, delayMs: 2000 }])
      const args = ["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--parallel", "4", "--home", home, "--yes", "--json"]
      const child = spawn(process.execPath, [bin, ...args], {
        cwd: root,
        env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ...envOf(server) },
        stdio: "ignore"
      })
      const exited = new Promise<void>((done) => child.on("exit", () => done()))
      yield* Effect.promise(async () => {
        const deadline = Date.now() + 60_000
        while (answered(server) < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
        await new Promise((r) => setTimeout(r, 1000))
        child.kill("SIGKILL")
        await exited
        // Let the server finish the waits of the calls the killed run left in flight.
        await new Promise((r) => setTimeout(r, 2500))
      })
      const beforeResume = answeredUsd(server)
      expect(answered(server)).toBeGreaterThanOrEqual(4)
      expect(answered(server)).toBeLessThan(20)
      const resumed = yield* Effect.promise(() => assay(args, envOf(server)))
      expect(resumed.code, resumed.stderr).toBe(0)
      const report = JSON.parse(resumed.stdout)
      expect(report.spend.experimentUsd).toBeCloseTo(answeredUsd(server), 10)
      expect(report.spend.experimentUsd - report.spend.runUsd).toBeCloseTo(beforeResume, 10)
    }).pipe(Effect.scoped), { timeout: 180_000 })
})

describe("an endpoint that does not answer", () => {
  it("OPENAI_BASE_URL at a closed port: every cell ends as a fault, exit 0 with a line that says so; a live server then runs them all", async () => {
    const home = tempDir()
    const args = ["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--task", "ledger-01", "--task", "ledger-02", "--home", home, "--yes", "--json"]
    const down = await assay(args, { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "sk-test" })
    expect(down.code, down.stderr).toBe(0)
    const report = JSON.parse(down.stdout)
    expect(report.cells).toMatchObject({ total: 2, ran: 2, faulted: 2 })
    expect(down.stderr).toContain("could not be reached")
    // No scorecard for a candidate with nothing scored, and the notes say why rather than leave it out.
    expect(report.scorecards).toEqual([])
    expect(report.notes).toContain("openai:gpt-4o-mini has no scorecard on ledger: none of its 2 cells was scored (outages or the benchmark's failures, listed apart); running the experiment again runs them")
    const up = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* LoopbackServer.start([{ repeat: true, text: "done", usage: { input: 100, output: 10 } }])
          const run = yield* Effect.promise(() => assay(args, envOf(server)))
          return { run, answered: answered(server) }
        })
      )
    )
    expect(up.run.code, up.run.stderr).toBe(0)
    expect(JSON.parse(up.run.stdout).cells).toMatchObject({ total: 2, ran: 2, kept: 0, faulted: 0 })
    expect(up.answered).toBe(2)
  }, 120_000)

  it("a key the endpoint refuses (401) is an outage that says so, not a score of 0; a 400 is scored 0 with a line giving its reason", async () => {
    const home = tempDir()
    const args = ["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--task", "ledger-01", "--task", "ledger-02", "--home", home, "--yes", "--json"]
    const runWith = (status: number) =>
      Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const server = yield* LoopbackServer.start([{ repeat: true, status, text: "refused" }])
        return yield* Effect.promise(() => assay(args, envOf(server)))
      })))
    const refused = await runWith(401)
    expect(refused.code, refused.stderr).toBe(0)
    expect(JSON.parse(refused.stdout).cells).toMatchObject({ total: 2, ran: 2, faulted: 2 })
    expect(refused.stderr).toContain("the endpoint refused the key")
    expect(refused.stderr).toContain("HTTP 401")
    expect(refused.stderr).not.toContain("sk-test")
    // Not kept: the next run runs them again; a 400 is the model's call failing, scored 0 and said why.
    const bad = await runWith(400)
    expect(JSON.parse(bad.stdout).cells).toMatchObject({ total: 2, ran: 2, kept: 0 })
    const line = bad.stderr.split("\n").find((l) => l.includes("before a verdict"))
    expect(line, bad.stderr).toMatch(/^assay: 2 cells ended protocol-failed before a verdict and are scored 0 as the candidates' failures \(openai:gpt-4o-mini: 2\); the first: .*HTTP 400/)
  }, 120_000)
})
