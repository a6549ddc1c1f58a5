/**
 * The home's store: one SQLite file (WAL) holding experiment definitions, every certified
 * Attempt, each run's settings and summary, skipped cells and preflight estimates. Each Attempt
 * is committed as it finishes, so a crash loses only the cells in flight.
 *
 * The same store can live in Postgres instead (`layerPostgres`, `--store postgres://…`), so that
 * workers on several machines share it: the migrations and queries are the same, written in the
 * SQL both speak; where the dialects differ (an auto-increment key, SQLite's implicit rowid, JSON
 * paths, float width) `dialect` below says how, in one place.
 */
import { resolve } from "node:path"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Sqlite from "./Sqlite.ts"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import * as ContentId from "../content/ContentId.ts"
import * as Home from "./Home.ts"
import * as SpendCap from "../budget/SpendCap.ts"
import { Attempt } from "../schema/Attempt.ts"
import { type CellSummary, summaryOf } from "./Scorecards.ts"
import { type ExperimentDef, idOf as experimentIdOf } from "../schema/ExperimentDef.ts"
import { ExperimentDef as ExperimentDefSchema } from "../schema/ExperimentDef.ts"

export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  // damaged: the store file is empty, not SQLite, truncated or corrupt (and was left as it is);
  // read-only: the store can only be read, and reading it is not enough (its schema is older).
  // foreign: the store file is a SQLite database that assay did not make (left as it is);
  // older: its schema is older than this assay reads, and the command may not upgrade it.
  reason: Schema.Literal("open", "query", "decode", "unknown-run", "damaged", "foreign", "older", "read-only"),
  detail: Schema.String
}) {
  override get message() {
    // A damaged or read-only store is told in a sentence that names the file and what to do.
    return this.reason === "damaged" || this.reason === "foreign" || this.reason === "older" || this.reason === "read-only"
      ? this.detail
      : `store: ${this.reason}: ${this.detail}`
  }
}

/** Where a cell of an experiment stands: its key is (environment, candidate name, repetition). */
export interface CellKey {
  readonly environmentId: string
  readonly candidate: string
  readonly repetition: number
}

export const cellKeyOf = (c: CellKey): string => `${c.environmentId}|${c.candidate}|${c.repetition}`

export interface StoredAttempt {
  readonly id: string
  readonly runId: string
  readonly attempt: Attempt
}

export interface RunRecord {
  readonly id: string
  readonly experimentId: string
  readonly settings: unknown
  readonly startedAt: string
  readonly finishedAt: string | null
  readonly summary: unknown
}

export interface Store {
  readonly home: string
  /** Opened read-only (asked for, or a home that cannot be written): every put fails. */
  readonly readOnly?: boolean
  readonly putExperiment: (def: ExperimentDef) => Effect.Effect<string, StoreError>
  readonly getExperiment: (id: string) => Effect.Effect<ExperimentDef, StoreError>
  readonly startRun: (experimentId: string, settings: unknown) => Effect.Effect<string, StoreError>
  readonly finishRun: (runId: string, summary: unknown) => Effect.Effect<void, StoreError>
  readonly getRun: (runId: string) => Effect.Effect<RunRecord, StoreError>
  readonly latestRun: Effect.Effect<RunRecord | null, StoreError>
  /** Every run of the store, newest first (what `assay view` lists). */
  readonly runs: Effect.Effect<ReadonlyArray<RunRecord>, StoreError>
  readonly putAttempt: (runId: string, attempt: Attempt) => Effect.Effect<string, StoreError>
  /** Each given cell's newest Attempt in brief: its inputs id and how it ended (null: evaluated). */
  readonly latestInputs: (cells: ReadonlyArray<CellKey>) => Effect.Effect<ReadonlyMap<string, LatestInputs>, StoreError>
  /**
   * Each given cell's newest Attempt as the per-cell index has it (ids, inputs id, how it ended and
   * the summary scorecards read), with no Attempt record decoded.
   */
  readonly latestCells: (cells: ReadonlyArray<CellKey>) => Effect.Effect<ReadonlyMap<string, StoredCell>, StoreError>
  /** The newest Attempt of each given cell, whatever run made it. */
  readonly latestAttempts: (cells: ReadonlyArray<CellKey>) => Effect.Effect<ReadonlyMap<string, StoredAttempt>, StoreError>
  readonly attemptsOfRun: (runId: string) => Effect.Effect<ReadonlyArray<StoredAttempt>, StoreError>
  readonly putSkipped: (runId: string, cell: CellKey, reason: string) => Effect.Effect<void, StoreError>
  readonly skippedOfRun: (runId: string) => Effect.Effect<ReadonlyArray<CellKey & { readonly reason: string }>, StoreError>
  readonly putNote: (runId: string, kind: string, note: unknown) => Effect.Effect<void, StoreError>
  readonly notesOfRun: (runId: string, kind: string) => Effect.Effect<ReadonlyArray<unknown>, StoreError>
  /** The newest note of a kind left by any run of an experiment. */
  readonly latestNote: (experimentId: string, kind: string) => Effect.Effect<unknown | null, StoreError>
  /** One model call's spend, written as the call completes. */
  readonly putSpend: (runId: string, experimentId: string, cell: CellKey, spend: SpendRow) => Effect.Effect<void, StoreError>
  /**
   * Spend rows and Attempts together in one transaction (a writer's batch: one commit for many
   * cells); the Attempts' ids in order. Each is written as `putSpend` and `putAttempt` write it.
   */
  readonly putBatch: (batch: {
    readonly spend: ReadonlyArray<{ readonly runId: string; readonly experimentId: string; readonly cell: CellKey; readonly spend: SpendRow }>
    readonly attempts: ReadonlyArray<{ readonly runId: string; readonly attempt: Attempt; readonly stored?: StoredForm }>
    /** Model calls about to be sent, at their worst case (SpendCap.Ledger): removed when their spend row is written. */
    readonly reserve?: ReadonlyArray<Reservation>
    /** Reservations of calls that failed (not billed). */
    readonly release?: ReadonlyArray<string>
  }) => Effect.Effect<ReadonlyArray<string>, StoreError>
  /** What every model call of an experiment (all its runs) cost, or of one run. */
  readonly spendOf: (of: { readonly experimentId: string } | { readonly runId: string }) => Effect.Effect<SpendTotal, StoreError>
  /**
   * Per run of the experiment, the worst cases of model calls that were in flight with nobody left
   * to settle them: a cluster worker that died (SpendCap.unsettledOfWallets), and reservations
   * a run wrote before sending a call whose spend row never came (the run was killed or
   * interrupted while the call was out). Not in the ledger (`spendOf`), yet they count against
   * `--max-usd`, as they may have been billed. Runs with none are left out. `ending` names a run
   * whose cells have all returned, counted as finished before its summary is stored.
   */
  readonly unsettledOf: (experimentId: string, options?: { readonly ending?: string }) => Effect.Effect<ReadonlyMap<string, number>, StoreError>
  /** What was stored under a key of derived figures (see `putDerived`), or null. */
  readonly derived: (key: string) => Effect.Effect<string | null, StoreError>
  /**
   * Figures computed from a set of Attempts, stored under a key that names that set (the ids of
   * the Attempts, in order, and what else they were computed with), so the same set is not
   * computed again. The text is the caller's.
   */
  readonly putDerived: (key: string, text: string) => Effect.Effect<void, StoreError>
}

