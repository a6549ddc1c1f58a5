/**
 * The pinned upstream retail files, read from `$ASSAY_DATA_DIR/tau2/retail/` and checked
 * against the sha256 recorded here (from ../shared/data/tau2/SOURCE.md), then decoded: db.json
 * becomes the initial World, in db.json order.
 */
import { join } from "node:path"
import { Effect, Either, ParseResult, Schema } from "effect"
import { type Canonical, type PinnedData, World } from "../../../src/index.ts"
import { isOrderedObject, memberOf, type MemberSpan, objectMembers, type OrderedJson, type OrderedObject, parseOrdered, skipWhitespace } from "../common/orderedJson.ts"
import { bufferOf, dataRoot, type FileReader, filesAt, type PinnedFile, upstreamUrl } from "../common/pinned.ts"
import { dbDomainFiles, type DbDomainData, loadDbDomainFiles, type Splits } from "../common/dbDomain.ts"
import { type PreparedDomain, preparedWorld } from "../common/prepared.ts"
import type { ToolTypes } from "../common/toolFiles.ts"
import { isOrder, isUser, product } from "./fastCheck.ts"
import { asJson, optionalOrderFields, Order, Product, User } from "./model.ts"

type Json = Canonical.Json

/** A pinned file; its `name` is a path under `$ASSAY_DATA_DIR/tau2/`. */
export type { PinnedFile }

const dbFiles = dbDomainFiles("retail/", "retail", {
  db: "413a65160adbdb5fde0ffc0015c49b6d70250b10c18128de169b597af7766765",
  tasks: "8e03ebce7901bd6218e7a7dc3105faa9324091a68058f7fe61c65262868812e8",
  policy: "2c9652afbce57d6e087768d37cda64d31c53d50b3e3225cfdb791bac66466467",
  splits: "ed0580ec52575b63fbf76568af42490da6ee7783ecb4aa81af46961291358f20",
  // Generated from upstream code at the revision; see retail/oracle/README.md.
  tools: "a338894f3ef5bb8fe25a14eb433c3b4ec36dbed4d527f2253198961d63224e4c",
  toolTypes: "5557d2fa6a1ece1014c978da2f2a103a334dd45b6fd68e1423b1aaa4ca968d0d"
})

export const pinnedFiles = {
  db: dbFiles.db,
  tasks: dbFiles.tasks,
  policy: dbFiles.policy,
  splits: dbFiles.splits,
  // The user simulator's guidelines (text mode; retail has no user tools), for the protocol.
  userGuidelines: {
    name: "user_simulator/simulation_guidelines.md",
    url: upstreamUrl("data/tau2/user_simulator/simulation_guidelines.md"),
    sha256: "740a29dfa64d7bc08eea3bf7493575b914a63f744acbaf7f199ee07eddaf72d3"
  },
  userGuidelinesTools: {
    name: "user_simulator/simulation_guidelines_tools.md",
    url: upstreamUrl("data/tau2/user_simulator/simulation_guidelines_tools.md"),
    sha256: "cbf3d8a4d8642fd04e559862f1afef55d7dd4e6a7e727ca49e239023c599de0c"
  },
  tools: dbFiles.tools,
  toolTypes: dbFiles.toolTypes
} satisfies Record<string, PinnedFile>

/** `tau2/` under the data root. */
export const tau2Dir = (dataDir?: string): string => join(dataRoot(dataDir), "tau2")

/** Retail's files (named under `tau2/`) in a data folder, the data root unless given. */
export const filesIn = (dataDir?: string): FileReader => filesAt("tau2-retail", dataDir, "tau2/")

/** One pinned file's text, its hash checked. */
export const readPinned = (file: PinnedFile, dataDir?: string): Effect.Effect<string, PinnedData.DataError> => filesIn(dataDir).text(file)

/** One pinned file's bytes, its hash checked. */
export const readPinnedBytes = (file: PinnedFile, dataDir?: string): Effect.Effect<Buffer, PinnedData.DataError> =>
  Effect.map(filesIn(dataDir).bytes(file), bufferOf)

