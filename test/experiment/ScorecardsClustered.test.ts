/**
 * Scorecards and comparisons from cell summaries: outages apart, intervals and comparisons by
 * task, uneven repetitions weighted per task, strata with intervals of their own, Holm's mark.
 */
import { describe, expect, it } from "@effect/vitest"
import { type CellSummary, comparisonsOfCells, isOutage, outagesOfCells, scorecardsOfCells } from "../../src/experiment/Scorecards.ts"
import { clusteredMean } from "../../src/experiment/Statistics.ts"
import { cell } from "./cellSummaries.ts"

const outage = (candidate: string, task: string, repetition: number): CellSummary =>
  cell(candidate, task, repetition, 0, {
    ended: "fault",
    outage: true,
    failures: ["ended:fault"],
    faults: [{ effect: "model/generate:agent", occurrence: 0, reason: "unreachable", injected: false }]
  })

describe("outages", () => {
  it("are counted on the scorecard and listed, never in n, the mean, the interval, the pass rate or a comparison", () => {
    const cells = [
      cell("a", "t1", 0, 1), cell("a", "t2", 0, 1), outage("a", "t3", 0), outage("a", "t4", 0),
      cell("b", "t1", 0, 0), cell("b", "t2", 0, 1), cell("b", "t3", 0, 1), cell("b", "t4", 0, 0)
    ]
    const a = scorecardsOfCells(cells).find((c) => c.candidate === "a")
    expect(a).toMatchObject({ n: 2, tasks: 2, meanReward: 1, interval: clusteredMean([[1], [1]], { seed: 0 }).interval, passRate: 1, outages: 2 })
    expect(a?.failures).toEqual({})
    const [comparison] = comparisonsOfCells(cells)
    // Only t1 and t2 are paired: a − b = (1 − 0 + 1 − 1) / 2.
    expect(comparison).toMatchObject({ a: "a", b: "b", n: 2, difference: 0.5 })
    expect(outagesOfCells(cells).map((o) => [o.candidate, o.task, o.reasons])).toEqual([["a", "t3", ["unreachable"]], ["a", "t4", ["unreachable"]]])
  })

  it("are told from injected faults, which count (and older summaries without the mark by their injected count)", () => {
    const injected = cell("a", "t1", 0, 0, { ended: "fault", outage: false, injected: 1 })
    const olderOutage = cell("a", "t2", 0, 0, { ended: "fault", injected: 0 })
    const olderInjected = cell("a", "t3", 0, 0, { ended: "fault", injected: 2 })
    expect([injected, olderOutage, olderInjected].map(isOutage)).toEqual([false, true, false])
    expect(scorecardsOfCells([injected, olderOutage, olderInjected])[0]).toMatchObject({ n: 2, outages: 1 })
  })
})

describe("intervals clustered by task", () => {
  it("weigh each task once whatever its repetitions: the mean is the mean of per-task means", () => {
    // t1 has four passing repetitions (a resume left t2 with one failure): 0.5, not 4/5.
    const cells = [cell("a", "t1", 0, 1), cell("a", "t1", 1, 1), cell("a", "t1", 2, 1), cell("a", "t1", 3, 1), cell("a", "t2", 0, 0)]
    const [card] = scorecardsOfCells(cells)
    expect(card).toMatchObject({ n: 5, tasks: 2, meanReward: 0.5 })
    expect(card?.interval).toEqual(clusteredMean([[1, 1, 1, 1], [0]], { seed: 20261130 }).interval)
  })

  it("do not narrow with repetitions of the same tasks", () => {
    const tasks = Array.from({ length: 20 }, (_, t) => `t${t}`)
    const once = tasks.map((t, i) => cell("a", t, 0, i % 2))
    // Five repetitions agreeing with the first: no more information about other tasks.
    const five = tasks.flatMap((t, i) => [0, 1, 2, 3, 4].map((r) => cell("a", t, r, i % 2)))
    const [w1] = scorecardsOfCells(once)
    const [w5] = scorecardsOfCells(five)
    expect(w5?.interval).toEqual(w1?.interval)
    expect(w5?.noise).toMatchObject({ repetitions: 5, flipRate: 0, repetitionSd: 0, withinShare: 0 })
  })

  it("give strata intervals of their own", () => {
    const cells = [
      ...["t1", "t2", "t3"].map((t) => cell("a", t, 0, 1, { stratum: "easy" })),
      ...["t4", "t5", "t6"].map((t, i) => cell("a", t, 0, i === 0 ? 1 : 0, { stratum: "hard" }))
    ]
    const cards = scorecardsOfCells(cells)
    expect(cards.map((c) => [c.stratum, c.tasks, c.meanReward])).toEqual([[null, 6, 4 / 6], ["easy", 3, 1], ["hard", 3, 1 / 3]])
    // Each stratum's interval is of its own tasks: the easy one's three passes, not the whole's six tasks.
    expect(cards.find((c) => c.stratum === "easy")?.interval).toEqual(clusteredMean([[1], [1], [1]], { seed: 0 }).interval)
    expect(cards.find((c) => c.stratum === null)?.interval).toEqual(clusteredMean([[1], [1], [1], [1], [0], [0]], { seed: 0 }).interval)
  })
})

