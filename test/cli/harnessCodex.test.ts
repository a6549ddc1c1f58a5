/**
 * Real codex and pi (installed by the project into tools/harnesses) through `assay run --harness
 * NAME`, pointed at the loopback model server: tokens and grades as the script makes them, and
 * the quota windows the server reports in `x-codex-*` headers metered from codex's rollout.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as Store from "../../src/experiment/Store.ts"
import * as Loopback from "../../src/testkit/LoopbackServer.ts"
import { costAt } from "../../src/model/Cost.ts"
import * as Registry from "../../src/model/Registry.ts"
import { Attempt } from "../../src/schema/Attempt.ts"
import { assay, tempDir } from "./support.ts"

const MODEL = "gpt-4o-mini-2024-07-18"
const summary = JSON.stringify({ by_category: { books: 49.75, games: 79.98, music: 9.99 }, total: 139.72 })
const quota = (primary: number) => ({
  "x-codex-primary-used-percent": String(primary),
  "x-codex-primary-window-minutes": "300",
  "x-codex-secondary-used-percent": "7",
  "x-codex-secondary-window-minutes": "10080"
})
const cell = (primary: number) => [
  {
    match: { lastUser: "sales\\.csv" },
    toolCalls: [{ name: "exec_command", arguments: { cmd: `printf '%s' '${summary}' > summary.json` } }],
    usage: { input: 200, output: 30, cacheRead: 50 },
    headers: quota(primary)
  },
  { match: { lastUser: "sales\\.csv" }, text: "The total is 139.72.", usage: { input: 300, output: 12 }, headers: quota(primary) }
]

describe("real agent CLIs through assay run --harness against the loopback model server", () => {
  it("runs real codex on csv-summary: tokens, cost and grades as scripted; past ten points of the primary window, or past 80% used, no new cell starts; the next run resumes", async () => {
    const home = tempDir()
    const runWith = (turns: ReadonlyArray<Loopback.ScriptTurn>) =>
      Effect.runPromise(
        Effect.scoped(
          Effect.gen(function*() {
            const server = yield* Loopback.start([...turns, { default: true, text: "nothing to add", usage: { input: 10, output: 1 } }])
            const run = yield* Effect.promise(() =>
              assay(
                ["run", "--harness", "codex", "--model", `codex:${MODEL}`, "--task", "csv-summary", "--reps", "4", "--no-judge", "--timeout-secs", "150", "--yes", "--json", "--home", home],
                { PATH: "/usr/bin:/bin", ASSAY_HARNESS_BASE_URL: server.url, ASSAY_HARNESS_API_KEY: "sk-loopback" }
              )
            )
            return { run, requests: server.requests() }
          })
        )
      )
    // Cell 1 sees the window at 42%, cell 2 at 55%: thirteen points since the start.
    const { run, requests } = await runWith([...cell(42), ...cell(55)])
    expect(run.code, run.stderr).toBe(3)
    const report = JSON.parse(run.stdout)
    expect(report.cells).toMatchObject({ total: 4, ran: 2, skipped: 2 })
    expect(report.scorecards).toEqual([])
    expect(report.warnings.join(" ")).toContain("quota: this experiment used 13 points of the primary window")
    expect(requests.filter((r) => r.status === 200 && r.headers["authorization"] !== undefined).length).toBeGreaterThanOrEqual(4)

    const attempts = readFileSync(join(home, "runs", report.runId, "results.jsonl"), "utf8").trim().split("\n").map((l) => Schema.decodeUnknownSync(Attempt)(JSON.parse(l)))
    const price = Effect.runSync(Registry.fixture).providers["openai"]!.models[MODEL]!.cost!
    const cost = costAt(price, { inputTokens: 200, outputTokens: 30, cacheReadTokens: 50 }) + costAt(price, { inputTokens: 300, outputTokens: 12 })
    for (const a of attempts) {
      const detail = JSON.stringify(a.output).slice(-3000)
      expect(a.verdict.checks, detail).toEqual({ "summary.json has the keys": true, "sums are right": true })
      expect(a.verdict.reward).toBe(1)
      expect(a.usage, detail).toMatchObject({ inputTokens: 500, outputTokens: 42, cacheReadTokens: 50, calls: 2 })
      expect(a.usage.costUsd).toBeCloseTo(cost, 12)
      const result = (a.output as { result: { harness: { finalAnswer: string; models: Array<string>; quota: Array<{ window: string; usedPercent: number }> } } }).result
      expect(result.harness.finalAnswer).toBe("The total is 139.72.")
      expect(result.harness.models).toContain(MODEL)
      expect(result.harness.quota.map((q) => q.window)).toContain("primary")
    }
    const skipped = await Effect.runPromise(Effect.flatMap(Store.Store, (s) => s.skippedOfRun(report.runId)).pipe(Effect.provide(Store.layer(home))))
    expect(skipped.map((s) => s.reason)).toEqual([expect.stringMatching(/^quota: /), expect.stringMatching(/^quota: /)])

    // Someone else used the account: cell 3 sees the window at 81%, and cell 4 waits.
    const paused = await runWith(cell(81))
    expect(paused.run.code, paused.run.stderr).toBe(3)
    const pausedReport = JSON.parse(paused.run.stdout)
    expect(pausedReport.cells).toMatchObject({ kept: 2, ran: 1, skipped: 1 })
    expect(pausedReport.warnings.join(" ")).toContain("quota: the primary window is 81% used (pause at 80%)")

    // The window has reset: the last cell runs and the experiment is complete.
    const resumed = await runWith(cell(30))
    expect(resumed.run.code, resumed.run.stderr).toBe(0)
    const resumedReport = JSON.parse(resumed.run.stdout)
    expect(resumedReport.cells).toMatchObject({ total: 4, kept: 3, ran: 1 })
    expect(resumedReport.scorecards.find((s: { stratum: string | null }) => s.stratum === null)).toMatchObject({ n: 4, meanReward: 1 })
  }, 300_000)

  it("runs real pi as a default-model candidate: grades as scripted, cost unknown, and the report names the model its transcript shows", async () => {
    const home = tempDir()
    const run = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* Loopback.start([
            { match: { lastUser: "sales\\.csv" }, toolCalls: [{ name: "bash", arguments: { command: `printf '%s' '${summary}' > summary.json` } }], usage: { input: 200, output: 30 } },
            { match: { lastUser: "sales\\.csv" }, text: "The total is 139.72.", usage: { input: 300, output: 12 } }
          ])
          return yield* Effect.promise(() =>
            assay(
              ["run", "--harness", "pi", "--task", "csv-summary", "--timeout-secs", "150", "--yes", "--json", "--home", home],
              { PATH: "/usr/bin:/bin", ASSAY_HARNESS_BASE_URL: server.url }
            )
          )
        })
      )
    )
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    const card = report.scorecards.find((s: { stratum: string | null }) => s.stratum === null)
    expect(card).toMatchObject({ candidate: "harness:pi", meanReward: 1, costUsd: null, tokens: { input: 500, output: 42 } })
    // No candidate has a known price, so there is no default judge.
    expect(report.recommendation.judge).toBeNull()
    expect(report.recommendation.worker.candidate).toBe("harness:pi")
    expect(report.notes).toContain("harness:pi ran default (as its transcripts show)")
  }, 300_000)
})
