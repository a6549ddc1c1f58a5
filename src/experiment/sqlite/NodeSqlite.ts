/**
 * An `SqlClient` over `node:sqlite` (`DatabaseSync`), the SQLite built into the runtime: the store's
 * driver under Deno, which cannot load better-sqlite3 (not a Node-API addon). It mirrors
 * `@effect/sql-sqlite-node`'s client: one synchronous connection behind a semaphore, WAL unless
 * disabled, prepared statements cached, integers read as numbers, and a query's rows streamed from `iterate()`. Loaded only by `../Sqlite.ts` under
 * Deno (Node 20 has no `node:sqlite`), so nothing here is imported under Node.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as Client from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import { Cache, Chunk, Duration, Effect, Layer, Option, Scope, Stream } from "effect"

/** The part of `node:sqlite` used here (@types/node 20 does not describe the module). */
interface StatementSync {
  readonly all: (...params: ReadonlyArray<unknown>) => ReadonlyArray<object>
  readonly iterate: (...params: ReadonlyArray<unknown>) => IterableIterator<object>
  readonly run: (...params: ReadonlyArray<unknown>) => { readonly changes: number | bigint; readonly lastInsertRowid: number | bigint }
  readonly columns: () => ReadonlyArray<unknown>
  readonly setReturnArrays: (enabled: boolean) => void
}
interface DatabaseSync {
  readonly exec: (sql: string) => void
  readonly prepare: (sql: string) => StatementSync
  readonly close: () => void
}
interface NodeSqliteModule {
  readonly DatabaseSync: new(path: string, options: { readonly readOnly: boolean }) => DatabaseSync
}

export interface Options {
  readonly filename: string
  readonly readonly?: boolean | undefined
  readonly disableWAL?: boolean | undefined
}

// node:sqlite's errors carry only `code: "ERR_SQLITE_ERROR"` and SQLite's own message; the home's
// checks (and better-sqlite3's errors) speak in SQLite's code names, so the name is recovered from
// the message, which SQLite fixes per code (sqlite3ErrStr).
const codeOfMessage: ReadonlyArray<readonly [string, string]> = [
  ["database disk image is malformed", "SQLITE_CORRUPT"],
  ["file is not a database", "SQLITE_NOTADB"],
  ["unable to open database file", "SQLITE_CANTOPEN"],
  ["database is locked", "SQLITE_BUSY"],
  ["database table is locked", "SQLITE_LOCKED"],
  ["attempt to write a readonly database", "SQLITE_READONLY"],
  ["disk I/O error", "SQLITE_IOERR"],
  ["database or disk is full", "SQLITE_FULL"],
  ["constraint failed", "SQLITE_CONSTRAINT"],
  ["UNIQUE constraint failed", "SQLITE_CONSTRAINT_UNIQUE"],
  ["no such table", "SQLITE_ERROR"]
]

/** The error as better-sqlite3 would have it: SQLite's code name in `code`, the message kept. */
const sqliteError = (cause: unknown): unknown => {
  if (!(cause instanceof Error)) return cause
  const found = codeOfMessage.find(([text]) => cause.message.startsWith(text))
  if (found === undefined) return cause
  return Object.assign(new Error(cause.message, { cause }), { code: found[1] })
}

/** Rows taken from SQLite per pull of a stream. */
const streamChunkSize = 128

const fail = (message: string) => (cause: unknown) => new SqlError({ cause: sqliteError(cause), message })

const loadModule = Effect.promise(async () => {
  // Named through a variable: the type checker under Node 20 knows no "node:sqlite".
  const name = "node:sqlite"
  return (await import(name)) as NodeSqliteModule
})

