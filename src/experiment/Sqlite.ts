/**
 * The SQLite client every store and home check opens, in one place: the runtime decides which
 * driver backs it (better-sqlite3 under Node today), so the store's code never names a driver.
 */
import type { SqlClient } from "@effect/sql"
import type { ConfigError } from "effect/ConfigError"
import type { SqlError } from "@effect/sql/SqlError"
import { SqliteClient } from "@effect/sql-sqlite-node"
import type { Layer } from "effect"

export interface Options {
  readonly filename: string
  readonly readonly?: boolean
  /** Leave the journal mode alone: a read-only connection must not write the file's header. */
  readonly disableWAL?: boolean
}

/** An `SqlClient` over the SQLite file at `filename`. */
export const layer = (options: Options): Layer.Layer<SqlClient.SqlClient, ConfigError | SqlError> =>
  SqliteClient.layer({ filename: options.filename, readonly: options.readonly, disableWAL: options.disableWAL })
