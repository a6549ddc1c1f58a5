/**
 * The spend cap against a server that does not keep to its bounds, and a ledger that survives
 * SIGKILL, through the command as a user runs it. The oracle is the loopback server's own log:
 * what it answered, priced from the usage it reported, independent of assay's accounting.
 */
import { spawn } from "node:child_process"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import * as Registry from "../../src/model/Registry.ts"
import { assay, bin, cleanEnv, root, tempDir } from "./support.ts"

const registry = Effect.runSync(Registry.fixture)

const priceOf = (model: string) => {
  const resolved = Registry.resolveIn(registry, `openai:${model}`)
  if (Either.isLeft(resolved) || resolved.right.model.cost === undefined) throw new Error(`no price for openai:${model}`)
  return resolved.right.model.cost
}

const answeredRequests = (server: LoopbackServer.LoopbackServer) =>
  server.requests().filter((r) => r.method === "POST" && r.status === 200 && r.usage !== null)

/** What the server answered, at list price from the usage it reported. */
const answeredUsd = (server: LoopbackServer.LoopbackServer): number =>
  answeredRequests(server).reduce((sum, r) => {
    const cost = priceOf((r.body as { model: string }).model)
    return sum + (r.usage!.input * cost.input + r.usage!.output * cost.output) / 1_000_000
  }, 0)

const envOf = (server: LoopbackServer.LoopbackServer) => ({ OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" })

describe("a server that reports more output than max_output_tokens", () => {
  it.live("20,000 output tokens against a reservation of 8,192 at --parallel 10: what it answered stays within --max-usd, and the report names it", () =>
    Effect.gen(function*() {
      const home = tempDir()
      const server = yield* LoopbackServer.start([{ repeat: true, text: "done", usage: { input: 1000, output: 20_000 }, delayMs: 100 }])
      const cap = 0.1
      const args = ["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--parallel", "10", "--max-usd", String(cap), "--home", home, "--yes", "--json"]
      const result = yield* Effect.promise(() => assay(args, envOf(server)))
      expect(result.code, result.stderr).toBe(0)
      // The requests did ask for at most 8,192 output tokens: the server broke that bound.
      const asked = answeredRequests(server).map((r) => (r.body as { max_output_tokens?: number; max_tokens?: number; max_completion_tokens?: number }))
      expect(asked.length).toBeGreaterThan(1)
      for (const body of asked) expect(body.max_output_tokens ?? body.max_completion_tokens ?? body.max_tokens).toBe(8192)
      expect(answeredUsd(server)).toBeLessThanOrEqual(cap)
      const report = JSON.parse(result.stdout) as { cells: { skipped: number }; warnings?: ReadonlyArray<string>; spend: { experimentUsd: number } }
      expect(report.cells.skipped).toBeGreaterThan(0)
      expect(report.spend.experimentUsd).toBeCloseTo(answeredUsd(server), 10)
      expect(report.warnings?.some((w) => w.includes("openai:gpt-4o-mini") && w.includes("max_output_tokens"))).toBe(true)
      // A second run under the same cap sends nothing more past it (and says the cap stopped it).
      const sentBefore = answeredRequests(server).length
      const again = yield* Effect.promise(() => assay(args, envOf(server)))
      expect(again.stderr).toContain("spend cap")
      expect(answeredUsd(server)).toBeLessThanOrEqual(cap)
      expect(answeredRequests(server).length - sentBefore).toBe(0)
      // A later run with a little more room than one call's face value, less than what this server
      // bills for one: it remembers the overshoot, so that call is not sent either.
      const spent = answeredUsd(server)
      const reservation = report.spend.experimentUsd / answeredRequests(server).length / 2.4
      const wider = spent + reservation * 1.5
      const third = yield* Effect.promise(() => assay(args.map((a) => (a === String(cap) ? String(wider) : a)), envOf(server)))
      expect(third.stderr, `${third.code} ${third.stderr} ${third.stdout.slice(0, 300)}`).toContain("spend cap")
      expect(answeredUsd(server)).toBeLessThanOrEqual(wider)
    }).pipe(Effect.scoped), { timeout: 120_000 })
})

describe("the ledger under SIGKILL", () => {
  it.live("ten SIGKILL cycles at --parallel 50 under --max-usd, each landing as answers come back: the ledger's spend (settled plus reserved) covers every answer the server gave", () =>
    Effect.gen(function*() {
      const home = tempDir()
      // Every call waits 400 ms, then a wave of answers comes back together: the kill lands in it.
      const server = yield* LoopbackServer.start([{ repeat: true, text: "done", usage: { input: 900, output: 700 }, delayMs: 400 }])
      const models = ["openai:gpt-4o-mini", "openai:gpt-4o"]
      // A cap far above what the run can spend: the ledger's reservations are what a cap reads.
      const args = ["run", "--benchmark", "ledger", ...models.flatMap((m) => ["--model", m]), "--parallel", "50", "--max-usd", "1000", "--home", home, "--yes", "--json"]
      for (let cycle = 0; cycle < 10; cycle++) {
        const before = answeredRequests(server).length
        const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: cleanEnv(envOf(server)), stdio: "ignore" })
        const exited = new Promise<void>((done) => child.on("exit", () => done()))
        yield* Effect.promise(async () => {
          // Killed as soon as the wave after the cap's first call (which goes alone) starts to come
          // back: two answers in this cycle (or the run ended).
          let ended = false
          void exited.then(() => (ended = true))
          const deadline = Date.now() + 60_000
          while (!ended && answeredRequests(server).length < before + 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
          // Every other cycle a moment later, so that some answers are settled in the ledger first.
          if (cycle % 2 === 1) await new Promise((r) => setTimeout(r, 150))
          child.kill("SIGKILL")
          await exited
        })
      }
      // Let the server finish answering whatever the last killed run left in flight.
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 600)))
      expect(answeredRequests(server).length).toBeGreaterThanOrEqual(10)
      const plan = yield* Effect.promise(() => assay(["plan", "--benchmark", "ledger", ...models.flatMap((m) => ["--model", m]), "--home", home, "--json"]))
      expect(plan.code, plan.stderr).toBe(0)
      const spend = (JSON.parse(plan.stdout) as { spend: { experimentUsd: number; unsettledUsd: number } }).spend
      expect(spend.experimentUsd + spend.unsettledUsd).toBeGreaterThanOrEqual(answeredUsd(server) * (1 - 1e-9))
    }).pipe(Effect.scoped), { timeout: 180_000 })
})