/** Plain JSON from an ordered value; an object whose keys a JS object would reorder is refused. */
const toPlain = (v: OrderedJson, path: string): Either.Either<Json, string> => {
  if (Array.isArray(v)) {
    const out: Array<Json> = []
    for (let i = 0; i < v.length; i++) {
      const x = toPlain(v[i]!, `${path}[${i}]`)
      if (Either.isLeft(x)) return x
      out.push(x.right)
    }
    return Either.right(out)
  }
  if (v !== null && isOrderedObject(v)) {
    const out: Record<string, Json> = {}
    for (const [k, x] of v) {
      const plain = toPlain(x, `${path}.${k}`)
      if (Either.isLeft(plain)) return Either.left(plain.left)
      out[k] = plain.right
    }
    const keys = Object.keys(out)
    let i = 0
    for (const k of v.keys()) if (keys[i++] !== k) return Either.left(`${path}: key order of ${k} cannot be kept in a JS object`)
    return Either.right(out)
  }
  return Either.right(v as Json)
}

const decodeRecord = <A, I>(schema: Schema.Schema<A, I>, value: Json, where: string): Either.Either<A, string> =>
  Either.mapLeft(Schema.decodeUnknownEither(schema)(value), (e) => `${where}: ${ParseResult.TreeFormatter.formatErrorSync(e)}`)

/** A record's plain JSON, or why it has none (the message the load reports). */
type PlainRecord = () => Either.Either<Json, string>

/** db.json's three tables: products as parsed (their variants are keyed by item id), users and orders as plain records. */
interface DbTables {
  readonly products: OrderedObject
  readonly users: ReadonlyArray<readonly [string, PlainRecord]>
  readonly orders: ReadonlyArray<readonly [string, PlainRecord]>
}

/** The tables from the full ordered parse: every error says where the text or the DB is wrong. */
const orderedTables = (text: string): Either.Either<DbTables, string> => {
  const parsed = parseOrdered(text)
  if (Either.isLeft(parsed)) return Either.left(`JSON syntax at offset ${parsed.left.offset}: expected ${parsed.left.expected}`)
  const root = parsed.right
  if (root === null || !isOrderedObject(root)) return Either.left("the DB is not an object")
  const table = (name: string) => {
    const t = root.get(name)
    return t !== undefined && t !== null && isOrderedObject(t) ? t : undefined
  }
  const products = table("products")
  const users = table("users")
  const orders = table("orders")
  if (!products || !users || !orders) return Either.left("the DB needs objects products, users and orders")
  const plain = (name: string, t: OrderedObject) => Array.from(t, ([id, v]) => [id, () => toPlain(v, `${name}.${id}`)] as const)
  return Either.right({ products, users: plain("users", users), orders: plain("orders", orders) })
}

/** JSON.parse's value keeps the file's key order, and toPlain's: no integer-like key, no `__proto__`. */
const keepsOrder = (v: unknown): boolean => {
  if (v === null || typeof v !== "object") return true
  if (Array.isArray(v)) return v.every(keepsOrder)
  for (const k in v) {
    // Integer-like keys start with a digit: the test runs on those only.
    const c = k.charCodeAt(0)
    if (k === "__proto__" || (c >= 0x30 && c <= 0x39 && /^\d+$/.test(k))) return false
    if (!keepsOrder((v as Record<string, unknown>)[k])) return false
  }
  return true
}

const parsePlain = (text: string): { readonly value: Json } | undefined => {
  try {
    return { value: JSON.parse(text) as Json }
  } catch {
    return undefined
  }
}

/**
 * The same tables, most of the text read by the platform's JSON.parse: the top level and the
 * users' and orders' keys are scanned in file order, each user and order record parsed on its
 * own (its keys cannot be reordered: none is integer-like), products by the ordered parse.
 * Undefined whenever anything is unusual (a syntax error, a repeated key, an integer-like key):
 * the full ordered parse then runs, so results and errors are exactly its own.
 */
