/**
 * The policy of a harness run, plugged into the experiment runner through its settings like any
 * candidate kind's: one cell at a time (runs share the machine, their wall time is measured, and
 * each cell's quota readings follow the previous cell's); the experiment's spend cap, which the
 * runner keeps as for any run (a CLI's cell admitted below it and settled after, its judging
 * included); before each cell, the subscription allowance; after each, its quota readings
 * metered; at the end, the report with the orchestrator/worker recommendation, its Scorecards
 * withheld when the allowance stopped the run. The command parses options into `Limits`, builds
 * the plan, stores and prints; nothing here opens a store or prints.
 */
import { Effect, Ref } from "effect"
import type { Json } from "../content/Canonical.ts"
import type { Gate } from "../experiment/Preflight.ts"
import type { Recommendation, Report } from "../experiment/Report.ts"
import { capSkipped, type Progress, type RunOutcome, type RunSettings } from "../experiment/Runner.ts"
import { isUnscored, summaryOf } from "../experiment/Scorecards.ts"
import type { Attempt } from "../schema/Attempt.ts"
import type { Handlers } from "../world/WorldEffects.ts"
import * as Allowance from "./Allowance.ts"
import type { HarnessPlan } from "./Plan.ts"
import { recommend, type ResultRow } from "./Recommend.ts"

export const DEFAULT_MAX_USD = 10
export const DEFAULT_TIMEOUT_SECS = 600

export interface Limits {
  /**
   * The experiment's spend cap: no new cell starts once the known dollars of its runs and their
   * judging, in this command and the earlier ones in this home, reach this.
   */
  readonly maxUsd: number
  /** Each harness run (and a harness judge's) is killed after this. */
  readonly timeoutSecs: number
  readonly allowance: Allowance.Allowance
}

// ---------------------------------------------------------------------------------------------
// Reading Attempts

interface HarnessResult {
  readonly harness?: {
    readonly models?: ReadonlyArray<string>
    readonly wallMs?: number
  }
}

const resultOf = (a: Attempt): HarnessResult | undefined => {
  const result = (a.output as { readonly result?: unknown } | null)?.result
  return typeof result === "object" && result !== null ? (result as HarnessResult) : undefined
}

/**
 * The quota readings of every harness run an Attempt made (the candidate's and a harness judge's:
 * they draw on the same account), in the order they ran. Read from the recording, so a run that
 * ended in a fault (a quota refusal) still counts.
 */
export const quotaOf = (a: Attempt): ReadonlyArray<Allowance.Reading> =>
  a.recording.flatMap((r) => {
    if (r.kind !== "process/spawn" || !("ok" in r.outcome)) return []
    const quota = (r.outcome.ok as { readonly quota?: unknown } | null)?.quota
    return Array.isArray(quota)
      ? quota.filter((q): q is Allowance.Reading => typeof q?.window === "string" && typeof q?.usedPercent === "number")
      : []
  })

/** A stored `quota-baseline` note: window -> percent used at the experiment's first reading. */
export const baselineOf = (note: unknown): ReadonlyMap<string, number> =>
  new Map(
    typeof note === "object" && note !== null
      ? Object.entries(note).filter((e): e is [string, number] => typeof e[1] === "number")
      : []
  )

/** The judge as the recommendation names it: its ref and whether it is also a candidate; null without one. */
export const judgeOf = (plan: HarnessPlan, ref: string | null): Recommendation["judge"] =>
  ref === null ? null : { ref, alsoCandidate: plan.judge.kind === "harness" && plan.judge.alsoCandidate }

/**
 * The recommendation over a run's current Attempts (kept and fresh), its scored ones: an outage
 * (an agent CLI that never reached its model, a quota at 100%) or the benchmark's own failure is
 * no score of the candidate's, as on every Scorecard.
 */
