/**
 * Preflight for harness runs through the whole command, with the fake agent CLI as `codex` on
 * the user's own login (its rollout carries the quota readings): a pilot of one cell per
 * candidate and stratum, the estimate in dollars and window points, the gate's exit 3, and the
 * resumed run that pays no pilot cell twice.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { costAt } from "../../src/model/Cost.ts"
import * as Registry from "../../src/model/Registry.ts"
import { Effect } from "effect"
import { fakeBin, writeJson } from "../harness/support.ts"
import { assay, tempDir } from "./support.ts"

const MINI = "gpt-4o-mini-2024-07-18"
const bin = fakeBin(["codex"])
const baseEnv = { PATH: "/usr/bin:/bin", ASSAY_HARNESS_BIN_DIRS: bin }
const usage = [{ input: 1000, cached: 0, output: 100 }]

// The primary window as each task's run leaves it: 40, 43, 46 and 47% used.
const answers = [
  { match: "TCP port", answer: "Port 8443", usage, rateLimits: [{ primary: 39 }, { primary: 40 }] },
  { match: "TODO", answer: "There are 5.", usage, rateLimits: [{ primary: 43 }] },
  { match: "change\\.patch", answer: "REJECT\nAn off-by-one skips the first page.", usage, rateLimits: [{ primary: 46 }] },
  { match: "logs/ folder", answer: "cache\nIt ran out of memory first.", usage, rateLimits: [{ primary: 47 }] }
]
const tasks = ["config-port", "count-todos", "review-patch", "triage-logs"].flatMap((t) => ["--task", t])
const args = (home: string, ...extra: ReadonlyArray<string>) =>
  ["run", "--harness", "codex", "--model", `codex:${MINI}`, ...tasks, "--reps", "2", "--no-judge", "--yes", "--json", "--home", home, ...extra]

/** Every Attempt the home holds, over all its runs. */
const attemptLines = (home: string, runIds: ReadonlyArray<string>) =>
  runIds.flatMap((id) => {
    const file = join(home, "runs", id, "results.jsonl")
    return existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter((l) => l !== "") : []
  })

const price = Effect.runSync(Registry.fixture).providers["openai"]!.models[MINI]!.cost!
const cellCost = costAt(price, { inputTokens: 1000, outputTokens: 100 })

