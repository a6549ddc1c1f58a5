import { describe, expect, it } from "@effect/vitest"
import type { Json } from "../../src/content/Canonical.ts"
import * as World from "../../src/world/World.ts"

const tables: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, Json]>]> = [
  ["products", [["9", { name: "lamp", price: 12.5 }], ["10", { name: "desk", price: 120 }]]],
  ["users", [["u-2", { name: "Ada", tags: ["a", "b"] }], ["u-1", { name: "Alan", tags: [] }]]]
]

/** The same records as a prepared world, counting how often each loader runs. */
const prepared = (from: World.World, calls: Map<string, number>) =>
  World.fromPrepared(
    tables.map(([name, records]) => ({
      name,
      digest: World.tableDigest(from, name),
      keys: records.map(([key]) => key),
      load: (rank: number) => {
        const [key, value] = records[rank]!
        calls.set(`${name}/${key}`, (calls.get(`${name}/${key}`) ?? 0) + 1)
        return structuredClone(value)
      }
    }))
  )

describe("prepared worlds (records made on first read)", () => {
  it("equal the eagerly built world: digest, records, order; nothing is loaded to build or digest it", () => {
    const eager = World.fromEntries(tables)
    const calls = new Map<string, number>()
    const lazy = prepared(eager, calls)!
    expect(World.digest(lazy)).toBe(World.digest(eager))
    expect(World.equals(lazy, eager)).toBe(true)
    expect(calls.size).toBe(0)
    expect(World.get(lazy, "products", "10")).toEqual({ name: "desk", price: 120 })
    expect([...calls]).toEqual([["products/10", 1]])
    expect(World.entries(lazy, "users").map(([k]) => k)).toEqual(["u-2", "u-1"])
    expect(World.toJson(lazy)).toEqual(World.toJson(eager))
    // Each record is made once, and the same value is read again (record caches key on it).
    expect(World.get(lazy, "products", "10")).toBe(World.get(lazy, "products", "10"))
    expect([...calls.values()].every((n) => n === 1)).toBe(true)
  })

  it("writes over unread records adjust the digest as on the eager world, and forks share the records", () => {
    const eager = World.fromEntries(tables)
    const calls = new Map<string, number>()
    const lazy = prepared(eager, calls)!
    const a = World.set(World.fork(lazy), "users", "u-1", { name: "Alan", tags: ["x"] })
    const b = World.set(World.fork(eager), "users", "u-1", { name: "Alan", tags: ["x"] })
    expect(World.digest(a)).toBe(World.digest(b))
    const removed = World.set(lazy, "products", "9", null)
    expect(World.digest(removed)).toBe(World.digest(World.set(eager, "products", "9", null)))
    expect(World.set(lazy, "users", "u-3", { name: "Grace", tags: [] })).not.toBe(lazy)
    expect(World.entries(World.set(lazy, "users", "u-3", { name: "Grace", tags: [] }), "users").map(([k]) => k)).toEqual(["u-2", "u-1", "u-3"])
    // The written fork read u-1's old value (to take its hash out) through the shared entry.
    World.get(lazy, "users", "u-1")
    expect(calls.get("users/u-1")).toBe(1)
    expect(World.get(lazy, "users", "u-1")).toEqual({ name: "Alan", tags: [] })
  })

  it("refuses a malformed digest and a key given twice", () => {
    const eager = World.fromEntries(tables)
    const none = () => 1
    expect(World.fromPrepared([{ name: "t", digest: "zz", keys: [], load: none }])).toBeUndefined()
    expect(World.fromPrepared([{ name: "t", digest: World.tableDigest(eager, "users"), keys: ["k", "k"], load: none }])).toBeUndefined()
    expect(World.fromPrepared([{ name: "t", digest: "0".repeat(64), keys: [], load: none }, { name: "t", digest: "0".repeat(64), keys: [], load: none }])).toBeUndefined()
    expect(World.digest(World.fromPrepared([])!)).toBe(World.digest(World.empty))
  })
})
