import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import * as World from "../../../../src/world/World.ts"
import { tau2Dir, worldFromDbText } from "../../../../providers/tau2/retail/data.ts"
import { isOrder, isUser, product } from "../../../../providers/tau2/retail/fastCheck.ts"
import { optionalOrderFields, Order, Product, User } from "../../../../providers/tau2/retail/model.ts"

type Obj = Record<string, unknown>
const db = JSON.parse(readFileSync(join(tau2Dir(), "retail", "db.json"), "utf8")) as Record<string, Record<string, Obj>>
const filled = (o: Obj): Obj => {
  const out = { ...o }
  for (const f of optionalOrderFields) if (!(f in out)) out[f] = null
  return out
}
const decodes = (schema: Schema.Schema<unknown, unknown>, v: unknown): boolean => Either.isRight(Schema.decodeUnknownEither(schema)(v))
const variantsOf = (p: Obj): Array<unknown> => Object.values(p["variants"] as Obj)

// Each record changed one way at a time: every field (at every depth) dropped, given another
// type, or set to a wrong literal; a key added.
const mutations = (v: unknown): Array<unknown> => {
  const out: Array<unknown> = []
  const others: Array<unknown> = [null, 1, 2.5, "x", true, [], {}, ["x"], { a: "x" }, "refund", "paypal"]
  const walk = (x: unknown, rebuild: (y: unknown) => unknown): void => {
    if (Array.isArray(x)) {
      x.forEach((item, i) => walk(item, (y) => rebuild(x.map((z, j) => (j === i ? y : z)))))
      if (x.length > 0) out.push(rebuild([]))
    } else if (typeof x === "object" && x !== null) {
      const o = x as Obj
      for (const k of Object.keys(o)) {
        const { [k]: _, ...rest } = o
        out.push(rebuild(rest))
        walk(o[k], (y) => rebuild({ ...o, [k]: y }))
      }
      out.push(rebuild({ ...o, extra: 1 }))
    }
    for (const other of others) out.push(rebuild(other))
  }
  walk(v, (y) => y)
  return out
}

describe("retail's fast record check", () => {
  it("vouches for every record of the pinned db.json, and makes the schema's product", () => {
    for (const u of Object.values(db["users"]!)) expect(isUser(u)).toBe(true)
    for (const o of Object.values(db["orders"]!)) expect(isOrder(filled(o))).toBe(true)
    for (const p of Object.values(db["products"]!)) {
      const made = product(p["name"], p["product_id"], variantsOf(p))
      const decoded = Schema.decodeUnknownSync(Product)({ name: p["name"], product_id: p["product_id"], variants: variantsOf(p) })
      expect(JSON.stringify(made)).toBe(JSON.stringify(decoded))
    }
  })

  it("accepts no changed record the schema refuses, and makes the schema's product for those it accepts", () => {
    const someOf = <A>(xs: ReadonlyArray<A>) => xs.filter((_, i) => i % 50 === 0)
    for (const u of someOf(Object.values(db["users"]!))) for (const m of mutations(u)) if (isUser(m)) expect(decodes(User as Schema.Schema<unknown, unknown>, m)).toBe(true)
    for (const o of someOf(Object.values(db["orders"]!))) for (const m of mutations(filled(o))) if (isOrder(m)) expect(decodes(Order as Schema.Schema<unknown, unknown>, m)).toBe(true)
    for (const p of someOf(Object.values(db["products"]!))) {
      for (const m of mutations({ name: p["name"], product_id: p["product_id"], variants: variantsOf(p) })) {
        const r = m as Obj
        const made = Array.isArray(r?.["variants"]) ? product(r["name"], r["product_id"], r["variants"] as Array<unknown>) : undefined
        if (made === undefined) continue
        expect(JSON.stringify(made)).toBe(JSON.stringify(Schema.decodeUnknownSync(Product)(m)))
      }
    }
  })
})

