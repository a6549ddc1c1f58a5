import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { byClauseType } from "../../../providers/contract-review/data.ts"
import { goldAnswer, goldReply, noneReply } from "../../../providers/contract-review/gold.ts"
import { gradeReply, indexContract } from "../../../providers/contract-review/grader.ts"
import { replyFor } from "../../../providers/contract-review/prompt.ts"
import { loadCases, readerAt } from "../../../providers/contract-review/upstream.ts"

const cuadDir = join(process.env["ASSAY_DATA_DIR"] ?? "../shared/data", "cuad")

/** The expected `none` reward, read straight from the gold files: mean over contracts of the share of absent types. */
const expectedNone = (): number => {
  const files = readdirSync(join(cuadDir, "gold")).filter((f) => f.endsWith(".json"))
  const shares = files.map((f) => {
    const gold = JSON.parse(readFileSync(join(cuadDir, "gold", f), "utf8")) as {
      clauses: Record<string, { present: boolean }>
    }
    const clauses = Object.values(gold.clauses)
    return clauses.filter((c) => !c.present).length / clauses.length
  })
  return shares.reduce((a, b) => a + b, 0) / shares.length
}

const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length

describe("scripted candidates on the dev contracts", () => {
  it.effect("gold scores 1.0 on every contract, passing every check, with CUAD precision and recall 1", () =>
    Effect.gen(function* () {
      const cases = yield* loadCases(readerAt())
      expect(cases).toHaveLength(8)
      for (const c of cases) {
        const g = gradeReply(indexContract(c), goldReply(c))
        expect({ id: c.id, reward: g.reward }).toEqual({ id: c.id, reward: 1 })
        expect(Object.values(g.checks).every((ok) => ok)).toBe(true)
        expect(g.cuad.fp + g.cuad.fn).toBe(0)
      }
    }))

  it.effect("none scores exactly the mean over contracts of the share of absent types", () =>
    Effect.gen(function* () {
      const cases = yield* loadCases(readerAt())
      const rewards = cases.map((c) => gradeReply(indexContract(c), noneReply).reward)
      expect(mean(rewards)).toBe(expectedNone())
    }))

  it.effect("a gold quote with its whitespace collapsed still matches on the real contracts", () =>
    Effect.gen(function* () {
      const cases = yield* loadCases(readerAt())
      for (const c of cases) {
        const contract = indexContract(c)
        const gold = goldAnswer(c)
        const collapsed = byClauseType((t) => ({
          present: gold[t].present,
          quotes: gold[t].quotes.map((q) => q.replace(/\s+/g, " "))
        }))
        expect(gradeReply(contract, replyFor(collapsed)).reward).toBe(1)
      }
    }))
})
