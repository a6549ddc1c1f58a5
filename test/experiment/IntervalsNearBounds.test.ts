/**
 * What a reader of a scorecard or comparison relies on near the ends of the scale and at few
 * tasks: an interval that does not collapse at all-0 or all-1, none from one task, a comparison's
 * p that is never 0, agrees with its interval and rejects identical candidates at most ~5% of the
 * time. Seeded simulations, so every figure is the same on every run.
 */
import { describe, expect, it } from "@effect/vitest"
import { comparisonsOfCells, scorecardsOfCells } from "../../src/experiment/Scorecards.ts"
import { clusteredMean, pairedClustered, seededUniform, wilson } from "../../src/experiment/Statistics.ts"
import { renderText } from "../../src/experiment/report/Text.ts"
import { cell } from "./cellSummaries.ts"

const tasksOf = (n: number) => Array.from({ length: n }, (_, t) => `t${t}`)

describe("the score's interval near 0 and 1", () => {
  it("at all-0 over 10 tasks reaches above 0, about as far as Wilson's 0 of 10", () => {
    const [card] = scorecardsOfCells(tasksOf(10).map((t) => cell("a", t, 0, 0)))
    expect(card?.meanReward).toBe(0)
    const [lo, hi] = card!.interval!
    expect(lo).toBe(0)
    // Wilson's 0/10 reaches 0.278; with t(9) for z, 0.338.
    expect(hi).toBeGreaterThanOrEqual(wilson(0, 10)[1])
    expect(hi).toBeLessThan(0.35)
    // And the pass rate's interval alike.
    expect(card?.passRateInterval).toEqual(card?.interval)
  })

  it("at all-1 is the mirror image, and repetitions of the same verdicts do not narrow it", () => {
    const once = scorecardsOfCells(tasksOf(10).map((t) => cell("a", t, 0, 1)))[0]!
    const five = scorecardsOfCells(tasksOf(10).flatMap((t) => [0, 1, 2, 3, 4].map((r) => cell("a", t, r, 1))))[0]!
    expect(once.interval![1]).toBe(1)
    expect(once.interval![0]).toBeCloseTo(1 - clusteredMean(Array.from({ length: 10 }, () => [0]), { seed: 0 }).interval![1], 12)
    expect(five.interval).toEqual(once.interval)
    expect(five.passRateInterval).toEqual(once.passRateInterval)
  })

  it("is none with one task, printed as a dash", () => {
    const cards = scorecardsOfCells([cell("a", "t1", 0, 1), cell("a", "t1", 1, 0)])
    expect(cards[0]).toMatchObject({ tasks: 1, interval: null, passRateInterval: null })
    const text = renderText({
      runId: "r-1",
      experimentId: "sha256:x",
      home: "/tmp/h",
      cells: { total: 2, ran: 2, kept: 0, stale: 0, skipped: 0, faulted: 0 },
      scorecards: cards,
      comparisons: [],
      frontier: []
    })
    const row = text.split("\n").find((l) => l.trimStart().startsWith("a ") && l.includes("0.500"))
    expect(row).toContain("—")
  })

  it("covers a true mean of 0.02 in at least 93% of 1,000 experiments of 10 tasks (the bootstrap covered 18%)", () => {
    const u = seededUniform(11)
    let covered = 0
    for (let e = 0; e < 1000; e++) {
      const tasks = Array.from({ length: 10 }, () => [u() < 0.02 ? 1 : 0])
      const i = clusteredMean(tasks, { seed: e }).interval!
      if (i[0] <= 0.02 && 0.02 <= i[1]) covered++
    }
    expect(covered / 1000).toBeGreaterThanOrEqual(0.93)
  })
})