const fastTables = (text: string): DbTables | undefined => {
  const top = objectMembers(text, 0)
  if (top === undefined || skipWhitespace(text, top.end) !== text.length) return undefined
  const spans = new Map<string, MemberSpan>()
  for (const m of top.members) {
    if (spans.has(m.key)) return undefined
    spans.set(m.key, m)
  }
  const productsSpan = spans.get("products")
  const usersSpan = spans.get("users")
  const ordersSpan = spans.get("orders")
  if (!productsSpan || !usersSpan || !ordersSpan) return undefined
  for (const [name, span] of spans) {
    if (name !== "products" && name !== "users" && name !== "orders" && parsePlain(text.slice(span.start, span.end)) === undefined) return undefined
  }
  const products = parseOrdered(text.slice(productsSpan.start, productsSpan.end))
  if (Either.isLeft(products) || products.right === null || !isOrderedObject(products.right)) return undefined
  const records = (span: MemberSpan): Array<readonly [string, PlainRecord]> | undefined => {
    const object = objectMembers(text, span.start)
    if (object === undefined || object.end !== span.end) return undefined
    const seen = new Set<string>()
    const out: Array<readonly [string, PlainRecord]> = []
    for (const m of object.members) {
      if (seen.has(m.key)) return undefined
      seen.add(m.key)
      const parsed = parsePlain(text.slice(m.start, m.end))
      if (parsed === undefined || !keepsOrder(parsed.value)) return undefined
      const value = Either.right(parsed.value)
      out.push([m.key, () => value])
    }
    return out
  }
  const users = records(usersSpan)
  const orders = users && records(ordersSpan)
  return users && orders ? { products: products.right, users, orders } : undefined
}

const isPlainObject = (v: Json | undefined): v is { readonly [key: string]: Json } => typeof v === "object" && v !== null && !Array.isArray(v)

/**
 * The same tables with the least script work (a fresh process runs script slowly until the JIT
 * warms): the whole text by the platform's JSON.parse, users and orders taken from it when they
 * keep their key order (no integer-like key, no `__proto__`), and products by the ordered parse
 * of its own text, found by scanning the top level only as far as its member. JSON.parse keeps
 * a repeated key's first place and last value, as the ordered parse's Maps do; products is
 * taken this way only when no other member can be named products (no later `"products"` text, no
 * \u escape after it). Undefined otherwise: `fastTables`, then the full ordered parse, decide.
 */
const wholeTables = (text: string): DbTables | undefined => {
  const whole = parsePlain(text)
  if (whole === undefined || !isPlainObject(whole.value)) return undefined
  const root = whole.value
  const users = root["users"]
  const orders = root["orders"]
  if (!Object.hasOwn(root, "users") || !Object.hasOwn(root, "orders") || !isPlainObject(users) || !isPlainObject(orders)) return undefined
  if (!keepsOrder(users) || !keepsOrder(orders)) return undefined
  const span = memberOf(text, 0, "products")
  if (span === undefined || text.indexOf('"products"', span.end) >= 0 || text.indexOf("\\u", span.end) >= 0) return undefined
  const products = parseOrdered(text.slice(span.start, span.end))
  if (Either.isLeft(products) || products.right === null || !isOrderedObject(products.right)) return undefined
  const records = (table: { readonly [key: string]: Json }): Array<readonly [string, PlainRecord]> =>
    Object.keys(table).map((key) => {
      const value = Either.right(table[key] as Json)
      return [key, () => value] as const
    })
  return { products: products.right, users: records(users), orders: records(orders) }
}

/**
 * A key JSON.parse might put first and in numeric order: every all-digit key, with what follows
 * up to its colon. It is marked by a first character `\u0001`, which no key holds in a text
 * without `\u` escapes (JSON has no raw control characters).
 */
const DIGIT_KEY = /"(\d+)"(\s*):/g

/** A JSON object as JSON.parse makes it: new, and so ours to fill. */
type ParsedObject = { [key: string]: Json }
const isParsedObject = (v: Json | undefined): v is ParsedObject => typeof v === "object" && v !== null && !Array.isArray(v)

/** The optional fields an order lacks, set to null in place (after the file's own, as filledOrder's copy has them). */
const fillOrder = (order: ParsedObject): ParsedObject => {
  for (const field of optionalOrderFields) if (!(field in order)) order[field] = null
  return order
}

/**
 * The initial world with the least script work, for a file as upstream's tau2 DBs are (the
 * first load in a fresh process runs script slowly until the JIT warms): one JSON.parse of the
 * whole text with every all-digit key marked (so JSON.parse keeps the file's order, as the
 * ordered parse does), the records checked by the plain predicates and taken as parsed. Only
 * the tables' keys and the products' variant keys may be all-digit: the marked keys met there
 * must be all the marks made, so no object inside a record had one (the ordered parse refuses
 * those). A repeated key keeps its first place and its last value, as the ordered parse's Maps
 * do. Undefined when anything is unusual (a `\u` escape, a `__proto__` key, a syntax error, a
 * record the predicates do not vouch for): the other parses then decide, errors included.
 */