/** A cell's newest Attempt as the per-cell index has it. */
export interface StoredCell extends LatestInputs {
  /** The Attempt's content id. */
  readonly id: string
  readonly runId: string
  readonly summary: CellSummary
}

export interface SpendRow {
  readonly provider: string
  readonly model: string
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWriteTokens: number
  /** null: the model's price is unknown. */
  readonly costUsd: number | null
  /** The reservation (`Reservation.id`) this call's spend settles: removed as the row is written. */
  readonly reservation?: string
}

/** A model call's worst case, written before it is sent (SpendCap.Ledger). */
export interface Reservation {
  readonly id: string
  readonly runId: string
  readonly experimentId: string
  readonly cell: CellKey
  readonly provider: string
  readonly model: string
  readonly usd: number
}

export interface SpendTotal {
  readonly calls: number
  /** The sum of the calls of known price. */
  readonly knownUsd: number
  readonly unknownCalls: number
  readonly inputTokens: number
  readonly outputTokens: number
}
export const Store = Context.GenericTag<Store>("assay/Store")

export interface LatestInputs {
  readonly inputsId: string
  /** `verdict.ended.reason` of the Attempt: fault, refused, budget-exceeded, ...; null when it was evaluated. */
  readonly ended: string | null
}

/**
 * What the two dialects spell differently in the schema. SQLite's tables keep their implicit
 * rowid, which the queries order by; Postgres has none, so its tables that are read in insertion
 * order get a column of that name. SQLite's REAL is a double; Postgres's is 4 bytes.
 */
const dialect = (sql: SqlClient.SqlClient) =>
  sql.onDialectOrElse({
    pg: () => ({
      serial: sql.literal("SERIAL PRIMARY KEY"),
      real: sql.literal("DOUBLE PRECISION"),
      rowid: sql.literal("rowid SERIAL, "),
      endedOfRecord: sql.literal("(record::jsonb #>> '{verdict,ended,reason}')")
    }),
    orElse: () => ({
      serial: sql.literal("INTEGER PRIMARY KEY AUTOINCREMENT"),
      real: sql.literal("REAL"),
      rowid: sql.literal(""),
      endedOfRecord: sql.literal("json_extract(record, '$.verdict.ended.reason')")
    })
  })

