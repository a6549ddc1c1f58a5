/**
 * What `assay view` shows, read through the `Store` service only (so a home's SQLite file and a
 * Postgres store are viewed alike). A finished run's figures are its stored report, completed as
 * `assay report` completes it: the viewer recomputes none of them.
 */
import { hostname } from "node:os"
import { Effect, Option, Schema } from "effect"
import { canonicalEither } from "../content/Canonical.ts"
import * as Home from "../experiment/Home.ts"
import { completeReport, decodeJson } from "../experiment/Report.ts"
import { faultsOfAttempt } from "../experiment/Scorecards.ts"
import type { Attempt } from "../schema/Attempt.ts"
import { type RunRecord, Store, StoreError, type StoredAttempt } from "../experiment/Store.ts"

export type RunState = "running" | "finished" | "stopped by preflight" | "pilot" | "stopped"

/** One run as the runs page and `GET /api/runs` list it. */
export interface RunBrief {
  readonly runId: string
  readonly experimentId: string
  readonly startedAt: string
  readonly finishedAt: string | null
  readonly state: RunState
  readonly benchmarks: ReadonlyArray<string>
  readonly candidates: ReadonlyArray<string>
  /** The experiment's cells, and how many this run has written so far (or, finished, ran and kept). */
  readonly cells: { readonly total: number; readonly written: number; readonly kept: number | null; readonly skipped: number }
}

/** A running run's progress: `GET /api/runs/:id/progress`, and what the run page shows while it writes. */
export interface Progress {
  readonly runId: string
  readonly state: RunState
  readonly total: number
  readonly written: number
  readonly skipped: number
  readonly byCandidate: ReadonlyArray<{ readonly candidate: string; readonly written: number; readonly passed: number }>
  /**
   * Interim scorecards of the cells this run has written so far, per benchmark and candidate:
   * how many, their mean reward, how many passed (full reward) and how many ended early. No
   * interval: the run's report computes those once it is finished.
   */
  readonly interim: ReadonlyArray<Interim>
  /** The newest Attempts first (at most 20), to follow the run as it goes. */
  readonly latest: ReadonlyArray<CellRow>
}

/** One interim scorecard of a running run. */
export interface Interim {
  readonly benchmark: string
  readonly candidate: string
  readonly n: number
  readonly meanReward: number
  readonly passed: number
  readonly ended: number
}

/** One cell of a run, with where its Attempt is stored (the run that wrote it may be an earlier one). */
export interface CellRow {
  readonly benchmark: string
  readonly task: string
  /** The task's stratum (a BFCL category, a tau2 domain), null where the benchmark has none or the Attempt is not found. */
  readonly stratum: string | null
  readonly candidate: string
  readonly repetition: number
  readonly reward: number
  /** `verdict.ended.reason`, null when evaluated. */
  readonly ended: string | null
  readonly failed: ReadonlyArray<string>
  /** Every fault the cell met; of them, how many the run injected and how many were met live (an outage). */
  readonly faults: number
  readonly injected: number
  readonly live: number
  readonly attempt: { readonly runId: string; readonly id: string } | null
}

const asRecord = (value: unknown): Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}

const strings = (value: unknown): ReadonlyArray<string> => (Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [])

/** Whether the process holding the home's writer lock is alive (another host's counts as alive). */
const holderAlive = (home: string) =>
  Effect.map(Effect.orElseSucceed(Home.holderOf(home), () => null), (holder) => {
    if (holder === null || !("pid" in holder)) return false
    if (holder.host !== hostname()) return true
    try {
      process.kill(holder.pid, 0)
      return true
    } catch (e) {
      // EPERM: alive, owned by another user; ESRCH: gone.
      return e instanceof Error && "code" in e && e.code === "EPERM"
    }
  })

const EstimateVerdict = Schema.Struct({ verdict: Schema.String })

/**
 * A run's state: finished (a summary is stored), a pilot the preflight stopped on, or without
 * a summary either the home's writer (the newest unfinished run while a live process holds the
 * lock) or stopped (killed, interrupted).
 */
const stateOf = (run: RunRecord, newestUnfinished: string | null, alive: boolean) =>
  Effect.gen(function*() {
    const store = yield* Store
    if (run.summary === null) return (alive && run.id === newestUnfinished ? "running" : "stopped") satisfies RunState
    if (asRecord(run.settings)["pilot"] !== true) return "finished" satisfies RunState
    const notes = yield* store.notesOfRun(run.id, "estimate")
    const verdicts = notes.flatMap((n) => Option.toArray(Schema.decodeUnknownOption(EstimateVerdict)(n)))
    return (verdicts.some((v) => v.verdict !== "within-budget") ? "stopped by preflight" : "pilot") satisfies RunState
  })

