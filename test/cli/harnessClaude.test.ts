/**
 * Real Claude Code (installed by the project into tools/harnesses) through `assay run --harness
 * claude`, on a claude.ai subscription login: a fake one, living only in this test's temp folders
 * (`.credentials.json` with a `claudeAiOauth` object whose scopes hold `user:inference` only, so
 * Claude Code never asks api.anthropic.com for a profile), and the user's own ANTHROPIC_BASE_URL
 * pointing at the loopback model server. On such a login Claude Code reads the
 * `anthropic-ratelimit-unified-*` headers the server sends and prints `rate_limit_event` lines;
 * the run meters them and no new cell starts past the pause threshold.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as Store from "../../src/experiment/Store.ts"
import * as Loopback from "../../src/testkit/LoopbackServer.ts"
import { costAt } from "../../src/model/Cost.ts"
import * as Registry from "../../src/model/Registry.ts"
import { Attempt } from "../../src/schema/Attempt.ts"
import { assay, tempDir } from "./support.ts"

const MODEL = "claude-haiku-4-5-20251001"
const summary = JSON.stringify({ by_category: { books: 49.75, games: 79.98, music: 9.99 }, total: 139.72 })

/** The session window at `utilization` (0..1), past a threshold the server names, as the API says it. */
const fiveHour = (utilization: number): Record<string, string> => {
  const reset = String(Math.floor(Date.now() / 1000) + 3600)
  return {
    "anthropic-ratelimit-unified-status": "allowed_warning",
    "anthropic-ratelimit-unified-reset": reset,
    "anthropic-ratelimit-unified-representative-claim": "five_hour",
    "anthropic-ratelimit-unified-5h-utilization": String(utilization),
    "anthropic-ratelimit-unified-5h-reset": reset,
    "anthropic-ratelimit-unified-5h-surpassed-threshold": "0.75"
  }
}
const cell = (headers: Record<string, string>) => [
  {
    match: { lastUser: "sales\\.csv" },
    toolCalls: [{ name: "Bash", arguments: { command: `printf '%s' '${summary}' > summary.json` } }],
    usage: { input: 200, output: 30, cacheRead: 50 },
    headers
  },
  { match: { lastUser: "sales\\.csv" }, text: "The total is 139.72.", usage: { input: 300, output: 12 }, headers }
]

/** A claude.ai login as Claude Code stores it, under a temp HOME: never the user's ~/.claude. */
const fakeLogin = () => {
  const home = tempDir("assay-claude-home-")
  const config = join(home, ".claude")
  mkdirSync(config, { recursive: true })
  const claudeAiOauth = {
    accessToken: "sk-ant-oat01-loopback",
    refreshToken: "sk-ant-ort01-loopback",
    // Far ahead: an expiring token would be refreshed against claude.ai.
    expiresAt: 4_102_444_800_000,
    scopes: ["user:inference"],
    subscriptionType: "max",
    rateLimitTier: "default_claude_max_20x"
  }
  writeFileSync(join(config, ".credentials.json"), JSON.stringify({ claudeAiOauth }), { mode: 0o600 })
  return { HOME: home, CLAUDE_CONFIG_DIR: config }
}

describe("real Claude Code through assay run --harness on a subscription login", () => {
  it("meters the five-hour window Claude Code reports: past 80% used no new cell starts, the run says why and exits 3; the next run resumes", async () => {
    const home = tempDir()
    const login = fakeLogin()
    const runWith = (turns: ReadonlyArray<Loopback.ScriptTurn>) =>
      Effect.runPromise(
        Effect.scoped(
          Effect.gen(function*() {
            const server = yield* Loopback.start([...turns, { default: true, text: "nothing to add", usage: { input: 10, output: 1 } }])
            const run = yield* Effect.promise(() =>
              assay(
                ["run", "--harness", "claude", "--model", `claude:${MODEL}`, "--task", "csv-summary", "--reps", "3", "--no-judge", "--timeout-secs", "150", "--yes", "--json", "--home", home],
                // No ASSAY_HARNESS_BASE_URL: Claude Code runs on its own login and configuration.
                { PATH: "/usr/bin:/bin", ANTHROPIC_BASE_URL: server.url, ...login }
              )
            )
            return { run, requests: server.requests() }
          })
        )
      )

    // Cell 1 sees the session window at 85%: cells 2 and 3 wait.
    const { requests, run } = await runWith(cell(fiveHour(0.85)))
    expect(run.code, run.stderr).toBe(3)
    const report = JSON.parse(run.stdout)
    expect(report.cells).toMatchObject({ total: 3, ran: 1, skipped: 2 })
    expect(report.scorecards).toEqual([])
    expect(report.warnings.join(" ")).toContain("quota: the five_hour window is 85% used (pause at 80%)")
    // The subscription's bearer token, not an API key.
    const served = requests.filter((r) => r.api === "anthropic-messages" && r.status === 200)
    expect(served.length).toBeGreaterThanOrEqual(2)
    for (const r of served) expect([r.headers["authorization"], r.headers["x-api-key"]]).toEqual(["[redacted]", undefined])

    const attempts = readFileSync(join(home, "runs", report.runId, "results.jsonl"), "utf8").trim().split("\n").map((l) => Schema.decodeUnknownSync(Attempt)(JSON.parse(l)))
    expect(attempts).toHaveLength(1)
    const price = Effect.runSync(Registry.fixture).providers["anthropic"]!.models[MODEL]!.cost!
    const cost = costAt(price, { inputTokens: 200, outputTokens: 30, cacheReadTokens: 50 }) + costAt(price, { inputTokens: 300, outputTokens: 12 })
    const a = attempts[0]!
    const detail = JSON.stringify(a.output).slice(-3000)
    expect(a.verdict.checks, detail).toEqual({ "summary.json has the keys": true, "sums are right": true })
    // Per call, from the session file in the login's CLAUDE_CONFIG_DIR (stdout has partial usage).
    expect(a.usage, detail).toMatchObject({ inputTokens: 500, outputTokens: 42, cacheReadTokens: 50, calls: 2 })
    expect(a.usage.costUsd).toBeCloseTo(cost, 12)
    const result = (a.output as { result: { harness: { finalAnswer: string; models: Array<string>; quota: Array<unknown> } } }).result
    expect(result.harness.finalAnswer).toBe("The total is 139.72.")
    expect(result.harness.models).toContain(MODEL)
    expect(result.harness.quota).toEqual([{ window: "five_hour", usedPercent: 85, windowMinutes: 300 }])
    const skipped = await Effect.runPromise(Effect.flatMap(Store.Store, (s) => s.skippedOfRun(report.runId)).pipe(Effect.provide(Store.layer(home))))
    expect(skipped.map((s) => s.reason)).toEqual([expect.stringMatching(/^quota: the five_hour window/), expect.stringMatching(/^quota: the five_hour window/)])

    // The window has reset (Claude Code sees `allowed`, no utilisation): the other cells run.
    const resumed = await runWith([...cell({ "anthropic-ratelimit-unified-status": "allowed" }), ...cell({ "anthropic-ratelimit-unified-status": "allowed" })])
    expect(resumed.run.code, resumed.run.stderr).toBe(0)
    const resumedReport = JSON.parse(resumed.run.stdout)
    expect(resumedReport.cells).toMatchObject({ total: 3, kept: 1, ran: 2 })
    expect(resumedReport.scorecards.find((s: { stratum: string | null }) => s.stratum === null)).toMatchObject({ n: 3, meanReward: 1 })
  }, 300_000)
})
