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
  assert.equal(c.get("c"), 3)
})
test("lru: set refreshes recency", () => {
  const c = new LRUCache(2)
  c.set("a", 1)
  c.set("b", 2)
  c.set("a", 10)
  c.set("c", 3)
  assert.equal(c.get("a"), 10)
  assert.equal(c.get("b"), undefined)
})
test("lru: a missing key is undefined", () => assert.equal(new LRUCache(1).get("x"), undefined))
test("lru: get refreshes recency", () => {
  const c = new LRUCache(2)
  c.set("a", 1)
  c.set("b", 2)
  assert.equal(c.get("a"), 1)
  c.set("c", 3)
  assert.equal(c.get("b"), undefined)
  assert.equal(c.get("a"), 1)
})
test("lru: get of a falsy value refreshes too", () => {
  const c = new LRUCache(2)
  c.set("zero", 0)
  c.set("b", 2)
  assert.equal(c.get("zero"), 0)
  c.set("c", 3)
  assert.equal(c.get("zero"), 0)
  assert.equal(c.get("b"), undefined)
})