/** The experiment's candidates and cell count, or what the run's settings say when it is unknown. */
const experimentOf = (run: RunRecord) =>
  Effect.gen(function*() {
    const store = yield* Store
    const def = yield* Effect.option(store.getExperiment(run.experimentId))
    const settings = asRecord(run.settings)
    return Option.match(def, {
      onNone: () => ({ candidates: strings(settings["candidates"]), total: 0 }),
      onSome: (d) => ({ candidates: d.candidates.map((c) => c.name), total: d.dataset.length * d.candidates.length * d.repetitions })
    })
  })

const cellsOfSummary = (summary: unknown) => asRecord(asRecord(summary)["cells"])

/** Every run of the store, newest first. */
export const listRuns: Effect.Effect<ReadonlyArray<RunBrief>, StoreError, Store> = Effect.gen(function*() {
  const store = yield* Store
  const runs = yield* store.runs
  const newestUnfinished = runs.find((r) => r.summary === null)?.id ?? null
  const alive = newestUnfinished === null ? false : yield* holderAlive(store.home)
  return yield* Effect.forEach(runs, (run) =>
    Effect.gen(function*() {
      const state = yield* stateOf(run, newestUnfinished, alive)
      const experiment = yield* experimentOf(run)
      const counts = cellsOfSummary(run.summary)
      const finished = run.summary !== null
      const written = finished ? Number(counts["ran"] ?? 0) : (yield* store.attemptsOfRun(run.id)).length
      const skipped = finished ? Number(counts["skipped"] ?? 0) : (yield* store.skippedOfRun(run.id)).length
      return {
        runId: run.id,
        experimentId: run.experimentId,
        startedAt: run.startedAt,
        finishedAt: run.finishedAt,
        state,
        benchmarks: strings(asRecord(run.settings)["benchmarks"]),
        candidates: experiment.candidates,
        cells: {
          total: finished ? Number(counts["total"] ?? experiment.total) : experiment.total,
          written,
          kept: finished ? Number(counts["kept"] ?? 0) : null,
          skipped
        }
      } satisfies RunBrief
    }))
})

/** One run's brief (its state needs the others: only the newest unfinished one can be running). */
export const runBrief = (runId: string) =>
  Effect.gen(function*() {
    const store = yield* Store
    yield* store.getRun(runId) // an unknown run fails here with the store's own sentence
    const brief = (yield* listRuns).find((r) => r.runId === runId)
    if (brief === undefined) return yield* new StoreError({ reason: "unknown-run", detail: `no run ${runId}` })
    return brief
  })

/**
 * A finished run's report exactly as `assay report RUN --json` prints it (with `cells`, as
 * `--json --cells`); null while the run has no summary.
 */
export const reportOf = (runId: string, options: { readonly cells?: boolean } = {}) =>
  Effect.gen(function*() {
    const store = yield* Store
    const run = yield* store.getRun(runId)
    if (run.summary === null) return null
    const stored = yield* decodeJson(JSON.stringify(run.summary)).pipe(
      Effect.mapError((e) => new StoreError({ reason: "decode", detail: `the stored report of ${runId} cannot be read: ${e.message}` }))
    )
    return yield* completeReport(stored, options)
  })

const faultCounts = (faults: ReadonlyArray<{ readonly injected: boolean }>) => {
  const injected = faults.filter((f) => f.injected).length
  return { faults: faults.length, injected, live: faults.length - injected }
}

const rowOf = (s: StoredAttempt): CellRow => ({
  benchmark: s.attempt.benchmark,
  task: s.attempt.task,
  stratum: s.attempt.stratum,
  candidate: s.attempt.candidate,
  repetition: s.attempt.repetition,
  reward: s.attempt.verdict.reward,
  ended: s.attempt.verdict.ended?.reason ?? null,
  failed: Object.entries(s.attempt.verdict.checks).filter(([, ok]) => !ok).map(([check]) => check),
  ...faultCounts(faultsOfAttempt(s.attempt)),
  attempt: { runId: s.runId, id: s.id }
})

