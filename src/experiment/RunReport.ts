/**
 * A run's report, built from what the run did (`RunData`: the cells it kept, ran, skipped and
 * left, and what its spend cap saw) and what the store holds for it (skipped cells, spend,
 * unsettled holds, stored figures). The runner returns data; this is the one place that turns it
 * into the Report the command prints and the store keeps.
 */
import { Effect, Option, Schema } from "effect"
import * as ContentId from "../content/ContentId.ts"
import { LIBRARY_VERSION } from "../evaluation/evaluate.ts"
import type { Attempt } from "../schema/Attempt.ts"
import { Comparison, frontiers, type Report, Scorecard } from "./Report.ts"
import {
  type CellSummary,
  cellResultsOfCells,
  cliUsageOfCells,
  comparisonsOfCells,
  faultSummaryOfCells,
  judgesOfCells,
  outagesOfCells,
  providerFailedOfCells,
  scorecardsOfCells,
  summaryOf
} from "./Scorecards.ts"
import { type CellKey, cellKeyOf, Store, type StoreError } from "./Store.ts"
import type { Cell, Plan } from "./Plan.ts"

/** What a run did, as its report is made from it. */
export interface RunData {
  readonly plan: Plan
  readonly runId: string
  /** The run's own wall time, start to finish. */
  readonly wallSeconds: number
  /** The cells kept from earlier runs, in plan order, as the store's per-cell index has them. */
  readonly kept: ReadonlyArray<Current>
  readonly stale: number
  /** The Attempts this run stored, with their content ids. */
  readonly ran: ReadonlyArray<{ readonly attempt: Attempt; readonly id: string }>
  /** Cells whose last Attempt was an outage or the benchmark's own failure, run again. */
  readonly retried: number
  /** Cells skipped while running (stored with their reasons). */
  readonly skipped: number
  /** Cells not run now (`settings.only`): left for a later run. */
  readonly deferred: ReadonlyArray<Cell>
  /** Cells that ran with inputs other than predicted. */
  readonly unpredicted: ReadonlyArray<string>
  /** Warnings the run itself made (a model server's overshoot). */
  readonly warnings: ReadonlyArray<string>
  readonly capUsd: number | null
  /** The agent CLIs' versions, when harness candidates ran. */
  readonly harnesses?: Readonly<Record<string, string>>
}

const sumOf = (values: Iterable<number>): number => {
  let sum = 0
  for (const v of values) sum += v
  return sum
}

/** The report of a run and the current cells (kept and fresh, in plan order) it was made from. */
export const reportOf = (data: RunData): Effect.Effect<{ readonly report: Report; readonly current: ReadonlyArray<Current> }, StoreError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const { plan, runId, ran, kept } = data
    // The kept cells are in plan order already: with nothing run (a finished experiment run
    // again) there is nothing to sort in, and no position map of every cell to build.
    const position = ran.length === 0 ? null : new Map(plan.cells.map((c, i) => [cellKeyOf(c.key), i]))
    const current: ReadonlyArray<Current> = position === null ? kept : [
      ...kept,
      ...ran.map(({ attempt: a, id }) => ({
        key: cellKeyOf({ environmentId: a.environmentId, candidate: a.candidate, repetition: a.repetition }),
        id,
        summary: summaryOf(a)
      }))
    ].sort((a, b) => (position.get(a.key) ?? 0) - (position.get(b.key) ?? 0))
    const cells = current.map((c) => c.summary)
    const deferred = data.deferred.length
    const warnings: Array<string> = []
    if (data.unpredicted.length > 0) warnings.push(`${data.unpredicted.length} cells ran with inputs other than predicted: the result is incomplete`)
    if (data.skipped > 0) warnings.push(`${data.skipped} cells were skipped (see the run's skipped cells)`)
    if (deferred > 0) warnings.push(`${deferred} cells were left for a later run`)
    warnings.push(...data.warnings)
    const apart = new Set(plan.cells.flatMap((c) => Array.from(c.lane.provider.impassable ?? [], (task) => `${c.lane.provider.name}/${task}`)))
    const impassable = (a: CellSummary) => apart.has(`${a.benchmark}/${a.task}`)
    const notes = [
      ...(data.retried > 0 ? [`${data.retried} cells whose last Attempt said nothing of the candidate (an outage, or the benchmark's own failure) ran again`] : []),
      ...new Set(plan.cells.map((c) => c.lane.provider.attribution).filter((a): a is string => a !== undefined))
    ]
    const figures = yield* figuresOf(current, impassable)
    const outages = outagesOfCells(cells)
    const providerFailed = providerFailedOfCells(cells)
    const cliUsage = cliUsageOfCells(cells)
    if (outages.length > 0) {
      notes.unshift(
        `${outages.length} cells ended in an outage (an endpoint unreachable, or failing past retries): not scored, left out of n, means, intervals, pass rates and comparisons; running the experiment again runs them`
      )
    }
    if (providerFailed.length > 0) {
      notes.unshift(
        `${providerFailed.length} cells failed in the benchmark's own code or data (not the candidates'): not scored, left out of n, means, intervals, pass rates and comparisons; running the experiment again runs them`
      )
    }
    const cards = figures.scorecards
    // A candidate none of whose cells was scored has no scorecard: say so rather than leave it out silently.
    const carded = new Set(cards.map((c) => `${c.benchmark}\u0000${c.candidate}`))
    const unscoredOnly = new Map<string, number>()
    for (const c of cells) {
      const key = `${c.benchmark}\u0000${c.candidate}`
      if (!carded.has(key)) unscoredOnly.set(key, (unscoredOnly.get(key) ?? 0) + 1)
    }
    for (const [key, n] of unscoredOnly) {
      const [benchmark, candidate] = key.split("\u0000")
      notes.push(`${candidate} has no scorecard on ${benchmark}: none of its ${n} cells was scored (outages or the benchmark's failures, listed apart); running the experiment again runs them`)
    }
    const judges = judgesOfCells(cells)
    // Skipped and deferred cells are listed with their reasons; the store knows environments by id only.
    const taskOf = new Map(plan.cells.map((c) => [c.key.environmentId, c.env.task]))
    const skippedCells = [
      ...(yield* store.skippedOfRun(runId)).map((s) => ({ ...s, task: taskOf.get(s.environmentId) ?? null })),
      ...data.deferred.map((cell) => ({ ...cell.key, task: cell.env.task, reason: "left for a later run" }))
    ]
    const runSpend = yield* store.spendOf({ runId })
    const experimentSpend = yield* store.spendOf({ experimentId: plan.experimentId })
    // Every cell has returned: a hold still on this run's wallet is a dead worker's call.
    const unsettled = yield* store.unsettledOf(plan.experimentId, { ending: runId })
    const faultSpec = plan.cells.find((c) => c.env.world.effects.faults !== null)?.env.world.effects.faults ?? null
    const report: Report = {
      runId,
      experimentId: plan.experimentId,
      home: store.home,
      cells: {
        total: plan.cells.length,
        ran: ran.length,
        kept: kept.length,
        stale: data.stale,
        skipped: data.skipped + deferred,
        faulted: ran.filter(({ attempt }) => attempt.verdict.ended?.reason === "fault").length
      },
      scorecards: cards,
      comparisons: figures.comparisons,
      frontier: frontiers(cards),
      ...(judges !== undefined ? { judges } : {}),
      ...(notes.length > 0 ? { notes } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
      faults: faultSummaryOfCells(cells, faultSpec),
      wallSeconds: data.wallSeconds,
      ...(data.harnesses !== undefined && Object.keys(data.harnesses).length > 0 ? { harnesses: data.harnesses } : {}),
      skipped: skippedCells,
      ...(outages.length > 0 ? { outages } : {}),
      ...(providerFailed.length > 0 ? { providerFailed } : {}),
      cellResults: cellResultsOfCells(cells),
      // Harness candidates' tokens as their CLIs reported them, beside assay's.
      ...(cliUsage.length > 0 ? { cliUsage } : {}),
      spend: {
        runUsd: runSpend.knownUsd,
        experimentUsd: experimentSpend.knownUsd,
        unknownCalls: runSpend.unknownCalls,
        calls: runSpend.calls,
        capUsd: data.capUsd,
        unsettledUsd: unsettled.get(runId) ?? 0,
        experimentUnsettledUsd: sumOf(unsettled.values())
      }
    }
    return { report, current }
  })

