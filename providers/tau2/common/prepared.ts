/**
 * A DB domain's initial world from db.json, fast after the first time: the first load parses and
 * checks the whole file (the domain's `full` parse), then notes in the user's cache where each
 * record's text stands and each table's digest (a prepared form keyed by the file's sha256).
 * Later loads build the world from that form without parsing: each record is parsed from its own
 * slice of the file when first read (World.fromPrepared), by the domain's record loader. Given
 * the file's bytes (ASCII, as every tau2 DB is), no text is decoded but those slices.
 *
 * A form is written only once it is shown to make the same world: every record loaded from its
 * slice is the full parse's record (the same JSON, key order included). A form is used
 * only when its checksum, key (domain, form version, the file's sha256 and byte length) and spans
 * are right; otherwise the full parse runs, as with no form, so a damaged or stale cache never
 * changes a world.
 */
import { createHash } from "node:crypto"
import { Either } from "effect"
import { type Canonical, DataRoot, World } from "../../../src/index.ts"
import { objectMembers, skipWhitespace } from "./orderedJson.ts"
import { textOf } from "./pinned.ts"

type Json = Canonical.Json

/** The form's layout; a new one (or a change to how records are loaded or hashed) needs a new number. */
const FORM_VERSION = 2

/** One table's record from its text (the slice of db.json holding it) and its key; the domain's full parse makes the same value. */
export type RecordLoader = (text: string, key: string) => Json

export interface PreparedDomain {
  /** Names the cache entries, e.g. "tau2-retail". */
  readonly kind: string
  /** The full parse and check of db.json (every error says where the file is wrong). */
  readonly full: (text: string) => Either.Either<World.World, string>
  /** A loader for every table of the world; a world with another table is not prepared. */
  readonly records: Readonly<Record<string, RecordLoader>>
}

interface FormTable {
  readonly name: string
  readonly digest: string
  readonly keys: ReadonlyArray<string>
  /** start, end of each key's record text, in turn. */
  readonly spans: ReadonlyArray<number>
}

interface Form {
  /** Whether the file is ASCII: then its bytes are its text, and a record's slice of them is decoded alone. */
  readonly ascii: boolean
  readonly tables: ReadonlyArray<FormTable>
}

const isFormTable = (v: unknown, textLength: number): v is FormTable => {
  if (v === null || typeof v !== "object") return false
  const t = v as { name?: unknown; digest?: unknown; keys?: unknown; spans?: unknown }
  if (typeof t.name !== "string" || typeof t.digest !== "string" || !Array.isArray(t.keys) || !Array.isArray(t.spans)) return false
  if (t.spans.length !== 2 * t.keys.length || !t.keys.every((k) => typeof k === "string")) return false
  for (let i = 0; i < t.spans.length; i += 2) {
    const start: unknown = t.spans[i]
    const end: unknown = t.spans[i + 1]
    if (!Number.isInteger(start) || !Number.isInteger(end) || (start as number) < 0 || (end as number) <= (start as number) || (end as number) > textLength) return false
  }
  return true
}

/** A stored form that fits a file of `byteLength` bytes (an ASCII form: as many characters). */
const asForm = (v: unknown, byteLength: number): Form | undefined => {
  if (v === null || typeof v !== "object") return undefined
  const f = v as { ascii?: unknown; tables?: unknown }
  if (typeof f.ascii !== "boolean" || !Array.isArray(f.tables)) return undefined
  // A non-ASCII file's text is shorter than its bytes: its spans are checked against the text once decoded.
  return f.tables.every((t) => isFormTable(t, byteLength)) ? (v as Form) : undefined
}

type Spans = Map<string, Map<string, readonly [number, number]>>

/** Where each table's records stand in the text: db.json is an object of tables, each an object of records. */
export const recordSpans = (text: string): Spans | undefined => {
  const top = objectMembers(text, 0)
  if (top === undefined || skipWhitespace(text, top.end) !== text.length) return undefined
  const out: Spans = new Map()
  for (const table of top.members) {
    const records = objectMembers(text, table.start)
    if (records === undefined || out.has(table.key)) continue // not a table of records, or named twice: not prepared
    const spans = new Map<string, readonly [number, number]>()
    for (const m of records.members) spans.set(m.key, [m.start, m.end])
    if (spans.size === records.members.length) out.set(table.key, spans)
  }
  return out
}