const placeOf = (c: { readonly benchmark: string; readonly task: string; readonly candidate: string; readonly repetition: number }) =>
  `${c.benchmark}\u0000${c.task}\u0000${c.candidate}\u0000${c.repetition}`

/** Where a cell's Attempt is stored, with what the cell table shows of it beyond the report's cell. */
interface Behind {
  readonly runId: string
  readonly id: string
  readonly stratum: string | null
  readonly failed: ReadonlyArray<string>
}

const behindOf = (s: StoredAttempt): Behind => ({ runId: s.runId, id: s.id, stratum: s.attempt.stratum, failed: rowOf(s).failed })

/**
 * The Attempts a run's cells stand on: its own, then for cells it kept, the newest of the earlier
 * runs of the same experiment. Keyed by (benchmark, task, candidate, repetition).
 */
const attemptsBehind = (run: RunRecord) =>
  Effect.gen(function*() {
    const store = yield* Store
    const all = yield* store.runs
    const earlier = all.filter((r) => r.experimentId === run.experimentId && r.id !== run.id && r.startedAt <= run.startedAt)
    const out = new Map<string, Behind>()
    for (const source of [run, ...earlier]) {
      const attempts = yield* store.attemptsOfRun(source.id)
      // Within a run the newest Attempt of a cell wins (a cell retried after a fault).
      for (const s of [...attempts].reverse()) if (!out.has(placeOf(s.attempt))) out.set(placeOf(s.attempt), behindOf(s))
    }
    return out
  })

/**
 * Cells kept from another experiment's run (a cell is its environment, candidate and repetition,
 * whatever experiment ran it): the newest Attempt of each, from the store's per-cell index, when
 * it was written before this run started.
 */
const keptElsewhere = (run: RunRecord, missing: ReadonlySet<string>) =>
  Effect.gen(function*() {
    const store = yield* Store
    const out = new Map<string, Behind>()
    if (missing.size === 0) return out
    const def = yield* Effect.option(store.getExperiment(run.experimentId))
    if (Option.isNone(def)) return out
    const { dataset, candidates, repetitions } = def.value
    const keys = dataset.flatMap((environmentId) =>
      candidates.flatMap((c) => Array.from({ length: repetitions }, (_, repetition) => ({ environmentId, candidate: c.name, repetition })))
    )
    const started = new Map((yield* store.runs).map((r) => [r.id, r.startedAt]))
    for (const cell of (yield* store.latestCells(keys)).values()) {
      const place = placeOf(cell.summary)
      if (!missing.has(place) || (started.get(cell.runId) ?? "\uffff") > run.startedAt) continue
      out.set(place, { runId: cell.runId, id: cell.id, stratum: cell.summary.stratum, failed: cell.summary.failures })
    }
    return out
  })

/**
 * A run's cells: for a finished run, exactly the cells its report counts (its `cellResults`),
 * each linked to its Attempt; for an unfinished one, the cells written so far.
 */
export const cellsOf = (runId: string) =>
  Effect.gen(function*() {
    const store = yield* Store
    const run = yield* store.getRun(runId)
    const report = yield* reportOf(runId, { cells: true })
    if (report === null || report.cellResults === undefined) {
      // Unfinished: the newest Attempt of each cell this run wrote.
      const own = new Map<string, StoredAttempt>()
      for (const s of [...(yield* store.attemptsOfRun(runId))].reverse()) if (!own.has(placeOf(s.attempt))) own.set(placeOf(s.attempt), s)
      return [...own.values()].reverse().map(rowOf)
    }
    const behind = yield* attemptsBehind(run)
    const elsewhere = yield* keptElsewhere(run, new Set(report.cellResults.map(placeOf).filter((p) => !behind.has(p))))
    return report.cellResults.map((c): CellRow => {
      const s = behind.get(placeOf(c)) ?? elsewhere.get(placeOf(c))
      return {
        benchmark: c.benchmark,
        task: c.task,
        stratum: s?.stratum ?? null,
        candidate: c.candidate,
        repetition: c.repetition,
        reward: c.reward,
        ended: c.ended,
        failed: s?.failed ?? [],
        ...faultCounts(c.faults),
        attempt: s === undefined ? null : { runId: s.runId, id: s.id }
      }
    })
  })

