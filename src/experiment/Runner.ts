/**
 * The experiment runner, a library the command calls. It plans the cells (environments x
 * candidates x repetitions), predicts each candidate's inputs id with no model call, keeps the
 * cells whose newest Attempt is current, and runs the rest with bounded parallelism, committing
 * each Attempt as it finishes.
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs"
import { join } from "node:path"
import { Effect, Exit, Fiber, FiberRef, Option, Queue, Ref, Scheduler, Schema } from "effect"
import type { Json } from "../content/Canonical.ts"
import * as ContentId from "../content/ContentId.ts"
import type { Agent } from "../evaluation/Agent.ts"
import type { CapabilityError } from "../evaluation/Capabilities.ts"
import { evaluate, LIBRARY_VERSION, type PredictedInputs, predictInputs } from "../evaluation/evaluate.ts"
import type { Provider } from "../evaluation/Provider.ts"
import type { AgentDef } from "../schema/AgentDef.ts"
import type { Attempt, RecordedEffect } from "../schema/Attempt.ts"
import { type EnvironmentDef, idOf as environmentIdOf } from "../schema/EnvironmentDef.ts"
import { type ExperimentDef, idOf as experimentIdOf } from "../schema/ExperimentDef.ts"
import type { Handlers, Wrap } from "../world/WorldEffects.ts"
import * as SpendCap from "../budget/SpendCap.ts"
import { Model, type ModelError } from "../model/Model.ts"
import { Registry } from "../model/Registry.ts"
import * as Tracing from "../observability/Tracing.ts"
import { Comparison, frontiers, type Report, Scorecard } from "./Report.ts"
import {
  type CellSummary,
  cellResultsOfCells,
  comparisonsOfCells,
  faultSummaryOfCells,
  judgesOfCells,
  outagesOfCells,
  scorecardsOfCells,
  summaryOf
} from "./Scorecards.ts"
import * as Slots from "./Slots.ts"
import {
  type CellKey,
  cellKeyOf,
  type LatestInputs,
  type Reservation,
  type SpendRow,
  Store,
  type StoreError,
  type StoredForm,
  storedFormOf
} from "./Store.ts"

export interface Candidate {
  readonly def: AgentDef
  /** The resolved registry entry of a model candidate: part of its inputs id. */
  readonly registryEntry: Json | null
  /**
   * A fresh agent for one Attempt; given the Attempt's recording when it is replayed (an agent
   * that cannot run offline, a harness CLI, then makes its recorded calls again).
   */
  readonly agentFor: (env: EnvironmentDef, context?: { readonly recording?: ReadonlyArray<RecordedEffect> }) => Effect.Effect<Agent, CapabilityError>
  /**
   * Its model calls go through the Model service, each one metered and capped (a bridged harness
   * CLI, as a model candidate): its cost is not charged again from the Attempt's own figures.
   */
  readonly callsMetered?: boolean
}

export interface Lane {
  readonly provider: Provider
  readonly environments: ReadonlyArray<EnvironmentDef>
  readonly candidates: ReadonlyArray<Candidate>
}

export interface Cell {
  readonly key: CellKey
  readonly lane: Lane
  readonly env: EnvironmentDef
  readonly candidate: Candidate
  readonly repetition: number
  readonly predictedInputsId: string
  /** What the candidate is presented with, as predicted with `predictedInputsId`: carried into its Attempt. */
  readonly predictedInputs?: PredictedInputs
}

export interface Plan {
  readonly experiment: ExperimentDef
  readonly experimentId: string
  readonly cells: ReadonlyArray<Cell>
}

/** What the runner reports as it goes; the command draws it. */
export interface Progress {
  readonly start: (info: { readonly total: number; readonly toRun: number; readonly kept: number }) => Effect.Effect<void>
  readonly cell: (info: {
    readonly done: number
    readonly toRun: number
    readonly passed: number
    readonly spentUsd: number | null
    readonly last: Attempt
  }) => Effect.Effect<void>
  readonly end: Effect.Effect<void>
}

export const silent: Progress = { start: () => Effect.void, cell: () => Effect.void, end: Effect.void }

export interface RunSettings {
  readonly parallel: number
  /**
   * The experiment's spend cap in list-price dollars: what every run of this experiment in this
   * home spends on model calls (candidate, simulated user, judge), earlier runs included, never
   * passes it. Each call reserves its worst case before it is sent (SpendCap); a call that cannot
   * is not sent and its cell is skipped, to run later with a larger cap. Calls of unknown price
   * are not bounded by it. null: no cap.
   */
  readonly maxUsd: number | null
  /**
   * Live handlers beside the providers' tools (http/request, ...). Model calls are answered by the
   * `Model` service in the runner's context, unless a `model/generate` handler is given here.
   */
  readonly handlers: Handlers
  /** Wrapping layers of the caller's own around every Attempt's effects, outermost first. */
  readonly wraps?: ReadonlyArray<Wrap>
  readonly progress: Progress
  /** Stored with the run, for the record (never secrets). */
  readonly settings: Json
  /** The agent CLIs' versions the run's harness candidates run (shown in its report). */
  readonly harnesses?: Readonly<Record<string, string>>
  /** Wall-time limit of each Attempt. */
  readonly timeoutSeconds?: number | null
  /** Run at most these cells (a pilot); the rest stay for a later run. */
  readonly only?: (cell: Cell) => boolean
  /** Asked before a cell starts (after the spend cap): a reason refuses it, recorded as skipped. */
  readonly admit?: (cell: Cell) => Effect.Effect<string | null>
  /**
   * The report the run is finished with, from the runner's own and the run's current Attempts
   * (kept and fresh, in plan order); asked once after the last cell, before the run is stored.
   */
  readonly finish?: (outcome: { readonly report: Report; readonly attempts: ReadonlyArray<Attempt> }) => Effect.Effect<Report, StoreError>
  /**
   * Runs each cell elsewhere instead of here (a cluster's workers, src/cluster/): it answers once
   * the cell's Attempt is stored under the run, or null when the cell was skipped there. The run
   * counts, shows and reports the cells as if it had run them itself.
   */
  readonly dispatch?: (cell: Cell, run: { readonly runId: string }) => Effect.Effect<CellDone | null, StoreError>
}

