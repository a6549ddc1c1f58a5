import { readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { defaultCorpora, runEquivalence } from "../../../../providers/tau2/telecom/equivalence.ts"
import { tempDir } from "../../../support/tempDirs.ts"

describe("equivalence with upstream's telecom environment", () => {
  const [gold, fuzz] = defaultCorpora()

  it.effect("agrees on all 114 gold lines: initial state, contents, flags, four hashes, env assertions, evaluator reference", () =>
    Effect.gen(function* () {
      const report = yield* runEquivalence(gold!)
      expect(report.disagree).toEqual([])
      expect(report).toMatchObject({ benchmark: "tau2-telecom", lines: 114, agree: 114 })
    }), 120_000)

  it.effect("agrees on all 200 fuzz lines, pinned bill ids and VPN aliasing included", () =>
    Effect.gen(function* () {
      const report = yield* runEquivalence(fuzz!)
      expect(report.disagree).toEqual([])
      expect(report).toMatchObject({ lines: 200, agree: 200 })
    }), 120_000)

  it.effect("with no corpus runs both, numbering lines across them", () =>
    Effect.gen(function* () {
      const report = yield* runEquivalence(null)
      expect(report).toMatchObject({ lines: 314, agree: 314, corpus: `${gold},${fuzz}` })
    }), 240_000)

  it.effect("names the first differing field when a line is tampered with", () =>
    Effect.gen(function* () {
      const first = (yield* Effect.promise(() => readFile(gold!, "utf8"))).split("\n")[0]!
      const line = JSON.parse(first) as { env_assertions: Array<{ met: boolean }>; final_user_db_sha256: string }
      const dir = tempDir("telecom-corpus-")
      const flipped = { ...line, env_assertions: line.env_assertions.map((a, i) => (i === 1 ? { ...a, met: !a.met } : a)) }
      const path = join(dir, "tampered.jsonl")
      // Floats in arguments must survive as floats: keep the original text for the actions.
      const text = first.replace(/"env_assertions":.*}$/, `"env_assertions":${JSON.stringify(flipped.env_assertions)}}`)
      yield* Effect.promise(() => writeFile(path, text + "\n"))
      const report = yield* runEquivalence(path)
      expect(report.agree).toBe(0)
      expect(report.disagree[0]).toMatchObject({ line: 1, field: "env_assertions[1].met", expected: "false", actual: "true" })
    }))

  it.effect("refuses a line that is not a telecom oracle line", () =>
    Effect.gen(function* () {
      const dir = tempDir("telecom-corpus-")
      const path = join(dir, "bad.jsonl")
      yield* Effect.promise(() => writeFile(path, '{"task_id": "x"}\n'))
      const error = yield* Effect.flip(runEquivalence(path))
      expect(error).toMatchObject({ _tag: "CorpusError", reason: "malformed", line: 1 })
    }))
})
