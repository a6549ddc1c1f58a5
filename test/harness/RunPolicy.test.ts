/**
 * The harness run's policy as the runner sees it, with no CLI and no store: what `admit` refuses
 * once cells are metered through `progress`, the report a run is finished with, and the exit code.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Report } from "../../src/experiment/Report.ts"
import { silent } from "../../src/experiment/Runner.ts"
import * as RunPolicy from "../../src/harness/RunPolicy.ts"
import type { Attempt } from "../../src/schema/Attempt.ts"

const attempt = (options: {
  readonly task?: string
  readonly candidate?: string
  readonly costUsd?: number | null
  readonly judgingUsd?: number
  readonly quota?: ReadonlyArray<number>
  readonly models?: ReadonlyArray<string>
}): Attempt => ({
  environmentId: `env-${options.task ?? "config-port"}`,
  agentId: "agent",
  benchmark: "corpus",
  task: options.task ?? "config-port",
  stratum: "both",
  candidate: options.candidate ?? "harness:codex:gpt-5",
  repetition: 0,
  inputsId: "sha256:0",
  evidence: null,
  output: { transcript: [], result: { harness: { models: options.models ?? [], wallMs: 1000 } } },
  verdict: { reward: 1, checks: {}, notEvaluated: [], trust: "deterministic", ended: null },
  usage: { inputTokens: 10, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, calls: 1, retries: 0, costUsd: options.costUsd ?? 0, wallSeconds: 1 },
  ...(options.judgingUsd === undefined ? {} : { judging: { calls: 1, inputTokens: 5, outputTokens: 1, costUsd: options.judgingUsd } }),
  faults: [],
  finalWorld: null,
  recording: [
    {
      kind: "process/spawn",
      key: "codex",
      occurrence: 1,
      request: null,
      outcome: { ok: { quota: (options.quota ?? []).map((usedPercent) => ({ window: "primary", usedPercent })) } }
    }
  ],
  receipt: { evidenceId: "", outputId: "", verdictId: "", recordingId: "", library: "assay/0.1.0" },
  startedAt: "2026-12-01T00:00:00.000Z"
})

const limits: RunPolicy.Limits = { maxUsd: 1, timeoutSecs: 60, allowance: { share: 0.1, pauseAt: 0.8 } }

const report: Report = {
  runId: "r-0123456789abcdef",
  experimentId: "sha256:1",
  home: "/tmp/h",
  cells: { total: 2, ran: 2, kept: 0, stale: 0, skipped: 0, faulted: 0 },
  scorecards: [],
  comparisons: [],
  warnings: ["2 cells were skipped (see the run's skipped cells)"]
}

/** The runner's settings from the policy, and a way to finish a cell through their progress hook. */
const runnerOf = (policy: RunPolicy.RunPolicy) => {
  const settings = policy.settings({ pilot: false, handlers: {}, progress: silent, record: { benchmarks: ["corpus"] } })
  const admit = settings.admit!(undefined as never)
  const done = (last: Attempt) => settings.progress.cell({ done: 1, toRun: 1, passed: 1, spentUsd: null, last })
  return { settings, admit, done }
}