export const makePlan = (lanes: ReadonlyArray<Lane>, repetitions: number) =>
  Effect.gen(function*() {
    const cells: Array<Cell> = []
    for (const lane of lanes) {
      for (const candidate of lane.candidates) {
        for (const env of lane.environments) {
          const predicted = yield* predictInputs(lane.provider.capabilities, env, candidate.def, candidate.registryEntry)
          const environmentId = environmentIdOf(env)
          for (let repetition = 0; repetition < repetitions; repetition++) {
            cells.push({
              key: { environmentId, candidate: candidate.def.name, repetition },
              lane,
              env,
              candidate,
              repetition,
              predictedInputsId: predicted.id,
              predictedInputs: predicted
            })
          }
        }
      }
    }
    const experiment: ExperimentDef = {
      dataset: Array.from(new Set(cells.map((c) => c.key.environmentId))),
      candidates: dedupe(lanes.flatMap((l) => l.candidates.map((c) => c.def))),
      repetitions,
      metadata: {
        benchmarks: Object.fromEntries(lanes.map((l) => [l.provider.name, l.provider.version])),
        library: LIBRARY_VERSION
      }
    }
    return { experiment, experimentId: experimentIdOf(experiment), cells } satisfies Plan
  })

const dedupe = (defs: ReadonlyArray<AgentDef>): ReadonlyArray<AgentDef> => {
  const seen = new Set<string>()
  return defs.filter((d) => (seen.has(d.name) ? false : (seen.add(d.name), true)))
}

export type CellState = "new" | "kept" | "stale" | "faulted"

/**
 * Classify each cell against the store: kept when its newest Attempt has the predicted inputs id;
 * faulted (to run again) when that Attempt ended in a live fault: an outage (a rate limit, a
 * server error, an unreachable endpoint) says nothing of the candidate; so does a throw in the
 * benchmark's own code (fixed, it may keep its content id). Where the environment
 * injects faults, an Attempt ended by an injected fault is its result and is kept.
 */
/** How many of a plan's cells are in each state, as `plan` shows and `--json` gives them. */
export const countStates = (states: ReadonlyArray<{ readonly state: string }>) => ({
  total: states.length,
  new: states.filter((s) => s.state === "new").length,
  kept: states.filter((s) => s.state === "kept").length,
  stale: states.filter((s) => s.state === "stale").length,
  faulted: states.filter((s) => s.state === "faulted").length
})

export const classify = (plan: Plan) =>
  Effect.gen(function*() {
    const store = yield* Store
    return statesOfCells(plan, yield* store.latestInputs(plan.cells.map((c) => c.key)))
  })

/** Each cell's state from its newest Attempt's inputs id and ending, as the store's index has them. */
const statesOfCells = (
  plan: Plan,
  latest: ReadonlyMap<string, LatestInputs>
): Array<{ readonly cell: Cell; readonly state: CellState }> =>
  plan.cells.map((cell) => {
    const last = latest.get(cellKeyOf(cell.key))
    const state: CellState = last === undefined
      ? "new"
      : last.inputsId !== cell.predictedInputsId
      ? "stale"
      : last.ended === "fault-live" || last.ended === "provider-failed" || (last.ended === "fault" && cell.env.world.effects.faults === null)
      ? "faulted"
      : "kept"
    return { cell, state }
  })

export interface RunOutcome {
  readonly report: Report
  /**
   * The Attempts this run made. Kept cells are not decoded from the store for the outcome (a
   * finished experiment of 10,000 cells would decode them all to run nothing): `cells` has them.
   */
  readonly attempts: ReadonlyArray<Attempt>
  /** The current cells, kept and fresh, in plan order: what the report's figures were made from. */
  readonly cells: ReadonlyArray<CellSummary>
  readonly unpredicted: ReadonlyArray<string>
  readonly complete: boolean
}


/**
 * Where a cell's own CPU work runs (preparing it, grading it, ids, the store write, progress):
 * below the model calls. A slot's call is sent and its answer taken on Effect's default
 * scheduler (microtasks, within the I/O callback that freed the slot); everything else is
 * queued here and run from `setImmediate` in slices of a few milliseconds, so when 100 answers
 * arrive together the 100 next calls are sent before any of the 100 finished cells is graded,
 * and new answers are read between slices.
 */