const make = (options: Options) =>
  Effect.gen(function*() {
    const { DatabaseSync } = yield* loadModule
    // Like better-sqlite3, a file that cannot be opened throws here: a defect of the layer, whose
    // SQLite code the home's checks read (Home.ts).
    const db = (() => {
      try {
        return new DatabaseSync(options.filename, { readOnly: options.readonly ?? false })
      } catch (cause) {
        throw sqliteError(cause)
      }
    })()
    yield* Effect.addFinalizer(() => Effect.sync(() => db.close()))
    // better-sqlite3's default: wait up to 5 s for another process's lock rather than fail at once.
    db.exec("PRAGMA busy_timeout = 5000")
    if (options.disableWAL !== true) db.exec("PRAGMA journal_mode = WAL")

    const prepared = yield* Cache.make({
      capacity: 200,
      timeToLive: Duration.minutes(10),
      lookup: (sql: string) => Effect.try({ try: () => db.prepare(sql), catch: fail("Failed to prepare statement") })
    })

    // A statement returns rows when it has result columns (SELECT, PRAGMA, ... RETURNING).
    const runStatement = (statement: StatementSync, params: ReadonlyArray<unknown>, raw: boolean) =>
      Effect.try({
        try: (): ReadonlyArray<object> | unknown => {
          if (statement.columns().length > 0) return statement.all(...params)
          const result = statement.run(...params)
          return raw ? result : []
        },
        catch: fail("Failed to execute statement")
      })

    const rows = (sql: string, params: ReadonlyArray<unknown>) =>
      Effect.flatMap(prepared.get(sql), (s) => runStatement(s, params, false) as Effect.Effect<ReadonlyArray<object>, SqlError>)

    const values = (sql: string, params: ReadonlyArray<unknown>) =>
      Effect.acquireUseRelease(
        Effect.tap(prepared.get(sql), (s) => Effect.sync(() => s.setReturnArrays(true))),
        (s) => runStatement(s, params, false) as Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError>,
        (s) => Effect.sync(() => s.setReturnArrays(false))
      )

    // Rows one chunk at a time from `StatementSync.iterate()`, each chunk through the same row
    // transform as `execute`. The statement is prepared for this stream alone: a cached one may be
    // run by another query between two pulls, which would reset this stream's cursor. The stream
    // does not hold the connection between pulls, so its consumer may write as it reads (a pull
    // that runs while another fiber's transaction holds the connection reads as that transaction
    // does, one connection being one view); ending it early, or failing, resets the statement.
    const stream = (
      sql: string,
      params: ReadonlyArray<unknown>,
      transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
    ): Stream.Stream<object, SqlError> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const statement = yield* Effect.try({ try: () => db.prepare(sql), catch: fail("Failed to prepare statement") })
        const rowsOf = yield* Effect.acquireRelease(
          Effect.try({ try: () => statement.iterate(...params), catch: fail("Failed to execute statement") }),
          (iterator) => Effect.sync(() => iterator.return?.())
        )
        // A step that throws ends the stream with an SqlError, after the rows read before it. Deno
        // 2.9's iterator does not throw: its next() takes a failed step (a runtime error, a damaged
        // page, SQLITE_BUSY) for the end and discards SQLite's error, so under Deno such a stream
        // ends early without one (test/deno/store.test.ts pins this); `execute` (all()) reports it.
        let failed: SqlError | undefined
        const pull = Effect.suspend((): Effect.Effect<Chunk.Chunk<object>, Option.Option<SqlError>> => {
          if (failed !== undefined) return Effect.fail(Option.some(failed))
          const chunk: Array<object> = []
          try {
            while (chunk.length < streamChunkSize) {
              const next = rowsOf.next()
              if (next.done === true) break
              chunk.push(next.value)
            }
          } catch (cause) {
            failed = fail("Failed to execute statement")(cause)
            if (chunk.length === 0) return Effect.fail(Option.some(failed))
          }
          if (chunk.length === 0) return Effect.fail(Option.none())
          return Effect.succeed(Chunk.unsafeFromArray(transformRows ? transformRows(chunk) : chunk))
        })
        return Stream.repeatEffectChunkOption(pull)
      }))

    // `Connection`'s row type is `any` (the library's); rows are cast where the store asks for a shape.
    const connection: Connection = {
      execute: (sql, params, transformRows) => (transformRows ? Effect.map(rows(sql, params), transformRows) : rows(sql, params)),
      executeRaw: (sql, params) => Effect.flatMap(prepared.get(sql), (s) => runStatement(s, params, true)),
      executeValues: values,
      executeUnprepared: (sql, params, transformRows) => {
        const run = Effect.flatMap(
          Effect.try({ try: () => db.prepare(sql), catch: fail("Failed to prepare statement") }),
          (s) => runStatement(s, params ?? [], false) as Effect.Effect<ReadonlyArray<object>, SqlError>
        )
        return transformRows ? Effect.map(run, transformRows) : run
      },
      executeStream: stream
    }

    const semaphore = yield* Effect.makeSemaphore(1)
    const acquirer = semaphore.withPermits(1)(Effect.succeed(connection))
    // A transaction holds the one connection until it ends, as in @effect/sql-sqlite-node.
    const transactionAcquirer = Effect.uninterruptibleMask((restore) =>
      Effect.as(
        Effect.zipRight(restore(semaphore.take(1)), Effect.tap(Effect.scope, (scope) => Scope.addFinalizer(scope, semaphore.release(1)))),
        connection
      )
    )
    return yield* Client.make({
      acquirer,
      transactionAcquirer,
      compiler: Statement.makeCompilerSqlite(),
      spanAttributes: [["db.system.name", "sqlite"]],
      // Takes the write lock at the start: a transaction never fails half-way on upgrading its lock.
      beginTransaction: "BEGIN IMMEDIATE"
    })
  })

/** An `SqlClient` over the SQLite file at `options.filename`, closed with the layer. */
export const layer = (options: Options): Layer.Layer<Client.SqlClient> =>
  Layer.scoped(Client.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))
