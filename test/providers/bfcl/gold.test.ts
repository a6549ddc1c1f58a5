import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { check } from "../../../providers/bfcl/checker.ts"
import { isPassable, loadAll, UNPASSABLE_TASKS } from "../../../providers/bfcl/data.ts"
import { goldAnswer } from "../../../providers/bfcl/gold.ts"

describe("bfcl gold", () => {
  it.effect("the gold answer passes the checker on every passable task of all 3,491, and fails only the four unpassable ones", () =>
    Effect.gen(function*() {
      const tasks = yield* loadAll()
      const failing: Array<string> = []
      for (const t of tasks) {
        const v = check(t, { _tag: "Decoded", value: goldAnswer(t) })
        if (!v.valid) failing.push(t.id)
      }
      expect(failing.filter(isPassable)).toEqual([])
      expect(failing.sort()).toEqual([...UNPASSABLE_TASKS.keys()].sort())
    }))

  it.effect("gold makes no call on irrelevance tasks and some call on live_relevance tasks", () =>
    Effect.gen(function*() {
      const tasks = yield* loadAll()
      for (const t of tasks) {
        if (t.category === "irrelevance" || t.category === "live_irrelevance") expect(goldAnswer(t)).toEqual([])
        if (t.category === "live_relevance") expect(goldAnswer(t).length).toBe(1)
      }
    }))
})