const SLICE_MS = 4
/** Cells prepared up to their next call beyond the N with one in flight (see run). */
const PREPARED = 64
/**
 * The scheduling priority of a cell once its conversation has ended (grading, ids, its Attempt's
 * store write, progress): run only when no conversing cell has work queued. When a wave of
 * answers arrives together, the cells taking the freed slots are prepared and their calls sent
 * first; the finished cells are graded while the calls are out.
 */
export const FINISHING = -1
export const cellScheduler = (): Scheduler.Scheduler => {
  const urgent = taskQueue()
  const later = taskQueue()
  let scheduled = false
  const drain = () => {
    const until = performance.now() + SLICE_MS
    for (;;) {
      const task = urgent.take() ?? later.take()
      if (task === undefined) break
      task()
      if (performance.now() >= until) break
    }
    if (urgent.empty() && later.empty()) scheduled = false
    else setImmediate(drain)
  }
  return Scheduler.make((task, priority) => {
    ;(priority < 0 ? later : urgent).push(task)
    if (!scheduled) {
      scheduled = true
      setImmediate(drain)
    }
  })
}
/** A FIFO of tasks with a moving head (Array.shift is O(n)). */
const taskQueue = () => {
  let queue: Array<() => void> = []
  let head = 0
  return {
    push: (task: () => void) => {
      queue.push(task)
    },
    take: (): (() => void) | undefined => {
      if (head >= queue.length) {
        if (head > 0) {
          queue = []
          head = 0
        }
        return undefined
      }
      const task = queue[head]!
      queue[head++] = noop
      return task
    },
    empty: () => head >= queue.length
  }
}
const noop = () => {}

/** Appends text to an open file whole (a write may take only part of it, as appendFileSync knows). */
const writeAll = (fd: number, text: string): void => {
  const bytes = Buffer.from(text)
  for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at)
}

// Effect's own tracer, which keeps spans in memory and sends them nowhere: with it (no
// OTEL_EXPORTER_OTLP_ENDPOINT), the cells' spans (an Attempt's, its model and tool calls', every
// SQL statement's) are not made at all, a few hundred microseconds of CPU per cell at --parallel 1000.
const nativeTracer = Effect.runSync(Effect.tracer)
const untracedUnlessExported = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.tracerWith((tracer) => (tracer === nativeTracer ? Effect.withTracerEnabled(self, false) : self))

/**
 * The `--parallel` slots: N model calls in flight. A call holds its slot from the moment it is
 * sent until its answer is read, and no longer: the cell's grading, ids and store write happen
 * after the slot is free. The waiting call is taken and sent on the default scheduler; the cell
 * then yields to the cell scheduler (`cellScheduler`), so the next cell's call goes out first.
 */
const slotted = (slots: Slots.Slots, inner: Model): Model => ({
  generate: (request) =>
    Effect.flatMap(FiberRef.getAndSet(FiberRef.currentScheduler, Scheduler.defaultScheduler), (cells) => {
      // Back on the cell scheduler however the call ends (as Effect.withScheduler, without its
      // uninterruptible region: an interrupted cell's fiber ends, whichever scheduler runs its end).
      const back = Effect.zipRight(FiberRef.set(FiberRef.currentScheduler, cells), Effect.yieldNow())
      return Effect.matchCauseEffect(slots.withPermit(inner.generate(request)), {
        onFailure: (cause) => Effect.zipRight(back, Effect.failCause(cause)),
        onSuccess: (response) => Effect.as(back, response)
      })
    })
})

