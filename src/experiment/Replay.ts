/**
 * A run replayed: every Attempt of a run evaluated again from its own recording, with the
 * current evaluators. Every effect is answered by WorldEffects' replay handler (no live handler
 * is given at all), so a replay needs no network and no key and spends nothing; a recording that
 * lacks an effect the replay asks for is named, never answered live. When verdicts differ (a
 * changed grader), the replay is stored as a run of its own that `report` reads like any other.
 *
 * The environments and candidates are rebuilt by the caller (the command knows the benchmarks);
 * Attempts are matched to them by environment id and candidate name.
 */
import { Effect, Schema } from "effect"
import { canonicalUnsafe } from "../content/Canonical.ts"
import { evaluate } from "../evaluation/evaluate.ts"
import { sumCosts } from "../model/Cost.ts"
import * as AgentDefs from "../schema/AgentDef.ts"
import type { AgentDef } from "../schema/AgentDef.ts"
import type { Attempt } from "../schema/Attempt.ts"
import { type EnvironmentDef, idOf as environmentIdOf } from "../schema/EnvironmentDef.ts"
import { frontiers, type Report, type SkippedCell } from "./Report.ts"
import type { Candidate, Lane } from "./Runner.ts"
import { cellResults, comparisons, faultSummary, outagesOfCells, scorecards, summaryOf } from "./Scorecards.ts"
import { Store, type StoreError } from "./Store.ts"

export class ReplayError extends Schema.TaggedError<ReplayError>()("ReplayError", {
  reason: Schema.Literal("unfinished"),
  detail: Schema.String
}) {
  override get message() {
    return `replay: ${this.detail}`
  }
}

/** What a verdict says, as the replay compares it: reward, checks and how the Attempt ended. */
export const VerdictBrief = Schema.Struct({
  reward: Schema.Number,
  checks: Schema.Record({ key: Schema.String, value: Schema.Boolean }),
  notEvaluated: Schema.Array(Schema.String),
  ended: Schema.NullOr(Schema.String)
})
export type VerdictBrief = typeof VerdictBrief.Type

const CellFields = { benchmark: Schema.String, task: Schema.String, candidate: Schema.String, repetition: Schema.Int }

export const Difference = Schema.Struct({ ...CellFields, was: VerdictBrief, now: VerdictBrief })
export type Difference = typeof Difference.Type

/** An effect the replay asked for that the recording lacks (or recorded with another request). */
export const MissingEffect = Schema.Struct({
  ...CellFields,
  /** `<kind>:<effect key>`, e.g. `tool/write:transfer`. */
  effect: Schema.String,
  occurrence: Schema.Int,
  reason: Schema.Literal("replay-missing", "replay-mismatch")
})
export type MissingEffect = typeof MissingEffect.Type

/** An Attempt that was not replayed, and why (its environment or candidate cannot be rebuilt, it was judged). */
export const NotReplayable = Schema.Struct({ ...CellFields, reason: Schema.String })
export type NotReplayable = typeof NotReplayable.Type

/** What `assay replay --json` prints. */
export const ReplayResult = Schema.Struct({
  /** The run the replay was stored as; null when every verdict was the same (nothing new to store). */
  runId: Schema.NullOr(Schema.String),
  replayedFrom: Schema.String,
  /** Attempts re-evaluated to a verdict (same + differ). */
  replayed: Schema.NonNegativeInt,
  same: Schema.NonNegativeInt,
  differ: Schema.Array(Difference),
  missing: Schema.Array(MissingEffect),
  notReplayable: Schema.Array(NotReplayable),
  /** What the replayed Attempts cost when they were recorded; null when a price was unknown. */
  recordedCostUsd: Schema.NullOr(Schema.Number),
  /** What the replay itself spent: nothing, it calls no model. */
  spendUsd: Schema.Literal(0),
  /**
   * Attempts whose replay ended in the benchmark's own failure (its code or data) where the run's
   * did not: the benchmark as it is now cannot re-evaluate them. Absent when none.
   */
  benchmarkFailed: Schema.optional(Schema.Array(Schema.Struct({ ...CellFields, detail: Schema.String }))),
  /** Why verdicts that differ were not stored as a run (the store is read-only); absent when they were, or none differ. */
  notStored: Schema.optional(Schema.String),
  /**
   * Cells of the run's report it kept from earlier runs (resumed, nothing stale): their Attempts
   * are those runs', replayed with them. Absent when it kept none.
   */
  kept: Schema.optional(Schema.NonNegativeInt)
})
export type ReplayResult = typeof ReplayResult.Type