const migrations = Migrator.fromRecord({
  "1_init": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const d = dialect(sql)
    yield* sql`CREATE TABLE experiments (id TEXT PRIMARY KEY, def TEXT NOT NULL, created_at TEXT NOT NULL)`
    yield* sql`CREATE TABLE runs (${d.rowid}
      id TEXT PRIMARY KEY, experiment_id TEXT NOT NULL, settings TEXT NOT NULL,
      started_at TEXT NOT NULL, finished_at TEXT, summary TEXT)`
    yield* sql`CREATE TABLE attempts (
      seq ${d.serial}, id TEXT NOT NULL, run_id TEXT NOT NULL, cell TEXT NOT NULL,
      environment_id TEXT NOT NULL, candidate TEXT NOT NULL, repetition INTEGER NOT NULL,
      inputs_id TEXT NOT NULL, reward ${d.real} NOT NULL, cost_usd ${d.real}, record TEXT NOT NULL, created_at TEXT NOT NULL)`
    yield* sql`CREATE INDEX attempts_cell ON attempts (cell, seq)`
    yield* sql`CREATE INDEX attempts_run ON attempts (run_id)`
    yield* sql`CREATE TABLE skipped (run_id TEXT NOT NULL, cell TEXT NOT NULL, reason TEXT NOT NULL)`
    yield* sql`CREATE TABLE notes (${d.rowid}run_id TEXT NOT NULL, kind TEXT NOT NULL, note TEXT NOT NULL)`
  }),
  // How an Attempt ended, beside its inputs id: a resumed run retries cells whose last Attempt
  // ended in a live fault without reading every record.
  "2_ended": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE attempts ADD COLUMN ended TEXT`
    yield* sql`UPDATE attempts SET ended = ${dialect(sql).endedOfRecord}`
  }),
  // Every model call's cost as it completes, whatever becomes of its cell: a killed or capped
  // cell's spend counts in the experiment's spend, in the cap and in the report.
  "3_spend": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const d = dialect(sql)
    yield* sql`CREATE TABLE spend (
      seq ${d.serial}, run_id TEXT NOT NULL, experiment_id TEXT NOT NULL, cell TEXT NOT NULL,
      provider TEXT NOT NULL, model TEXT NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
      cache_read_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL, cost_usd ${d.real}, created_at TEXT NOT NULL)`
    yield* sql`CREATE INDEX spend_experiment ON spend (experiment_id)`
  }),
  // A small per-cell index of the newest Attempt (what classifying and scorecards read), so a run
  // with nothing left to do decodes no Attempt record; figures derived from a set of Attempts,
  // keyed by that set; spend per run read by index. Built from the records already stored (tables
  // dropped first: a test may rewind the migrations of a home to an older layout).
  "4_cells": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const d = dialect(sql)
    yield* sql`DROP TABLE IF EXISTS cells`
    yield* sql`DROP TABLE IF EXISTS derived`
    yield* sql`CREATE TABLE cells (
      cell TEXT PRIMARY KEY, seq INTEGER NOT NULL, attempt_id TEXT NOT NULL, run_id TEXT NOT NULL,
      inputs_id TEXT NOT NULL, ended TEXT, reward ${d.real} NOT NULL, cost_usd ${d.real},
      input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, summary TEXT NOT NULL)`
    // The newest seq the index has seen, looked up on every read to catch up with older writers.
    yield* sql`CREATE INDEX cells_seq ON cells (seq)`
    yield* sql`CREATE TABLE derived (key TEXT PRIMARY KEY, value TEXT NOT NULL, created_at TEXT NOT NULL)`
    yield* sql`CREATE INDEX IF NOT EXISTS spend_run ON spend (run_id)`
    yield* indexAttemptsAfter(sql, 0)
  }),
  // A model call's worst case, written before it is sent and removed as its spend row is written:
  // what a killed run leaves here was in flight, and may have been answered and billed.
  "5_reservations": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const d = dialect(sql)
    yield* sql`CREATE TABLE IF NOT EXISTS reservations (id TEXT PRIMARY KEY, run_id TEXT NOT NULL, experiment_id TEXT NOT NULL,
      cell TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, usd ${d.real} NOT NULL, created_at TEXT NOT NULL)`
    yield* sql`CREATE INDEX IF NOT EXISTS reservations_experiment ON reservations (experiment_id)`
  })
})

interface AttemptRow {
  readonly seq: number
  readonly id: string
  readonly run_id: string
  readonly record: string
}

/** The row of the per-cell index for one stored Attempt. */
const cellRow = (seq: number, id: string, runId: string, attempt: Attempt) => ({
  cell: cellKeyOf({ environmentId: attempt.environmentId, candidate: attempt.candidate, repetition: attempt.repetition }),
  seq,
  attempt_id: id,
  run_id: runId,
  inputs_id: attempt.inputsId,
  ended: endedColumn(attempt),
  reward: attempt.verdict.reward,
  cost_usd: attempt.usage.costUsd,
  input_tokens: attempt.usage.inputTokens,
  output_tokens: attempt.usage.outputTokens,
  summary: JSON.stringify(summaryOf(attempt))
})

/** Cells' rows (one per cell), each unless the index already has a newer Attempt of that cell. */
const upsertCells = (sql: SqlClient.SqlClient, rows: ReadonlyArray<ReturnType<typeof cellRow>>) =>
  sql`INSERT INTO cells ${sql.insert(rows)}
    ON CONFLICT (cell) DO UPDATE SET seq = excluded.seq, attempt_id = excluded.attempt_id, run_id = excluded.run_id,
      inputs_id = excluded.inputs_id, ended = excluded.ended, reward = excluded.reward, cost_usd = excluded.cost_usd,
      input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, summary = excluded.summary
    WHERE excluded.seq > cells.seq`

/**
 * Indexes the Attempts stored after `seq` (all of them when building the index; afterwards only
 * those an older assay wrote without indexing them), a few hundred records at a time.
 */
const indexAttemptsAfter = (sql: SqlClient.SqlClient, after: number) =>
  Effect.gen(function*() {
    let from = after
    for (;;) {
      const rows = yield* sql<AttemptRow>`SELECT seq, id, run_id, record FROM attempts WHERE seq > ${from} ORDER BY seq LIMIT 500`
      if (rows.length === 0) return
      for (const row of rows) {
        const attempt = yield* decodeAttempt(row.record).pipe(Effect.mapError((e) => new StoreError({ reason: "decode", detail: `attempt ${row.id}: ${e.message}` })))
        yield* upsertCells(sql, [cellRow(row.seq, row.id, row.run_id, attempt)])
      }
      from = rows[rows.length - 1]!.seq
    }
  })

/** An error's message and its cause's (an SqlError's own says only "Failed to execute statement"). */
const withCause = (e: unknown): string => {
  const message = e instanceof Error ? e.message : String(e)
  const cause = e instanceof Error && "cause" in e && e.cause instanceof Error ? e.cause.message : null
  return cause === null || cause === message ? message : `${message}: ${cause}`
}

const query = (detail: string) => Effect.mapError((e: unknown) => new StoreError({ reason: "query", detail: `${detail}: ${withCause(e)}` }))
/** As `query`, keeping a StoreError of the store's own (an Attempt that does not encode) as it is. */
const queryUnlessStore = (detail: string) =>
  Effect.mapError((e: unknown) => (e instanceof StoreError ? e : new StoreError({ reason: "query", detail: `${detail}: ${withCause(e)}` })))

const decodeAttempt = Schema.decodeUnknown(Schema.parseJson(Attempt))
const encodeAttempt = Schema.encode(Attempt)

/** An Attempt as the store writes it: its content id and its record's JSON. */
export interface StoredForm {
  readonly id: string
  readonly record: string
}

/**
 * The stored form of an Attempt, what `putAttempt` and `putBatch` compute when not given it. A
 * run's writer is one fiber whose batches the cells' calls wait on (each call's spend row), so
 * the cells compute this themselves, at their own (lower) priority, before their Attempt is queued.
 *
 * Encoded once: its canonical form names it, its JSON is the record (the same text
 * Schema.parseJson(Attempt) would write). The encoded form keeps the Attempt's evidence and
 * output themselves (Schema.Unknown), whose canonical texts their receipt ids recorded
 * (evaluate): they are not written again.
 */
export const storedFormOf = (attempt: Attempt): Effect.Effect<StoredForm, StoreError> =>
  Effect.map(
    encodeAttempt(attempt).pipe(Effect.mapError((e) => new StoreError({ reason: "decode", detail: e.message }))),
    (encoded) => ({ id: ContentId.ofUnsafe(encoded), record: JSON.stringify(encoded) })
  )
/**
 * A summary as the index stores it. The store wrote it from `summaryOf` and a change of its shape
 * comes with a migration that rebuilds the index, so a look at its shape is enough: decoding
 * 10,000 of them with Schema costs ~190 ms in a fresh process (most of it warming up), more than
 * everything else a run with nothing to run does with the store.
 */
const parseSummary = (text: string): CellSummary | null => {
  const value: unknown = JSON.parse(text)
  if (typeof value !== "object" || value === null) return null
  const v = value as Partial<Record<keyof CellSummary, unknown>>
  const ok = typeof v.environmentId === "string" && typeof v.candidate === "string" && typeof v.benchmark === "string" &&
    typeof v.task === "string" && typeof v.repetition === "number" && typeof v.reward === "number" && typeof v.injected === "number" &&
    Array.isArray(v.failures) && Array.isArray(v.faults) && typeof v.usage === "object" && v.usage !== null
  return ok ? (value as CellSummary) : null
}

const splitCell = (cell: string): CellKey => {
  const [environmentId = "", candidate = "", rep = "0"] = cell.split("|")
  return { environmentId, candidate, repetition: Number(rep) }
}

/** Run ids are made here and only these are accepted back: `r-` + 16 hex digits. */
const runIdPattern = /^r-[0-9a-f]{16}$/

const make = (home: string, readOnly: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // WAL with NORMAL sync: a committed Attempt survives the process being killed; only a power
    // loss may take the last few, and it saves an fsync per Attempt.
    yield* sql.onDialectOrElse({ sqlite: () => sql`PRAGMA synchronous = NORMAL`, orElse: () => Effect.void }).pipe(query("setting up the store"))
    const now = () => new Date().toISOString()
    // Attempts written by an assay that did not keep the per-cell index (an older one on the same
    // home) are indexed when it is next read; none, normally: one cheap look at the newest seq.
    // A read-only store cannot write them: it reads what it has.
    const catchUp = Effect.gen(function*() {
      const top = yield* sql<{ a: number | null; c: number | null }>`
        SELECT (SELECT MAX(seq) FROM attempts) AS a, (SELECT MAX(seq) FROM cells) AS c`
      const a = top[0]?.a ?? 0
      const c = top[0]?.c ?? 0
      if (a > c && !readOnly) yield* indexAttemptsAfter(sql, c).pipe(sql.withTransaction)
    }).pipe(query("indexing attempts"))
    // The whole index in one scan, filtered in memory: cheaper than a 10,000-term IN list.
    const readIndex = <Row extends { readonly cell: string }>(cells: ReadonlyArray<CellKey>, read: Effect.Effect<ReadonlyArray<Row>, unknown>) =>
      Effect.gen(function*() {
        const wanted = new Set(cells.map(cellKeyOf))
        if (wanted.size === 0) return new Map<string, Row>()
        yield* catchUp
        const rows = yield* read.pipe(query("reading the cell index"))
        const out = new Map<string, Row>()
        for (const row of rows) if (wanted.has(row.cell)) out.set(row.cell, row)
        return out
      })
    // An Attempt's record and its cell's index row (the index never lags the records), and a
    // call's spend row: written inside a transaction of the caller's (one Attempt, or a batch).
    const writeAttempt = (runId: string, attempt: Attempt, given?: StoredForm) =>
      Effect.gen(function*() {
        const { id, record } = given ?? (yield* storedFormOf(attempt))
        const cell = cellKeyOf({ environmentId: attempt.environmentId, candidate: attempt.candidate, repetition: attempt.repetition })
        const inserted = yield* sql<{ seq: number }>`INSERT INTO attempts (id, run_id, cell, environment_id, candidate, repetition, inputs_id, reward, cost_usd, record, created_at, ended)
          VALUES (${id}, ${runId}, ${cell}, ${attempt.environmentId}, ${attempt.candidate}, ${attempt.repetition},
                  ${attempt.inputsId}, ${attempt.verdict.reward}, ${attempt.usage.costUsd}, ${record}, ${now()},
                  ${endedColumn(attempt)}) RETURNING seq`
        yield* upsertCells(sql, [cellRow(inserted[0]!.seq, id, runId, attempt)])
        return id as string
      })
    const writeSpend = (runId: string, experimentId: string, cell: CellKey, spend: SpendRow) =>
      Effect.zipRight(
        sql`INSERT INTO spend (run_id, experiment_id, cell, provider, model, input_tokens, output_tokens, cache_read_tokens,
          cache_write_tokens, cost_usd, created_at)
        VALUES (${runId}, ${experimentId}, ${cellKeyOf(cell)}, ${spend.provider}, ${spend.model}, ${spend.inputTokens},
          ${spend.outputTokens}, ${spend.cacheReadTokens}, ${spend.cacheWriteTokens}, ${spend.costUsd}, ${now()})`,
        spend.reservation === undefined ? Effect.void : sql`DELETE FROM reservations WHERE id = ${spend.reservation}`
      ).pipe(sql.withTransaction)
    // A batch in three statements (spend rows, Attempts, cell rows), not three a cell: each
    // statement through @effect/sql is ~100 fiber steps and a compile, at --parallel 1000 CPU the
    // slots wait on. The same rows as writeSpend and writeAttempt write.
    const writeBatch = (batch: Parameters<Store["putBatch"]>[0]) =>
      Effect.gen(function*() {
        if (batch.reserve !== undefined && batch.reserve.length > 0) {
          const at = now()
          yield* sql`INSERT INTO reservations ${sql.insert(batch.reserve.map((r) => ({
            id: r.id,
            run_id: r.runId,
            experiment_id: r.experimentId,
            cell: cellKeyOf(r.cell),
            provider: r.provider,
            model: r.model,
            usd: r.usd,
            created_at: at
          })))}`
        }
        // A settled call's reservation goes in the transaction that writes its spend row: the
        // ledger holds one or the other at every moment.
        const settled = [...(batch.release ?? []), ...batch.spend.flatMap(({ spend }) => (spend.reservation !== undefined ? [spend.reservation] : []))]
        if (settled.length > 0) yield* sql`DELETE FROM reservations WHERE id IN ${sql.in(settled)}`
        if (batch.spend.length > 0) {
          const at = now()
          yield* sql`INSERT INTO spend ${sql.insert(batch.spend.map(({ runId, experimentId, cell, spend }) => ({
            run_id: runId,
            experiment_id: experimentId,
            cell: cellKeyOf(cell),
            provider: spend.provider,
            model: spend.model,
            input_tokens: spend.inputTokens,
            output_tokens: spend.outputTokens,
            cache_read_tokens: spend.cacheReadTokens,
            cache_write_tokens: spend.cacheWriteTokens,
            cost_usd: spend.costUsd,
            created_at: at
          })))}`
        }
        if (batch.attempts.length === 0) return []
        const rows: Array<{ readonly id: string; readonly cell: string; readonly runId: string; readonly attempt: Attempt; readonly record: string }> = []
        for (const { runId, attempt, stored } of batch.attempts) {
          const { id, record } = stored ?? (yield* storedFormOf(attempt))
          const cell = cellKeyOf({ environmentId: attempt.environmentId, candidate: attempt.candidate, repetition: attempt.repetition })
          rows.push({ id, cell, runId, attempt, record })
        }
        // RETURNING gives no order: each row's seq is found by its cell, so a batch with a cell
        // twice is written a row at a time.
        if (new Set(rows.map((r) => r.cell)).size < rows.length) {
          const ids: Array<string> = []
          for (const a of batch.attempts) ids.push(yield* writeAttempt(a.runId, a.attempt, a.stored))
          return ids
        }
        const at = now()
        const inserted = yield* sql<{ seq: number; cell: string }>`INSERT INTO attempts ${sql.insert(rows.map((r) => ({
          id: r.id,
          run_id: r.runId,
          cell: r.cell,
          environment_id: r.attempt.environmentId,
          candidate: r.attempt.candidate,
          repetition: r.attempt.repetition,
          inputs_id: r.attempt.inputsId,
          reward: r.attempt.verdict.reward,
          cost_usd: r.attempt.usage.costUsd,
          record: r.record,
          created_at: at,
          ended: endedColumn(r.attempt)
        })))} RETURNING seq, cell`
        const seqOf = new Map(inserted.map((row) => [row.cell, row.seq]))
        yield* upsertCells(sql, rows.map((r) => cellRow(seqOf.get(r.cell)!, r.id, r.runId, r.attempt)))
        return rows.map((r) => r.id)
      })
    const store: Store = {
      home,
      readOnly,
      putExperiment: (def) => {
        const id = experimentIdOf(def)
        return sql`INSERT INTO experiments (id, def, created_at) VALUES (${id}, ${JSON.stringify(Schema.encodeSync(ExperimentDefSchema)(def))}, ${now()})
          ON CONFLICT (id) DO NOTHING`.pipe(
          Effect.as(id as string),
          query("saving the experiment")
        )
      },
      getExperiment: (id) =>
        sql<{ def: string }>`SELECT def FROM experiments WHERE id = ${id}`.pipe(
          query("reading the experiment"),
          Effect.flatMap((rows) =>
            rows[0]
              ? Schema.decodeUnknown(Schema.parseJson(ExperimentDefSchema))(rows[0].def).pipe(
                Effect.mapError((e) => new StoreError({ reason: "decode", detail: e.message }))
              )
              : Effect.fail(new StoreError({ reason: "unknown-run", detail: `no experiment ${id}` }))
          )
        ),
      startRun: (experimentId, settings) => {
        const id = `r-${ContentId.sha256Hex(`${experimentId}${now()}${Math.random()}`).slice(0, 16)}`
        return sql`INSERT INTO runs (id, experiment_id, settings, started_at) VALUES (${id}, ${experimentId}, ${JSON.stringify(settings)}, ${now()})`.pipe(
          Effect.as(id),
          query("starting the run")
        )
      },
      finishRun: (runId, summary) =>
        sql`UPDATE runs SET finished_at = ${now()}, summary = ${JSON.stringify(summary)} WHERE id = ${runId}`.pipe(
          Effect.asVoid,
          query("finishing the run")
        ),
      getRun: (runId) =>
        runIdPattern.test(runId)
          ? sql<{ id: string; experiment_id: string; settings: string; started_at: string; finished_at: string | null; summary: string | null }>`
              SELECT * FROM runs WHERE id = ${runId}`.pipe(
            query("reading the run"),
            Effect.flatMap((rows) =>
              rows[0]
                ? Effect.succeed(rowToRun(rows[0]))
                : Effect.fail(new StoreError({ reason: "unknown-run", detail: `no run ${runId} in ${home}` }))
            )
          )
          : Effect.fail(new StoreError({ reason: "unknown-run", detail: `${JSON.stringify(runId)} is not a run id (they look like r-0123456789abcdef)` })),
      latestRun: sql<{ id: string; experiment_id: string; settings: string; started_at: string; finished_at: string | null; summary: string | null }>`
          SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1`.pipe(
        query("reading the latest run"),
        Effect.map((rows) => (rows[0] ? rowToRun(rows[0]) : null))
      ),
      runs: sql<{ id: string; experiment_id: string; settings: string; started_at: string; finished_at: string | null; summary: string | null }>`
          SELECT * FROM runs ORDER BY started_at DESC, rowid DESC`.pipe(query("reading the runs"), Effect.map((rows) => rows.map(rowToRun))),
      putAttempt: (runId, attempt) => writeAttempt(runId, attempt).pipe(sql.withTransaction, queryUnlessStore("saving an attempt")),
      putBatch: (batch) => writeBatch(batch).pipe(sql.withTransaction, queryUnlessStore("saving attempts and spend")),
      latestInputs: (cells) =>
        Effect.map(readIndex(cells, sql<{ cell: string; inputs_id: string; ended: string | null }>`SELECT cell, inputs_id, ended FROM cells`), (rows) => {
          const out = new Map<string, LatestInputs>()
          for (const [cell, row] of rows) out.set(cell, { inputsId: row.inputs_id, ended: row.ended })
          return out
        }),
      latestCells: (cells) =>
        Effect.flatMap(readIndex(cells, sql<CellIndexRow>`SELECT cell, attempt_id, run_id, inputs_id, ended, summary FROM cells`), (rows) =>
          Effect.try({
            try: () => {
              const out = new Map<string, StoredCell>()
              for (const [cell, row] of rows) {
                const parsed = parseSummary(row.summary)
                if (parsed === null) throw new Error(`the index row of cell ${cell} is not a cell summary`)
                // Summaries stored before `providerFailed` was written: the index's ending says it.
                const summary = row.ended === "provider-failed" && parsed.providerFailed === undefined ? { ...parsed, providerFailed: true } : parsed
                out.set(cell, { id: row.attempt_id, runId: row.run_id, inputsId: row.inputs_id, ended: row.ended, summary })
              }
              return out
            },
            catch: (e) => new StoreError({ reason: "decode", detail: e instanceof Error ? e.message : String(e) })
          })),
      latestAttempts: (cells) =>
        Effect.gen(function*() {
          const wanted = new Set(cells.map(cellKeyOf))
          if (wanted.size === 0) return new Map()
          yield* catchUp
          // The newest row per cell from the index; filtering in memory beats a 10,000-term IN list.
          const rows = yield* sql<{ id: string; run_id: string; cell: string; record: string }>`
            SELECT a.id, a.run_id, a.cell, a.record FROM cells c JOIN attempts a ON a.seq = c.seq`.pipe(query("reading attempts"))
          const out = new Map<string, StoredAttempt>()
          for (const row of rows) {
            if (!wanted.has(row.cell)) continue
            const attempt = yield* decodeAttempt(row.record).pipe(Effect.mapError((e) => new StoreError({ reason: "decode", detail: e.message })))
            out.set(row.cell, { id: row.id, runId: row.run_id, attempt })
          }
          return out
        }),
      attemptsOfRun: (runId) =>
        Effect.gen(function*() {
          const rows = yield* sql<{ id: string; run_id: string; record: string }>`
            SELECT id, run_id, record FROM attempts WHERE run_id = ${runId} ORDER BY seq`.pipe(query("reading attempts"))
          const out: Array<StoredAttempt> = []
          for (const row of rows) {
            const attempt = yield* decodeAttempt(row.record).pipe(Effect.mapError((e) => new StoreError({ reason: "decode", detail: e.message })))
            out.push({ id: row.id, runId: row.run_id, attempt })
          }
          return out
        }),
      putSkipped: (runId, cell, reason) =>
        sql`INSERT INTO skipped (run_id, cell, reason) VALUES (${runId}, ${cellKeyOf(cell)}, ${reason})`.pipe(Effect.asVoid, query("saving a skipped cell")),
      skippedOfRun: (runId) =>
        sql<{ cell: string; reason: string }>`SELECT cell, reason FROM skipped WHERE run_id = ${runId}`.pipe(
          query("reading skipped cells"),
          Effect.map((rows) => rows.map((r) => ({ ...splitCell(r.cell), reason: r.reason })))
        ),
      putNote: (runId, kind, note) =>
        sql`INSERT INTO notes (run_id, kind, note) VALUES (${runId}, ${kind}, ${JSON.stringify(note)})`.pipe(Effect.asVoid, query("saving a note")),
      notesOfRun: (runId, kind) =>
        sql<{ note: string }>`SELECT note FROM notes WHERE run_id = ${runId} AND kind = ${kind} ORDER BY rowid`.pipe(
          query("reading notes"),
          Effect.map((rows) => rows.map((r) => JSON.parse(r.note) as unknown))
        ),
      latestNote: (experimentId, kind) =>
        sql<{ note: string }>`SELECT n.note FROM notes n JOIN runs r ON n.run_id = r.id
          WHERE r.experiment_id = ${experimentId} AND n.kind = ${kind} ORDER BY n.rowid DESC LIMIT 1`.pipe(
          query("reading notes"),
          Effect.map((rows) => (rows[0] ? (JSON.parse(rows[0].note) as unknown) : null))
        ),
      putSpend: (runId, experimentId, cell, spend) =>
        writeSpend(runId, experimentId, cell, spend).pipe(
          Effect.asVoid,
          query("saving a model call's spend")
        ),
      spendOf: (of) =>
        ("runId" in of
          ? sql<SpendSums>`SELECT count(*) AS calls, coalesce(sum(cost_usd), 0) AS known, count(*) - count(cost_usd) AS unknown,
              coalesce(sum(input_tokens + cache_read_tokens + cache_write_tokens), 0) AS input, coalesce(sum(output_tokens), 0) AS output
              FROM spend WHERE run_id = ${of.runId}`
          : sql<SpendSums>`SELECT count(*) AS calls, coalesce(sum(cost_usd), 0) AS known, count(*) - count(cost_usd) AS unknown,
              coalesce(sum(input_tokens + cache_read_tokens + cache_write_tokens), 0) AS input, coalesce(sum(output_tokens), 0) AS output
              FROM spend WHERE experiment_id = ${of.experimentId}`).pipe(
          query("reading spend"),
          Effect.map((rows) => {
            const r = rows[0]
            return {
              calls: Number(r?.calls ?? 0),
              knownUsd: Number(r?.known ?? 0),
              unknownCalls: Number(r?.unknown ?? 0),
              inputTokens: Number(r?.input ?? 0),
              outputTokens: Number(r?.output ?? 0)
            }
          })
        ),
      unsettledOf: (experimentId, options = {}) =>
        Effect.gen(function*() {
          const wallets: ReadonlyMap<string, number> = yield* sql.onDialectOrElse({
          // Shared wallets live beside a Postgres store only (the cluster's workers make them).
          pg: () =>
            Effect.gen(function*() {
              const runs = yield* sql<{ id: string; finished_at: string | null }>`SELECT id, finished_at FROM runs WHERE experiment_id = ${experimentId}`
              const over = new Set(runs.filter((r) => r.finished_at !== null || r.id === options.ending).map((r) => SpendCap.walletIdOfRun(r.id)))
              const byWallet = yield* SpendCap.unsettledOfWallets(sql, runs.map((r) => SpendCap.walletIdOfRun(r.id)), over)
              const out = new Map<string, number>()
              for (const r of runs) {
                const usd = byWallet.get(SpendCap.walletIdOfRun(r.id)) ?? 0
                if (usd > 0) out.set(r.id, usd)
              }
              return out as ReadonlyMap<string, number>
            }),
          orElse: () => Effect.succeed(new Map<string, number>() as ReadonlyMap<string, number>)
          })
          // A run's reservations left without their spend row: its calls in flight when it was killed or interrupted.
          const reserved = yield* sql<{ run_id: string; usd: number }>`SELECT run_id, sum(usd) AS usd FROM reservations
            WHERE experiment_id = ${experimentId} GROUP BY run_id`
          const out = new Map(wallets)
          for (const r of reserved) if (Number(r.usd) > 0) out.set(r.run_id, (out.get(r.run_id) ?? 0) + Number(r.usd))
          return out as ReadonlyMap<string, number>
        }).pipe(query("reading unsettled spend")),
      derived: (key) =>
        sql<{ value: string }>`SELECT value FROM derived WHERE key = ${key}`.pipe(
          query("reading derived figures"),
          Effect.map((rows) => rows[0]?.value ?? null)
        ),
      putDerived: (key, text) =>
        sql`INSERT INTO derived (key, value, created_at) VALUES (${key}, ${text}, ${now()})
          ON CONFLICT (key) DO UPDATE SET value = excluded.value, created_at = excluded.created_at`.pipe(Effect.asVoid, query("saving derived figures"))
    }
    return store
  })

interface CellIndexRow {
  readonly cell: string
  readonly attempt_id: string
  readonly run_id: string
  readonly inputs_id: string
  readonly ended: string | null
  readonly summary: string
}

/** How an Attempt ended, as classifying reads it: a fault met live (an outage) and a provider's failure are told apart. */
const endedColumn = (attempt: Attempt): string | null => {
  const ended = attempt.verdict.ended
  if (ended === null) return null
  // A cell the benchmark's own code failed runs again: the fix may not change its content id.
  if (ended.provider !== undefined) return "provider-failed"
  return ended.reason === "fault" && ended.injected === false ? "fault-live" : ended.reason
}

interface SpendSums {
  readonly calls: number
  readonly known: number
  readonly unknown: number
  readonly input: number
  readonly output: number
}

const rowToRun = (row: { id: string; experiment_id: string; settings: string; started_at: string; finished_at: string | null; summary: string | null }): RunRecord => ({
  id: row.id,
  experimentId: row.experiment_id,
  settings: JSON.parse(row.settings) as unknown,
  startedAt: row.started_at,
  finishedAt: row.finished_at,
  summary: row.summary === null ? null : (JSON.parse(row.summary) as unknown)
})

export interface LayerOptions {
  /**
   * Open the store read-only: nothing is written, and it fails when the schema would need
   * migrating. Absent, the store is read-only only when the folder or the file is not writable.
   */
  readonly readOnly?: boolean
  /**
   * Bring an older schema up to date (the default). False: a store of an older schema is refused
   * with the command that upgrades it, as a read-only one is; only `run`, under the home's lock,
   * migrates.
   */
  readonly migrate?: boolean
}

/**
 * A store that is not to be migrated is read as it is: one made by an older assay is refused,
 * naming the command that upgrades it. (`readOnly`: it could not be upgraded here anyway.)
 */
const requireCurrentSchema = (file: string, readOnly: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const known = yield* migrations
    const needed = Math.max(0, ...known.map(([id]) => id))
    const table = yield* sql.onDialectOrElse({
      pg: () => sql<{ n: number }>`SELECT CASE WHEN to_regclass('effect_sql_migrations') IS NULL THEN 0 ELSE 1 END AS n`,
      orElse: () => sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'effect_sql_migrations'`
    })
    const rows = (table[0]?.n ?? 0) > 0 ? yield* sql<{ id: number | null }>`SELECT MAX(migration_id) AS id FROM effect_sql_migrations` : []
    const current = rows[0]?.id ?? 0
    if (current < needed) {
      return yield* new StoreError({
        reason: readOnly ? "read-only" : "older",
        detail: `the store ${file} was written by an older assay (schema ${current}, this one reads ${needed}); plan, report, replay and view ` +
          `never upgrade it: \`assay run … --yes\` on this home upgrades it`
      })
    }
  })

