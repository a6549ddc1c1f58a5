import { describe, expect, it } from "@effect/vitest"
import { buildIndex, formatResults, pyLog, scores, search, tokenize } from "../../../../providers/tau2/banking/bm25.ts"
import { formatFixed } from "../../../../providers/tau2/banking/pyvalue.ts"

const doc = (id: string, content: string) => ({ id, title: `T ${id}`, content })

describe("BM25 as upstream's rank_bm25 BM25Okapi + BM25Retriever", () => {
  it("splits on Python's whitespace, not JavaScript's, and lowercases fully", () => {
    expect(tokenize("a\x1cb\u00a0c\u200bd\ufeffe  F")).toEqual(["a", "b", "c\u200bd\ufeffe", "f"])
    expect(tokenize("İ")).toEqual(["i\u0307"])
    expect(tokenize("card. Card")).toEqual(["card.", "card"])
  })

  it("computes math.log correctly rounded where V8's Math.log is one ulp off", () => {
    // Python 3.11 math.log values for k + 0.5.
    expect(pyLog(23.5)).toBe(3.1570004211501135)
    expect(pyLog(41.5)).toBe(3.7256934272366524)
    expect(pyLog(687.5)).toBe(6.533061829540727)
    expect(pyLog(0.5)).toBe(Math.log(0.5))
  })

  it("answers nothing for an empty or all-whitespace query", () => {
    const index = buildIndex([doc("a", "card fee"), doc("b", "fee")])
    expect(search(index, "")).toEqual([])
    expect(search(index, " \u3000\x1f ")).toEqual([])
    expect(formatResults(index, [])).toBe("No relevant documents found.\n\n[Timing: retrieval=0ms, total=0ms]")
  })

  it("keeps corpus order among equal scores and fills the top 10 with zero-score documents", () => {
    const docs = Array.from({ length: 12 }, (_, i) => doc(`d${i}`, i === 5 || i === 9 ? "wire transfer" : `other text ${i}`))
    const index = buildIndex(docs)
    const top = search(index, "transfer")
    expect(top.map(([id]) => id)).toEqual(["d5", "d9", "d0", "d1", "d2", "d3", "d4", "d6", "d7", "d8"])
    expect(top[0]![1]).toBe(top[1]![1])
    expect(top[2]![1]).toBe(0)
  })

  it("counts repeated query tokens and floors negative idf at 0.25 of the average idf", () => {
    const index = buildIndex([doc("a", "fee fee card"), doc("b", "fee"), doc("c", "loan")])
    const once = scores(index, ["card"])
    const twice = scores(index, ["card", "card"])
    expect(twice[0]).toBe(once[0]! + once[0]!)
    // "fee" is in 2 of 3 documents: log(1.5) - log(2.5) < 0, replaced by epsilon * average idf.
    expect(index.idf.get("fee")).toBeGreaterThan(0)
    expect(index.idf.get("fee")).toBeLessThan(index.idf.get("loan")!)
  })

  it("prints scores with :.4f, exact ties to even as Python does", () => {
    expect(formatFixed(0.125, 2)).toBe("0.12")
    expect(formatFixed(0.375, 2)).toBe("0.38")
    expect(formatFixed(2.675, 2)).toBe("2.67")
    expect(formatFixed(1.00005, 4)).toBe("1.0001")
    expect(formatFixed(-0.0, 2)).toBe("-0.00")
  })
})
