/**
 * A world is an immutable value: named tables of JSON records, each table the records it was
 * built with (a JS Map, never changed after) under the writes made since (a persistent hash map,
 * Effect's HashMap). A write returns a new world that shares the built records and every
 * untouched node of the writes with the old one, so `fork` is the identity and costs nothing, and
 * `replay` is a fold.
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

/**
 * Names how digests are made (the record hash below and Canonical's text). Anything kept beside a
 * digest (a prepared form's table digests) is keyed by it, and reading it costs nothing in a
 * fresh process, where computing a known world's digest to tell would start the hashing code.
 * Change it with the hashing: test/world/World.test.ts pins a fixed world's digest to it.
 */
export const DIGEST_SCHEME = "sha256-lanes8-canonical1"

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
  // Declared only, set in the constructor: a class field is defined one by one on each of the
  // ~1,550 entries a load makes, which costs more than the map holding them in a fresh process.
  declare readonly rank: number
  declare private readonly table: string
  declare private readonly key: string
  declare private made: Json | undefined
  // The table's loader, shared by its entries (one function per table, none per record).
  declare private load: ((rank: number) => Json) | undefined
  declare private lanes: Lanes | undefined
  constructor(rank: number, table: string, key: string, load: (rank: number) => Json) {
    this.rank = rank
    this.table = table
    this.key = key
    this.made = undefined
    this.load = load
    this.lanes = undefined
  }
  get value(): Json {
    if (this.load !== undefined) {
      this.made = this.load(this.rank)
      this.load = undefined // made once; the loader (and what it holds) can go once every entry is
    }
    return this.made as Json
  }
  get hash(): Lanes {
    this.lanes ??= hashRecord(this.table, this.key, this.value)
    return this.lanes
  }
}

/**
 * A table: the records it was built with, in a JS Map (rank order), never changed once the table
 * exists and shared by every world written from it, and the writes made since over them, in a
 * persistent map (null where a built record was removed). Building a table is then a Map insert
 * per record: a HashMap of the 1,550 retail records costs ~25 ms of CPU in a fresh process,
 * before the JIT warms up, against well under a millisecond for the Map.
 */
interface Table {
  readonly built: ReadonlyMap<string, Entry>
  readonly writes: HashMap.HashMap<string, Entry | null>
  readonly size: number
  readonly nextRank: number
  readonly digest: Lanes
}

const emptyTable: Table = { built: new Map(), writes: HashMap.empty(), size: 0, nextRank: 0, digest: zeroLanes }

const builtTable = (built: ReadonlyMap<string, Entry>, nextRank: number, digest: Lanes): Table => ({
  built,
  writes: HashMap.empty(),
  size: built.size,
  nextRank,
  digest
})

/** The table's record at `key`: its latest write, else the one it was built with. */
const lookup = (t: Table, key: string): Entry | undefined => {
  if (HashMap.size(t.writes) > 0) {
    const written = HashMap.get(t.writes, key)
    if (Option.isSome(written)) return written.value ?? undefined
  }
  return t.built.get(key)
}