// A member's line in indented JSON: a newline, its indentation, its key's opening quote.
const MEMBER_LINE = /\r?\n( +)"/y
// What may follow a member's value: white space, then a comma or the object's end.
const AFTER_VALUE = /[ \t\r\n]*([,}])/y

/**
 * The members of the object whose `{` is at `open`, in a text indented as json.dump(indent=N)
 * writes it (tau2's DBs are): each member on a line of its own, at one indentation, and a value
 * that spans lines ends on the first later line holding only its closing bracket at that
 * indentation. No JSON string holds a newline, so the platform's indexOf finds that line without
 * reading the strings between, which `recordSpans` steps through one by one (most of its time).
 * Undefined as soon as the text is laid out otherwise. Spans found this way are not trusted
 * alone: `makeForm` loads every record from its slice and compares it with the full parse's.
 */
const indentedMembers = (text: string, open: number): { readonly members: Map<string, readonly [number, number]>; readonly end: number } | undefined => {
  MEMBER_LINE.lastIndex = open + 1
  const first = MEMBER_LINE.exec(text)
  if (first === null) return undefined
  const indent = first[1]!
  const members = new Map<string, readonly [number, number]>()
  let quote = MEMBER_LINE.lastIndex - 1
  for (;;) {
    const keyEnd = text.indexOf('"', quote + 1)
    const key = text.slice(quote + 1, keyEnd)
    if (keyEnd < 0 || key.includes("\\") || members.has(key)) return undefined
    const start = skipWhitespace(text, skipWhitespace(text, keyEnd + 1) + 1)
    if (text.charCodeAt(skipWhitespace(text, keyEnd + 1)) !== 0x3a) return undefined
    const c = text.charCodeAt(start)
    let end: number
    if (c === 0x7b || c === 0x5b) {
      const close = c === 0x7b ? "}" : "]"
      if (text[start + 1] === close) end = start + 2
      else {
        const line = text.indexOf(`\n${indent}${close}`, start)
        if (line < 0) return undefined
        end = line + indent.length + 2
      }
    } else {
      // A scalar: the rest of its line, less the comma after it.
      const line = text.indexOf("\n", start)
      end = line < 0 ? text.length : line
      while (end > start && " \t\r,".includes(text[end - 1]!)) end--
      if (text.charCodeAt(start) === 0x22 && text.slice(start + 1, end - 1).includes('"')) return undefined
    }
    members.set(key, [start, end])
    AFTER_VALUE.lastIndex = end
    const after = AFTER_VALUE.exec(text)
    if (after === null) return undefined
    if (after[1] === "}") return { members, end: AFTER_VALUE.lastIndex }
    MEMBER_LINE.lastIndex = AFTER_VALUE.lastIndex
    const next = MEMBER_LINE.exec(text)
    if (next === null || next[1] !== indent) return undefined
    quote = MEMBER_LINE.lastIndex - 1
  }
}

/** `recordSpans` for an indented text, found with a few indexOf calls per record; undefined when it is laid out otherwise. */
export const indentedSpans = (text: string): Spans | undefined => {
  const open = skipWhitespace(text, 0)
  if (text.charCodeAt(open) !== 0x7b) return undefined
  const top = indentedMembers(text, open)
  if (top === undefined || skipWhitespace(text, top.end) !== text.length) return undefined
  const out: Spans = new Map()
  for (const [name, [start, end]] of top.members) {
    if (text.charCodeAt(start) !== 0x7b) continue // not a table of records
    const records = indentedMembers(text, start)
    if (records === undefined || records.end !== end) return undefined
    out.set(name, records.members)
  }
  return out
}

/**
 * Whether two JSON values are the same, key order included (numbers by Object.is): then their
 * canonical texts, and so their hashes, are the same too.
 */
const isList = (v: Json): v is ReadonlyArray<Json> => Array.isArray(v)
const sameJson = (a: Json, b: Json): boolean => {
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return Object.is(a, b)
  if (isList(a) || isList(b)) {
    if (!isList(a) || !isList(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i]!, b[i]!)) return false
    return true
  }
  const aKeys = Object.keys(a)
  const bKeys = Object.keys(b)
  if (aKeys.length !== bKeys.length) return false
  for (let i = 0; i < aKeys.length; i++) {
    const k = aKeys[i]!
    if (k !== bKeys[i] || !sameJson(a[k]!, b[k]!)) return false
  }
  return true
}