export const recommendationOf = (attempts: ReadonlyArray<Attempt>, judge: Recommendation["judge"]): Recommendation => {
  const rows: Array<ResultRow> = attempts.filter((a) => !isUnscored(summaryOf(a))).map((a) => ({
    candidate: a.candidate,
    task: a.task,
    role: a.stratum === "orchestrator" || a.stratum === "worker" ? a.stratum : "both",
    status: "done",
    score: a.verdict.reward,
    costUsd: a.usage.costUsd ?? undefined,
    wallMs: resultOf(a)?.harness?.wallMs ?? a.usage.wallSeconds * 1000
  }))
  const rec = recommend(rows)
  const models: Record<string, Array<string>> = {}
  for (const a of attempts) {
    const seen = (models[a.candidate] ??= [])
    for (const m of resultOf(a)?.harness?.models ?? []) if (!seen.includes(m)) seen.push(m)
  }
  const pick = (p: typeof rec.orchestrator) => (p === undefined ? null : { ...p, medianCostUsd: p.medianCostUsd ?? null })
  return {
    orchestrator: pick(rec.orchestrator),
    worker: pick(rec.worker),
    standings: {
      orchestrator: rec.standings.orchestrator.map((s) => ({ ...s, medianCostUsd: s.medianCostUsd ?? null })),
      worker: rec.standings.worker.map((s) => ({ ...s, medianCostUsd: s.medianCostUsd ?? null }))
    },
    smallestSample: rec.smallestSample ?? null,
    warnings: rec.warnings,
    models,
    judge
  }
}

/**
 * A run's report as a harness run finishes it: with the recommendation and, for a candidate on
 * its harness's default model, a note naming the models its transcripts show. Stopped by the
 * allowance (`stopped`, the first refusal), the run is incomplete: no Scorecard is kept for it,
 * and running again resumes from the cells already done.
 */
export const finishedReport = (
  outcome: Pick<RunOutcome, "report" | "attempts">,
  judge: Recommendation["judge"],
  stopped: string | null
): Report => {
  const recommendation = recommendationOf(outcome.attempts, judge)
  const shown = Object.entries(recommendation.models)
    .filter(([c, ms]) => ms.length > 0 && !ms.every((m) => c.endsWith(`:${m}`)))
    .map(([c, ms]) => `${c} ran ${ms.join(", ")} (as its transcripts show)`)
  const notes = [...(outcome.report.notes ?? []), ...shown]
  const report: Report = { ...outcome.report, ...(notes.length > 0 ? { notes } : {}), recommendation }
  return stopped === null
    ? report
    : {
      ...report,
      scorecards: [],
      comparisons: [],
      frontier: [],
      warnings: [...(report.warnings ?? []), `stopped by the subscription allowance: ${stopped}; run again to resume`]
    }
}

// ---------------------------------------------------------------------------------------------
// The policy of one command: its meters live as long as the command, across a pilot and the rest

export interface RunPolicy {
  readonly limits: Limits
  /**
   * The runner's settings for one run of the plan (`pilot`: the preflight's). `progress` is the
   * command's drawing; the policy meters each finished cell before drawing it. `record` is what
   * the command keeps with the run besides the policy's own limits.
   */
  readonly settings: (run: {
    readonly pilot: boolean
    readonly handlers: Handlers
    readonly progress: Progress
    readonly record: { readonly [key: string]: Json }
  }) => RunSettings
  /** The preflight gate: dollars against `budgetUsd`, window points against the allowance. */
  readonly gate: (budgetUsd: number | null) => Gate
  /** The first refusal by the allowance, if the allowance refused a cell: the run stopped. */
  readonly stopped: Effect.Effect<string | null>
  /**
   * Said when the spend cap refused every cell this command tried and none ran (the experiment
   * had already spent its cap): stopped by budget, not done. null otherwise.
   */
  readonly overBudget: Effect.Effect<string | null>
  /** 0, or 3 when the allowance stopped the run or the spend cap let none of its cells run. */
  readonly exitCode: Effect.Effect<0 | 3>
  /** Each window's first reading, to keep with the run so that a resumed run counts from it; null before any. */
  readonly baseline: Effect.Effect<{ readonly [window: string]: number } | null>
  /** The report to finish a run with (see `finishedReport`). */
  readonly finish: (outcome: Pick<RunOutcome, "report" | "attempts">) => Effect.Effect<Report>
}