const plainWorld = (text: string): World.World | undefined => {
  const marked = markDigitKeys(text)
  const parsed = marked && parsePlain(marked.text)
  if (marked === undefined || parsed === undefined || !isPlainObject(parsed.value)) return undefined
  const root = parsed.value
  if (!Object.hasOwn(root, "products") || !Object.hasOwn(root, "users") || !Object.hasOwn(root, "orders")) return undefined
  const products = root["products"]
  const users = root["users"]
  const orders = root["orders"]
  if (!isPlainObject(products) || !isPlainObject(users) || !isPlainObject(orders)) return undefined
  const keys = unmarker()
  const productRecords: Array<readonly [string, Json]> = []
  for (const key in products) {
    const checked = plainProduct(products[key], keys)
    if (checked === undefined) return undefined
    productRecords.push([keys.unmarked(key), checked])
  }
  const userRecords: Array<readonly [string, Json]> = []
  for (const key in users) {
    const u = users[key]!
    if (!isUser(u)) return undefined
    userRecords.push([keys.unmarked(key), u])
  }
  const orderRecords: Array<readonly [string, Json]> = []
  for (const key in orders) {
    const o = orders[key]
    if (!isParsedObject(o)) return undefined
    const filled = fillOrder(o)
    if (!isOrder(filled)) return undefined
    orderRecords.push([keys.unmarked(key), filled])
  }
  if (keys.seen() !== marked.marks) return undefined
  return World.fromEntries([["products", productRecords], ["users", userRecords], ["orders", orderRecords]])
}

/** The text with its all-digit keys marked, and how many; undefined for a text with a `\u` escape or a `__proto__` key. */
const markDigitKeys = (text: string): { readonly text: string; readonly marks: number } | undefined => {
  if (text.includes("\\u") || text.includes('"__proto__"')) return undefined
  let marks = 0
  const marked = text.replace(DIGIT_KEY, (_match, digits: string, space: string) => {
    marks++
    return `"\\u0001${digits}"${space}:`
  })
  return { text: marked, marks }
}

/** Takes the mark off keys, counting those it met. */
const unmarker = () => {
  let seen = 0
  return {
    unmarked: (key: string): string => {
      if (key.charCodeAt(0) !== 1) return key
      seen++
      return key.slice(1)
    },
    seen: () => seen
  }
}

/** A product from marked JSON (its variants' keys unmarked by `keys`) as productRecord makes it, when the predicates vouch for it. */
const plainProduct = (p: Json | undefined, keys: ReturnType<typeof unmarker>): Json | undefined => {
  if (!isPlainObject(p) || !isPlainObject(p["variants"])) return undefined
  const variants = p["variants"]
  const list: Array<Json> = []
  for (const itemKey in variants) {
    const v = variants[itemKey]!
    if (!isPlainObject(v) || v["item_id"] !== keys.unmarked(itemKey)) return undefined
    list.push(v)
  }
  return product(p["name"], p["product_id"], list)
}

/** A product record from its own text by the marked JSON.parse, when nothing is unusual (else undefined). */
const plainProductText = (text: string): Json | undefined => {
  const marked = markDigitKeys(text)
  const parsed = marked && parsePlain(marked.text)
  if (marked === undefined || parsed === undefined) return undefined
  const keys = unmarker()
  const record = plainProduct(parsed.value, keys)
  return record !== undefined && keys.seen() === marked.marks ? record : undefined
}

/** A product as the world holds it: its variants (keyed by item id in db.json) as a list, decoded. */
const productRecord = (id: string, p: OrderedJson): Either.Either<Json, string> => {
  if (p === null || !isOrderedObject(p)) return Either.left(`products.${id} is not an object`)
  const variants = p.get("variants")
  if (variants === undefined || variants === null || !isOrderedObject(variants)) return Either.left(`products.${id}.variants is not an object`)
  const list: Array<Json> = []
  for (const [itemId, v] of variants) {
    const plain = toPlain(v, `products.${id}.variants.${itemId}`)
    if (Either.isLeft(plain)) return Either.left(plain.left)
    list.push(plain.right)
    const variant = plain.right as { readonly item_id?: Json }
    if (variant.item_id !== itemId) return Either.left(`products.${id}.variants.${itemId}: key differs from item_id`)
  }
  const checked = product(p.get("name"), p.get("product_id"), list)
  if (checked !== undefined) return Either.right(checked)
  return Either.map(
    decodeRecord(Product, { name: p.get("name") as Json, product_id: p.get("product_id") as Json, variants: list }, `products.${id}`),
    asJson
  )
}

