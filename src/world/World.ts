/**
 * A world is an immutable value: named tables of JSON records, each table a persistent hash map
 * (Effect's HashMap, a HAMT). A write returns a new world that shares every untouched node with
 * the old one, so `fork` is the identity and costs nothing, and `replay` is a fold.
 *
 * The world's digest is kept along the structure: each record carries the hash of its
 * (table, key, canonical value), and a table's digest is the lane-wise sum of its records'
 * hashes. A write adjusts the sum by the old and new record hashes, so comparing two worlds is
 * comparing eight numbers, never re-serializing the world.
 */
import { createHash } from "node:crypto"
import { HashMap, Option, Schema } from "effect"
import { canonicalUnsafe, type Json } from "../content/Canonical.ts"

const LANES = 8

/** Eight 32-bit lanes of a sha256; sums are taken lane by lane modulo 2^32. */
type Lanes = Readonly<Uint32Array>

const zeroLanes: Lanes = new Uint32Array(LANES)

const hashRecord = (table: string, key: string, value: Json): Lanes => {
  const digest = createHash("sha256").update(canonicalUnsafe([table, key, value])).digest()
  const lanes = new Uint32Array(LANES)
  for (let i = 0; i < LANES; i++) lanes[i] = digest.readUInt32BE(i * 4)
  return lanes
}

const addLanes = (a: Lanes, b: Lanes, sign: 1 | -1): Lanes => {
  const out = new Uint32Array(LANES)
  for (let i = 0; i < LANES; i++) out[i] = (a[i]! + sign * b[i]!) >>> 0
  return out
}

interface Entry {
  readonly value: Json
  /** Insertion rank: upstream benchmarks iterate their maps in insertion order. */
  readonly rank: number
  readonly hash: Lanes
}

/**
 * A record of a prepared world (`fromPrepared`): its value is made on first read and its hash on
 * first need (a write over it), then kept. Forks share the entry, so each is made at most once.
 */
class LazyEntry implements Entry {
  private made: Json | undefined
  private load: (() => Json) | undefined
  private lanes: Lanes | undefined
  constructor(
    readonly rank: number,
    private readonly table: string,
    private readonly key: string,
    load: () => Json
  ) {
    this.load = load
  }
  get value(): Json {
    if (this.load !== undefined) {
      this.made = this.load()
      this.load = undefined // the loader (and what it holds) can go
    }
    return this.made as Json
  }
  get hash(): Lanes {
    this.lanes ??= hashRecord(this.table, this.key, this.value)
    return this.lanes
  }
}

interface Table {
  readonly entries: HashMap.HashMap<string, Entry>
  readonly nextRank: number
  readonly digest: Lanes
}

const emptyTable: Table = { entries: HashMap.empty(), nextRank: 0, digest: zeroLanes }

export interface World {
  readonly tables: HashMap.HashMap<string, Table>
  readonly digest: Lanes
}

/** One change to a world: a record set, or removed when `value` is null. */
export const Write = Schema.Struct({
  table: Schema.String,
  key: Schema.String,
  value: Schema.NullOr(Schema.Unknown)
})
export type Write = {
  readonly table: string
  readonly key: string
  readonly value: Json | null
}

export const empty: World = { tables: HashMap.empty(), digest: zeroLanes }

/** A world from plain tables; keys keep the order given; a null record is absent. */
export const make = (tables: Readonly<Record<string, Readonly<Record<string, Json>>>>): World => {
  let tableMap = HashMap.empty<string, Table>()
  let digest = zeroLanes
  for (const [name, records] of Object.entries(tables)) {
    const table = HashMap.mutate(HashMap.empty<string, Entry>(), (m) => {
      let rank = 0
      for (const [key, value] of Object.entries(records)) {
        // null is absence, as for a write: a record made null would digest unlike any written world.
        if (value === null) continue
        HashMap.set(m, key, { value, rank: rank++, hash: hashRecord(name, key, value) })
      }
    })
    let tableDigest = zeroLanes
    for (const entry of HashMap.values(table)) tableDigest = addLanes(tableDigest, entry.hash, 1)
    tableMap = HashMap.set(tableMap, name, { entries: table, nextRank: HashMap.size(table), digest: tableDigest })
    digest = addLanes(digest, tableDigest, 1)
  }
  return { tables: tableMap, digest }
}

/**
 * A world from tables (distinct names) given as entry lists, keys in the order given (whatever they look like:
 * a JS object would list integer-like keys first); a null record is absent, and a key given
 * twice keeps its first place and its last value, as successive `set`s would. Built in place,
 * equal (digest included) to `set`ting each record in turn on empty tables.
 */
export const fromEntries = (tables: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, Json | null]>]>): World => {
  let tableMap = HashMap.empty<string, Table>()
  let digest = zeroLanes
  for (const [name, records] of tables) {
    let rank = 0
    const table = HashMap.mutate(HashMap.empty<string, Entry>(), (m) => {
      for (const [key, value] of records) {
        const old = Option.getOrUndefined(HashMap.get(m, key))
        if (value === null) {
          if (old) HashMap.remove(m, key)
          continue
        }
        HashMap.set(m, key, { value, rank: old ? old.rank : rank++, hash: hashRecord(name, key, value) })
      }
    })
    let tableDigest = zeroLanes
    for (const entry of HashMap.values(table)) tableDigest = addLanes(tableDigest, entry.hash, 1)
    tableMap = HashMap.set(tableMap, name, { entries: table, nextRank: rank, digest: tableDigest })
    digest = addLanes(digest, tableDigest, 1)
  }
  return { tables: tableMap, digest }
}

/** A table's digest as 64 hex digits: what `fromPrepared` is given back for it. */
export const tableDigest = (world: World, table: string): string => lanesHex(tableOf(world, table).digest)

