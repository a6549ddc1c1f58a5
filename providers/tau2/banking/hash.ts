/**
 * Upstream's two hashes of the banking DB, from a World: both hash `TransactionalDB.model_dump()`,
 * i.e. `{table: {"data": {...}, "notes": str}}` for all 23 tables, with sorted keys, so record
 * key order does not matter here. Each record's text is cached by the (immutable) record value.
 */
import { createHash, type Hash } from "node:crypto"
import type { Json } from "../../../src/content/Canonical.ts"
import * as World from "../../../src/world/World.ts"
import { compareCodePoints, dumps, type DumpsOptions } from "../common/pyjson.ts"
import { tableNames, type Notes } from "./data.ts"
import { toPyValue } from "./pyvalue.ts"

interface Format {
  readonly options: DumpsOptions
  readonly cache: WeakMap<object, string>
}

const compact: Format = { options: { sortKeys: true, separators: [",", ":"], ensureAscii: false }, cache: new WeakMap() }
const pythonDefault: Format = { options: { sortKeys: true }, cache: new WeakMap() }

const sortedTables = [...tableNames].sort(compareCodePoints)

const hashDump = (world: World.World, notes: Notes, format: Format): string => {
  const [itemSep, keySep] = format.options.separators ?? [", ", ": "]
  const key = (k: string) => dumps(k, format.options)
  const hash: Hash = createHash("sha256")
  hash.update("{")
  sortedTables.forEach((name, t) => {
    if (t > 0) hash.update(itemSep)
    hash.update(key(name) + keySep + "{" + key("data") + keySep + "{")
    const records = [...World.entries(world, name)].sort((a, b) => compareCodePoints(a[0], b[0]))
    records.forEach(([k, v], i) => {
      let text = format.cache.get(v as object)
      if (text === undefined) {
        text = dumps(toPyValue(v as Json), format.options)
        format.cache.set(v as object, text)
      }
      hash.update((i > 0 ? itemSep : "") + key(k) + keySep + text, "utf8")
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