export interface ReplaySource {
  /** The run's benchmarks as they are built now: environments, capabilities, candidates. */
  readonly lanes: ReadonlyArray<Lane>
  /** Candidates that could not be rebuilt, by name, with why. */
  readonly unavailable?: ReadonlyMap<string, string>
}

const briefOf = (verdict: Attempt["verdict"]): VerdictBrief => ({
  reward: verdict.reward,
  checks: verdict.checks,
  notEvaluated: verdict.notEvaluated,
  ended: verdict.ended?.reason ?? null
})

// Canonical JSON, so that the order checks were written in does not make a difference.
const sameBrief = (a: VerdictBrief, b: VerdictBrief): boolean => canonicalUnsafe(a) === canonicalUnsafe(b)

const cellOf = (a: Attempt) => ({ benchmark: a.benchmark, task: a.task, candidate: a.candidate, repetition: a.repetition })

type Outcome =
  | { readonly _tag: "replayed"; readonly original: Attempt; readonly replayed: Attempt }
  | { readonly _tag: "missing"; readonly effects: ReadonlyArray<MissingEffect> }
  | { readonly _tag: "not-replayable"; readonly reason: string }

interface Target {
  readonly lane: Lane
  readonly env: EnvironmentDef
}

/**
 * Why an Attempt cannot be re-graded without a live model call, or null. A judge is called by
 * the evaluator outside WorldEffects, so nothing answers it from the recording: an Attempt that
 * was judged (or whose judge call failed) would call it again.
 */
const needsLiveJudge = (attempt: Attempt, env: EnvironmentDef): string | null => {
  const judge = env.capabilities.models["judge"]
  if (attempt.judging !== undefined) return `it was graded by a live judge${judge === undefined ? "" : ` (${judge})`}: re-grading it would call the judge`
  if (judge !== undefined && attempt.verdict.ended?.reason === "evaluator-failed") {
    return `its grading by the judge ${judge} failed: re-grading it would call the judge`
  }
  return null
}

/** A wall-time limit depends on how fast the run went, which a recording does not fix. */
const endedByWallTime = (attempt: Attempt): boolean =>
  attempt.verdict.ended?.reason === "timeout" ||
  (attempt.verdict.ended?.reason === "budget-exceeded" && attempt.verdict.ended.detail.includes("wall-seconds"))

const replayOne = (
  attempt: Attempt,
  targets: ReadonlyMap<string, Target>,
  agentDefs: ReadonlyMap<string, AgentDef>,
  unavailable: ReadonlyMap<string, string>
): Effect.Effect<Outcome> =>
  Effect.gen(function*() {
    const notReplayable = (reason: string): Outcome => ({ _tag: "not-replayable", reason })
    const target = targets.get(attempt.environmentId)
    if (target === undefined) {
      return notReplayable(
        `no environment with its id (${attempt.environmentId}) is built from the run's settings now: ${attempt.benchmark} task ${attempt.task} changed, or is no longer offered`
      )
    }
    const candidate: Candidate | undefined = target.lane.candidates.find((c) => c.def.name === attempt.candidate)
    if (candidate === undefined) {
      return notReplayable(`the candidate cannot be rebuilt: ${unavailable.get(attempt.candidate) ?? `${target.lane.provider.name} has no candidate ${attempt.candidate}`}`)
    }
    const judged = needsLiveJudge(attempt, target.env)
    if (judged !== null) return notReplayable(judged)
    if (endedByWallTime(attempt)) return notReplayable("it ended at its wall-time limit, which depends on how fast the run went, not on its recording")
    // The candidate as it was defined when it ran (the store keeps it); the rebuilt one only when it is the same.
    const agentDef = agentDefs.get(attempt.agentId) ?? (AgentDefs.idOf(candidate.def) === attempt.agentId ? candidate.def : null)
    if (agentDef === null) return notReplayable(`the candidate ${attempt.candidate} is defined otherwise now (another agent id)`)
    const agent = yield* Effect.either(candidate.agentFor(target.env, { recording: attempt.recording }))
    if (agent._tag === "Left") return notReplayable(`no agent: ${agent.left.message}`)
    const replayed = yield* evaluate(target.env, {
      capabilities: target.lane.provider.capabilities,
      agentDef,
      agent: agent.right,
      repetition: attempt.repetition,
      replay: attempt.recording,
      registryEntry: candidate.registryEntry
    })
    // The replay handler fails loudly on an effect it cannot answer; the recording layer notes each such failure.
    const missing = replayed.recording.flatMap((r): ReadonlyArray<MissingEffect> =>
      "error" in r.outcome && (r.outcome.error.reason === "replay-missing" || r.outcome.error.reason === "replay-mismatch")
        ? [{ ...cellOf(attempt), effect: `${r.kind}:${r.key}`, occurrence: r.occurrence, reason: r.outcome.error.reason }]
        : []
    )
    if (missing.length > 0) return { _tag: "missing", effects: missing }
    // Costs stay as recorded: the replay spent nothing, and what the Attempt cost is what its calls cost then.
    const { judging: _, ...rest } = replayed
    return { _tag: "replayed", original: attempt, replayed: { ...rest, usage: attempt.usage } }
  })

