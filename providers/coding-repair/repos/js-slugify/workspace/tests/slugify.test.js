import assert from "node:assert/strict"
import { test } from "node:test"
import { slugify } from "../src/slugify.js"

test("slugify: one word", () => assert.equal(slugify("Hello"), "hello"))
test("slugify: many words", () => assert.equal(slugify("Hello big world"), "hello-big-world"))