/**
 * A writer marks an unmarked store as assay's (one an older assay made): the header's application
 * id, which tells it apart from any other SQLite file without reading its tables.
 */
const markAsAssays = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql.unsafe<{ application_id: number }>("PRAGMA application_id")
  if (Number(rows[0]?.application_id ?? 0) !== Home.APPLICATION_ID) yield* sql.unsafe(`PRAGMA application_id = ${Home.APPLICATION_ID}`)
})

/**
 * The store of a home folder, migrated to the current schema (created if absent). A store file
 * that is empty, not SQLite, truncated or corrupt fails with reason "damaged" and is left as it
 * is. Read-only (asked for, or a folder or file that is not writable) reads without writing.
 */
export const layer = (home: string, options: LayerOptions = {}): Layer.Layer<Store, StoreError> => {
  const dir = resolve(home)
  return Layer.unwrapScoped(
    Effect.map(Home.examineStore(dir, options), (access) => {
      // A read-only connection must not switch the journal mode: that writes the file's header.
      const client = Sqlite.layer({ filename: access.filename, readonly: access.readonly, disableWAL: access.readonly })
      const schema = Layer.effectDiscard(
        access.readonly || options.migrate === false
          ? requireCurrentSchema(access.file, access.readonly)
          : Effect.zipRight(Migrator.make({})({ loader: migrations }), markAsAssays)
      )
      return Layer.effect(Store, make(dir, access.readonly)).pipe(Layer.provide(schema), Layer.provide(client))
    })
  ).pipe(
    Layer.mapError((e) =>
      e instanceof StoreError
        ? e
        : e instanceof Home.HomeError
        ? new StoreError({ reason: e.reason === "damaged" || e.reason === "foreign" || e.reason === "read-only" ? e.reason : "open", detail: e.message })
        : new StoreError({ reason: "open", detail: `cannot open the store in ${dir}: ${e.message}` })
    )
  )
}