describe("comparisons", () => {
  it("pair per-task means, not repetition i with repetition i", () => {
    // a passes t1 on its first repetition, b on its second: per task they are equal.
    const cells = [cell("a", "t1", 0, 1), cell("a", "t1", 1, 0), cell("b", "t1", 0, 0), cell("b", "t1", 1, 1), cell("a", "t2", 0, 1), cell("b", "t2", 0, 1)]
    const [c] = comparisonsOfCells(cells)
    // Two tasks: no difference is rejected at 5% (the smallest p is 0.5), so the interval is the whole scale.
    expect(c).toMatchObject({ n: 2, difference: 0, interval: [-1, 1], p: 1 })
  })

  it("with more than two candidates, mark which stay significant after Holm's correction", () => {
    const tasks = Array.from({ length: 30 }, (_, t) => `t${t}`)
    const cells = [
      ...tasks.map((t) => cell("strong", t, 0, 1)),
      ...tasks.map((t, i) => cell("weak", t, 0, i % 5 === 0 ? 1 : 0)),
      ...tasks.map((t, i) => cell("weaker", t, 0, i % 6 === 0 ? 1 : 0))
    ]
    const comparisons = comparisonsOfCells(cells)
    expect(comparisons).toHaveLength(3)
    const holmOf = (a: string, b: string) => comparisons.find((c) => c.a === a && c.b === b)?.holm
    expect(holmOf("strong", "weak")).toBe(true)
    expect(holmOf("strong", "weaker")).toBe(true)
    expect(holmOf("weak", "weaker")).toBe(false)
    // Two candidates: one comparison, no family to correct.
    expect(comparisonsOfCells(cells.filter((c) => c.candidate !== "weaker"))[0]?.holm).toBeUndefined()
  })

  it("leave the scripted references out of Holm's family when two contenders remain: they do not cost the contenders significance", () => {
    const tasks = Array.from({ length: 12 }, (_, t) => `t${t}`)
    // strong passes 10 of 12 where weak passes 2: significant alone; the one comparison of contenders is no family.
    const cells = [
      ...tasks.map((t, i) => cell("strong", t, 0, i < 10 ? 1 : 0)),
      ...tasks.map((t, i) => cell("weak", t, 0, i < 2 ? 1 : 0)),
      ...tasks.map((t) => cell("gold", t, 0, 1)),
      ...tasks.map((t) => cell("echo", t, 0, 0))
    ]
    const comparisons = comparisonsOfCells(cells)
    expect(comparisons).toHaveLength(6)
    const of = (a: string, b: string) => comparisons.find((c) => (c.a === a && c.b === b) || (c.a === b && c.b === a))!
    expect(of("strong", "weak").p).toBeLessThan(0.05)
    expect(of("strong", "weak").holm).toBeUndefined()
    for (const [a, b] of [["strong", "gold"], ["weak", "echo"], ["gold", "echo"]] as const) expect(of(a, b).holm).toBeUndefined()
    // With one contender, the references are the family.
    expect(comparisonsOfCells(cells.filter((c) => c.candidate !== "weak")).every((c) => c.holm !== undefined)).toBe(true)
  })
})
