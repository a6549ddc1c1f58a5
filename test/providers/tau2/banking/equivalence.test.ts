import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { loadBankingData } from "../../../../providers/tau2/banking/data.ts"
import { defaultCorpora, makeReplayer, runCorpus, runEquivalence } from "../../../../providers/tau2/banking/equivalence.ts"
import { tempDir } from "../../../support/tempDirs.ts"

describe("equivalence with upstream's banking_knowledge (bm25) environment", () => {
  const [gold, fuzz, kb] = defaultCorpora()

  it.effect("agrees on the gold actions of all 97 tasks: contents, error flags, both DB hashes", () =>
    Effect.gen(function* () {
      const report = yield* runEquivalence(gold!)
      expect(report.disagree).toEqual([])
      expect(report).toMatchObject({ benchmark: "tau2-banking", lines: 97, agree: 97 })
    }), 120_000)

  it.effect("agrees on all 300 fuzz sequences (both sides' tools, unknown names, bad JSON, direct discoverable calls)", () =>
    Effect.gen(function* () {
      const report = yield* runEquivalence(fuzz!)
      expect(report.disagree).toEqual([])
      expect(report).toMatchObject({ lines: 300, agree: 300 })
    }), 300_000)

  it.effect("agrees on all 1,000 BM25 rankings, ids and exact float scores", () =>
    Effect.gen(function* () {
      const report = yield* runEquivalence(kb!)
      expect(report.disagree).toEqual([])
      expect(report).toMatchObject({ lines: 1000, agree: 1000 })
    }), 120_000)

  it.effect("with no corpus runs the three default corpora as one report", () =>
    Effect.gen(function* () {
      const report = yield* runEquivalence(null)
      expect(report).toMatchObject({ lines: 1397, agree: 1397 })
      expect(report.corpus.split(",")).toHaveLength(3)
    }), 300_000)

  it.effect("recognises each line's format by its fields and reports what differs", () =>
    Effect.gen(function* () {
      const r = makeReplayer(yield* loadBankingData())
      const dir = tempDir("tau2-banking-")
      const path = join(dir, "mixed.jsonl")
      const lines = [
        { seed: 1, query: "   ", results: [] },
        { seed: 2, query: "card", results: [["doc_x", 1.0]] },
        {
          task_id: "fuzz-x", seed: 0, init_task_id: null, read_log_allowlist: [],
          actions: [{ name: "get_current_time", requestor: "assistant", arguments: {}, error: false, content: "The current time is 2025-11-14 03:40:00 EST." }],
          final_db_sha256: "080022b082d21c3c3158cad908154d39056644b96ba76c0698430b07b1f5ae39",
          upstream_db_hash: "af324a7d72aced5889daf6cc044e573ad94ffa3bfe7cf65114fd3cfed5daaa48"
        },
        {
          task_id: "fuzz-y", seed: 1, init_task_id: null, read_log_allowlist: [],
          actions: [{ name: "get_current_time", requestor: "user", arguments: {}, error: false, content: "x" }],
          final_db_sha256: "0", upstream_db_hash: "0"
        }
      ]
      yield* Effect.promise(() => writeFile(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n"))
      const report = yield* runCorpus(r, path)
      expect(report.agree).toBe(2)
      expect(report.disagree.map((d) => [d.line, d.field])).toEqual([[2, "results"], [4, "actions[0].content"]])
      expect(report.disagree[1]!.actual).toBe("Error: Tool 'get_current_time' not found.")
    }))

  it.effect("refuses a corpus it cannot read and a line of no known format", () =>
    Effect.gen(function* () {
      const r = makeReplayer(yield* loadBankingData())
      const unreadable = yield* Effect.flip(runCorpus(r, "/nonexistent/corpus.jsonl"))
      expect(unreadable.reason).toBe("unreadable")
      const dir = tempDir("tau2-banking-")
      const path = join(dir, "bad.jsonl")
      yield* Effect.promise(() => writeFile(path, '{"task_id": "x"}\n'))
      const malformed = yield* Effect.flip(runCorpus(r, path))
      expect(malformed).toMatchObject({ reason: "malformed", line: 1 })
    }))
})