/** A running run's progress, read afresh on every call. */
export const progressOf = (runId: string) =>
  Effect.gen(function*() {
    const store = yield* Store
    const brief = yield* runBrief(runId)
    const attempts = yield* store.attemptsOfRun(runId)
    const byCandidate = new Map<string, { written: number; passed: number }>()
    for (const c of brief.candidates) byCandidate.set(c, { written: 0, passed: 0 })
    for (const s of attempts) {
      const entry = byCandidate.get(s.attempt.candidate) ?? { written: 0, passed: 0 }
      entry.written += 1
      if (s.attempt.verdict.reward >= 1) entry.passed += 1
      byCandidate.set(s.attempt.candidate, entry)
    }
    const interim = new Map<string, { benchmark: string; candidate: string; n: number; sum: number; passed: number; ended: number }>()
    for (const s of attempts) {
      const a = s.attempt
      const key = `${a.benchmark}\u0000${a.candidate}`
      const entry = interim.get(key) ?? { benchmark: a.benchmark, candidate: a.candidate, n: 0, sum: 0, passed: 0, ended: 0 }
      entry.n += 1
      entry.sum += a.verdict.reward
      if (a.verdict.reward >= 1) entry.passed += 1
      if (a.verdict.ended !== null) entry.ended += 1
      interim.set(key, entry)
    }
    return {
      runId,
      state: brief.state,
      total: brief.cells.total,
      written: attempts.length,
      skipped: brief.cells.skipped,
      byCandidate: [...byCandidate].map(([candidate, c]) => ({ candidate, ...c })),
      interim: [...interim.values()].map(({ sum, ...e }) => ({ ...e, meanReward: sum / e.n })),
      latest: attempts.slice(-20).reverse().map(rowOf)
    } satisfies Progress
  })

/** One stored Attempt of a run, by its content id. */
export const attemptOf = (runId: string, attemptId: string) =>
  Effect.gen(function*() {
    const store = yield* Store
    const found = (yield* store.attemptsOfRun(runId)).find((s) => s.id === attemptId)
    if (found === undefined) return yield* new StoreError({ reason: "unknown-run", detail: `run ${runId} stored no Attempt ${attemptId}` })
    return found
  })

/** One column of a comparison: a candidate in a run. */
export interface Column {
  readonly runId: string
  readonly candidate: string
}

/** One row of a comparison: a task (and repetition), each column's cell on it. */
export interface CompareRow {
  readonly benchmark: string
  readonly task: string
  readonly repetition: number
  readonly cells: ReadonlyArray<CellRow | null>
  /** Some column passes it (full reward) and another does not. */
  readonly differs: boolean
}

/** For each ordered pair of columns, the tasks the first passes and the second does not. */
export interface PairCount {
  readonly a: number
  readonly b: number
  readonly aOnly: number
  readonly bOnly: number
  readonly both: number
  readonly neither: number
}

export interface Comparison {
  readonly columns: ReadonlyArray<Column>
  readonly rows: ReadonlyArray<CompareRow>
  readonly pairs: ReadonlyArray<PairCount>
}

const passed = (c: CellRow | null | undefined): boolean => c !== null && c !== undefined && c.reward >= 1

/**
 * Candidates cell by cell: the columns are (run, candidate), every candidate of each run when
 * none is named; rows are the tasks any column has, in the order they first appear.
 */
export const compare = (runIds: ReadonlyArray<string>, candidates: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const columns: Array<Column> = []
    const byColumn: Array<Map<string, CellRow>> = []
    const order: Array<{ key: string; benchmark: string; task: string; repetition: number }> = []
    const seen = new Set<string>()
    for (const runId of runIds) {
      const rows = yield* cellsOf(runId)
      const names = candidates.length > 0 ? candidates : [...new Set(rows.map((r) => r.candidate))]
      for (const candidate of names) {
        columns.push({ runId, candidate })
        const cells = new Map<string, CellRow>()
        for (const row of rows) {
          if (row.candidate !== candidate) continue
          const key = `${row.benchmark}\u0000${row.task}\u0000${row.repetition}`
          cells.set(key, row)
          if (!seen.has(key)) {
            seen.add(key)
            order.push({ key, benchmark: row.benchmark, task: row.task, repetition: row.repetition })
          }
        }
        byColumn.push(cells)
      }
    }
    const rows: Array<CompareRow> = order.map((o) => {
      const cells = byColumn.map((m) => m.get(o.key) ?? null)
      const present = cells.filter((c): c is CellRow => c !== null)
      return {
        benchmark: o.benchmark,
        task: o.task,
        repetition: o.repetition,
        cells,
        differs: present.some(passed) && present.some((c) => !passed(c))
      }
    })
    const pairs: Array<PairCount> = []
    for (let a = 0; a < columns.length; a++) {
      for (let b = a + 1; b < columns.length; b++) {
        const count = { a, b, aOnly: 0, bOnly: 0, both: 0, neither: 0 }
        for (const row of rows) {
          const x = row.cells[a]
          const y = row.cells[b]
          if (x === null || x === undefined || y === null || y === undefined) continue
          if (passed(x) && passed(y)) count.both++
          else if (passed(x)) count.aOnly++
          else if (passed(y)) count.bOnly++
          else count.neither++
        }
        pairs.push(count)
      }
    }
    return { columns, rows, pairs } satisfies Comparison
  })

