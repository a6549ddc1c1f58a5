/**
 * The SQLite client every store and home check opens, in one place: the runtime decides which
 * driver backs it, so the store's code never names a driver. Under Node, better-sqlite3 (through
 * @effect/sql-sqlite-node); under Deno, which loads only Node-API addons and so not better-sqlite3,
 * the runtime's own `node:sqlite` (./sqlite/NodeSqlite.ts). Both write the same file format, WAL
 * and schema: a home made by one is read and resumed by the other. Each driver is imported only
 * when chosen, so neither runtime loads the other's.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { ConfigError } from "effect/ConfigError"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer } from "effect"

export interface Options {
  readonly filename: string
  readonly readonly?: boolean
  /** Leave the journal mode alone: a read-only connection must not write the file's header. */
  readonly disableWAL?: boolean
}

/** The driver this runtime uses: "node:sqlite" under Deno, "better-sqlite3" under Node. */
export const driver: "node:sqlite" | "better-sqlite3" = "Deno" in globalThis ? "node:sqlite" : "better-sqlite3"

/** An `SqlClient` over the SQLite file at `filename`. */
export const layer = (options: Options): Layer.Layer<SqlClient.SqlClient, ConfigError | SqlError> => {
  const config = { filename: options.filename, readonly: options.readonly, disableWAL: options.disableWAL }
  return Layer.unwrapEffect(
    driver === "node:sqlite"
      ? Effect.promise(() => import("./sqlite/NodeSqlite.ts")).pipe(Effect.map((m) => m.layer(config)))
      : Effect.promise(() => import("@effect/sql-sqlite-node")).pipe(Effect.map((m) => m.SqliteClient.layer(config)))
  )
}
