/**
 * The pinned upstream airline files, read from `$ASSAY_DATA_DIR/tau2/airline/` and checked
 * against the sha256 recorded here (from ../shared/data/tau2/airline/SOURCE.md), then decoded:
 * db.json becomes the initial World, in db.json order, every record in pydantic field order.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { type Canonical, type PinnedData, World } from "../../../src/index.ts"
import { dataRoot, type FileReader, filesAt, type PinnedFile } from "../common/pinned.ts"
import { dbDomainFiles, type DbDomainData, loadDbDomainFiles, type Splits } from "../common/dbDomain.ts"
import { type PreparedDomain } from "../common/prepared.ts"
import { Flight, orderFlight, orderReservation, orderUser, Reservation, User } from "./model.ts"

export { dataRoot }

/** A pinned file; its `name` is a path under `$ASSAY_DATA_DIR/`. */
export type { PinnedFile }

export const pinnedFiles = dbDomainFiles("tau2/airline/", "airline", {
  db: "1af9fea6e03ca7ca15a22bb3fcaf3e351393e3fc9070b6777947da8996f7531b",
  tasks: "ccd8ba737b4cc371415af70151187788f728d6108d0916e73bb4317b40542052",
  policy: "10dc0525421521208be39cee235bba84a16e2bcba9899eb93d92cd81d2f62fc4",
  splits: "b22ced4d9a9850ac9aea31c53bdcb6d6009058140bd9acc7db37c1d36222ba8b",
  // Generated from upstream code at the revision; see airline/oracle/README.md.
  tools: "253e8390342cad1e556cfb04caec41815dcf9fa788dbbf5f6db0c870c9983cbb",
  toolTypes: "2a0fdf9a0a4ca590f9cf8b7491ec177567d8fb96c44f9b4fc49ce9e70c147f0e"
})

/** Airline's files (named under the data root) in a data folder, the data root unless given. */
export const filesIn = (dataDir?: string): FileReader => filesAt("tau2-airline", dataDir)

/** One pinned file's text, its hash checked. */
export const readPinned = (file: PinnedFile, dataDir?: string): Effect.Effect<string, PinnedData.DataError> => filesIn(dataDir).text(file)

const isObject = (v: unknown): v is { readonly [key: string]: unknown } => v !== null && typeof v === "object" && !Array.isArray(v)

/**
 * db.json text to the initial World (tables flights, users, reservations). Flights and users keep
 * db.json order (searches list flights in it); `JSON.parse` moves the one integer-like reservation
 * id (`429815`) first, which nothing observes: no tool lists reservations and the hashes sort keys.
 */
export const worldFromDbText = (text: string): Either.Either<World.World, string> => {
  let root: unknown
  try {
    root = JSON.parse(text)
  } catch (e) {
    return Either.left(`JSON syntax: ${String(e)}`)
  }
  if (!isObject(root)) return Either.left("the DB is not an object")
  const tables = [
    ["flights", Flight, orderFlight],
    ["users", User, orderUser],
    ["reservations", Reservation, orderReservation]
  ] as const
  let world = World.make({ flights: {}, users: {}, reservations: {} })
  for (const [name, schema, order] of tables) {
    const table = root[name]
    if (!isObject(table)) return Either.left(`the DB needs an object ${name}`)
    const decode = Schema.decodeUnknownEither(schema as Schema.Schema<unknown, unknown>)
    for (const key of Object.keys(table)) {
      const value = table[key]
      if (!isObject(value)) return Either.left(`${name}.${key} is not an object`)
      let record: unknown
      try {
        record = order(value)
      } catch (e) {
        return Either.left(`${name}.${key}: not a ${name} record (${String(e)})`)
      }
      const decoded = decode(record)
      if (Either.isLeft(decoded)) return Either.left(`${name}.${key}: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`)
      world = World.set(world, name, key, record as Canonical.Json)
    }
  }
  return Either.right(world)
}

/** A record from its own text, after the full parse checked the file (a prepared form is used only for the text it was checked from). */
const orderedRecord = (order: (value: { readonly [key: string]: unknown }) => Record<string, unknown>) => (text: string): Canonical.Json =>
  order(JSON.parse(text) as { readonly [key: string]: unknown }) as Canonical.Json

/** Airline's world for common/prepared.ts: the full parse, and each table's record loader. */
export const airlineWorld: PreparedDomain = {
  kind: "tau2-airline",
  full: worldFromDbText,
  records: { flights: orderedRecord(orderFlight), users: orderedRecord(orderUser), reservations: orderedRecord(orderReservation) }
}

export type { Splits }

export type AirlineData = DbDomainData

/** Every airline file through `read`, hash-checked and decoded. */
export const loadAirlineFrom = (read: FileReader): Effect.Effect<AirlineData, PinnedData.DataError> => loadDbDomainFiles(pinnedFiles, read, airlineWorld)

/** Every airline file in a data folder (the data root unless given), hash-checked and decoded. */
export const loadAirlineData = (dataDir?: string): Effect.Effect<AirlineData, PinnedData.DataError> => loadAirlineFrom(filesIn(dataDir))