// ---------------------------------------------------------------------------------------------
// One Attempt: its transcript's tool calls, its timeline of effects and faults, its neighbours

/** A transcript's messages: `output.transcript` (the tool loop) or `output.messages` (tau2); null when the output has neither. */
export const transcriptOf = (output: unknown): ReadonlyArray<Readonly<Record<string, unknown>>> | null => {
  const o = asRecord(output)
  const list = Array.isArray(o["transcript"]) ? o["transcript"] : Array.isArray(o["messages"]) ? o["messages"] : null
  return list === null ? null : list.map(asRecord)
}

/** One tool call of the candidate (an assistant message's), in transcript order. */
export interface CallStep {
  /** The message it is in, and its place among the candidate's calls. */
  readonly message: number
  readonly index: number
  readonly name: string
  /** Its arguments as canonical JSON, so that key order does not make two calls differ. */
  readonly arguments: string
}

const canonicalOr = (value: unknown) => {
  const text = canonicalEither(value ?? null)
  return text._tag === "Right" ? text.right : String(value)
}

/** The candidate's tool calls (the assistant's; a simulated user's own calls are the environment's). */
export const callsOf = (output: unknown): ReadonlyArray<CallStep> => {
  const out: Array<CallStep> = []
  for (const [message, m] of (transcriptOf(output) ?? []).entries()) {
    if (m["role"] !== "assistant" || !Array.isArray(m["toolCalls"])) continue
    for (const call of m["toolCalls"]) {
      const c = asRecord(call)
      out.push({ message, index: out.length, name: String(c["name"] ?? "?"), arguments: canonicalOr(c["arguments"] ?? {}) })
    }
  }
  return out
}

/** Where two candidates' tool calls first differ (name or arguments, or one stops): its index, or null when they agree throughout. */
export const firstDifference = (a: ReadonlyArray<CallStep>, b: ReadonlyArray<CallStep>): number | null => {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i]
    const y = b[i]
    if (x === undefined || y === undefined || x.name !== y.name || x.arguments !== y.arguments) return i
  }
  return null
}

/** How an effect ended when it was a fault: injected by the run (it never reached the handler) or met live, and what came next. */
export interface FaultMark {
  readonly injected: boolean
  readonly reason: string
  /** The next call of the same effect (for a model call, the retry) and how it ended, or how the Attempt ended. */
  readonly then: string
}

/** One step of an Attempt's timeline: a recorded effect, or an injected fault (which has no request or outcome recorded). */
export interface TimelineEntry {
  readonly kind: string
  readonly key: string
  /** For a recorded effect its recording's occurrence; for an injected fault the faults layer's (which counts the faulted calls too). */
  readonly occurrence: number
  readonly request: unknown
  readonly outcome: { readonly ok: unknown } | { readonly error: { readonly reason: string; readonly message: string } } | null
  readonly fault: FaultMark | null
}

const FAULT_REASONS = new Set(["rate-limit", "server-error", "timeout", "unreachable"])

/**
 * The Attempt's effects in order with the faults it met marked. The faults layer sits outside the
 * recording, so an injected fault is not in the recording, and the recording numbers only the calls
 * that got through: the faults layer's n-th call of an effect is the recording's (n − the faults
 * before it)-th. An injected fault is placed just before the next call of the same effect that got
 * through (its retry, for a model call), or at the end when none did.
 */