export interface World {
  /** Never changed once the world exists: a write copies it (a world has a few tables). */
  readonly tables: ReadonlyMap<string, Table>
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

export const empty: World = { tables: new Map(), digest: zeroLanes }

/** A world from plain tables; keys keep the order given; a null record is absent. */
export const make = (tables: Readonly<Record<string, Readonly<Record<string, Json>>>>): World => {
  const tableMap = new Map<string, Table>()
  let digest = zeroLanes
  for (const [name, records] of Object.entries(tables)) {
    const built = new Map<string, Entry>()
    let tableDigest = zeroLanes
    for (const [key, value] of Object.entries(records)) {
      // null is absence, as for a write: a record made null would digest unlike any written world.
      if (value === null) continue
      const hash = hashRecord(name, key, value)
      built.set(key, { value, rank: built.size, hash })
      tableDigest = addLanes(tableDigest, hash, 1)
    }
    tableMap.set(name, builtTable(built, built.size, tableDigest))
    digest = addLanes(digest, tableDigest, 1)
  }
  return { tables: tableMap, digest }
}

/**
 * A record of a world built from given values (`fromEntries`): its hash is made on first need
 * (a write over it, or the table's digest), then kept. A load that is never written to nor
 * compared never hashes its records.
 */
class BuiltEntry implements Entry {
  declare readonly value: Json
  declare readonly rank: number
  declare private readonly table: string
  declare private readonly key: string
  declare private lanes: Lanes | undefined
  constructor(value: Json, rank: number, table: string, key: string) {
    this.value = value
    this.rank = rank
    this.table = table
    this.key = key
    this.lanes = undefined
  }
  get hash(): Lanes {
    this.lanes ??= hashRecord(this.table, this.key, this.value)
    return this.lanes
  }
}

/** A built table whose digest, the sum of its records' hashes, is made when first read. */
class SummedTable implements Table {
  readonly writes: HashMap.HashMap<string, Entry | null> = HashMap.empty()
  readonly size: number
  declare private sum: Lanes | undefined
  constructor(readonly built: ReadonlyMap<string, Entry>, readonly nextRank: number) {
    this.size = built.size
    this.sum = undefined
  }
  get digest(): Lanes {
    if (this.sum === undefined) {
      let sum = zeroLanes
      for (const entry of this.built.values()) sum = addLanes(sum, entry.hash, 1)
      this.sum = sum
    }
    return this.sum
  }
}

/** A world of built tables whose digest is made when first read. */
class SummedWorld implements World {
  declare private sum: Lanes | undefined
  constructor(readonly tables: ReadonlyMap<string, Table>) {
    this.sum = undefined
  }
  get digest(): Lanes {
    if (this.sum === undefined) {
      let sum = zeroLanes
      for (const t of this.tables.values()) sum = addLanes(sum, t.digest, 1)
      this.sum = sum
    }
    return this.sum
  }
}

/**
 * A world from tables (distinct names) given as entry lists, keys in the order given (whatever they look like:
 * a JS object would list integer-like keys first); a null record is absent, and a key given
 * twice keeps its first place and its last value, as successive `set`s would. Built in place,
 * equal (digest included) to `set`ting each record in turn on empty tables. Records are hashed
 * when the digest is first needed (a write, `equals`, `digest`), not here.
 */
export const fromEntries = (tables: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, Json | null]>]>): World => {
  const tableMap = new Map<string, Table>()
  for (const [name, records] of tables) {
    let rank = 0
    // A Map keeps a key's first place when set again, and puts a key deleted and set again last:
    // the order of successive `set`s, so its order is the ranks'.
    const built = new Map<string, Entry>()
    for (const [key, value] of records) {
      const old = built.get(key)
      if (value === null) {
        built.delete(key)
        continue
      }
      built.set(key, new BuiltEntry(value, old ? old.rank : rank++, name, key))
    }
    tableMap.set(name, new SummedTable(built, rank))
  }
  return new SummedWorld(tableMap)
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

/** A table of a prepared world: its keys in rank order, their records' loader, and the table's digest as `tableDigest` gave it. */
export interface PreparedTable {
  readonly name: string
  readonly digest: string
  /** Distinct keys. */
  readonly keys: ReadonlyArray<string>
  /** The record of `keys[rank]` (never null); called at most once per rank. */
  readonly load: (rank: number) => Json
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
  const tableMap = new Map<string, Table>()
  let digest = zeroLanes
  for (const { digest: hex, keys, load, name } of tables) {
    const tableDigest = hexLanes(hex)
    if (tableDigest === undefined || tableMap.has(name)) return undefined
    const built = new Map<string, Entry>()
    for (let rank = 0; rank < keys.length; rank++) {
      const key = keys[rank]!
      built.set(key, new LazyEntry(rank, name, key, load))
    }
    if (built.size !== keys.length) return undefined // a key given twice
    tableMap.set(name, builtTable(built, keys.length, tableDigest))
    digest = addLanes(digest, tableDigest, 1)
  }
  return { tables: tableMap, digest }
}

/** A fork shares the whole structure: worlds are never mutated, so the fork is the value itself. */
export const fork = (world: World): World => world

const tableOf = (world: World, table: string): Table => world.tables.get(table) ?? emptyTable

export const get = (world: World, table: string, key: string): Json | undefined => lookup(tableOf(world, table), key)?.value

export const has = (world: World, table: string, key: string): boolean => lookup(tableOf(world, table), key) !== undefined

export const size = (world: World, table: string): number => tableOf(world, table).size

const orderCache = new WeakMap<Table, ReadonlyArray<readonly [string, Json]>>()

/** A table's records in insertion order (new keys last). Cached per table value. */
export const entries = (world: World, table: string): ReadonlyArray<readonly [string, Json]> => {
  const t = tableOf(world, table)
  const cached = orderCache.get(t)
  if (cached) return cached
  let out: Array<readonly [string, Json]>
  if (HashMap.size(t.writes) === 0) {
    out = Array.from(t.built, ([k, e]) => [k, e.value] as const) // a Map's order is its ranks'
  } else {
    const live: Array<readonly [string, Entry]> = []
    for (const [k, e] of t.built) if (!HashMap.has(t.writes, k)) live.push([k, e])
    for (const [k, e] of t.writes) if (e !== null) live.push([k, e])
    out = live.sort((a, b) => a[1].rank - b[1].rank).map(([k, e]) => [k, e.value] as const)
  }
  orderCache.set(t, out)
  return out
}

export const tableNames = (world: World): ReadonlyArray<string> => Array.from(world.tables.keys()).sort()

/** Apply one write; the result shares everything else with `world`. */
export const set = (world: World, table: string, key: string, value: Json | null): World => {
  const t = tableOf(world, table)
  const old = lookup(t, key)
  let tableDigest = t.digest
  let writes: HashMap.HashMap<string, Entry | null>
  let nextRank = t.nextRank
  let size = t.size
  if (old) tableDigest = addLanes(tableDigest, old.hash, -1)
  if (value === null) {
    if (!old) return world
    // A built record stays in `built` (shared): the write marks it removed.
    writes = t.built.has(key) ? HashMap.set(t.writes, key, null) : HashMap.remove(t.writes, key)
    size--
  } else {
    const hash = hashRecord(table, key, value)
    tableDigest = addLanes(tableDigest, hash, 1)
    writes = HashMap.set(t.writes, key, { value, rank: old ? old.rank : nextRank++, hash })
    if (!old) size++
  }
  const digest = addLanes(addLanes(world.digest, t.digest, -1), tableDigest, 1)
  const tables = new Map(world.tables)
  tables.set(table, { built: t.built, writes, size, nextRank, digest: tableDigest })
  return { tables, digest }
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
