/**
 * Upstream's two hashes of the retail DB, computed from a World: both hash the pydantic
 * `RetailDB.model_dump()` (every field, optional Order fields as null, money as floats).
 * They serialize the whole DB (2.8 MB), so they serve equivalence with upstream; the evaluator
 * compares `World.digest`, kept along the structure. Each record's text is cached by the
 * (immutable) record value, so hashing a world that shares most records with a hashed one
 * serializes only what changed.
 */
import { createHash, type Hash } from "node:crypto"
import { World } from "../../../src/index.ts"
import { compactFormat, type DumpFormat, pythonDefaultFormat, recordText } from "../common/dbHash.ts"
import { compareCodePoints, dict, dumps, type PyDict } from "../common/pyjson.ts"
import { dumpOrder, dumpProduct, dumpUser, type Order, type Product, type User } from "./model.ts"

const tables: ReadonlyArray<readonly [string, (record: never) => PyDict]> = [
  ["products", (p: Product) => dumpProduct(p)],
  ["users", (u: User) => dumpUser(u)],
  ["orders", (o: Order) => dumpOrder(o)]
]

/** `RetailDB.model_dump()`: products, users, orders, each in world (db.json) order. */
export const modelDump = (world: World.World): PyDict =>
  dict(
    tables.map(([name, dump]) => [name, dict(World.entries(world, name).map(([k, v]) => [k, dump(v as never)] as const))] as const)
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
  const hash: Hash = createHash("sha256")
  hash.update("{")
  const sortedTables = [...tables].sort((a, b) => compareCodePoints(a[0], b[0]))
  sortedTables.forEach(([name, dump], t) => {
    if (t > 0) hash.update(itemSep)
    hash.update(key(name) + keySep + "{")
    const records = sortedEntries(World.entries(world, name))
    records.forEach(([k, v], i) => {
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
