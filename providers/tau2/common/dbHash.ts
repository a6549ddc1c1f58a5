/**
 * What the domains' DB hashes share: upstream hashes `json.dumps(model_dump(), sort_keys=True, ...)`
 * in two forms (the oracle's compact one and `get_db_hash`'s Python default), and each domain
 * streams its records' texts, cached by the (immutable) record value, so a world that shares most
 * records with one already hashed serializes only what changed.
 */
import { createHash } from "node:crypto"
import { World } from "../../../src/index.ts"
import { compareCodePoints, dict, dumps, type DumpsOptions, type PyDict, type PyValue } from "./pyjson.ts"

export interface DumpFormat {
  readonly options: DumpsOptions
  /** Record texts by record value; one cache per format and domain (the text depends on the domain's dump). */
  readonly cache: WeakMap<object, string>
}

/** The oracle's canonical dump: sorted keys, compact separators, UTF-8 unescaped. */
export const compactFormat = (): DumpFormat => ({ options: { sortKeys: true, separators: [",", ":"], ensureAscii: false }, cache: new WeakMap() })

/** `json.dumps(d, sort_keys=True, default=str)`: Python's separators, ASCII-escaped. */
export const pythonDefaultFormat = (): DumpFormat => ({ options: { sortKeys: true }, cache: new WeakMap() })

/** A record's text under `format`, dumped once per record value. */
export const recordText = (format: DumpFormat, record: unknown, dump: () => PyValue): string => {
  let text = format.cache.get(record as object)
  if (text === undefined) {
    text = dumps(dump(), format.options)
    format.cache.set(record as object, text)
  }
  return text
}

/** A table of the DB and its records' pydantic dump. */
export type DumpTable = readonly [name: string, dump: (record: never) => PyDict]

// World.entries is cached per table value, so an unchanged table is sorted once.
const sortedCache = new WeakMap<object, ReadonlyArray<readonly [string, unknown]>>()

/** A table's keys as last met, and their sorted order: a written table mostly keeps its keys, so its sort is reused. */
interface SortMemo {
  readonly keys: ReadonlyArray<string>
  readonly order: ReadonlyArray<number>
}

const sameKeys = (entries: ReadonlyArray<readonly [string, unknown]>, keys: ReadonlyArray<string>): boolean => {
  if (entries.length !== keys.length) return false
  for (let i = 0; i < keys.length; i++) if (entries[i]![0] !== keys[i]) return false
  return true
}

const sortedEntries = (entries: ReadonlyArray<readonly [string, unknown]>, memos: Map<string, SortMemo>, table: string): ReadonlyArray<readonly [string, unknown]> => {
  let sorted = sortedCache.get(entries)
  if (sorted === undefined) {
    const memo = memos.get(table)
    if (memo !== undefined && sameKeys(entries, memo.keys)) {
      sorted = memo.order.map((i) => entries[i]!)
    } else {
      const order = entries.map((_, i) => i).sort((a, b) => compareCodePoints(entries[a]![0], entries[b]![0]))
      memos.set(table, { keys: entries.map(([k]) => k), order })
      sorted = order.map((i) => entries[i]!)
    }
    sortedCache.set(entries, sorted)
  }
  return sorted
}

/** One format's dumped bytes: keys' `key: ` texts by key, records' texts by record value, tables' bodies by sorted entries. */
interface ByteCache {
  readonly keys: Map<string, Buffer>
  readonly records: WeakMap<object, Buffer>
  readonly tables: WeakMap<object, Buffer>
}
const byteCache = (): ByteCache => ({ keys: new Map(), records: new WeakMap(), tables: new WeakMap() })

/** A DB's `model_dump()` and upstream's two hashes of it, for the tables in the DB model's field order. */
export interface DbHashes {
  /** `DB.model_dump()`: each table in world (db.json) order. */
  readonly modelDump: (world: World.World) => PyDict
  /** The oracle's canonical hash: sorted keys, compact separators, UTF-8 unescaped. */
  readonly finalDbSha256: (world: World.World) => string
  /** `Environment.get_db_hash()`: `json.dumps(d, sort_keys=True, default=str)`, ASCII-escaped. */
  readonly upstreamDbHash: (world: World.World) => string
}

/** The hashes of a domain whose DB is `tables` (each record dumped by its table's dump). */
export const dbHashes = (tables: ReadonlyArray<DumpTable>): DbHashes => {
  const sortedTables = [...tables].sort((a, b) => compareCodePoints(a[0], b[0]))
  const memos = new Map<string, SortMemo>()
  /**
   * `json.dumps(model_dump(), sort_keys=True, ...)` hashed from bytes kept per format: each key's
   * `key: ` text, each record value's text, each sorted table's whole body (an unchanged table
   * is hashed from one buffer; a written one is joined again from its records' buffers). Hashing
   * strings, or a record at a time, cost more than the hashing itself.
   */
  const hashDump = (world: World.World, format: DumpFormat, bytes: ByteCache): string => {
    const [itemSep, keySep] = format.options.separators ?? [", ", ": "]
    const sep = Buffer.from(itemSep, "utf8")
    const keyBytes = (k: string): Buffer => {
      let b = bytes.keys.get(k)
      if (b === undefined) {
        b = Buffer.from(dumps(k, format.options) + keySep, "utf8")
        bytes.keys.set(k, b)
      }
      return b
    }
    const hash = createHash("sha256")
    hash.update("{")
    sortedTables.forEach(([name, dump], t) => {
      if (t > 0) hash.update(sep)
      hash.update(keyBytes(name))
      hash.update("{")
      const entries = sortedEntries(World.entries(world, name), memos, name)
      let body = bytes.tables.get(entries)
      if (body === undefined) {
        const parts: Array<Buffer> = []
        for (let i = 0; i < entries.length; i++) {
          const [k, v] = entries[i]!
          let record = bytes.records.get(v as object)
          if (record === undefined) {
            record = Buffer.from(dumps(dump(v as never), format.options), "utf8")
            bytes.records.set(v as object, record)
          }
          if (i > 0) parts.push(sep)
          parts.push(keyBytes(k), record)
        }
        body = Buffer.concat(parts)
        bytes.tables.set(entries, body)
      }
      hash.update(body)
      hash.update("}")
    })
    hash.update("}")
    return hash.digest("hex")
  }
  const compact = compactFormat()
  const pythonDefault = pythonDefaultFormat()
  const compactBytes = byteCache()
  const pythonDefaultBytes = byteCache()
  return {
    modelDump: (world) =>
      dict(tables.map(([name, dump]) => [name, dict(World.entries(world, name).map(([k, v]) => [k, dump(v as never)] as const))] as const)),
    finalDbSha256: (world) => hashDump(world, compact, compactBytes),
    upstreamDbHash: (world) => hashDump(world, pythonDefault, pythonDefaultBytes)
  }
}