/**
 * The form of `world` over `text`, when every record's slice loads to the same record (the same
 * JSON, key order included: no second world to hash); else undefined.
 */
const formOf = (domain: PreparedDomain, text: string, world: World.World, spans: Spans | undefined): ReadonlyArray<FormTable> | undefined => {
  if (spans === undefined) return undefined
  const tables: Array<FormTable> = []
  for (const name of World.tableNames(world)) {
    const load = domain.records[name]
    const tableSpans = spans.get(name) ?? new Map<string, readonly [number, number]>()
    if (load === undefined) return undefined
    const keys: Array<string> = []
    const flat: Array<number> = []
    for (const [key, value] of World.entries(world, name)) {
      const span = tableSpans.get(key)
      if (span === undefined || !sameJson(load(text.slice(span[0], span[1]), key), value)) return undefined
      keys.push(key)
      flat.push(span[0], span[1])
    }
    tables.push({ name, digest: World.tableDigest(world, name), keys, spans: flat })
  }
  return tables
}

/** The form of `world` over `text`: from the spans its indentation gives, else from a scan of every string and bracket. */
const makeForm = (domain: PreparedDomain, text: string, world: World.World): ReadonlyArray<FormTable> | undefined =>
  formOf(domain, text, world, indentedSpans(text)) ?? formOf(domain, text, world, recordSpans(text))

// A form's table digests hold only while World digests records as it did: its key names the scheme.
const keyOf = (domain: PreparedDomain, sha256: string, byteLength: number): string =>
  `${domain.kind}:v${FORM_VERSION}:${World.DIGEST_SCHEME}:${sha256}:${byteLength}`

/** db.json as given: its text, or its bytes (UTF-8). */
export type DbFile = string | Buffer

/** The world from a stored form, or undefined when there is none that fits this file. */
const fromForm = (domain: PreparedDomain, db: DbFile, byteLength: number, key: string): World.World | undefined => {
  const form = asForm(DataRoot.readPrepared(domain.kind, key), byteLength)
  if (form === undefined) return undefined
  let slice: (start: number, end: number) => string
  if (typeof db !== "string" && form.ascii) {
    slice = (start, end) => db.toString("latin1", start, end)
  } else {
    const text = typeof db === "string" ? db : textOf(db)
    // An ASCII file's text is as long as its bytes; another's spans must fit its text.
    if (form.ascii ? text.length !== byteLength : !form.tables.every((t) => isFormTable(t, text.length))) return undefined
    slice = (start, end) => text.slice(start, end)
  }
  const tables: Array<World.PreparedTable> = []
  for (const t of form.tables) {
    const load = domain.records[t.name]
    if (load === undefined) return undefined
    const { keys, spans } = t
    tables.push({ name: t.name, digest: t.digest, keys, load: (rank) => load(slice(spans[2 * rank]!, spans[2 * rank + 1]!), keys[rank]!) })
  }
  return World.fromPrepared(tables)
}

/** How the world was made: from a stored form, or by the full parse (then stored, when it could be). */
export type Source = "prepared" | "parsed"

/**
 * db.json (its text, or its bytes) to the initial world, from the prepared form when there is
 * one for this exact file, else by the full parse (whose errors are the result's). `sha256` is
 * that of the file's bytes when the caller has checked it (a pinned file); else it is computed
 * here.
 */
export const preparedWorld = (
  domain: PreparedDomain,
  db: DbFile,
  sha256: string = createHash("sha256").update(db).digest("hex")
): Either.Either<{ readonly world: World.World; readonly source: Source }, string> => {
  const byteLength = typeof db === "string" ? Buffer.byteLength(db) : db.length
  const key = keyOf(domain, sha256, byteLength)
  const prepared = fromForm(domain, db, byteLength, key)
  if (prepared !== undefined) return Either.right({ world: prepared, source: "prepared" })
  const text = typeof db === "string" ? db : textOf(db)
  const full = domain.full(text)
  if (Either.isLeft(full)) return Either.left(full.left)
  const tables = makeForm(domain, text, full.right)
  // UTF-8 takes more bytes than UTF-16 code units for any character past ASCII: equal lengths mean ASCII.
  if (tables !== undefined) DataRoot.writePrepared(domain.kind, key, { ascii: text.length === byteLength, tables } satisfies Form)
  return Either.right({ world: full.right, source: "parsed" })
}