export const run = (plan: Plan, settings: RunSettings): Effect.Effect<RunOutcome, StoreError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const startedMs = Date.now()
    yield* store.putExperiment(plan.experiment)
    const runId = yield* store.startRun(plan.experimentId, settings.settings)
    const runDir = join(store.home, "runs", runId)
    mkdirSync(runDir, { recursive: true })
    const resultsFile = join(runDir, "results.jsonl")

    // The per-cell index is read once: it classifies the cells, and the kept ones' summaries are
    // what the report is made of (nothing else writes a kept cell while this run holds the home).
    const latest = yield* store.latestCells(plan.cells.map((c) => c.key))
    const states = statesOfCells(plan, latest)
    const kept = states.filter((s) => s.state === "kept")
    const stale = states.filter((s) => s.state === "stale")
    const pending = states.filter((s) => s.state !== "kept")
    const toRun = settings.only ? pending.filter((s) => settings.only!(s.cell)) : pending
    const deferred = pending.length - toRun.length

    const spent = yield* Ref.make<{ usd: number; unknown: boolean; done: number; passed: number }>({ usd: 0, unknown: false, done: 0, passed: 0 })
    // Appended from many fibers; a plain array (push is atomic between yields) avoids copying.
    const fresh: Array<Attempt> = []
    const freshIds = new Map<Attempt, string>()
    const unpredicted = yield* Ref.make<ReadonlyArray<string>>([])
    const skipped = yield* Ref.make(0)

    // The experiment's wallet: what its earlier runs spent counts against the cap.
    const spentBefore = yield* spentSoFar(plan.experimentId)
    // A server an earlier run saw overshoot its bounds is held to the factor it was seen at.
    const learned = yield* store.latestNote(plan.experimentId, OVERSHOOT_NOTE)
    const cap = yield* SpendCap.make(settings.maxUsd, spentBefore, { overshootFactor: overshootFactorOf(learned) })
    // A cell runs here, or on a cluster's workers (settings.dispatch), which store it the same way.
    const parallel = Math.max(1, settings.parallel)
    const slots = Slots.make(parallel)
    const scheduler = cellScheduler()
    const writer = yield* makeWriter(store).pipe(Effect.withScheduler(scheduler))
    const produce: CellRunner = settings.dispatch !== undefined
      ? ((dispatch) => (cell: Cell) => dispatch(cell, { runId }))(settings.dispatch)
      : yield* cellRunner(plan, settings, runId, spentBefore, cap, { slots, writer })
    yield* settings.progress.start({ total: plan.cells.length, toRun: toRun.length, kept: kept.length })

    const runCell = (cell: Cell, onConversationEnd?: Effect.Effect<void>) =>
      Effect.gen(function*() {
        const done = yield* produce(cell, onConversationEnd)
        if (done === null) {
          yield* Ref.update(skipped, (n) => n + 1)
          return
        }
        const attempt = done.attempt
        freshIds.set(attempt, done.id)
        // An Attempt's encoded form is itself (no transformations; the store's write checked it).
        writeAll(results, JSON.stringify(attempt) + "\n")
        if (attempt.inputsId !== "" && attempt.inputsId !== cell.predictedInputsId) {
          yield* Ref.update(unpredicted, (u) => [...u, cellKeyOf(cell.key)])
          yield* Effect.logWarning(`unpredicted inputs for ${cell.candidate.def.name} on ${cell.env.task}`)
        }
        fresh.push(attempt)
        const after = yield* Ref.updateAndGet(spent, (s) => ({
          // The spend cap counts what judging cost too: the judge is paid.
          usd: s.usd + (attempt.usage.costUsd ?? 0) + (attempt.judging?.costUsd ?? 0),
          unknown: s.unknown || attempt.usage.costUsd === null || attempt.judging?.costUsd === null,
          done: s.done + 1,
          passed: s.passed + (attempt.verdict.reward >= 1 ? 1 : 0)
        }))
        yield* settings.progress.cell({
          done: after.done,
          toRun: toRun.length,
          passed: after.passed,
          spentUsd: after.unknown ? null : after.usd,
          last: attempt
        })
      })

    // Here, up to N + min(N, 64) cells are conversing: N with a call in flight, and up to 64 more
    // prepared up to their next call, so a slot that frees is taken at once. A cell whose
    // conversation has ended gives its place to the next (onConversationEnd) and is graded and
    // stored at the FINISHING priority, up to 2N such cells more: when a wave of answers comes back
    // together the next cells' calls go out first. Not N more conversing: at --parallel 1000 the 1,000 prepared cells' objects, alive for the model's
    // seconds, doubled the heap the collector walks (peak RSS 0.8-2.1 GB) and the slots stood half
    // empty (busy 0.50-0.69, 5,000 cells); with 64, 0.79-0.80 and ~600 MB, and at --parallel 100
    // the same 0.95-0.96 as with 100 (bench slots, alternating runs). Under a spend cap N:
    // a cell starts only once the cells before it in its slot have finished and their measured
    // spend (unpriced calls, agent CLIs, judges) is counted, as the cap's check before each cell
    // needs. A cluster's workers bound their own cells: N dispatched at a time.
    // The same under an admission check (a harness run's allowance and spend cap): it must see
    // the cells before it finished.
    const ahead = settings.dispatch === undefined && settings.maxUsd === null && settings.admit === undefined
    const open = ahead ? parallel + Math.min(parallel, PREPARED) : parallel
    const conversing = ahead ? Slots.make(open) : null
    // Its place among the conversing given back, the cell goes on at the lower priority.
    const finishing = (release: Effect.Effect<void>) =>
      Effect.zipRight(release, Effect.zipRight(FiberRef.set(FiberRef.currentSchedulingPriority, FINISHING), Effect.yieldNow()))
    // Set, not Effect.locally: each cell is a fiber of its own (forEach's), so the setting ends
    // with it (a region less on every cell's path; forEach's join at the very end takes it over).
    const conversingPriority = FiberRef.set(FiberRef.currentSchedulingPriority, 0)
    const startCell = (cell: Cell) =>
      conversing === null
        ? runCell(cell)
        : Effect.zipRight(conversingPriority, conversing.withPermitUntil((release) => runCell(cell, finishing(release))))
    // Opened once for the cells (an appendFileSync per cell opened and closed the file each time).
    const results = openSync(resultsFile, "a")
    yield* Effect.forEach(toRun, (s) => startCell(s.cell), { concurrency: conversing === null ? open : open + 2 * parallel, discard: true }).pipe(
      // Cells are started (up to 2N of them only to wait for a place) at the FINISHING priority,
      // so starting them never goes before a conversing cell's next call; a cell's own work runs
      // at the usual priority (startCell) until its conversation ends.
      (all) => (conversing === null ? all : Effect.withSchedulingPriority(all, FINISHING)),
      Effect.withScheduler(scheduler),
      untracedUnlessExported,
      Effect.ensuring(writer.close),
      Effect.ensuring(Effect.sync(() => closeSync(results)))
    )
    yield* settings.progress.end

    const ran = fresh
    // Kept cells are read from the store's per-cell index, never their records: a finished
    // experiment run again has nothing to decode. In plan order, so the same cells give the same
    // report however they were run or kept.
    const keptCells = kept.map((s) => {
      const key = cellKeyOf(s.cell.key)
      return [key, latest.get(key)!] as const
    })
    const keptCurrent: Array<Current> = Array.from(keptCells, ([key, c]) => ({ key, id: c.id, summary: c.summary }))
    // The kept cells are in plan order already: with nothing run (a finished experiment run
    // again) there is nothing to sort in, and no position map of every cell to build.
    const position = ran.length === 0 ? null : new Map(plan.cells.map((c, i) => [cellKeyOf(c.key), i]))
    const current: ReadonlyArray<Current> = position === null ? keptCurrent : [
      ...keptCurrent,
      ...ran.map((a) => ({
        key: cellKeyOf({ environmentId: a.environmentId, candidate: a.candidate, repetition: a.repetition }),
        id: freshIds.get(a) ?? "",
        summary: summaryOf(a)
      }))
    ].sort((a, b) => (position.get(a.key) ?? 0) - (position.get(b.key) ?? 0))
    const cells = current.map((c) => c.summary)
    const unpredictedCells = yield* Ref.get(unpredicted)
    const skippedCount = yield* Ref.get(skipped)
    const warnings: Array<string> = []
    if (unpredictedCells.length > 0) warnings.push(`${unpredictedCells.length} cells ran with inputs other than predicted: the result is incomplete`)
    if (skippedCount > 0) warnings.push(`${skippedCount} cells were skipped (see the run's skipped cells)`)
    if (deferred > 0) warnings.push(`${deferred} cells were left for a later run`)
    const capState = yield* cap.state
    if (capState.overshoots > 0) {
      yield* store.putNote(runId, OVERSHOOT_NOTE, { factor: capState.overshootFactor, models: capState.overshotBy })
      warnings.push(
        `the model server of ${capState.overshotBy.join(", ")} reported more usage than ${capState.overshoots} calls could cost ` +
          `(more output than max_output_tokens): charged in full, $${capState.overshootUsd.toFixed(4)} beyond their reservations; ` +
          `later calls reserved ${capState.overshootFactor.toFixed(2)}x their worst case`
      )
    }
    const retried = states.filter((s) => s.state === "faulted" && (!settings.only || settings.only(s.cell))).length
    const apart = new Set(plan.cells.flatMap((c) => Array.from(c.lane.provider.impassable ?? [], (task) => `${c.lane.provider.name}/${task}`)))
    const impassable = (a: CellSummary) => apart.has(`${a.benchmark}/${a.task}`)
    const notes = [
      ...(retried > 0 ? [`${retried} cells whose last Attempt ended in a fault (an outage, not the candidate) ran again`] : []),
      ...new Set(plan.cells.map((c) => c.lane.provider.attribution).filter((a): a is string => a !== undefined))
    ]
    const figures = yield* figuresOf(current, impassable)
    const outages = outagesOfCells(cells)
    if (outages.length > 0) {
      notes.unshift(
        `${outages.length} cells ended in an outage (an endpoint unreachable, or failing past retries): not scored, left out of n, means, intervals, pass rates and comparisons; running the experiment again runs them`
      )
    }
    const cards = figures.scorecards
    const judges = judgesOfCells(cells)
    // Skipped and deferred cells are listed with their reasons; the store knows environments by id only.
    const taskOf = new Map(plan.cells.map((c) => [c.key.environmentId, c.env.task]))
    const running = new Set(toRun)
    const skippedCells = [
      ...(yield* store.skippedOfRun(runId)).map((s) => ({ ...s, task: taskOf.get(s.environmentId) ?? null })),
      ...pending.filter((s) => !running.has(s)).map(({ cell }) => ({ ...cell.key, task: cell.env.task, reason: "left for a later run" }))
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
        stale: stale.length,
        skipped: skippedCount + deferred,
        faulted: ran.filter((a) => a.verdict.ended?.reason === "fault").length
      },
      scorecards: cards,
      comparisons: figures.comparisons,
      frontier: frontiers(cards),
      ...(judges !== undefined ? { judges } : {}),
      ...(notes.length > 0 ? { notes } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
      faults: faultSummaryOfCells(cells, faultSpec),
      // The run's own wall time, start to finish: not the cells' times summed (they overlap).
      wallSeconds: (Date.now() - startedMs) / 1000,
      ...(settings.harnesses !== undefined && Object.keys(settings.harnesses).length > 0 ? { harnesses: settings.harnesses } : {}),
      skipped: skippedCells,
      ...(outages.length > 0 ? { outages } : {}),
      cellResults: cellResultsOfCells(cells),
      spend: {
        runUsd: runSpend.knownUsd,
        experimentUsd: experimentSpend.knownUsd,
        unknownCalls: runSpend.unknownCalls,
        calls: runSpend.calls,
        capUsd: settings.maxUsd,
        unsettledUsd: unsettled.get(runId) ?? 0,
        experimentUnsettledUsd: sumOf(unsettled.values())
      }
    }
    const finished = settings.finish ? yield* settings.finish({ report, attempts: yield* currentAttempts(current, ran, kept.map((s) => s.cell.key)) }) : report
    yield* store.finishRun(runId, finished)
    return { report: finished, attempts: ran, cells, unpredicted: unpredictedCells, complete: unpredictedCells.length === 0 && skippedCount + deferred === 0 }
  }).pipe(Tracing.runSpan(plan))