/**
 * Replays every Attempt of a finished run. Attempts are replayed a few at a time: a replay is
 * mostly CPU, but a recorded fault is retried with the model agent's backoff, which waits.
 */
export const replayRun = (runId: string, source: ReplaySource): Effect.Effect<ReplayResult, StoreError | ReplayError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const run = yield* store.getRun(runId)
    if (run.finishedAt === null) {
      return yield* new ReplayError({ reason: "unfinished", detail: `run ${runId} did not finish: run it again to finish it, then replay it` })
    }
    const experiment = yield* store.getExperiment(run.experimentId)
    const agentDefs = new Map(experiment.candidates.map((d) => [AgentDefs.idOf(d) as string, d]))
    const targets = new Map<string, Target>()
    for (const lane of source.lanes) for (const env of lane.environments) targets.set(environmentIdOf(env), { lane, env })
    // In the experiment's cell order (benchmark and task, candidate, repetition), not the order
    // the run happened to store them in: its cells finish in any order.
    const envOrder = new Map([...targets.keys()].map((id, i) => [id, i]))
    const candidateOrder = new Map(experiment.candidates.map((d, i) => [d.name, i]))
    const rank = (a: Attempt) => [envOrder.get(a.environmentId) ?? Infinity, candidateOrder.get(a.candidate) ?? Infinity, a.repetition]
    const stored = [...(yield* store.attemptsOfRun(runId))].sort((x, y) => {
      const [a, b] = [rank(x.attempt), rank(y.attempt)]
      return a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!
    })
    const outcomes = yield* Effect.forEach(
      stored,
      ({ attempt }) => Effect.map(replayOne(attempt, targets, agentDefs, source.unavailable ?? new Map()), (outcome) => ({ attempt, outcome })),
      { concurrency: 4 }
    )

    const replayed = outcomes.flatMap(({ outcome }) => (outcome._tag === "replayed" ? [outcome] : []))
    const differ: Array<Difference> = []
    for (const { original, replayed: now } of replayed) {
      const was = briefOf(original.verdict)
      const brief = briefOf(now.verdict)
      if (!sameBrief(was, brief)) differ.push({ ...cellOf(original), was, now: brief })
    }
    const benchmarkFailed = replayed.flatMap(({ original, replayed: now }) =>
      now.verdict.ended?.provider !== undefined && original.verdict.ended?.provider === undefined ? [{ ...cellOf(original), detail: now.verdict.ended.detail }] : []
    )
    const missing = outcomes.flatMap(({ outcome }) => (outcome._tag === "missing" ? outcome.effects : []))
    const notReplayable = outcomes.flatMap(({ attempt, outcome }) =>
      outcome._tag === "not-replayable" ? [{ ...cellOf(attempt), reason: outcome.reason }] : []
    )
    const costSum = sumCosts(replayed.map(({ original }) => original.usage.costUsd))
    // To a billionth of a cent: a sum of many floats is not shown as 0.30000000000000004.
    const recordedCostUsd = costSum === null ? null : Math.round(costSum * 1e11) / 1e11

    // A read-only home is replayed all the same; what differs is printed, and stored nowhere.
    const notStored = differ.length > 0 && store.readOnly === true ? `the store ${store.home} is read-only` : undefined
    const newRunId = differ.length === 0 || notStored !== undefined ? null : yield* storeReplay(runId, run.settings, run.experimentId, source, {
      attempts: replayed.map((r) => r.replayed),
      same: replayed.length - differ.length,
      differ: differ.length,
      left: outcomes.flatMap(({ attempt, outcome }) =>
        outcome._tag === "replayed"
          ? []
          : [{
            environmentId: attempt.environmentId,
            task: attempt.task,
            candidate: attempt.candidate,
            repetition: attempt.repetition,
            reason: outcome._tag === "missing"
              ? `not replayed: the recording lacks ${outcome.effects.map((e) => `${e.effect} #${e.occurrence}`).join(", ")}`
              : `not replayed: ${outcome.reason}`
          }]
      )
    })
    const kept = keptOf(run.summary)
    return {
      runId: newRunId,
      replayedFrom: runId,
      replayed: replayed.length,
      same: replayed.length - differ.length,
      differ,
      missing,
      notReplayable,
      recordedCostUsd,
      spendUsd: 0,
      ...(notStored !== undefined ? { notStored } : {}),
      ...(kept > 0 ? { kept } : {}),
      ...(benchmarkFailed.length > 0 ? { benchmarkFailed } : {})
    } satisfies ReplayResult
  })