describe("comparisons' p and interval", () => {
  it("never give p = 0: a candidate winning all of 5 tasks has the sign test's p = 1/16, nothing detectable", () => {
    const cells = tasksOf(5).flatMap((t) => [cell("a", t, 0, 1), cell("b", t, 0, 0)])
    const [c] = comparisonsOfCells(cells)
    expect(c?.p).toBe(0.0625)
    expect(c?.interval).toEqual([-1, 1])
    expect(c?.minimumDetectable).toBeUndefined()
    // Varied margins, still all wins: the same p (only the signs can be trusted with 5 tasks).
    expect(pairedClustered([0.6, 0.8, 1, 0.4, 0.7].map((d) => ({ a: [d], b: [0] })), { seed: 1 }).p).toBe(0.0625)
    // 40 tasks, all won: p is small but not 0 (1 in the 9,999 flips drawn, the observed one).
    const many = comparisonsOfCells(tasksOf(40).flatMap((t) => [cell("a", t, 0, 1), cell("b", t, 0, 0)]))[0]!
    expect(many.p).toBeGreaterThan(0)
    expect(many.p).toBeLessThan(0.001)
    // The differences do not vary: no "±0.000 detectable".
    expect(many.minimumDetectable).toBeUndefined()
  })

  it("reject identical candidates in at most 7% of 200 seeded experiments at 5, 10 and 14 tasks, and p < 0.05 exactly when the interval leaves out 0", () => {
    const u = seededUniform(77)
    for (const tasks of [5, 10, 14]) {
      let rejected = 0
      for (let e = 0; e < 200; e++) {
        // Each task's difficulty shared by both candidates; three repetitions each.
        const pairs = Array.from({ length: tasks }, () => {
          const p = u()
          const draw = () => [0, 1, 2].map(() => (u() < p ? 1 : 0))
          return { a: draw(), b: draw() }
        })
        const d = pairedClustered(pairs, { seed: e })
        const excludes = d.interval![0] > 0 || d.interval![1] < 0
        expect(d.p < 0.05).toBe(excludes)
        expect(d.p).toBeGreaterThan(0)
        if (d.p < 0.05) rejected++
      }
      console.log(`identical candidates, ${tasks} tasks: p < 0.05 in ${rejected} of 200`)
      expect(rejected / 200).toBeLessThanOrEqual(0.07)
    }
  })

  it("do not collapse when every task's difference is the same: 20 of 20 won says the difference is above about 0.68, not that it is 1; 20 ties leave room either side", () => {
    const won = comparisonsOfCells(tasksOf(20).flatMap((t) => [cell("a", t, 0, 1), cell("b", t, 0, 0)]))[0]!
    // Wilson's 20 of 20 on the scale (d + 1) / 2: a lower bound of 0.839, so 2 × 0.839 − 1.
    expect(won.interval![0]).toBeGreaterThan(0.6)
    expect(won.interval![0]).toBeLessThan(0.75)
    expect(won.interval![1]).toBe(1)
    expect(won.p).toBeLessThan(0.001)
    const tied = comparisonsOfCells(tasksOf(20).flatMap((t) => [cell("a", t, 0, 1), cell("b", t, 0, 1)]))[0]!
    expect(tied.interval![0]).toBeLessThan(-0.3)
    expect(tied.interval![1]).toBeGreaterThan(0.3)
    expect(tied.p).toBe(1)
  })

  it("cover a true difference of 0.94 (a wins 97% of tasks, b 3%) in at least 93% of 500 experiments of 20 tasks (the sign-flip interval alone covered 68%)", () => {
    const u = seededUniform(5)
    let covered = 0
    for (let e = 0; e < 500; e++) {
      const pairs = Array.from({ length: 20 }, () => ({ a: [u() < 0.97 ? 1 : 0], b: [u() < 0.03 ? 1 : 0] }))
      const d = pairedClustered(pairs, { seed: e, resamples: 999 })
      if (d.interval![0] <= 0.94 && 0.94 <= d.interval![1]) covered++
    }
    expect(covered / 500).toBeGreaterThanOrEqual(0.93)
  })

  it("give no interval and no p with one task", () => {
    const [c] = comparisonsOfCells([cell("a", "t1", 0, 1), cell("b", "t1", 0, 0)])
    expect(c).toMatchObject({ n: 1, difference: 1, interval: null })
    expect(c?.p).toBeUndefined()
  })
})

describe("cells the benchmark's own code failed", () => {
  it("are counted apart, never in n, the mean, the interval, the pass rate or a comparison", () => {
    const failed = (candidate: string, task: string) => cell(candidate, task, 0, 0, { ended: "evaluator-failed", providerFailed: true, failures: ["ended:evaluator-failed"] })
    const cells = [
      failed("a", "t1"), cell("a", "t2", 0, 1), cell("a", "t3", 0, 1),
      failed("b", "t1"), cell("b", "t2", 0, 0), cell("b", "t3", 0, 1)
    ]
    const a = scorecardsOfCells(cells).find((c) => c.candidate === "a")
    expect(a).toMatchObject({ n: 2, tasks: 2, meanReward: 1, passRate: 1, providerFailed: 1 })
    expect(a?.failures).toEqual({})
    expect(comparisonsOfCells(cells)[0]).toMatchObject({ n: 2, difference: 0.5 })
  })
})