/** The note a run leaves when a server overshot its bounds: the factor later runs hold calls at. */
const OVERSHOOT_NOTE = "spend-cap-overshoot"

const overshootFactorOf = (note: unknown): number =>
  typeof note === "object" && note !== null && "factor" in note && typeof note.factor === "number" && Number.isFinite(note.factor) ? note.factor : 1

const sumOf = (values: Iterable<number>): number => {
  let sum = 0
  for (const v of values) sum += v
  return sum
}

/**
 * What the experiment has spent so far, as its cap counts it: the ledger (every call's cost as it
 * completed) plus the worst cases a dead cluster worker left unsettled in any of its runs, so a
 * later run (a resume) is held to `--max-usd` by those calls too.
 */
export const spentSoFar = (experimentId: string): Effect.Effect<number, StoreError, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const ledger = yield* store.spendOf({ experimentId })
    return ledger.knownUsd + sumOf((yield* store.unsettledOf(experimentId)).values())
  })

/** A cell's Attempt as stored: its content id and the Attempt. */
export interface CellDone {
  readonly id: string
  readonly attempt: Attempt
}

/** Runs one cell and stores its Attempt; null when it was skipped (stored with the reason). */
export type CellRunner = (cell: Cell, onConversationEnd?: Effect.Effect<void>) => Effect.Effect<CellDone | null, StoreError>

