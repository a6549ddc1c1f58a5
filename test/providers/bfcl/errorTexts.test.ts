import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { check } from "../../../providers/bfcl/checker.ts"
import { loadAll } from "../../../providers/bfcl/data.ts"
import { parseCorpus, tasksById } from "../../../providers/bfcl/equivalence.ts"
import { pyRepr } from "../../../providers/bfcl/pyjson.ts"

const dataDir = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"

describe("bfcl error texts", () => {
  it.effect("are str() of the upstream error values, read first or after them, on every line of the dev oracle corpus", () =>
    Effect.gen(function*() {
      const corpus = join(dataDir, "bfcl", "oracle", "verdicts-dev.jsonl")
      const entries = yield* parseCorpus(corpus, readFileSync(corpus, "utf8"))
      const byId = tasksById(yield* loadAll({ dataDir }))
      let checked = 0
      for (const e of entries) {
        const task = byId.get(e.id)!
        // Twice, so that the texts are made both straight from the checker's items and from the values.
        const textFirst = check(task, e.outcome).errors
        const valuesFirst = check(task, e.outcome)
        const str = valuesFirst.upstreamErrors.map((x) => (typeof x === "string" ? x : pyRepr(x)))
        expect(textFirst).toEqual(str)
        expect(valuesFirst.errors).toEqual(str)
        // And upstream's own texts: str() of the oracle's error values.
        expect(textFirst).toEqual(e.errors.map((x) => (typeof x === "string" ? x : pyRepr(x))))
        checked++
      }
      expect(checked).toBe(17972)
    }))
})