export const timelineOf = (attempt: Attempt): ReadonlyArray<TimelineEntry> => {
  type Step = { readonly entry: Omit<TimelineEntry, "fault">; readonly injected: FaultMark["injected"] | null; readonly reason: string | null }
  const injectedOf = new Map<string, Array<{ occurrence: number; reason: string }>>()
  for (const f of attempt.faults) {
    const list = injectedOf.get(f.key) ?? []
    list.push({ occurrence: f.occurrence, reason: f.reason })
    injectedOf.set(f.key, list)
  }
  for (const list of injectedOf.values()) list.sort((x, y) => x.occurrence - y.occurrence)
  const placedBefore = new Map<number, Array<Step>>()
  const atEnd: Array<Step> = []
  // Per effect: the recorded calls in order, so an injected fault finds the call that followed it.
  const recordedOf = new Map<string, Array<number>>()
  attempt.recording.forEach((r, i) => {
    const key = `${r.kind}:${r.key}`
    recordedOf.set(key, [...(recordedOf.get(key) ?? []), i])
  })
  for (const [key, faults] of injectedOf) {
    const split = key.indexOf(":")
    const kind = split < 0 ? key : key.slice(0, split)
    const effectKey = split < 0 ? "" : key.slice(split + 1)
    const recorded = recordedOf.get(key) ?? []
    faults.forEach((f, n) => {
      // Calls through before this one: the faults layer's occurrence less this fault and those before it.
      const through = f.occurrence - 1 - n
      const step: Step = { entry: { kind, key: effectKey, occurrence: f.occurrence, request: null, outcome: null }, injected: true, reason: f.reason }
      const next = recorded[through]
      if (next === undefined) atEnd.push(step)
      else placedBefore.set(next, [...(placedBefore.get(next) ?? []), step])
    })
  }
  const steps: Array<Step> = []
  attempt.recording.forEach((r, i) => {
    steps.push(...(placedBefore.get(i) ?? []))
    const live = "error" in r.outcome && FAULT_REASONS.has(r.outcome.error.reason) ? r.outcome.error.reason : null
    steps.push({ entry: { kind: r.kind, key: r.key, occurrence: r.occurrence, request: r.request, outcome: r.outcome }, injected: live === null ? null : false, reason: live })
  })
  steps.push(...atEnd)
  const lastFault = steps.reduce((last, s, i) => (s.injected !== null ? i : last), -1)
  return steps.map((s, i): TimelineEntry => {
    if (s.injected === null || s.reason === null) return { ...s.entry, fault: null }
    const next = steps.slice(i + 1).find((t) => t.entry.kind === s.entry.kind && t.entry.key === s.entry.key)
    const call = s.entry.kind === "model/generate" ? "retried" : "the next call"
    const then = next !== undefined
      ? `${call}: ${next.injected === true ? "faulted again (injected)" : next.entry.outcome !== null && "error" in next.entry.outcome ? `failed (${next.entry.outcome.error.reason})` : "ok"}`
      : i === lastFault && attempt.verdict.ended?.reason === "fault"
      ? "the Attempt ended in this fault"
      : "not called again"
    return { ...s.entry, fault: { injected: s.injected, reason: s.reason, then } }
  })
}

/** Two Attempts side by side (two candidates on one task, from a comparison): where their tool calls part. */
export interface Pair {
  readonly a: StoredAttempt
  readonly b: StoredAttempt
  readonly callsA: ReadonlyArray<CallStep>
  readonly callsB: ReadonlyArray<CallStep>
  readonly firstDifference: number | null
}

export const pairOf = (a: { readonly runId: string; readonly id: string }, b: { readonly runId: string; readonly id: string }) =>
  Effect.gen(function*() {
    const x = yield* attemptOf(a.runId, a.id)
    const y = yield* attemptOf(b.runId, b.id)
    const callsA = callsOf(x.attempt.output)
    const callsB = callsOf(y.attempt.output)
    return { a: x, b: y, callsA, callsB, firstDifference: firstDifference(callsA, callsB) } satisfies Pair
  })

/** The other candidates' Attempts on the same task and repetition, in the run that stored this one (newest of each). */
export const siblingsOf = (stored: StoredAttempt) =>
  Effect.gen(function*() {
    const store = yield* Store
    const a = stored.attempt
    const out = new Map<string, StoredAttempt>()
    for (const s of yield* store.attemptsOfRun(stored.runId)) {
      const b = s.attempt
      if (b.benchmark === a.benchmark && b.task === a.task && b.repetition === a.repetition && b.candidate !== a.candidate) out.set(b.candidate, s)
    }
    return [...out.values()]
  })