/**
 * What a run does with one cell, here: the spend cap's check, admission, the Attempt with the
 * cell's model calls under the cap (each call's spend written as it completes), the Attempt
 * stored under `runId`. A cluster's worker runs its cells through the same function; `cap`, when
 * given, is the wallet shared by every worker (otherwise one of this process's own).
 */
export const cellRunner = (
  plan: Plan,
  settings: Pick<RunSettings, "maxUsd" | "handlers" | "wraps" | "timeoutSeconds" | "admit">,
  runId: string,
  spentBefore: number,
  shared?: SpendCap.SpendCap,
  here?: { readonly slots: Slots.Slots; readonly writer: Writer }
): Effect.Effect<CellRunner, never, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const slots = here?.slots
    const putSpend = here?.writer.spend ?? store.putSpend
    const putAttempt = here?.writer.attempt ?? store.putAttempt
    // Under --max-usd each call's worst case is committed before it is sent, here (a cluster's
    // worker has its shared wallet's holds instead): a run killed with calls out leaves them
    // counted against the cap. Without a cap nothing is reserved: the write before each call
    // (~290 Effect operations a ledger cell, nearly doubling its cost) buys no bound there.
    const reserveIn = here?.writer.reserve
    const releaseIn = here?.writer.release
    let reservations = 0
    const ledgerOf = reserveIn === undefined || releaseIn === undefined || settings.maxUsd === null ? undefined : (cell: Cell): SpendCap.Ledger => ({
      reserve: (call) => {
        const id = `${runId}:${++reservations}`
        return Effect.as(Effect.orDie(reserveIn({ id, runId, experimentId: plan.experimentId, cell: cell.key, ...call })), id)
      },
      release: (id) => Effect.orDie(releaseIn(id))
    })
    const cap = shared ?? (yield* SpendCap.make(settings.maxUsd, spentBefore))
    // What the Attempts run here say they cost (judging included).
    const measured = yield* Ref.make(0)
    const registry = yield* Effect.serviceOption(Registry)
    const priceOf = (provider: string, model: string) =>
      Option.isSome(registry) ? registry.value.file.providers[provider]?.models[model] : undefined
    const model = yield* Effect.serviceOption(Model)
    const skip = (cell: Cell, reason: string) => Effect.as(store.putSkipped(runId, cell.key, reason), null)
    // A cell whose model calls go through the Model service here holds a slot only while a call
    // is in flight (`slotted`). One whose calls the runner does not see (an agent CLI, a caller's
    // own model/generate handler, a scripted candidate) holds a slot for its whole Attempt; its
    // judge's calls then take none, so it never waits on a second slot of its own.
    const perCall = (cell: Cell) => slots !== undefined && Option.isSome(model) && settings.handlers["model/generate"] === undefined && cell.candidate.def.kind === "llm"
    const runOne = (cell: Cell, onConversationEnd: Effect.Effect<void> | undefined) =>
      Effect.gen(function*() {
        const now = yield* cap.state
        // What the cap metered per call, or what the finished Attempts say they cost (calls made
        // through a handler of the caller's own, judging outside the Model service): the larger.
        const spentUsd = Math.max(now.spentUsd, spentBefore + (yield* Ref.get(measured)))
        if (now.capUsd !== null && spentUsd >= now.capUsd) {
          return yield* skip(cell, `spend cap: $${spentUsd.toFixed(4)} of $${now.capUsd} spent by the experiment`)
        }
        const refusal = settings.admit ? yield* settings.admit(cell) : null
        if (refusal !== null) return yield* skip(cell, refusal)
        const agent = yield* Effect.either(cell.candidate.agentFor(cell.env))
        if (agent._tag === "Left") return yield* skip(cell, `no agent: ${agent.left.message}`)
        // This cell's model calls, under the cap, each written to the store as it completes. The
        // cap's first refusal of one of them is kept here (a plain variable: only this cell's
        // calls write it), and read once the Attempt is over.
        const refused: { first: ModelError | null } = { first: null }
        const cellModel = Option.map(model, (inner) =>
          SpendCap.wrapModel(cap, perCall(cell) ? slotted(slots!, inner) : inner, {
            priceOf,
            onSpend: (spend) => Effect.orDie(putSpend(runId, plan.experimentId, cell.key, spend)),
            onRefused: (refusal) => {
              refused.first ??= refusal
            },
            ...(ledgerOf !== undefined ? { ledger: ledgerOf(cell) } : {})
          }))
        const attempt = yield* evaluate(cell.env, {
          capabilities: cell.lane.provider.capabilities,
          agentDef: cell.candidate.def,
          agent: agent.right,
          repetition: cell.repetition,
          handlers: settings.handlers,
          registryEntry: cell.candidate.registryEntry,
          timeoutSeconds: settings.timeoutSeconds ?? null,
          ...(onConversationEnd !== undefined ? { onConversationEnd } : {}),
          ...(settings.wraps ? { wraps: settings.wraps } : {}),
          ...(Option.isSome(cellModel) ? { model: cellModel.value } : {}),
          ...(cell.predictedInputs !== undefined ? { inputs: cell.predictedInputs } : {})
        })
        // A call the cap refused leaves the cell unfinished, whatever the protocol or the judge made
        // of the refusal: skipped, to run with a larger cap.
        if (refused.first !== null) return yield* skip(cell, refused.first.detail)
        // An agent CLI's run is not metered per call through the Model service: its cost (and a
        // harness judge's) counts here, and is written with the experiment's spend.
        if (cell.candidate.def.kind === "harness" && cell.candidate.callsMetered !== true) {
          const judgedByHarness = cell.env.capabilities.models["judge"]?.startsWith("harness:") === true
          const judging = judgedByHarness ? attempt.judging?.costUsd : 0
          const costUsd = attempt.usage.costUsd === null || judging === null ? null : attempt.usage.costUsd + (judging ?? 0)
          yield* cap.charge(costUsd ?? 0)
          yield* putSpend(runId, plan.experimentId, cell.key, {
            provider: "harness",
            model: cell.candidate.def.model ?? cell.candidate.def.name,
            inputTokens: attempt.usage.inputTokens,
            outputTokens: attempt.usage.outputTokens,
            cacheReadTokens: attempt.usage.cacheReadTokens,
            cacheWriteTokens: attempt.usage.cacheWriteTokens,
            costUsd
          })
        }
        const id = yield* putAttempt(runId, attempt)
        yield* Ref.update(measured, (usd) => usd + (attempt.usage.costUsd ?? 0) + (attempt.judging?.costUsd ?? 0))
        return { id, attempt }
      })
    return (cell, onConversationEnd) =>
      slots === undefined || perCall(cell) ? runOne(cell, onConversationEnd) : slots.withPermit(runOne(cell, onConversationEnd))
  })

