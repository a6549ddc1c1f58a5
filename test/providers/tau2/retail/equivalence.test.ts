import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { defaultCorpora, runCorpus } from "../../../../providers/tau2/retail/equivalence.ts"
import { loadRetailData } from "../../../../providers/tau2/retail/data.ts"

describe("equivalence with upstream's retail tools", () => {
  const [gold, fuzz] = defaultCorpora()

  it.effect("agrees on every gold action sequence of the 114 tasks", () =>
    Effect.gen(function* () {
      const data = yield* loadRetailData()
      const report = yield* runCorpus(data.initialWorld, gold!)
      expect(report.disagree).toEqual([])
      expect(report).toMatchObject({ benchmark: "tau2-retail", lines: 114, agree: 114 })
    }), 120_000)

  it.effect("agrees on all 500 fuzz sequences: contents, error flags and both DB hashes", () =>
    Effect.gen(function* () {
      const data = yield* loadRetailData()
      const report = yield* runCorpus(data.initialWorld, fuzz!)
      expect(report.disagree).toEqual([])
      expect(report).toMatchObject({ lines: 500, agree: 500 })
    }), 300_000)

  it.effect("reports a corpus line that is not an oracle line", () =>
    Effect.gen(function* () {
      const data = yield* loadRetailData()
      const error = yield* Effect.flip(runCorpus(data.initialWorld, "/nonexistent/corpus.jsonl"))
      expect(error.reason).toBe("unreadable")
    }))
})
