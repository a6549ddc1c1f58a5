/**
 * The experiment runner, a library the command calls. It plans the cells (environments x
 * candidates x repetitions), predicts each candidate's inputs id with no model call, keeps the
 * cells whose newest Attempt is current, and runs the rest with bounded parallelism, committing
 * each Attempt as it finishes.
 */
import { Effect, FiberRef, Option, Ref, Scheduler } from "effect"
import type { Json } from "../content/Canonical.ts"
import { evaluate, LIBRARY_VERSION, predictInputs } from "../evaluation/evaluate.ts"
import type { AgentDef } from "../schema/AgentDef.ts"
import type { Attempt } from "../schema/Attempt.ts"
import { idOf as environmentIdOf } from "../schema/EnvironmentDef.ts"
import { type ExperimentDef, idOf as experimentIdOf } from "../schema/ExperimentDef.ts"
import type { Handlers, Wrap } from "../world/WorldEffects.ts"
import * as SpendCap from "../budget/SpendCap.ts"
import { Model, type ModelError } from "../model/Model.ts"
import { Registry } from "../model/Registry.ts"
import * as Tracing from "../observability/Tracing.ts"
import type { Cell, Lane, Plan } from "./Plan.ts"
import type { Report } from "./Report.ts"
import { openResults, resultsFile } from "./Results.ts"
import { currentAttempts, reportOf } from "./RunReport.ts"
import { cellScheduler, FINISHING, PREPARED } from "./Scheduling.ts"
import type { CellSummary } from "./Scorecards.ts"
import * as Slots from "./Slots.ts"
import { cellKeyOf, type LatestInputs, Store, type StoreError } from "./Store.ts"
import { makeWriter, type Writer } from "./Writer.ts"

// The plan's shapes, the run's scheduler and writer, as the command, tests and the cluster's workers take them from here.
export type { Candidate, Cell, Lane, Plan } from "./Plan.ts"
export { cellScheduler, FINISHING } from "./Scheduling.ts"
export type { Writer } from "./Writer.ts"

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
   * are not bounded by it. An agent CLI whose calls do not go through assay is admitted below the
   * cap and settled after its cell, judging included (`unmeteredHarness`). null: no cap.
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
    const fresh: Array<{ readonly attempt: Attempt; readonly id: string }> = []
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
        results.append(attempt)
        if (attempt.inputsId !== "" && attempt.inputsId !== cell.predictedInputsId) {
          yield* Ref.update(unpredicted, (u) => [...u, cellKeyOf(cell.key)])
          yield* Effect.logWarning(`unpredicted inputs for ${cell.candidate.def.name} on ${cell.env.task}`)
        }
        fresh.push(done)
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
    const results = openResults(resultsFile(store.home, runId))
    yield* Effect.forEach(toRun, (s) => startCell(s.cell), { concurrency: conversing === null ? open : open + 2 * parallel, discard: true }).pipe(
      // Cells are started (up to 2N of them only to wait for a place) at the FINISHING priority,
      // so starting them never goes before a conversing cell's next call; a cell's own work runs
      // at the usual priority (startCell) until its conversation ends.
      (all) => (conversing === null ? all : Effect.withSchedulingPriority(all, FINISHING)),
      Effect.withScheduler(scheduler),
      untracedUnlessExported,
      Effect.ensuring(writer.close),
      Effect.ensuring(Effect.sync(() => results.close()))
    )
    yield* settings.progress.end

    const capState = yield* cap.state
    const capWarnings: Array<string> = []
    if (capState.overshoots > 0) {
      yield* store.putNote(runId, OVERSHOOT_NOTE, { factor: capState.overshootFactor, models: capState.overshotBy })
      capWarnings.push(
        `the model server of ${capState.overshotBy.join(", ")} reported more usage than ${capState.overshoots} calls could cost ` +
          `(more output than max_output_tokens): charged in full, $${capState.overshootUsd.toFixed(4)} beyond their reservations; ` +
          `later calls reserved ${capState.overshootFactor.toFixed(2)}x their worst case`
      )
    }
    const running = new Set(toRun)
    const unpredictedCells = yield* Ref.get(unpredicted)
    const skippedCount = yield* Ref.get(skipped)
    // Kept cells are read from the store's per-cell index, never their records: a finished
    // experiment run again has nothing to decode. In plan order, so the same cells give the same
    // report however they were run or kept.
    const { report, current } = yield* reportOf({
      plan,
      runId,
      // The run's own wall time, start to finish: not the cells' times summed (they overlap).
      wallSeconds: (Date.now() - startedMs) / 1000,
      kept: kept.map((s) => {
        const key = cellKeyOf(s.cell.key)
        const c = latest.get(key)!
        return { key, id: c.id, summary: c.summary }
      }),
      stale: stale.length,
      ran: fresh,
      retried: states.filter((s) => s.state === "faulted" && (!settings.only || settings.only(s.cell))).length,
      skipped: skippedCount,
      deferred: pending.filter((s) => !running.has(s)).map((s) => s.cell),
      unpredicted: unpredictedCells,
      warnings: capWarnings,
      capUsd: settings.maxUsd,
      ...(settings.harnesses !== undefined ? { harnesses: settings.harnesses } : {})
    })
    const finished = settings.finish ? yield* settings.finish({ report, attempts: yield* currentAttempts(current, fresh, kept.map((s) => s.cell.key)) }) : report
    yield* store.finishRun(runId, finished)
    return {
      report: finished,
      attempts: fresh.map((f) => f.attempt),
      cells: current.map((c) => c.summary),
      unpredicted: unpredictedCells,
      complete: unpredictedCells.length === 0 && skippedCount + deferred === 0
    }
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

