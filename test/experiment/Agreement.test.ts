import { describe, expect, it } from "@effect/vitest"
import { agreement, cohensKappa, type PairedDecision, selfConsistency } from "../../src/experiment/Agreement.ts"

/** `n` pairs `[a, b]`. */
const times = (n: number, a: boolean, b: boolean): ReadonlyArray<readonly [boolean, boolean]> => Array.from({ length: n }, () => [a, b] as const)

describe("cohensKappa", () => {
  it("the textbook table (20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no) gives 0.7 observed, 0.5 by chance, kappa 0.4", () => {
    // By hand: observed (20 + 15) / 50 = 0.7; a says yes 25/50, b 30/50; chance 0.5·0.6 + 0.5·0.4 = 0.5;
    // kappa (0.7 − 0.5) / (1 − 0.5) = 0.4.
    const k = cohensKappa([...times(20, true, true), ...times(5, true, false), ...times(10, false, true), ...times(15, false, false)])
    expect(k.n).toBe(50)
    expect(k.observed).toBeCloseTo(0.7, 12)
    expect(k.expected).toBeCloseTo(0.5, 12)
    expect(k.kappa).toBeCloseTo(0.4, 12)
  })

  it("is 1 for judges always alike on both answers, 0 for agreement at chance, below 0 for systematic disagreement", () => {
    expect(cohensKappa([...times(3, true, true), ...times(2, false, false)]).kappa).toBe(1)
    // Each says yes half the time, alike half the time: exactly what chance gives.
    expect(cohensKappa([[true, true], [true, false], [false, true], [false, false]]).kappa).toBeCloseTo(0, 12)
    expect(cohensKappa([[true, false], [false, true]]).kappa).toBeCloseTo(-1, 12)
  })

  it("is undefined (NaN) when both judges said yes to everything: nothing is left for chance to explain", () => {
    const k = cohensKappa(times(4, true, true))
    expect(k.observed).toBe(1)
    expect(k.kappa).toBeNaN()
  })
})

describe("agreement", () => {
  const decisions = (cluster: string, pairs: ReadonlyArray<readonly [boolean, boolean]>): ReadonlyArray<PairedDecision> =>
    pairs.map(([a, b]) => ({ cluster, a, b }))

  it("pools every task's decisions for the estimate, and counts tasks as the unit", () => {
    // 7 of 10 alike; a yes 8/10, b yes 7/10: chance 0.8·0.7 + 0.2·0.3 = 0.62, kappa 0.08/0.38.
    const all = [
      ...decisions("t1", [[true, false], [true, true], [true, true]]),
      ...decisions("t2", [[true, true], [true, true], [false, false]]),
      ...decisions("t3", [[true, true], [true, false]]),
      ...decisions("t4", [[false, true], [true, true]])
    ]
    const a = agreement(all, { seed: 1 })
    expect(a).toMatchObject({ n: 10, clusters: 4, agree: 7 })
    expect(a.observed).toBeCloseTo(0.7, 12)
    expect(a.kappa).toBeCloseTo(0.08 / 0.38, 12)
    const [lo, hi] = a.observedInterval!
    expect(lo).toBeLessThanOrEqual(0.7)
    expect(hi).toBeGreaterThanOrEqual(0.7)
    // The same decisions and seed give the same intervals.
    expect(agreement(all, { seed: 1 })).toEqual(a)
  })

  it("gives no interval from one task: resampling one task says nothing of others", () => {
    const a = agreement(decisions("t1", [[true, true], [true, false], [false, false]]), { seed: 1 })
    expect(a.observedInterval).toBeNull()
    expect(a.kappaInterval).toBeNull()
  })

  it("an interval clustered by task is wider than the tasks' decisions would give if independent", () => {
    // Two tasks agree on everything, two on nothing: the decisions within a task move together.
    const all = [
      ...decisions("t1", times(10, true, true)),
      ...decisions("t2", times(10, false, false)),
      ...decisions("t3", times(10, true, false)),
      ...decisions("t4", times(10, false, true))
    ]
    const a = agreement(all, { seed: 7 })
    expect(a.observed).toBe(0.5)
    const [lo, hi] = a.observedInterval!
    // The Wilson interval for 20 of 40 is about [0.35, 0.65]; with 4 tasks the bootstrap can draw 0 or 1.
    expect(hi - lo).toBeGreaterThan(0.5)
  })
})

describe("selfConsistency", () => {
  it("hand-computed: of four inputs asked three times, two unanimous, pairs alike 1, 1/3, 1, 1/3", () => {
    const c = selfConsistency([[true, true, true], [true, false, true], [false, false, false], [true, false, false]])
    expect(c).toMatchObject({ inputs: 4, repetitions: 3, unanimous: 0.5 })
    expect(c!.pairwise).toBeCloseTo(2 / 3, 12)
  })

  it("leaves out inputs asked once, and says nothing when none was asked twice", () => {
    expect(selfConsistency([[true], [false]])).toBeNull()
    expect(selfConsistency([[true], [true, false]])).toMatchObject({ inputs: 1, unanimous: 0, pairwise: 0 })
  })
})