/** A current cell: its key, the content id of its Attempt, and the Attempt's summary. */
export interface Current {
  readonly key: string
  readonly id: string
  readonly summary: CellSummary
}

/**
 * Bump when scorecards or comparisons compute something else from the same cells: figures stored
 * under an older version are not read back.
 */
const FIGURES_VERSION = 4 // 4: scripted references out of Holm's family, no within-task share when nothing varies; 2: intervals clustered by task, outages left out, noise floor, Holm; 3: Wilson on n_eff, sign-flip comparisons bounded near ±1 by Wilson, provider failures left out

const Figures = Schema.parseJson(Schema.Struct({ scorecards: Schema.Array(Scorecard), comparisons: Schema.Array(Comparison) }))
const decodeFigures = Schema.decodeUnknownOption(Figures)
const encodeFigures = Schema.encode(Figures)

/**
 * Scorecards and comparisons of the current cells. Their bootstrap intervals are what costs
 * (2,000 resamples of every group); they are a function of the Attempts, in order, and of which of
 * them are impassable, so they are stored under the digest of exactly that and read back while
 * it is unchanged: an experiment run again with nothing to run computes none of them.
 */
const figuresOf = (current: ReadonlyArray<Current>, impassable: (c: CellSummary) => boolean) =>
  Effect.gen(function*() {
    const store = yield* Store
    const cells = current.map((c) => c.summary)
    // Fresh Attempts always have an id (putAttempt returns it); "" would only name an unstored one.
    const cacheable = current.every((c) => c.id !== "")
    const key = ContentId.sha256Hex(
      JSON.stringify([FIGURES_VERSION, LIBRARY_VERSION, current.map((c) => c.id), current.flatMap((c, i) => (impassable(c.summary) ? [i] : []))])
    )
    if (cacheable) {
      const stored = yield* store.derived(key)
      if (stored !== null) {
        const figures = decodeFigures(stored)
        if (Option.isSome(figures)) return figures.value
      }
    }
    const figures = { scorecards: scorecardsOfCells(cells, impassable), comparisons: comparisonsOfCells(cells, impassable) }
    if (cacheable) yield* store.putDerived(key, yield* Effect.orDie(encodeFigures(figures)))
    return figures
  })

/** The current Attempts in full, in plan order: the kept ones decoded from the store. */
export const currentAttempts = (current: ReadonlyArray<Current>, ran: ReadonlyArray<{ readonly attempt: Attempt }>, keptKeys: ReadonlyArray<CellKey>) =>
  Effect.gen(function*() {
    const store = yield* Store
    const fresh = new Map(ran.map(({ attempt: a }) => [cellKeyOf({ environmentId: a.environmentId, candidate: a.candidate, repetition: a.repetition }), a]))
    const kept = yield* store.latestAttempts(keptKeys)
    return current.flatMap((c) => {
      const a = fresh.get(c.key) ?? kept.get(c.key)?.attempt
      return a === undefined ? [] : [a]
    })
  })