const lanesHex = (lanes: Lanes): string => {
  let hex = ""
  for (const lane of lanes) hex += lane.toString(16).padStart(8, "0")
  return hex
}

const hexLanes = (hex: string): Lanes | undefined => {
  if (!/^[0-9a-f]{64}$/.test(hex)) return undefined
  const lanes = new Uint32Array(LANES)
  for (let i = 0; i < LANES; i++) lanes[i] = Number.parseInt(hex.slice(i * 8, i * 8 + 8), 16)
  return lanes
}

/** A table of a prepared world: its records' loaders in rank order, and the table's digest as `tableDigest` gave it. */
export interface PreparedTable {
  readonly name: string
  readonly digest: string
  /** Distinct keys; each loader returns the record (never null) and is called at most once. */
  readonly records: ReadonlyArray<readonly [string, () => Json]>
}

/**
 * A world whose records are made when first read: the tables' digests are given (as
 * `tableDigest` reported them for the world these records make), so building it costs a map
 * entry per record, no parse and no hash. The caller vouches that the loaders make exactly
 * those records (a prepared form checked when it was written); the world is then equal,
 * digest included, to `fromEntries` of the same records. Undefined when a digest is malformed
 * or a table is named twice.
 */
export const fromPrepared = (tables: ReadonlyArray<PreparedTable>): World | undefined => {
  let tableMap = HashMap.empty<string, Table>()
  let digest = zeroLanes
  for (const { digest: hex, name, records } of tables) {
    const tableDigest = hexLanes(hex)
    if (tableDigest === undefined || HashMap.has(tableMap, name)) return undefined
    const table = HashMap.mutate(HashMap.empty<string, Entry>(), (m) => {
      for (let rank = 0; rank < records.length; rank++) {
        const [key, load] = records[rank]!
        HashMap.set(m, key, new LazyEntry(rank, name, key, load))
      }
    })
    if (HashMap.size(table) !== records.length) return undefined // a key given twice
    tableMap = HashMap.set(tableMap, name, { entries: table, nextRank: records.length, digest: tableDigest })
    digest = addLanes(digest, tableDigest, 1)
  }
  return { tables: tableMap, digest }
}

/** A fork shares the whole structure: worlds are never mutated, so the fork is the value itself. */
export const fork = (world: World): World => world

const tableOf = (world: World, table: string): Table => Option.getOrElse(HashMap.get(world.tables, table), () => emptyTable)

export const get = (world: World, table: string, key: string): Json | undefined =>
  Option.getOrUndefined(Option.map(HashMap.get(tableOf(world, table).entries, key), (e) => e.value))

export const has = (world: World, table: string, key: string): boolean => HashMap.has(tableOf(world, table).entries, key)

export const size = (world: World, table: string): number => HashMap.size(tableOf(world, table).entries)

const orderCache = new WeakMap<Table, ReadonlyArray<readonly [string, Json]>>()

/** A table's records in insertion order (new keys last). Cached per table value. */
export const entries = (world: World, table: string): ReadonlyArray<readonly [string, Json]> => {
  const t = tableOf(world, table)
  const cached = orderCache.get(t)
  if (cached) return cached
  const sorted = Array.from(t.entries).sort((a, b) => a[1].rank - b[1].rank)
  const out = sorted.map(([k, e]) => [k, e.value] as const)
  orderCache.set(t, out)
  return out
}

export const tableNames = (world: World): ReadonlyArray<string> => Array.from(HashMap.keys(world.tables)).sort()

/** Apply one write; the result shares everything else with `world`. */
export const set = (world: World, table: string, key: string, value: Json | null): World => {
  const t = tableOf(world, table)
  const old = Option.getOrUndefined(HashMap.get(t.entries, key))
  let tableDigest = t.digest
  let entriesMap: HashMap.HashMap<string, Entry>
  let nextRank = t.nextRank
  if (old) tableDigest = addLanes(tableDigest, old.hash, -1)
  if (value === null) {
    if (!old) return world
    entriesMap = HashMap.remove(t.entries, key)
  } else {
    const hash = hashRecord(table, key, value)
    tableDigest = addLanes(tableDigest, hash, 1)
    entriesMap = HashMap.set(t.entries, key, { value, rank: old ? old.rank : nextRank++, hash })
  }
  const digest = addLanes(addLanes(world.digest, t.digest, -1), tableDigest, 1)
  return {
    tables: HashMap.set(world.tables, table, { entries: entriesMap, nextRank, digest: tableDigest }),
    digest
  }
}

export const apply = (world: World, writes: ReadonlyArray<Write>): World =>
  writes.reduce((w, write) => set(w, write.table, write.key, write.value), world)

/** Replay is a fold of a step function over actions, from the given world. */
export const replay = <A>(world: World, actions: Iterable<A>, step: (world: World, action: A) => World): World => {
  let w = world
  for (const a of actions) w = step(w, a)
  return w
}

/** The structural digest: equal worlds (as JSON values) have equal digests, in O(1). */
export const digest = (world: World): string => `sha256+:${lanesHex(world.digest)}`

export const equals = (a: World, b: World): boolean => {
  for (let i = 0; i < LANES; i++) if (a.digest[i] !== b.digest[i]) return false
  return true
}

/** The world as plain JSON, tables and records in insertion order. O(n): for export, not for checks. */
export const toJson = (world: World): Record<string, Record<string, Json>> => {
  const out: Record<string, Record<string, Json>> = {}
  for (const name of tableNames(world)) {
    const records: Record<string, Json> = {}
    for (const [k, v] of entries(world, name)) records[k] = v
    out[name] = records
  }
  return out
}