/** How many cells a finished run's report kept from earlier runs (its summary's `cells.kept`). */
const keptOf = (summary: unknown): number => {
  const cells = typeof summary === "object" && summary !== null ? (summary as { readonly cells?: unknown }).cells : undefined
  const kept = typeof cells === "object" && cells !== null ? (cells as { readonly kept?: unknown }).kept : undefined
  return typeof kept === "number" && Number.isInteger(kept) && kept > 0 ? kept : 0
}

/** The replay as a run of its own: its Attempts and a report built as the runner builds one. */
const storeReplay = (
  replayedFrom: string,
  settings: unknown,
  experimentId: string,
  source: ReplaySource,
  replay: { readonly attempts: ReadonlyArray<Attempt>; readonly same: number; readonly differ: number; readonly left: ReadonlyArray<SkippedCell> }
) =>
  Effect.gen(function*() {
    const store = yield* Store
    const base = typeof settings === "object" && settings !== null && !Array.isArray(settings) ? settings : { original: settings }
    // The original settings stay, so a replay of the replay rebuilds the same environments.
    const runId = yield* store.startRun(experimentId, { ...base, replayOf: replayedFrom })
    for (const attempt of replay.attempts) yield* store.putAttempt(runId, attempt)
    const apart = new Set(source.lanes.flatMap((l) => Array.from(l.provider.impassable ?? [], (task) => `${l.provider.name}/${task}`)))
    const impassable = (a: Attempt) => apart.has(`${a.benchmark}/${a.task}`)
    const current = replay.attempts
    const cards = scorecards(current, impassable)
    // Outages replay as outages: left out of the figures and listed, as the run's own report has them.
    const outages = outagesOfCells(current.map(summaryOf))
    const faultSpec = source.lanes.flatMap((l) => l.environments).find((e) => e.world.effects.faults !== null)?.world.effects.faults ?? null
    const attribution = new Set(source.lanes.map((l) => l.provider.attribution).filter((a): a is string => a !== undefined))
    const report: Report = {
      runId,
      experimentId,
      home: store.home,
      cells: {
        total: current.length + replay.left.length,
        ran: current.length,
        kept: 0,
        stale: 0,
        skipped: replay.left.length,
        faulted: current.filter((a) => a.verdict.ended?.reason === "fault").length
      },
      scorecards: cards,
      comparisons: comparisons(current, impassable),
      frontier: frontiers(cards),
      notes: [
        `a replay of ${replayedFrom} from its recordings with the current evaluators: ${replay.same} verdicts the same, ${replay.differ} differ; costs as recorded, the replay spent $0`,
        ...attribution
      ],
      ...(replay.left.length > 0 ? { warnings: [`${replay.left.length} Attempts of ${replayedFrom} could not be replayed (see the skipped cells)`] } : {}),
      faults: faultSummary(current, faultSpec),
      skipped: replay.left,
      ...(outages.length > 0 ? { outages } : {}),
      cellResults: cellResults(current)
    }
    yield* store.finishRun(runId, report)
    return runId
  })