/** An order as the world holds it: the file's object, with the optional fields it lacks as null. */
const filledOrder = (plain: Json): Record<string, Json> => {
  const filled: Record<string, Json> = { ...(plain as Record<string, Json>) }
  for (const field of optionalOrderFields) if (!(field in filled)) filled[field] = null
  return filled
}

/** db.json text to the initial World (tables products, users, orders in db.json order), every record checked. */
export const worldFromDbText = (text: string): Either.Either<World.World, string> => {
  const plain = plainWorld(text)
  if (plain !== undefined) return Either.right(plain)
  const tables = wholeTables(text) ?? fastTables(text) ?? orderedTables(text)
  if (Either.isEither(tables) && Either.isLeft(tables)) return Either.left(tables.left)
  const { orders, products, users } = Either.isEither(tables) ? tables.right : tables
  const productRecords: Array<readonly [string, Json]> = []
  for (const [id, p] of products) {
    const record = productRecord(id, p)
    if (Either.isLeft(record)) return Either.left(record.left)
    productRecords.push([id, record.right])
  }
  const userRecords: Array<readonly [string, Json]> = []
  for (const [id, u] of users) {
    const plain = u()
    if (Either.isLeft(plain)) return Either.left(plain.left)
    if (!isUser(plain.right)) {
      const record = decodeRecord(User, plain.right, `users.${id}`)
      if (Either.isLeft(record)) return Either.left(record.left)
    }
    // Keep the file's own objects: the decoded copy may list fields in schema order.
    userRecords.push([id, plain.right])
  }
  const orderRecords: Array<readonly [string, Json]> = []
  for (const [id, o] of orders) {
    const plain = o()
    if (Either.isLeft(plain)) return Either.left(plain.left)
    const filled = filledOrder(plain.right)
    if (!isOrder(filled)) {
      const record = decodeRecord(Order, filled, `orders.${id}`)
      if (Either.isLeft(record)) return Either.left(record.left)
    }
    orderRecords.push([id, filled])
  }
  return Either.right(World.fromEntries([["products", productRecords], ["users", userRecords], ["orders", orderRecords]]))
}

/**
 * A record from its own text, once the full parse has checked the file (a prepared form is only
 * used for the text it was made and checked from): what worldFromDbText makes of it.
 */
const checkedRecord = (record: Either.Either<Json, string>): Json =>
  Either.getOrElse(record, (detail) => {
    throw filesIn().invalid(pinnedFiles.db, `a prepared record no longer loads: ${detail}`)
  })

/** Retail's world for common/prepared.ts: the full parse, and each table's record loader. */
export const retailWorld: PreparedDomain = {
  kind: "tau2-retail",
  full: worldFromDbText,
  records: {
    products: (text, id) =>
      plainProductText(text) ?? checkedRecord(Either.flatMap(Either.mapLeft(parseOrdered(text), (e) => `offset ${e.offset}`), (p) => productRecord(id, p))),
    users: (text) => JSON.parse(text) as Json,
    orders: (text) => {
      const order = JSON.parse(text) as Json
      return isParsedObject(order) ? fillOrder(order) : filledOrder(order)
    }
  }
}

/** db.json text to the initial World, from its prepared form when the user's cache has one (common/prepared.ts). */
export const worldFromDb = (text: string, sha256?: string): Either.Either<World.World, string> =>
  Either.map(preparedWorld(retailWorld, text, sha256), (r) => r.world)

export type { ToolTypes }

export type { Splits }

export type RetailData = DbDomainData

/** Every retail file through `read`, hash-checked and decoded. */
export const loadRetailFrom = (read: FileReader): Effect.Effect<RetailData, PinnedData.DataError> => loadDbDomainFiles(pinnedFiles, read, retailWorld)

/** Every retail file in a data folder (the data root unless given), hash-checked and decoded. */
export const loadRetailData = (dataDir?: string): Effect.Effect<RetailData, PinnedData.DataError> => loadRetailFrom(filesIn(dataDir))