/**
 * A cell of an agent CLI whose model calls do not go through the runner (on its own login, not
 * the bridge's proxy): its cost is known only once it ends. The cap admits it whole and settles
 * it after, its judging included.
 */
/**
 * A cell that `--max-usd 0` still runs: its candidate spends nothing itself (scripted, echo), and
 * a judge's calls, if it has one, go through the Model service, reserved and so refused at 0. A
 * judge that is an agent CLI is paid after its run, so its cells are held back as the CLI's are.
 */
const spendsNothing = (cell: Cell): boolean =>
  (cell.candidate.def.kind === "scripted" || cell.candidate.def.kind === "echo") &&
  cell.env.capabilities.models["judge"]?.startsWith("harness:") !== true

const unmeteredHarness = (cell: Cell): boolean => cell.candidate.def.kind === "harness" && cell.candidate.callsMetered !== true

/** How many of a run's cells the spend cap skipped (their reasons say "spend cap", as `skip` writes them and as a refused call's does). */
export const capSkipped = (report: Pick<Report, "skipped">): number => (report.skipped ?? []).filter((s) => s.reason.startsWith("spend cap")).length

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
        if (now.capUsd !== null && spentUsd >= now.capUsd && !(now.capUsd === 0 && spendsNothing(cell))) {
          return yield* skip(cell, `spend cap: $${spentUsd.toFixed(4)} of $${now.capUsd} spent by the experiment (runs and their judging)`)
        }
        const refusal = settings.admit ? yield* settings.admit(cell) : null
        if (refusal !== null) return yield* skip(cell, refusal)
        const agent = yield* Effect.either(cell.candidate.agentFor(cell.env))
        if (agent._tag === "Left") return yield* skip(cell, `no agent: ${agent.left.message}`)
        // This cell's model calls, under the cap, each written to the store as it completes. The
        // cap's first refusal of one of them is kept here (a plain variable: only this cell's
        // calls write it), and read once the Attempt is over.
        const refused: { first: ModelError | null } = { first: null }
        // An agent CLI's run whose calls the runner does not see is paid for before its judge is
        // asked: the cell was admitted whole below the cap, and its judge's calls are charged as
        // they complete, never refused (a refusal would skip the cell, to be run and paid again).
        const settledAfter = unmeteredHarness(cell)
        const cellModel = Option.map(model, (inner) =>
          SpendCap.wrapModel(cap, perCall(cell) ? slotted(slots!, inner) : inner, {
            priceOf,
            onSpend: (spend) => Effect.orDie(putSpend(runId, plan.experimentId, cell.key, spend)),
            ...(settledAfter
              ? { unreserved: true }
              : {
                onRefused: (refusal) => {
                  refused.first ??= refusal
                },
                ...(ledgerOf !== undefined ? { ledger: ledgerOf(cell) } : {})
              })
          }))
        const attempt = yield* evaluate(cell.env, {
          capabilities: cell.lane.provider.capabilities,
          agentDef: cell.candidate.def,
          // The agent lives as long as the conversation: closed when it ends, it gives the cell's place
          // among those conversing to the next (the runner's concern, kept out of evaluate's options).
          agent: onConversationEnd === undefined
            ? agent.right
            : { ...agent.right, close: agent.right.close === undefined ? onConversationEnd : Effect.zipRight(agent.right.close, onConversationEnd) },
          repetition: cell.repetition,
          handlers: settings.handlers,
          registryEntry: cell.candidate.registryEntry,
          timeoutSeconds: settings.timeoutSeconds ?? null,
          ...(settings.wraps ? { wraps: settings.wraps } : {}),
          ...(Option.isSome(cellModel) ? { model: cellModel.value } : {}),
          ...(cell.predictedInputs !== undefined ? { inputs: cell.predictedInputs } : {})
        })
        // A call the cap refused leaves the cell unfinished, whatever the protocol or the judge made
        // of the refusal: skipped, to run with a larger cap.
        if (refused.first !== null) return yield* skip(cell, refused.first.detail)
        // An agent CLI's run is not metered per call through the Model service: its cost (and a
        // harness judge's) counts here, and is written with the experiment's spend.
        if (settledAfter) {
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