describe("harness preflight through the command", { timeout: 300_000 }, () => {
  it("--preflight-share: the pilot's window points say the rest would pass the share, so the run stops with exit 3; a larger share resumes and runs no pilot cell twice", async () => {
    const home = tempDir()
    const env = { ...baseEnv, FAKE_HARNESS_SCRIPT: writeJson({ byPrompt: answers }), CODEX_HOME: tempDir() }
    const first = await assay(args(home, "--preflight-share", "0.1"), env)
    expect(first.code, first.stderr).toBe(3)
    const stopped = JSON.parse(first.stdout)
    expect(stopped.stopped).toBe("over-allowance")
    // Strata both/worker/orchestrator: config-port, count-todos, review-patch are the pilot.
    const estimate = stopped.estimate
    expect(estimate.candidates[0]).toMatchObject({ candidate: `harness:codex:${MINI}`, pilotCells: 3, cellsLeft: 5 })
    // Pilot points 1 (39 -> 40 within the first cell), 3, 3: mean 7/3 per cell, worst 3, over 5 cells.
    expect(estimate.total.windows.primary.expected).toBeCloseTo(35 / 3, 10)
    expect(estimate.total.windows.primary.worstSeen).toBeCloseTo(15, 10)
    expect(estimate.allowance).toMatchObject({ share: 0.1, pauseAt: 0.8, used: { primary: 7 }, latest: { primary: 46 } })
    expect(estimate.reasons[0]).toMatch(/^the primary window: 7 points used and [\d.]+ more needed \(conservative\), over the allowance of 10$/)
    // Dollars are estimated at list price though no dollar budget was given.
    expect(estimate.total.usd.expected).toBeCloseTo(5 * cellCost, 12)
    expect(attemptLines(home, [stopped.runId])).toHaveLength(3)

    const plan = await assay(["plan", "--harness", "codex", "--model", `codex:${MINI}`, ...tasks, "--reps", "2", "--no-judge", "--json", "--home", home], env)
    expect(JSON.parse(plan.stdout).estimate).toMatchObject({ verdict: "over-allowance", runId: stopped.runId })

    const second = await assay(args(home, "--preflight-share", "0.5"), env)
    expect(second.code, second.stderr).toBe(0)
    const report = JSON.parse(second.stdout)
    expect(report.cells).toMatchObject({ total: 8, kept: 3, ran: 5 })
    expect(report.scorecards.find((s: { stratum: string | null }) => s.stratum === null).n).toBe(8)
    // The second pilot found its cells kept and ran none: eight Attempts in all, over three runs.
    const runIds = readdirSync(join(home, "runs"))
    expect(runIds).toHaveLength(3)
    expect(attemptLines(home, runIds)).toHaveLength(8)
  })

  it("--preflight-usd far below the pilot's bills stops after the pilot with exit 3; a larger budget resumes from it", async () => {
    const home = tempDir()
    const env = { ...baseEnv, FAKE_HARNESS_SCRIPT: writeJson({ byPrompt: answers }), CODEX_HOME: tempDir() }
    const low = await assay(args(home, "--preflight-usd", String(cellCost)), env)
    expect(low.code, low.stderr).toBe(3)
    const stopped = JSON.parse(low.stdout)
    expect(stopped.stopped).toBe("over-budget")
    expect(stopped.estimate.budgetUsd).toBe(cellCost)
    // The pilot is bounded by the budget: its first cell spends it all, so no other pilot cell starts.
    expect(stopped.estimate.reasons[0]).toMatch(/^the pilot alone would pass the budget: 2 pilot cells were not run/)
    expect(stopped.estimate.total.usd.expected).toBeGreaterThan(cellCost)

    const text = await assay(args(home, "--preflight-usd", String(cellCost)).filter((a) => a !== "--json"), env)
    expect(text.code).toBe(3)
    expect(text.stdout).toContain("stopped: over-budget; run again with a larger --preflight-usd to resume after the pilot")

    const high = await assay(args(home, "--preflight-usd", "1", "--preflight-share", "0.9"), env)
    expect(high.code, high.stderr).toBe(0)
    const report = JSON.parse(high.stdout)
    // Its pilot runs the two pilot cells the budget left, then the rest: 3 kept by the run itself.
    expect(report.cells).toMatchObject({ total: 8, kept: 3, ran: 5 })
  })

  it("a harness run refused by its exhausted quota ends in a fault, not a score: no cell starts after it, and the next run runs it again", async () => {
    const home = tempDir()
    const codexHome = tempDir()
    const run = (script: unknown) =>
      assay(
        ["run", "--harness", "codex", "--model", `codex:${MINI}`, "--task", "config-port", "--task", "count-todos", "--no-judge", "--yes", "--json", "--home", home],
        { ...baseEnv, FAKE_HARNESS_SCRIPT: writeJson(script), CODEX_HOME: codexHome }
      )
    const refused = await run({ byPrompt: [{ match: "TCP port", answer: "", usage, rateLimits: [{ primary: 100 }], exitCode: 1 }, ...answers] })
    expect(refused.code, refused.stderr).toBe(3)
    const first = JSON.parse(refused.stdout)
    expect(first.cells).toMatchObject({ total: 2, ran: 1, faulted: 1, skipped: 1 })
    expect(first.warnings.join(" ")).toContain("quota: the primary window is 100% used (pause at 80%)")

    const resumed = await run({ byPrompt: answers })
    expect(resumed.code, resumed.stderr).toBe(0)
    const second = JSON.parse(resumed.stdout)
    expect(second.cells).toMatchObject({ total: 2, kept: 0, ran: 2, faulted: 0 })
    expect(second.notes).toContain("1 cells whose last Attempt said nothing of the candidate (an outage, or the benchmark's own failure) ran again")
    expect(second.scorecards.find((s: { stratum: string | null }) => s.stratum === null)).toMatchObject({ n: 2, meanReward: 1 })
  })
})
