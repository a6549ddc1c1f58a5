/**
 * Upstream's two hashes of the airline DB, computed from a World: both hash the pydantic
 * `FlightDB.model_dump()` (every field, `status` of a reservation as null, gift-card and
 * certificate amounts as floats). They serialize the whole DB (7 MB), so they serve equivalence
 * with upstream; the evaluator compares `World.digest`, kept along the structure. Each record's
 * text is cached by the (immutable) record value, so hashing a world that shares most records
 * with one already hashed serializes only what changed.
 */
import { createHash } from "node:crypto"
import { World } from "../../../src/index.ts"
import { compactFormat, type DumpFormat, pythonDefaultFormat, recordText } from "../common/dbHash.ts"
import { compareCodePoints, dict, dumps, type PyDict } from "../common/pyjson.ts"
import { dumpFlight, dumpReservation, dumpUser, type Flight, type Reservation, type User } from "./model.ts"

/** The tables, in the sorted order `sort_keys` writes them. */
const tables: ReadonlyArray<readonly [string, (record: never) => PyDict]> = [
  ["flights", (f: Flight) => dumpFlight(f)],
  ["reservations", (r: Reservation) => dumpReservation(r)],
  ["users", (u: User) => dumpUser(u)]
]

/** `FlightDB.model_dump()`: flights, users, reservations, each in world order. */
export const modelDump = (world: World.World): PyDict =>
  dict(
    (["flights", "users", "reservations"] as const).map((name) => {
      const dump = tables.find(([t]) => t === name)![1]
      return [name, dict(World.entries(world, name).map(([k, v]) => [k, dump(v as never)] as const))] as const
    })
  )

const compact = compactFormat()
const pythonDefault = pythonDefaultFormat()

// World.entries is cached per table value, so an unchanged table is sorted once.
const sortedCache = new WeakMap<object, ReadonlyArray<readonly [string, unknown]>>()
const sortedEntries = (entries: ReadonlyArray<readonly [string, unknown]>): ReadonlyArray<readonly [string, unknown]> => {
  let sorted = sortedCache.get(entries)
  if (sorted === undefined) {
    sorted = [...entries].sort((a, b) => compareCodePoints(a[0], b[0]))
    sortedCache.set(entries, sorted)
  }
  return sorted
}

/** `json.dumps(model_dump(), sort_keys=True, ...)` streamed into a hash, record by record. */
const hashDump = (world: World.World, format: DumpFormat): string => {
  const [itemSep, keySep] = format.options.separators ?? [", ", ": "]
  const key = (k: string) => dumps(k, format.options)
  const hash = createHash("sha256")
  hash.update("{")
  tables.forEach(([name, dump], t) => {
    if (t > 0) hash.update(itemSep)
    hash.update(key(name) + keySep + "{")
    sortedEntries(World.entries(world, name)).forEach(([k, v], i) => {
      hash.update((i > 0 ? itemSep : "") + key(k) + keySep + recordText(format, v, () => dump(v as never)), "utf8")
    })
    hash.update("}")
  })
  hash.update("}")
  return hash.digest("hex")
}

/** The oracle's canonical hash: sorted keys, compact separators, UTF-8 unescaped. */
export const finalDbSha256 = (world: World.World): string => hashDump(world, compact)

/** `Environment.get_db_hash()`: `json.dumps(d, sort_keys=True, default=str)`, ASCII-escaped. */
export const upstreamDbHash = (world: World.World): string => hashDump(world, pythonDefault)
