/**
 * Upstream's two hashes of the banking DB, from a World: both hash `TransactionalDB.model_dump()`,
 * i.e. `{table: {"data": {...}, "notes": str}}` for all 23 tables, with sorted keys, so record
 * key order does not matter here. Each record's text is cached by the (immutable) record value.
 */
import { createHash, type Hash } from "node:crypto"
import { type Canonical, World } from "../../../src/index.ts"
import { compactFormat, type DumpFormat, pythonDefaultFormat, recordText } from "../common/dbHash.ts"
import { compareCodePoints, dumps } from "../common/pyjson.ts"
import { tableNames, type Notes } from "./data.ts"
import { toPyValue } from "./pyvalue.ts"

const compact = compactFormat()
const pythonDefault = pythonDefaultFormat()

const sortedTables = [...tableNames].sort(compareCodePoints)

const hashDump = (world: World.World, notes: Notes, format: DumpFormat): string => {
  const [itemSep, keySep] = format.options.separators ?? [", ", ": "]
  const key = (k: string) => dumps(k, format.options)
  const hash: Hash = createHash("sha256")
  hash.update("{")
  sortedTables.forEach((name, t) => {
    if (t > 0) hash.update(itemSep)
    hash.update(key(name) + keySep + "{" + key("data") + keySep + "{")
    const records = [...World.entries(world, name)].sort((a, b) => compareCodePoints(a[0], b[0]))
    records.forEach(([k, v], i) => {
      hash.update((i > 0 ? itemSep : "") + key(k) + keySep + recordText(format, v, () => toPyValue(v as Canonical.Json)), "utf8")
    })
    hash.update("}" + itemSep + key("notes") + keySep + key(notes[name]) + "}", "utf8")
  })
  hash.update("}")
  return hash.digest("hex")
}

/** The oracle's canonical hash: sorted keys, compact separators, UTF-8 unescaped. */
export const finalDbSha256 = (world: World.World, notes: Notes): string => hashDump(world, notes, compact)

/** `Environment.get_db_hash()`: `json.dumps(d, sort_keys=True, default=str)`, ASCII-escaped. */
export const upstreamDbHash = (world: World.World, notes: Notes): string => hashDump(world, notes, pythonDefault)