describe("retail's full parse of db.json", () => {
  const order = { order_id: "#W1", user_id: "u", status: "pending", items: [], fulfillments: [], payment_history: [], address: { address1: "a", address2: "", city: "c", country: "US", state: "s", zip: "1" } }
  const user = (name: string) => ({ user_id: "u", name: { first_name: name, last_name: "l" }, address: order.address, email: "e", payment_methods: {}, orders: [] })
  const variant = (id: string) => `"${id}": {"item_id": "${id}", "options": {}, "available": true, "price": 1}`

  it("a repeated member keeps its first place and its last value, as upstream's json.load", () => {
    const text = `{"products": {"2": {"name": "a", "product_id": "2", "variants": {${variant("9")}, ${variant("10")}}}}, ` +
      `"users": {"u": ${JSON.stringify(user("first"))}, "v": ${JSON.stringify(user("v"))}, "u": ${JSON.stringify(user("last"))}}, ` +
      `"orders": {"#W1": ${JSON.stringify(order)}}, ` +
      `"products": {"1": {"name": "b", "product_id": "1", "variants": {${variant("8")}, ${variant("7")}}}}}`
    const world = Either.getOrThrow(worldFromDbText(text))
    expect(World.entries(world, "users").map(([k, u]) => [k, (u as { name: { first_name: string } }).name.first_name])).toEqual([["u", "last"], ["v", "v"]])
    expect(World.entries(world, "products").map(([k]) => k)).toEqual(["1"])
    expect((World.get(world, "products", "1") as { variants: Array<{ item_id: string }> }).variants.map((v) => v.item_id)).toEqual(["8", "7"])
  })

  it("keeps integer-like keys in the file's order wherever they are", () => {
    const text = `{"products": {"20": {"name": "a", "product_id": "20", "variants": {${variant("9")}, ${variant("10")}}}, "3": {"name": "b", "product_id": "3", "variants": {}}}, ` +
      `"users": {"9": ${JSON.stringify(user("nine"))}, "10": ${JSON.stringify(user("ten"))}}, "orders": {"#W1": ${JSON.stringify(order)}}}`
    const world = Either.getOrThrow(worldFromDbText(text))
    expect(World.entries(world, "products").map(([k]) => k)).toEqual(["20", "3"])
    expect(World.entries(world, "users").map(([k]) => k)).toEqual(["9", "10"])
    expect((World.get(world, "products", "20") as { variants: Array<{ item_id: string }> }).variants.map((v) => v.item_id)).toEqual(["9", "10"])
  })

  it("refuses an integer-like key inside a record (a JS object would reorder it), wherever else all-digit keys stand", () => {
    const payment = `"payment_methods": {"p": {"source": "paypal", "id": "p"}, "12": {"source": "paypal", "id": "12"}}`
    const text = `{"products": {"20": {"name": "a", "product_id": "20", "variants": {${variant("9")}}}}, ` +
      `"users": {"9": ${JSON.stringify(user("nine")).replace(`"payment_methods":{}`, payment)}}, "orders": {}}`
    const result = worldFromDbText(text)
    expect(Either.isLeft(result) && result.left).toBe("users.9.payment_methods: key order of p cannot be kept in a JS object")
  })

  it("keeps keys with escaped quotes and digits as written", () => {
    const text = `{"products": {}, "users": {"a\\"1": ${JSON.stringify(user("q"))}, "2": ${JSON.stringify(user("two"))}}, "orders": {}}`
    const world = Either.getOrThrow(worldFromDbText(text))
    expect(World.entries(world, "users").map(([k]) => k)).toEqual(['a"1', "2"])
  })

  it("a record the schema refuses is reported as before", () => {
    const text = `{"products": {}, "users": {"u": ${JSON.stringify({ ...user("x"), orders: [1] })}}, "orders": {}}`
    const result = worldFromDbText(text)
    expect(Either.isLeft(result) && result.left).toMatch(/^users\.u: /)
  })
})
