import assert from "node:assert/strict"
import { test } from "node:test"
import { compareVersions } from "../src/versions.js"

test("semver: equal versions", () => assert.equal(compareVersions("1.2.3", "1.2.3"), 0))
test("semver: parts compare as numbers", () => assert.equal(compareVersions("1.10.0", "1.9.0"), 1))