/**
 * The policy of a harness command. `baseline` is the experiment's stored `quota-baseline` note
 * (null on its first run): "since the experiment started" counts from each window's first reading
 * ever, while its newest reading is taken afresh (windows reset). The spend cap is the runner's,
 * counted from what the experiment's earlier runs and their judging spent (the store's ledger),
 * so running again with the same cap after it stopped a run starts nothing.
 */
export const make = (options: {
  readonly limits: Limits
  readonly baseline: unknown
  readonly judge: Recommendation["judge"]
}): Effect.Effect<RunPolicy> =>
  Effect.gen(function*() {
    const { limits } = options
    const meter = yield* Ref.make<Allowance.Meter>({ ...Allowance.emptyMeter, baseline: baselineOf(options.baseline) })
    const refused = yield* Ref.make<string | null>(null)
    // This command's cells the runner's spend cap skipped and cells that ran, over its runs (a
    // pilot and the rest), and what the experiment had spent at the last run's end.
    const cells = yield* Ref.make({ capped: 0, ran: 0, spentUsd: 0 })

    const admit = Effect.gen(function*() {
      const why = Allowance.refusal(yield* Ref.get(meter), limits.allowance)
      if (why !== null) yield* Ref.update(refused, (r) => r ?? why)
      return why
    })

    const metered = (draw: Progress): Progress => ({
      ...draw,
      cell: (info) => Effect.zipRight(Ref.update(meter, (m) => Allowance.observe(m, quotaOf(info.last))), draw.cell(info))
    })

    const settings: RunPolicy["settings"] = (run) => ({
      parallel: 1,
      // The runner's cap admits a CLI's cell below it and settles the cell after, its judging
      // included (Runner.ts, unmeteredHarness): a run's cost is known only once it ends.
      maxUsd: limits.maxUsd,
      // A backstop: the harness and judge runs are killed at their own limit first.
      timeoutSeconds: limits.timeoutSecs * 2 + 120,
      handlers: run.handlers,
      progress: metered(run.progress),
      admit: () => admit,
      settings: {
        ...run.record,
        parallel: 1,
        maxUsd: limits.maxUsd,
        timeoutSecs: limits.timeoutSecs,
        allowance: { share: limits.allowance.share, pauseAt: limits.allowance.pauseAt },
        pilot: run.pilot
      }
    })

    const stopped = Ref.get(refused)
    const overBudget = Effect.gen(function*() {
      const { capped, ran, spentUsd } = yield* Ref.get(cells)
      if (ran > 0 || capped === 0) return null
      return `stopped by budget: the spend cap ($${limits.maxUsd}, $${spentUsd.toFixed(4)} spent by the experiment) ` +
        `skipped all ${capped} cells to run and none ran; raise --max-usd to run them`
    })
    return {
      limits,
      settings,
      gate: (budgetUsd) => ({
        budgetUsd,
        parallel: 1,
        readings: quotaOf,
        allowance: Effect.map(Ref.get(meter), (m) => Allowance.standing(m, limits.allowance))
      }),
      stopped,
      overBudget,
      exitCode: Effect.map(Effect.all([stopped, overBudget]), ([s, b]) => (s === null && b === null ? 0 : 3)),
      baseline: Effect.map(Ref.get(meter), ({ baseline }) => (baseline.size > 0 ? Object.fromEntries(baseline) : null)),
      finish: (outcome) =>
        Effect.gen(function*() {
          const { report } = outcome
          yield* Ref.update(cells, (c) => ({
            capped: c.capped + capSkipped(report),
            ran: c.ran + report.cells.ran,
            spentUsd: report.spend?.experimentUsd ?? c.spentUsd
          }))
          return finishedReport(outcome, options.judge, yield* stopped)
        })
    } satisfies RunPolicy
  })
