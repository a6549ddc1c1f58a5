import assert from "node:assert/strict"
import { test } from "node:test"
import { compareVersions, latest } from "../src/versions.js"

test("semver: equal versions", () => assert.equal(compareVersions("1.2.3", "1.2.3"), 0))
test("semver: patch order", () => {
  assert.equal(compareVersions("1.0.1", "1.0.2"), -1)
  assert.equal(compareVersions("1.0.2", "1.0.1"), 1)
})
test("semver: a missing part is zero", () => assert.equal(compareVersions("1.0", "1.0.0"), 0))
test("semver: parts compare as numbers", () => {
  assert.equal(compareVersions("1.10.0", "1.9.0"), 1)
  assert.equal(compareVersions("2.0.0", "10.0.0"), -1)
})
test("semver: latest of a list", () => assert.equal(latest(["1.9.0", "1.10.0", "1.2.0"]), "1.10.0"))
