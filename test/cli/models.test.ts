import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { tasks } from "../../providers/ledger/tasks.ts"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import * as Registry from "../../src/model/Registry.ts"
import { assay, tempDir } from "./support.ts"

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The loopback model plays every ledger task's gold actions, then answers. */
const goldScript = tasks.flatMap((task) => {
  const match = { lastUser: `^${escape(task.instruction)}$` }
  return [
    ...task.gold.map((action) => ({ match, toolCalls: [{ name: action.name, arguments: action.arguments }], usage: { input: 300, output: 25 } })),
    { match, text: task.answer ?? "Done.", usage: { input: 400, output: 10 } }
  ]
})

const filesUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })

describe("model candidates through the command", { timeout: 300_000 }, () => {
  it("an OpenAI-compatible server playing the gold actions scores 1 on ledger, at the server's tokens and list price, and the key is nowhere", async () => {
    const home = tempDir()
    const { result, reported } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* LoopbackServer.start(goldScript)
          const env = { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test-SECRET123" }
          const result = yield* Effect.promise(() =>
            assay(["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--yes", "--json", "--home", home, "--parallel", "4"], env)
          )
          const plan = yield* Effect.promise(() => assay(["plan", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--json", "--home", home], env))
          const report = yield* Effect.promise(() => assay(["report", "--format", "html", "--out", join(home, "r.html"), "--home", home], env))
          return { result: { run: result, plan, report }, reported: server.requests() }
        })
      )
    )
    expect(result.run.code, result.run.stderr).toBe(0)
    const report = JSON.parse(result.run.stdout)
    const card = report.scorecards.find((s: { candidate: string; stratum: string | null }) => s.candidate === "openai:gpt-4o-mini" && s.stratum === null)
    expect(card.meanReward).toBe(1)
    const input = reported.reduce((sum, r) => sum + (r.usage?.input ?? 0), 0)
    const output = reported.reduce((sum, r) => sum + (r.usage?.output ?? 0), 0)
    expect(card.tokens).toEqual({ input, output })
    const model = await Effect.runPromise(Registry.resolve("openai:gpt-4o-mini").pipe(Effect.provide(Registry.layer)))
    const price = model.model.cost!
    expect(card.costUsd).toBeCloseTo((input * price.input + output * price.output) / 1e6, 10)

    const plan = JSON.parse(result.plan.stdout)
    expect(plan.cells).toMatchObject({ total: 20, kept: 20 })
    expect(plan.modelProviders.find((p: { provider: string }) => p.provider === "openai")).toMatchObject({ status: "live" })

    for (const text of [result.run.stdout, result.run.stderr, result.plan.stdout, result.plan.stderr, result.report.stderr]) {
      expect(text).not.toContain("SECRET123")
    }
    for (const file of filesUnder(home)) expect(readFileSync(file).includes("SECRET123"), file).toBe(false)
  })

  it("a Gemini model (google:..., GOOGLE_BASE_URL and GEMINI_API_KEY) plays the gold actions through the Gemini wire format: 1, at the server's tokens and list price", async () => {
    const home = tempDir()
    const picked = tasks.slice(0, 3)
    const { run, reported } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* LoopbackServer.start(goldScript)
          const run = yield* Effect.promise(() =>
            assay(
              ["run", "--benchmark", "ledger", ...picked.flatMap((t) => ["--task", t.id]), "--model", "google:gemini-2.5-flash", "--yes", "--json", "--home", home],
              { GOOGLE_BASE_URL: server.googleBaseUrl, GEMINI_API_KEY: "AIza-test-SECRET123" }
            )
          )
          return { run, reported: server.requests() }
        })
      )
    )
    expect(run.code, run.stderr).toBe(0)
    expect(new Set(reported.map((r) => r.api))).toEqual(new Set(["google"]))
    const card = JSON.parse(run.stdout).scorecards.find((s: { stratum: string | null }) => s.stratum === null)
    expect(card).toMatchObject({ candidate: "google:gemini-2.5-flash", n: 3, meanReward: 1 })
    const input = reported.reduce((sum, r) => sum + (r.usage?.input ?? 0), 0)
    const output = reported.reduce((sum, r) => sum + (r.usage?.output ?? 0), 0)
    expect(card.tokens).toEqual({ input, output })
    const price = (await Effect.runPromise(Registry.resolve("google:gemini-2.5-flash").pipe(Effect.provide(Registry.layer)))).model.cost!
    expect(card.costUsd).toBeCloseTo((input * price.input + output * price.output) / 1e6, 10)
    expect(run.stdout + run.stderr + JSON.stringify(reported)).not.toContain("SECRET123")
  })

  it("a server that always answers 500 ends each Attempt with a verdict that says so", async () => {
    const home = tempDir()
    const run = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* LoopbackServer.start([{ repeat: true, status: 500, text: "upstream is down" }])
          return yield* Effect.promise(() =>
            assay(["run", "--benchmark", "ledger", "--task", "ledger-01", "--model", "openai:gpt-4o-mini", "--yes", "--json", "--home", home], {
              OPENAI_BASE_URL: server.openAiBaseUrl,
              OPENAI_API_KEY: "sk-test"
            })
          )
        })
      )
    )
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    expect(report.cells).toMatchObject({ total: 1, ran: 1, faulted: 1 })
    // An outage is no score of the model's: listed apart, with what it met, and in no scorecard.
    expect(report.scorecards).toEqual([])
    expect(report.outages).toEqual([expect.objectContaining({ candidate: "openai:gpt-4o-mini", reasons: ["server-error"] })])
  })

  it("a model candidate whose provider has no key is refused before any cell runs", async () => {
    const home = join(tempDir(), "home")
    const r = await assay(["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--yes", "--home", home])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/model provider openai is not live: OPENAI_API_KEY not set/)
    expect(() => statSync(home)).toThrow()
  })

  it("a bridged agent CLI whose model provider has no key is refused as a model is, not scored 0 for the missing key", async () => {
    const home = join(tempDir(), "home")
    const r = await assay(["run", "--benchmark", "ledger", "--task", "ledger-01", "--candidate", "harness:claude", "--yes", "--home", home])
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch(/model provider anthropic is not live: ANTHROPIC_API_KEY not set \(nothing was run\)/)
    expect(() => statSync(home)).toThrow()
    // The plan says what --yes would need, as it does for a model candidate.
    const plan = await assay(["run", "--benchmark", "ledger", "--task", "ledger-01", "--candidate", "harness:claude", "--home", home])
    expect(plan.stdout).toMatch(/anthropic\s+absent\s+ANTHROPIC_API_KEY not set/)
  })
})