/**
 * The run's store writes, from one fiber: each call's spend row and each Attempt is queued, and
 * the writer commits whatever is queued in one transaction (`Store.putBatch`), then answers each
 * caller. A caller goes on only once its row is committed, as with a write of its own: a call's
 * spend is in the store before its answer is used, so a run killed at any point and resumed
 * counts every answered call. One commit serves the many cells that finish together.
 */
export interface Writer {
  readonly spend: Store["putSpend"]
  readonly attempt: Store["putAttempt"]
  /**
   * A call's worst case, committed before the call is sent (the ledger's reservation). Absent for
   * a cluster's worker, whose calls its shared wallet's holds count.
   */
  readonly reserve?: (reservation: Reservation) => Effect.Effect<void, StoreError>
  /** A failed call's reservation, removed. */
  readonly release?: (id: string) => Effect.Effect<void, StoreError>
  /** Stops the writer once what is queued is written. */
  readonly close: Effect.Effect<void>
}

/** How the writer answers a queued row's caller: once, with the row's outcome. */
type Answer<A> = (exit: Exit.Exit<A, StoreError>) => void

type Queued =
  | { readonly reserve: Reservation; readonly done: Answer<void> }
  | { readonly release: string; readonly done: Answer<void> }
  | { readonly spend: { readonly runId: string; readonly experimentId: string; readonly cell: CellKey; readonly spend: SpendRow }; readonly done: Answer<void> }
  | { readonly attempt: { readonly runId: string; readonly attempt: Attempt; readonly stored: StoredForm }; readonly done: Answer<string> }

