import { describe, expect, it } from "@effect/vitest"
import { recommend, type ResultRow } from "../../src/harness/Recommend.ts"

/** `n` runs of a candidate on a task, each with the given score, cost and wall time. */
const runs = (
  candidate: string,
  task: string,
  role: ResultRow["role"],
  n: number,
  score: number,
  costUsd: number | undefined,
  wallMs: number
): Array<ResultRow> => Array.from({ length: n }, () => ({ candidate, task, role, status: "done" as const, score, costUsd, wallMs }))

describe("recommendation", () => {
  it("the orchestrator is the highest orchestrator score; role `both` tasks count for both roles", () => {
    const r = recommend([
      ...runs("a", "plan", "orchestrator", 3, 0.9, 0.5, 1000),
      ...runs("b", "plan", "orchestrator", 3, 0.7, 0.1, 500),
      ...runs("a", "port", "both", 3, 0.9, 0.5, 1000),
      ...runs("b", "port", "both", 3, 0.9, 0.1, 500)
    ])
    expect(r.orchestrator?.candidate).toBe("a")
    expect(r.standings.worker.map((s) => s.candidate)).toEqual(["a", "b"])
    expect(r.worker?.candidate).toBe("b")
    expect(r.warnings).toEqual([])
    expect(r.smallestSample).toBe(3)
  })

  it("orchestrator scores within 0.005 go to the lower median cost, then the lower median wall time", () => {
    const tiedOnScore = recommend([
      ...runs("pricey", "plan", "orchestrator", 3, 0.8, 0.9, 100),
      ...runs("cheap", "plan", "orchestrator", 3, 0.796, 0.2, 900)
    ])
    expect(tiedOnScore.orchestrator?.candidate).toBe("cheap")
    expect(tiedOnScore.orchestrator?.basis).toContain("lower median cost")
    const tiedOnCost = recommend([
      ...runs("slow", "plan", "orchestrator", 3, 0.8, 0.2, 900),
      ...runs("fast", "plan", "orchestrator", 3, 0.8, 0.2, 100)
    ])
    expect(tiedOnCost.orchestrator?.candidate).toBe("fast")
    const notTied = recommend([
      ...runs("best", "plan", "orchestrator", 3, 0.8, 0.9, 900),
      ...runs("close", "plan", "orchestrator", 3, 0.79, 0.1, 100)
    ])
    expect(notTied.orchestrator?.candidate).toBe("best")
  })

  it("an unknown cost is never taken as cheap: a tie with an unknown cost is decided by wall time", () => {
    const r = recommend([
      ...runs("known", "plan", "orchestrator", 3, 0.8, 0.01, 900),
      ...runs("unknown", "plan", "orchestrator", 2, 0.8, undefined, 100),
      ...runs("unknown", "plan", "orchestrator", 1, 0.8, 0.0, 100)
    ])
    expect(r.standings.orchestrator.find((s) => s.candidate === "unknown")?.medianCostUsd).toBeUndefined()
    expect(r.orchestrator?.candidate).toBe("unknown")
    expect(r.orchestrator?.basis).toContain("wall time")
  })

  it("the worker is the cheapest within 0.10 of the best worker score; unknown costs are passed over", () => {
    const r = recommend([
      ...runs("best", "fix", "worker", 3, 0.9, 1.0, 100),
      ...runs("near", "fix", "worker", 3, 0.8, 0.2, 500),
      ...runs("near-unknown", "fix", "worker", 3, 0.85, undefined, 50),
      ...runs("far", "fix", "worker", 3, 0.7, 0.01, 10)
    ])
    expect(r.worker?.candidate).toBe("near")
    expect(r.worker?.basis).toContain("lowest median cost among 3")
  })

  it("with no cost known the worker is the fastest; equal costs go to the higher score", () => {
    const noCost = recommend([
      ...runs("slow", "fix", "worker", 3, 0.9, undefined, 800),
      ...runs("fast", "fix", "worker", 3, 0.85, undefined, 200)
    ])
    expect(noCost.worker?.candidate).toBe("fast")
    expect(noCost.worker?.basis).toContain("no cost known")
    const sameCost = recommend([
      ...runs("lower", "fix", "worker", 3, 0.85, 0.3, 100),
      ...runs("higher", "fix", "worker", 3, 0.9, 0.3, 900)
    ])
    expect(sameCost.worker?.candidate).toBe("higher")
  })

  it("reports the smallest sample per cell and warns below 3; skipped and unscored rows are not samples", () => {
    const r = recommend([
      ...runs("a", "fix", "worker", 3, 0.9, 0.1, 100),
      ...runs("a", "csv", "worker", 2, 0.9, 0.1, 100),
      { candidate: "a", task: "csv", role: "worker", status: "skipped", score: undefined, costUsd: undefined, wallMs: 0 },
      { candidate: "a", task: "csv", role: "worker", status: "done", score: undefined, costUsd: 0.1, wallMs: 100 }
    ])
    expect(r.smallestSample).toBe(2)
    expect(r.warnings).toEqual(["smallest sample per cell is 2 (below 3): the recommendation is not reliable"])
    expect(r.standings.worker[0]?.runs).toBe(5)
  })

  it("nothing scored: no picks and a warning", () => {
    const r = recommend([])
    expect(r.orchestrator).toBeUndefined()
    expect(r.worker).toBeUndefined()
    expect(r.smallestSample).toBeUndefined()
    expect(r.warnings).toHaveLength(1)
  })
})
