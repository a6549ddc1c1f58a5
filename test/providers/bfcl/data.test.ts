import { describe, expect, it } from "@effect/vitest"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { CATEGORIES, loadAll, loadCategory, PINNED_FILES, TASK_COUNTS, UNPASSABLE_TASKS } from "../../../providers/bfcl/data.ts"
import { PyFloat } from "../../../providers/bfcl/pyjson.ts"
import { tempDir } from "../../support/tempDirs.ts"

describe("bfcl data", () => {
  it.effect("loads the eleven categories, 3,491 tasks, with possible answers where graded by AST", () =>
    Effect.gen(function*() {
      const tasks = yield* loadAll()
      expect(tasks.length).toBe(3491)
      for (const c of CATEGORIES) expect(tasks.filter((t) => t.category === c).length).toBe(TASK_COUNTS[c])
      for (const t of tasks) {
        const relevance = t.category === "irrelevance" || t.category === "live_irrelevance" || t.category === "live_relevance"
        expect(t.possibleAnswer === null).toBe(relevance)
      }
      const ids = new Set(tasks.map((t) => t.id))
      for (const id of UNPASSABLE_TASKS.keys()) expect(ids.has(id)).toBe(true)
    }))

  it.effect("keeps floats such as 5.0 in the possible answers", () =>
    Effect.gen(function*() {
      const tasks = yield* loadCategory("simple_python")
      const text = JSON.stringify(tasks.map((t) => t.possibleAnswer), (_k, v) => (v instanceof PyFloat ? { float: v.value } : v instanceof Map ? Object.fromEntries(v) : v))
      expect(text).toContain('{"float":')
    }))

  it("pins every file to the upstream commit on raw.githubusercontent", () => {
    expect(PINNED_FILES.length).toBe(20)
    for (const f of PINNED_FILES) {
      expect(f.url).toBe(`https://raw.githubusercontent.com/ShishirPatil/gorilla/6ea57973c7a6097fd7c5915698c54c17c5b1b6c8/berkeley-function-call-leaderboard/bfcl_eval/data/${f.file}`)
      expect(f.sha256).toMatch(/^[0-9a-f]{64}$/)
    }
  })

  it.effect("a changed file is an error naming the file and both hashes", () =>
    Effect.gen(function*() {
      const dir = tempDir("bfcl-data-")
      mkdirSync(join(dir, "bfcl", "v4"), { recursive: true })
      writeFileSync(join(dir, "bfcl", "v4", "BFCL_v4_irrelevance.json"), "{}\n")
      const error = yield* Effect.flip(loadCategory("irrelevance", { dataDir: dir }))
      expect(error.reason).toBe("hash-mismatch")
      expect(error.message).toContain("BFCL_v4_irrelevance.json")
      expect(error.message).toContain("2b6ed4c2e992cdcf5f1678a701851f944bef7550ee026ed1ddb89efed5be01a6")
      expect(error.message).toMatch(/has sha256 [0-9a-f]{64}/)
    }))

  it.effect("a missing file says how to get the data", () =>
    Effect.gen(function*() {
      const dir = tempDir("bfcl-data-")
      const error = yield* Effect.flip(loadCategory("multiple", { dataDir: dir }))
      expect(error.reason).toBe("missing")
      expect(error.message).toContain("BFCL_v4_multiple.json")
      expect(error.message).toContain("assay data pull bfcl")
      expect(error.message).toContain("ASSAY_DATA_DIR")
    }))
})