describe("the harness run policy", () => {
  it.effect("runs one cell at a time, hands the spend cap to the runner, and keeps its limits with the run", () =>
    Effect.gen(function*() {
      const policy = yield* RunPolicy.make({ limits, baseline: null, judge: null })
      const { settings } = runnerOf(policy)
      expect(settings).toMatchObject({ parallel: 1, maxUsd: 1, timeoutSeconds: 60 * 2 + 120 })
      expect(settings.settings).toEqual({
        benchmarks: ["corpus"],
        parallel: 1,
        maxUsd: 1,
        timeoutSecs: 60,
        allowance: { share: 0.1, pauseAt: 0.8 },
        pilot: false
      })
    }))

  it.effect("stopped by budget (exit 3) only when the runner's cap skipped this command's cells and none ran, a pilot's included", () =>
    Effect.gen(function*() {
      const spend = { runUsd: 0, experimentUsd: 1, unknownCalls: 0, calls: 0, capUsd: 1, unsettledUsd: 0, experimentUnsettledUsd: 0 }
      const capped = (task: string) => ({ environmentId: `env-${task}`, task, candidate: "harness:codex:gpt-5", repetition: 0, reason: "spend cap: $1.0000 of $1 spent by the experiment (runs and their judging)" })
      const none: Report = {
        ...report,
        cells: { ...report.cells, ran: 0, kept: 0, skipped: 2 },
        skipped: [capped("config-port"), capped("count-todos")],
        spend
      }

      const spent = yield* RunPolicy.make({ limits, baseline: null, judge: null })
      expect(yield* spent.overBudget).toBeNull()
      const finished = yield* spent.finish({ report: none, attempts: [] })
      expect(finished.spend).toEqual(spend)
      expect(yield* spent.overBudget).toBe(
        "stopped by budget: the spend cap ($1, $1.0000 spent by the experiment) skipped all 2 cells to run and none ran; raise --max-usd to run them"
      )
      expect(yield* spent.exitCode).toBe(3)

      // A pilot ran a cell, then the cap skipped the rest: the command ran something, it is not stopped by budget.
      const piloted = yield* RunPolicy.make({ limits, baseline: null, judge: null })
      yield* piloted.finish({ report: { ...report, cells: { ...report.cells, ran: 1 } }, attempts: [attempt({})] })
      yield* piloted.finish({ report: none, attempts: [] })
      expect(yield* piloted.overBudget).toBeNull()
      expect(yield* piloted.exitCode).toBe(0)

      // Cells skipped for another reason are not the cap's.
      const other = yield* RunPolicy.make({ limits, baseline: null, judge: null })
      yield* other.finish({ report: { ...none, skipped: none.skipped!.map((c) => ({ ...c, reason: "no agent: codex is not installed" })) }, attempts: [] })
      expect(yield* other.overBudget).toBeNull()
    }))

  it.effect("the allowance counts from the experiment's stored baseline; its refusal stops the run: exit 3, no Scorecard kept", () =>
    Effect.gen(function*() {
      const policy = yield* RunPolicy.make({ limits, baseline: { primary: 40 }, judge: null })
      const { admit, done } = runnerOf(policy)
      yield* done(attempt({ quota: [45, 49] }))
      expect(yield* admit).toBeNull()
      expect(yield* policy.exitCode).toBe(0)
      yield* done(attempt({ quota: [50] }))
      expect(yield* admit).toBe("quota: this experiment used 10 points of the primary window since it started (allowance 10)")
      expect(yield* policy.baseline).toEqual({ primary: 40 })
      expect(yield* policy.exitCode).toBe(3)
      const finished = yield* policy.finish({ report: { ...report, scorecards: [{} as never] }, attempts: [attempt({})] })
      expect(finished.scorecards).toEqual([])
      expect(finished.warnings).toEqual([
        "2 cells were skipped (see the run's skipped cells)",
        "stopped by the subscription allowance: quota: this experiment used 10 points of the primary window since it started (allowance 10); run again to resume"
      ])
      expect(finished.recommendation?.orchestrator?.candidate).toBe("harness:codex:gpt-5")
    }))

  it.effect("pauses at 80% used, whoever used it; the gate sees where the experiment stands", () =>
    Effect.gen(function*() {
      const policy = yield* RunPolicy.make({ limits, baseline: null, judge: null })
      const { admit, done } = runnerOf(policy)
      yield* done(attempt({ quota: [79, 80] }))
      expect(yield* admit).toBe("quota: the primary window is 80% used (pause at 80%)")
      const gate = policy.gate(null)
      expect(gate).toMatchObject({ budgetUsd: null, parallel: 1 })
      expect(yield* gate.allowance!).toEqual({ share: 0.1, pauseAt: 0.8, used: { primary: 1 }, latest: { primary: 80 } })
    }))

  it.effect("a run not stopped is finished with its Scorecards, the recommendation with its judge, and the models a default candidate ran", () =>
    Effect.gen(function*() {
      const judge = { ref: "harness:codex:gpt-5", alsoCandidate: true }
      const policy = yield* RunPolicy.make({ limits, baseline: null, judge })
      const finished = yield* policy.finish({
        report,
        attempts: [attempt({ candidate: "harness:pi", models: ["local-model"] }), attempt({ models: ["gpt-5"] })]
      })
      expect(finished.warnings).toEqual(report.warnings)
      expect(finished.notes).toEqual(["harness:pi ran local-model (as its transcripts show)"])
      expect(finished.recommendation?.judge).toEqual(judge)
      expect(finished.recommendation?.models).toEqual({ "harness:pi": ["local-model"], "harness:codex:gpt-5": ["gpt-5"] })
      expect(yield* policy.exitCode).toBe(0)
    }))
})