/** Whether a `--store` value names a Postgres server (the only kind of URL a store can be). */
export const isPostgresUrl = (location: string): boolean => /^postgres(ql)?:\/\//.test(location)

/** A Postgres URL as it may be shown: the password, if any, replaced. */
export const redactUrl = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.password !== "") u.password = "***"
    return u.toString()
  } catch {
    // Not a URL: shown as given, but for anything between // and @ (where a password would be).
    return url.replace(/\/\/[^/]*@/, "//***@")
  }
}

/**
 * The connection pool of a Postgres store; a worker's cluster tables share the same server. Typed
 * as the generic SqlClient so the package's declarations never name @effect/sql-pg (whose types
 * need `pg`'s and the DOM's): a library user who never opens Postgres needs neither.
 */
export const postgresClient = (url: string): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.unwrapEffect(
    Effect.map(Effect.promise(() => import("@effect/sql-pg")), (m) =>
      m.PgClient.layer({ url: Redacted.make(url), applicationName: "assay", maxConnections: 20, connectTimeout: "30 seconds" }))
  )

/**
 * Migrations on a shared server: two workers starting at once must not both create the tables.
 * The Migrator locks its own table, which does not exist yet on a fresh database, so an advisory
 * lock (held to the end of the transaction) comes first, and the table is made under it, in the
 * Migrator's own shape (its probe for the table would otherwise fail and abort the transaction).
 */