const BATCH = 512

const makeWriter = (store: Store): Effect.Effect<Writer> =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Queued>()
    const writeBatch = (items: ReadonlyArray<Queued>) =>
      Effect.gen(function*() {
        const spend = items.flatMap((q) => ("spend" in q ? [q.spend] : []))
        const attempts = items.flatMap((q) => ("attempt" in q ? [q] : []))
        const reserve = items.flatMap((q) => ("reserve" in q ? [q.reserve] : []))
        const release = items.flatMap((q) => ("release" in q ? [q.release] : []))
        const written = yield* Effect.exit(store.putBatch({ spend, attempts: attempts.map((q) => q.attempt), reserve, release }))
        // A batch that fails (one Attempt that cannot be stored) rolls back all of it: then each
        // row is written on its own, so the others' spend and Attempts are kept and only the
        // failing row's caller sees the error.
        if (Exit.isFailure(written) && items.length > 1) {
          for (const q of items) {
            if ("spend" in q) q.done(Exit.asVoid(yield* Effect.exit(store.putBatch({ spend: [q.spend], attempts: [] }))))
            else if ("reserve" in q) q.done(Exit.asVoid(yield* Effect.exit(store.putBatch({ spend: [], attempts: [], reserve: [q.reserve] }))))
            else if ("release" in q) q.done(Exit.asVoid(yield* Effect.exit(store.putBatch({ spend: [], attempts: [], release: [q.release] }))))
            else q.done(Exit.map(yield* Effect.exit(store.putBatch({ spend: [], attempts: [q.attempt] })), (ids) => ids[0]!))
          }
          return
        }
        for (const q of items) {
          if (!("attempt" in q)) q.done(Exit.asVoid(written))
        }
        for (let i = 0; i < attempts.length; i++) {
          attempts[i]!.done(Exit.map(written, (ids) => ids[i]!))
        }
      })
    // A spend row is written at once: its call's cell waits on it. An Attempt waits for the cells
    // finishing beside it (the FINISHING queue runs first), so they share one transaction: woken
    // at once by each, the writer wrote one Attempt per commit (5,449 commits for 5,000 cells at
    // --parallel 1000, ~1.5 s of the run's CPU in SQLite).
    const fiber = yield* Queue.take(queue).pipe(
      Effect.tap((first) => ("attempt" in first ? Effect.yieldNow({ priority: FINISHING }) : Effect.void)),
      Effect.flatMap((first) => Effect.flatMap(Queue.takeUpTo(queue, BATCH - 1), (rest) => writeBatch([first, ...rest]))),
      Effect.forever,
      Effect.forkDaemon
    )
    // The caller waits on its own answer, resumed once by the writer. No canceler: a caller
    // interrupted meanwhile is no longer waiting, its row is written all the same and the late
    // answer is dropped by Effect (an async resumes once). A Deferred with its await cost each
    // model call two more uninterruptible regions and ~40 fiber steps.
    const enqueue = <A>(make: (done: Answer<A>) => Queued) =>
      Effect.async<A, StoreError>((resume) => {
        if (!Queue.unsafeOffer(queue, make(resume))) resume(Effect.dieMessage("the run's store writer was closed with cells still writing"))
      })
    return {
      spend: (runId, experimentId, cell, spend) =>
        enqueue<void>((done) => ({ spend: { runId, experimentId, cell, spend }, done } as Queued)),
      reserve: (reservation) => enqueue<void>((done) => ({ reserve: reservation, done } as Queued)),
      release: (id) => enqueue<void>((done) => ({ release: id, done } as Queued)),
      // Encoded by the cell itself (at its priority), not by the writer its calls wait on.
      attempt: (runId, attempt) =>
        Effect.flatMap(storedFormOf(attempt), (stored) => enqueue<string>((done) => ({ attempt: { runId, attempt, stored }, done } as Queued))),
      // Every caller awaits its own row, so once the cells are done nothing is left queued.
      close: Effect.zipRight(Queue.shutdown(queue), Fiber.interrupt(fiber)).pipe(Effect.asVoid)
    } satisfies Writer
  })

/** A current cell: its key, the content id of its Attempt, and the Attempt's summary. */
interface Current {
  readonly key: string
  readonly id: string
  readonly summary: CellSummary
}

/**
 * Bump when scorecards or comparisons compute something else from the same cells: figures stored
 * under an older version are not read back.
 */
const FIGURES_VERSION = 2 // 2: intervals clustered by task, outages left out, noise floor, Holm

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
const currentAttempts = (current: ReadonlyArray<Current>, ran: ReadonlyArray<Attempt>, keptKeys: ReadonlyArray<CellKey>) =>
  Effect.gen(function*() {
    const store = yield* Store
    const fresh = new Map(ran.map((a) => [cellKeyOf({ environmentId: a.environmentId, candidate: a.candidate, repetition: a.repetition }), a]))
    const kept = yield* store.latestAttempts(keptKeys)
    return current.flatMap((c) => {
      const a = fresh.get(c.key) ?? kept.get(c.key)?.attempt
      return a === undefined ? [] : [a]
    })
  })
