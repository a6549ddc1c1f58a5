/**
 * A harness run's `--max-usd` is the experiment's cap, as a model run's is: the same command run
 * again after the cap stopped it counts what the experiment's earlier runs (and their judging)
 * spent, so it runs nothing more under the same cap, and under a larger one only what fits.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { costAt } from "../../src/model/Cost.ts"
import * as Registry from "../../src/model/Registry.ts"
import { fakeBin, writeJson } from "../harness/support.ts"
import { assay, tempDir } from "./support.ts"

const MINI = "gpt-4o-mini-2024-07-18"
// /usr/bin holds python3 for the graders; no real agent CLI is reachable.
const env = {
  PATH: "/usr/bin:/bin",
  ASSAY_HARNESS_BIN_DIRS: fakeBin(["codex"]),
  FAKE_HARNESS_SCRIPT: writeJson({
    byPrompt: [
      { match: "You are grading", answer: "Right and to the point.\nSCORE: 8", usage: [{ input: 500, cached: 0, output: 20 }] },
      { match: "TCP port", answer: "Port 8443", usage: [{ input: 1000, cached: 0, output: 100 }] },
      { match: "TODO", answer: "There are 5.", usage: [{ input: 1000, cached: 0, output: 100 }] },
      { match: "change\\.patch", answer: "REJECT\nAn off-by-one skips the first page.", usage: [{ input: 1000, cached: 0, output: 100 }] },
      { match: "logs/ folder", answer: "cache\nIt ran out of memory first.", usage: [{ input: 1000, cached: 0, output: 100 }] }
    ]
  })
}

const registry = Effect.runSync(Registry.fixture)
// What one run of the candidate costs (each task's answer uses 1,000 in and 100 out).
const runCost = costAt(registry.providers["openai"]!.models[MINI]!.cost!, { inputTokens: 1000, outputTokens: 100 })

interface Spend {
  readonly runUsd: number
  readonly experimentUsd: number
  readonly capUsd: number | null
}
interface RunDoc {
  readonly experimentId: string
  readonly cells: { readonly ran: number; readonly kept: number; readonly skipped: number }
  readonly spend: Spend
}

describe("assay run --harness --max-usd is the experiment's spend cap", { timeout: 300_000 }, () => {
  it("a run again after the cap stopped it spends nothing more under the same cap (exit 3, stopped by budget), and under a larger one only what fits", async () => {
    const home = tempDir()
    const args = (maxUsd: number) => [
      "run", "--harness", "codex", "--model", `codex:${MINI}`,
      "--task", "config-port", "--task", "count-todos", "--task", "review-patch", "--task", "triage-logs",
      "--no-judge", "--max-usd", String(maxUsd), "--yes", "--json", "--home", home
    ]
    // A run's cost is known once it ends: the second cell starts below the cap and takes the experiment past it.
    const cap = runCost * 1.5

    const first = await assay(args(cap), env)
    expect(first.code, first.stderr).toBe(0)
    const stopped = JSON.parse(first.stdout) as RunDoc
    expect(stopped.cells).toMatchObject({ ran: 2, skipped: 2 })
    expect(stopped.spend.experimentUsd).toBeCloseTo(2 * runCost, 12)
    expect(stopped.spend.capUsd).toBe(cap)

    // The same command again: the experiment has already spent past its cap, so nothing starts.
    const again = await assay(args(cap), env)
    expect(again.code, again.stderr).toBe(3)
    expect(again.stderr).toMatch(/stopped by budget: the spend cap \(\$[0-9.]+, \$[0-9.]+ spent by the experiment\) skipped all 2 cells to run and none ran/)
    const resumed = JSON.parse(again.stdout) as RunDoc
    expect(resumed.experimentId).toBe(stopped.experimentId)
    expect(resumed.cells).toMatchObject({ kept: 2, ran: 0, skipped: 2 })
    expect(resumed.spend.runUsd).toBe(0)
    expect(resumed.spend.experimentUsd).toBeCloseTo(2 * runCost, 12)

    // A larger cap resumes from what the experiment spent: one more run fits below it, not two.
    const larger = await assay(args(runCost * 2.5), env)
    expect(larger.code, larger.stderr).toBe(0)
    const more = JSON.parse(larger.stdout) as RunDoc
    expect(more.cells).toMatchObject({ kept: 2, ran: 1, skipped: 1 })
    expect(more.spend.runUsd).toBeCloseTo(runCost, 12)
    expect(more.spend.experimentUsd).toBeCloseTo(3 * runCost, 12)
  })
})
