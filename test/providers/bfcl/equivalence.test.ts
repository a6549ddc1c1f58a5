import { describe, expect, it } from "@effect/vitest"
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import { bfclEquivalence, runEquivalence } from "../../../providers/bfcl/equivalence.ts"
import { LONG_CONTEXT_ENV } from "../../../providers/bfcl/multiturn/longContext.ts"
import { tempDir } from "../../support/tempDirs.ts"

const dataDir = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"

describe("bfcl equivalence with upstream's checker", () => {
  it.effect("every line of the dev oracle corpus agrees on valid and error_type, and on the errors list", () =>
    Effect.gen(function*() {
      const report = yield* runEquivalence(join(dataDir, "bfcl", "oracle", "verdicts-dev.jsonl"), { dataDir })
      expect(report.lines).toBe(17972)
      expect(report.disagree).toEqual([])
      expect(report.agree).toBe(17972)
      expect(report.errorsAgree).toBe(17972)
    }))
})

describe("assay equivalence bfcl: the single-turn verdicts and the multi-turn corpora", () => {
  const shared = resolve(dataDir)
  const head = (file: string, n: number) => readFileSync(join(shared, "bfcl", "oracle", file), "utf8").split("\n").slice(0, n).join("\n") + "\n"
  // A data folder with the real task files and the first lines of each corpus (no long_context.py)
  const folder = (edit: (file: string, text: string) => string = (_, t) => t) => {
    const d = tempDir("assay-bfcl-eq-")
    mkdirSync(join(d, "bfcl", "oracle", "multi-turn"), { recursive: true })
    symlinkSync(join(shared, "bfcl", "v4"), join(d, "bfcl", "v4"))
    for (const [file, n] of [["verdicts-dev.jsonl", 40], ["multi-turn/exec-dev.jsonl", 10], ["multi-turn/fuzz-dev.jsonl", 40], ["multi-turn/verdicts-dev.jsonl", 30]] as const) {
      writeFileSync(join(d, "bfcl", "oracle", file), edit(file, head(file, n)))
    }
    return d
  }
  const withoutLongContext = process.env[LONG_CONTEXT_ENV] === undefined

  it.effect("runs every corpus present, one figure each, and sums them; long-context lines without long_context.py are not checked, and said so", () =>
    Effect.gen(function*() {
      const d = folder()
      const r = yield* bfclEquivalence(null, { dataDir: d })
      expect(r.corpora.map((c) => [c.kind, c.lines])).toEqual([
        ["single-turn verdicts", 40],
        ["multi-turn exec", 10],
        ["multi-turn fuzz", 40],
        ["multi-turn verdicts", 30]
      ])
      expect(r.lines).toBe(120)
      expect(r.disagree).toEqual([])
      for (const c of r.corpora) expect(c.agree + c.notChecked).toBe(c.lines)
      expect(r.agree).toBe(120 - r.corpora.reduce((n, c) => n + c.notChecked, 0))
      expect(r.notes[0]).toBe(`  single-turn verdicts (${join(d, "bfcl", "oracle", "verdicts-dev.jsonl")}): 40 of 40 lines agree`)
      if (withoutLongContext) {
        const fuzz = r.corpora.find((c) => c.kind === "multi-turn fuzz")
        expect(fuzz?.notChecked).toBeGreaterThan(0)
        expect(r.notes.at(-1)).toContain("long-context lines need upstream's long_context.py at")
      }
    }))

  it.effect("the multi-turn corpora alone (singleTurn: false), and a data error naming the folder when there are none", () =>
    Effect.gen(function*() {
      const d = folder()
      const r = yield* bfclEquivalence(null, { dataDir: d, singleTurn: false })
      expect(r.corpora.map((c) => c.kind)).toEqual(["multi-turn exec", "multi-turn fuzz", "multi-turn verdicts"])
      const none = tempDir("assay-bfcl-eq-")
      const refused = yield* Effect.flip(bfclEquivalence(null, { dataDir: none, singleTurn: false }))
      expect(refused.reason).toBe("missing")
      expect(refused.message).toContain(join(none, "bfcl", "oracle", "multi-turn"))
    }))

  it.effect("--corpus takes a file of any of the four formats, told by its lines; another file is a data error", () =>
    Effect.gen(function*() {
      const d = folder()
      const exec = yield* bfclEquivalence(join(d, "bfcl", "oracle", "multi-turn", "exec-dev.jsonl"), { dataDir: d })
      expect(exec.corpora.map((c) => c.kind)).toEqual(["multi-turn exec"])
      expect(exec).toMatchObject({ lines: 10, agree: 10, notes: [] })
      const single = yield* bfclEquivalence(join(d, "bfcl", "oracle", "verdicts-dev.jsonl"), { dataDir: d })
      expect(single.corpora.map((c) => c.kind)).toEqual(["single-turn verdicts"])
      const other = join(d, "other.jsonl")
      writeFileSync(other, '{"hello": 1}\n')
      const refused = yield* Effect.flip(bfclEquivalence(other, { dataDir: d }))
      expect(refused.message).toContain("neither single-turn verdicts")
    }))

  it.effect("a multi-turn verdict that differs from upstream's is a disagreement, named with its corpus and line", () =>
    Effect.gen(function*() {
      // Line 3 of the multi-turn verdicts says the answer is valid when upstream found it is not, or the reverse
      const d = folder((file, text) => {
        if (file !== "multi-turn/verdicts-dev.jsonl") return text
        const lines = text.split("\n")
        const o = JSON.parse(lines[2] as string) as { valid: boolean }
        lines[2] = JSON.stringify({ ...o, valid: !o.valid })
        return lines.join("\n")
      })
      const r = yield* bfclEquivalence(join(d, "bfcl", "oracle", "multi-turn", "verdicts-dev.jsonl"), { dataDir: d })
      expect(r.agree).toBe(29)
      expect(r.disagree).toMatchObject([{ corpus: join(d, "bfcl", "oracle", "multi-turn", "verdicts-dev.jsonl"), line: 3, field: "valid" }])
    }))
})
