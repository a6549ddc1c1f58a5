import assert from "node:assert/strict"
import { test } from "node:test"
import { LRUCache } from "../src/lru.js"

test("lru: keeps at most capacity entries", () => {
  const c = new LRUCache(2)
  c.set("a", 1)
  c.set("b", 2)
  c.set("c", 3)
  assert.equal(c.size, 2)
  assert.equal(c.get("a"), undefined)
})
