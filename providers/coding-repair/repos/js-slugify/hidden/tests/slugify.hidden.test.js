import assert from "node:assert/strict"
import { test } from "node:test"
import { slugify } from "../src/slugify.js"

test("slugify: one word", () => assert.equal(slugify("Hello"), "hello"))
test("slugify: two words", () => assert.equal(slugify("Hello World"), "hello-world"))
test("slugify: digits kept", () => assert.equal(slugify("Top 10"), "top-10"))
test("slugify: many words", () => assert.equal(slugify("Hello big world"), "hello-big-world"))
test("slugify: punctuation runs", () => assert.equal(slugify("a, b, c"), "a-b-c"))
test("slugify: no dashes at the ends", () => assert.equal(slugify("--Hi there--"), "hi-there"))