const migratePostgres = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(4242001)`
    yield* sql`CREATE TABLE IF NOT EXISTS effect_sql_migrations (
      migration_id integer primary key, created_at timestamp with time zone not null default now(), name text not null)`
    yield* Migrator.make({})({ loader: migrations })
  }).pipe(sql.withTransaction)
})

/**
 * The store in a Postgres database (`postgres://user:password@host:port/db`), migrated to the
 * current schema. `home` is the local folder for what is kept beside the store (each run's
 * results.jsonl). Read-only: nothing is written, and it fails when the schema would need migrating.
 */
export const layerPostgres = (url: string, home: string, options: LayerOptions = {}): Layer.Layer<Store, StoreError> => {
  const shown = redactUrl(url)
  const schema = Layer.effectDiscard(
    options.readOnly === true || options.migrate === false ? requireCurrentSchema(shown, options.readOnly === true) : migratePostgres
  )
  return Layer.effect(Store, make(resolve(home), options.readOnly === true)).pipe(
    Layer.provide(schema),
    Layer.provide(postgresClient(url)),
    Layer.mapError((e) => (e instanceof StoreError ? e : openError(url, e)))
  )
}

/** A Postgres store that could not be opened, named by its URL without the password, with the cause. */
export const openError = (url: string, e: unknown): StoreError =>
  new StoreError({ reason: "open", detail: `cannot open the store at ${redactUrl(url)}: ${withCause(e)}` })

/** Where a command's store is: a Postgres URL (`--store`, `ASSAY_STORE`), else the home's SQLite file. */
export interface Location {
  readonly home: string
  readonly store?: string | null | undefined
}

/** The store a command names: Postgres when given a URL, else the home's own SQLite file. */
export const layerAt = (at: Location, options: LayerOptions = {}): Layer.Layer<Store, StoreError> =>
  at.store !== undefined && at.store !== null && at.store !== "" ? layerPostgres(at.store, at.home, options) : layer(at.home, options)
