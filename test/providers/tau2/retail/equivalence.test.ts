import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { defaultCorpora, runCorpus, runEquivalence } from "../../../../providers/tau2/retail/equivalence.ts"
import { loadRetailData } from "../../../../providers/tau2/retail/data.ts"
import { tempDir } from "../../../support/tempDirs.ts"

describe("equivalence with upstream's retail tools", () => {
  const [gold, fuzz] = defaultCorpora()

  it.effect("agrees on every gold action sequence of the 114 tasks", () =>
    Effect.gen(function* () {
      const report = yield* runEquivalence(gold!)
      expect(report.disagree).toEqual([])
      expect(report).toMatchObject({ benchmark: "tau2-retail", lines: 114, agree: 114 })
    }), 120_000)

  it.effect("agrees on all 500 fuzz sequences: contents, error flags and both DB hashes", () =>
    Effect.gen(function* () {
      const report = yield* runEquivalence(fuzz!)
      expect(report.disagree).toEqual([])
      expect(report).toMatchObject({ lines: 500, agree: 500 })
    }), 300_000)

  it.effect("reports a corpus it cannot read, and a line that is not an oracle line", () =>
    Effect.gen(function* () {
      const data = yield* loadRetailData()
      const unreadable = yield* Effect.flip(runCorpus(data.initialWorld, "/nonexistent/corpus.jsonl"))
      expect(unreadable.reason).toBe("unreadable")
      const dir = tempDir("tau2-corpus-")
      const path = join(dir, "bad.jsonl")
      yield* Effect.promise(() => writeFile(path, '{"task_id": "x"}\n'))
      const malformed = yield* Effect.flip(runCorpus(data.initialWorld, path))
      expect(malformed).toMatchObject({ reason: "malformed", line: 1 })
    }))

  it.effect("names the first differing field of a line that disagrees", () =>
    Effect.gen(function* () {
      const data = yield* loadRetailData()
      const dir = tempDir("tau2-corpus-")
      const path = join(dir, "one.jsonl")
      const line = {
        task_id: "t", actions: [{ name: "calculate", arguments: { expression: "2 + 2" }, error: false, content: "4" }],
        final_db_sha256: "0", upstream_db_hash: "0"
      }
      yield* Effect.promise(() => writeFile(path, JSON.stringify(line) + "\n"))
      const report = yield* runCorpus(data.initialWorld, path)
      expect(report.agree).toBe(0)
      expect(report.disagree).toEqual([{ line: 1, taskId: "t", field: "actions[0].content", expected: "4", actual: "4.0" }])
    }))
})
