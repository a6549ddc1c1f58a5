/**
 * The recommendation a harness run's report carries, from constructed Attempts: picks, the models
 * a default-model candidate's transcripts show, and its section in every rendering.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { recommendationOf } from "../../src/harness/RunPolicy.ts"
import { decodeJson, encodeJson, renderHtml, renderMarkdown, renderText, type Report } from "../../src/experiment/Report.ts"
import type { Attempt } from "../../src/schema/Attempt.ts"

const attempt = (candidate: string, task: string, stratum: string, reward: number, costUsd: number | null, models: ReadonlyArray<string>): Attempt => ({
  environmentId: `env-${task}`,
  agentId: `agent-${candidate}`,
  benchmark: "corpus",
  task,
  stratum,
  candidate,
  repetition: 0,
  inputsId: "sha256:0",
  evidence: null,
  output: { transcript: [], result: { harness: { models, wallMs: 1000, quota: [] } } },
  verdict: { reward, checks: {}, notEvaluated: [], trust: "deterministic", ended: null },
  usage: { inputTokens: 10, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, calls: 1, retries: 0, costUsd, wallSeconds: 1 },
  faults: [],
  finalWorld: null,
  recording: [],
  receipt: { evidenceId: "", outputId: "", verdictId: "", recordingId: "", library: "assay/0.1.0" },
  startedAt: "2026-11-30T00:00:00.000Z"
})

const attempts = [
  attempt("harness:codex:gpt-5", "review-patch", "orchestrator", 1, 0.02, ["gpt-5"]),
  attempt("harness:codex:gpt-5", "count-todos", "worker", 1, 0.02, ["gpt-5"]),
  attempt("harness:pi", "review-patch", "orchestrator", 0.5, null, ["local-model"]),
  attempt("harness:pi", "count-todos", "worker", 0.95, null, ["local-model"])
]

describe("the harness recommendation in a report", () => {
  it("picks by the rules, keeps unknown costs unknown, names a default candidate's model, and renders in text, Markdown and HTML", async () => {
    const rec = recommendationOf(attempts, { ref: "harness:codex:gpt-5", alsoCandidate: true })
    expect(rec.orchestrator?.candidate).toBe("harness:codex:gpt-5")
    // Within 0.10 of the best worker: the only known cost wins over an unknown one.
    expect(rec.worker?.candidate).toBe("harness:codex:gpt-5")
    expect(rec.standings.worker.find((s) => s.candidate === "harness:pi")?.medianCostUsd).toBeNull()
    expect(rec.models["harness:pi"]).toEqual(["local-model"])
    expect(rec.smallestSample).toBe(1)
    const report: Report = {
      runId: "r-0123456789abcdef",
      experimentId: "sha256:1",
      home: "/tmp/h",
      cells: { total: 4, ran: 4, kept: 0, stale: 0, skipped: 0, faulted: 0 },
      scorecards: [],
      comparisons: [],
      recommendation: rec
    }
    const back = await Effect.runPromise(Effect.flatMap(encodeJson(report), decodeJson))
    expect(back.recommendation).toEqual(rec)
    for (const text of [renderText(report), renderMarkdown(report), renderHtml(report)]) {
      expect(text).toContain("orchestrator: harness:codex:gpt-5")
      expect(text).toContain("harness:pi (local-model)")
      expect(text).toContain("judge: harness:codex:gpt-5 (also a candidate)")
      expect(text).toMatch(/smallest sample per cell is 1 \(below 3\)/)
    }
  })
})
