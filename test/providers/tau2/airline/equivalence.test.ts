import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { loadAirlineData } from "../../../../providers/tau2/airline/data.ts"
import { defaultCorpora, runCorpus, runEquivalence } from "../../../../providers/tau2/airline/equivalence.ts"
import { tempDir } from "../../../support/tempDirs.ts"

describe("equivalence with upstream's airline tools", () => {
  const [gold, fuzz] = defaultCorpora()

  it.effect("agrees on every gold action sequence of the 50 tasks", () =>
    Effect.gen(function*() {
      const report = yield* runEquivalence(gold!)
      expect(report.disagree).toEqual([])
      expect(report).toMatchObject({ benchmark: "tau2-airline", lines: 50, agree: 50 })
    }), 120_000)

  it.effect("agrees on all 500 fuzz sequences: contents, error flags and both DB hashes", () =>
    Effect.gen(function*() {
      const report = yield* runEquivalence(fuzz!)
      expect(report.disagree).toEqual([])
      expect(report).toMatchObject({ lines: 500, agree: 500 })
    }), 300_000)

  it.effect("reports a corpus it cannot read, and a line that is not an oracle line", () =>
    Effect.gen(function*() {
      const data = yield* loadAirlineData()
      const unreadable = yield* Effect.flip(runCorpus(data.initialWorld, "/nonexistent/corpus.jsonl"))
      expect(unreadable.reason).toBe("unreadable")
      const dir = tempDir("tau2-airline-corpus-")
      const path = join(dir, "bad.jsonl")
      yield* Effect.promise(() => writeFile(path, '{"task_id": "x"}\n'))
      const malformed = yield* Effect.flip(runCorpus(data.initialWorld, path))
      expect(malformed).toMatchObject({ reason: "malformed", line: 1 })
      expect(malformed.message).toContain("an airline oracle line")
    }))

  it.effect("names the first differing field of a line that disagrees", () =>
    Effect.gen(function*() {
      const data = yield* loadAirlineData()
      const dir = tempDir("tau2-airline-corpus-")
      const path = join(dir, "one.jsonl")
      const line = {
        task_id: "t",
        actions: [{ name: "get_flight_status", arguments: { flight_number: "HAT001", date: "2024-05-03" }, error: false, content: '"cancelled"' }],
        final_db_sha256: "0",
        upstream_db_hash: "0"
      }
      yield* Effect.promise(() => writeFile(path, JSON.stringify(line) + "\n"))
      const report = yield* runCorpus(data.initialWorld, path)
      expect(report.agree).toBe(0)
      expect(report.disagree).toEqual([{ line: 1, taskId: "t", field: "actions[0].content", expected: '"cancelled"', actual: "cancelled" }])
    }))
})
