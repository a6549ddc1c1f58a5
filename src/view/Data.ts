/**
 * What `assay view` shows, read through the `Store` service only (so a home's SQLite file and a
 * Postgres store are viewed alike). A finished run's figures are its stored report, completed as
 * `assay report` completes it: the viewer recomputes none of them.
 */
import { hostname } from "node:os"
import { Effect, Option, Schema } from "effect"
import * as Home from "../experiment/Home.ts"
import { completeReport, decodeJson } from "../experiment/Report.ts"
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
  /** The newest Attempts first (at most 20), to follow the run as it goes. */
  readonly latest: ReadonlyArray<CellRow>
}

/** One cell of a run, with where its Attempt is stored (the run that wrote it may be an earlier one). */
export interface CellRow {
  readonly benchmark: string
  readonly task: string
  readonly candidate: string
  readonly repetition: number
  readonly reward: number
  /** `verdict.ended.reason`, null when evaluated. */
  readonly ended: string | null
  readonly failed: ReadonlyArray<string>
  readonly faults: number
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

const rowOf = (s: StoredAttempt): CellRow => ({
  benchmark: s.attempt.benchmark,
  task: s.attempt.task,
  candidate: s.attempt.candidate,
  repetition: s.attempt.repetition,
  reward: s.attempt.verdict.reward,
  ended: s.attempt.verdict.ended?.reason ?? null,
  failed: Object.entries(s.attempt.verdict.checks).filter(([, ok]) => !ok).map(([check]) => check),
  faults: s.attempt.faults.length,
  attempt: { runId: s.runId, id: s.id }
})

const placeOf = (c: { readonly benchmark: string; readonly task: string; readonly candidate: string; readonly repetition: number }) =>
  `${c.benchmark}\u0000${c.task}\u0000${c.candidate}\u0000${c.repetition}`

/**
 * The Attempts a run's cells stand on: its own, then for cells it kept, the newest of the earlier
 * runs of the same experiment. Keyed by (benchmark, task, candidate, repetition).
 */
const attemptsBehind = (run: RunRecord) =>
  Effect.gen(function*() {
    const store = yield* Store
    const all = yield* store.runs
    const earlier = all.filter((r) => r.experimentId === run.experimentId && r.id !== run.id && r.startedAt <= run.startedAt)
    const out = new Map<string, StoredAttempt>()
    for (const source of [run, ...earlier]) {
      const attempts = yield* store.attemptsOfRun(source.id)
      // Within a run the newest Attempt of a cell wins (a cell retried after a fault).
      for (const s of [...attempts].reverse()) if (!out.has(placeOf(s.attempt))) out.set(placeOf(s.attempt), s)
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
    const behind = yield* attemptsBehind(run)
    const report = yield* reportOf(runId, { cells: true })
    if (report === null || report.cellResults === undefined) {
      const own = new Set((yield* store.attemptsOfRun(runId)).map((s) => s.id))
      return [...behind.values()].filter((s) => own.has(s.id)).map(rowOf)
    }
    return report.cellResults.map((c): CellRow => {
      const s = behind.get(placeOf(c))
      return {
        benchmark: c.benchmark,
        task: c.task,
        candidate: c.candidate,
        repetition: c.repetition,
        reward: c.reward,
        ended: c.ended,
        failed: s === undefined ? [] : rowOf(s).failed,
        faults: c.faults.length,
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
    return {
      runId,
      state: brief.state,
      total: brief.cells.total,
      written: attempts.length,
      skipped: brief.cells.skipped,
      byCandidate: [...byCandidate].map(([candidate, c]) => ({ candidate, ...c })),
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
