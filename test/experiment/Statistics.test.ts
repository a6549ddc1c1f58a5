import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import {
  bootstrapMean,
  frontier,
  oneSidedUpperMean,
  pairedBootstrap,
  passHatK,
  quantileSorted,
  regularizedIncompleteBeta,
  seededUniform,
  studentTQuantile,
  wilson
} from "../../src/experiment/Statistics.ts"

// Expected values marked "reference" come from test/experiment/statistics_reference.py (numpy and
// scipy, with the PRNG and the resampling written again in Python from their definitions); run it
// with `python3 test/experiment/statistics_reference.py` to see them again.

describe("wilson", () => {
  it("gives the 95% Wilson interval of 85/100 from the closed form", () => {
    // p = 0.85, z = 1.959963984540054, z² = 3.841458820694124, n = 100
    // denominator = 1 + z²/n = 1.0384145882069412
    // center = (p + z²/2n) / denominator = 0.8692072941034706 / 1.0384145882069412 = 0.83705227...
    // half = z/denominator · sqrt(p(1-p)/n + z²/4n²) = 1.8874599... · sqrt(0.001275 + 0.0000960365)
    //      = 1.8874599... · 0.0370275... = 0.06988787...
    // reference: [0.7671644040916763, 0.9069401471634337]
    const [lo, hi] = wilson(85, 100)
    expect(lo).toBeCloseTo(0.7671644040916763, 14)
    expect(hi).toBeCloseTo(0.9069401471634337, 14)
  })

  it("stays inside [0, 1] at the extremes and knows nothing without trials", () => {
    const [lo0, hi0] = wilson(0, 10)
    expect(lo0).toBe(0)
    expect(hi0).toBeGreaterThan(0.2)
    const [lo1, hi1] = wilson(10, 10)
    expect(hi1).toBe(1)
    expect(lo1).toBeLessThan(0.8)
    expect(wilson(0, 0)).toEqual([0, 1])
  })
})

describe("seeded bootstraps", () => {
  it("draws the same uniforms as the independent Python implementation", () => {
    const u = seededUniform(42)
    // reference: first uniforms, seed 42
    expect([u(), u(), u(), u()]).toEqual([
      0.6606157226487994, 0.12688010395504534, 0.11170196393504739, 0.8149394164793193
    ])
  })

  const a = [1, 1, 0, 1, 0.5, 1, 1, 0, 0.8, 1, 0.25, 1, 0, 1, 0.35, 1, 0.75, 1, 0, 1] as const
  const b = [0, 1, 0.1, 1, 0, 0.5, 1, 0, 0.65, 1, 0, 1, 0, 0.2, 1, 1, 0.5, 0, 0.33, 1] as const
  const pairs = a.map((x, i) => [x, b[i] ?? 0] as const)
  const nonEmpty = <T>(xs: ReadonlyArray<T>): readonly [T, ...Array<T>] => {
    const [first, ...rest] = xs
    if (first === undefined) throw new Error("test sample is empty")
    return [first, ...rest]
  }

  it("computes the paired bootstrap of a fixed sample as the independent computation does", () => {
    const result = pairedBootstrap(nonEmpty(pairs), { seed: 2024, resamples: 2000 })
    // reference: paired difference 0.16849999999999998, interval [-0.0015374999999999966, 0.345]
    expect(result.n).toBe(20)
    expect(result.difference).toBeCloseTo(0.1685, 14)
    expect(result.interval[0]).toBeCloseTo(-0.0015374999999999966, 12)
    expect(result.interval[1]).toBeCloseTo(0.345, 12)
  })

  it("agrees with a naive resampling written out here", () => {
    // The same draws, written as plainly as possible: indices first, then means, then quantiles.
    const differences = pairs.map(([x, y]) => x - y)
    const u = seededUniform(99)
    const means: Array<number> = []
    for (let r = 0; r < 300; r++) {
      const indices = differences.map(() => Math.floor(u() * differences.length))
      means.push(indices.reduce((sum, i) => sum + (differences[i] ?? 0), 0) / differences.length)
    }
    means.sort((x, y) => x - y)
    const [lo, hi] = pairedBootstrap(nonEmpty(pairs), { seed: 99, resamples: 300 }).interval
    // Close, not equal: (1 - 0.95)/2 is 0.025 plus an ulp, which moves the interpolation slightly.
    expect(lo).toBeCloseTo(quantileSorted(nonEmpty(means), 0.025), 14)
    expect(hi).toBeCloseTo(quantileSorted(nonEmpty(means), 0.975), 14)
  })

  const wall = [12.4, 8.9, 30.2, 15.5, 9.1, 22.8, 11.0, 41.7, 13.3, 10.6, 18.2] as const

  it("gives the percentile interval of a mean as the independent computation does", () => {
    // reference: bootstrapMean(wall, seed 7): 12.372727272727273 23.9190909090909
    const [lo, hi] = bootstrapMean(nonEmpty(wall), { seed: 7 })
    expect(lo).toBeCloseTo(12.372727272727273, 10)
    expect(hi).toBeCloseTo(23.9190909090909, 10)
    // reference: 500 resamples, 90%: 13.017727272727274 22.637727272727265
    const [lo90, hi90] = bootstrapMean(nonEmpty(wall), { seed: 7, resamples: 500, confidence: 0.9 })
    expect(lo90).toBeCloseTo(13.017727272727274, 10)
    expect(hi90).toBeCloseTo(22.637727272727265, 10)
  })

  it("is reproducible for a seed and changes with the seed", () => {
    const once = bootstrapMean(nonEmpty(wall), { seed: 1 })
    expect(bootstrapMean(nonEmpty(wall), { seed: 1 })).toEqual(once)
    expect(bootstrapMean(nonEmpty(wall), { seed: 2 })).not.toEqual(once)
  })

  it("collapses to the value for a single cell", () => {
    expect(bootstrapMean([0.5], { seed: 3 })).toEqual([0.5, 0.5])
    expect(pairedBootstrap([[1, 0]], { seed: 3 })).toEqual({ n: 1, difference: 1, interval: [1, 1] })
  })
})

describe("passHatK", () => {
  it("averages C(c,k)/C(n,k) over tasks", () => {
    const tasks = [
      { n: 4, c: 4 },
      { n: 4, c: 2 },
      { n: 4, c: 0 }
    ]
    // k=1: (1 + 2/4 + 0)/3; k=2: (1 + C(2,2)/C(4,2) + 0)/3 = (1 + 1/6)/3; k=4: (1 + 0 + 0)/3
    expect(Option.getOrThrow(passHatK(tasks, 1))).toBeCloseTo(0.5, 15)
    expect(Option.getOrThrow(passHatK(tasks, 2))).toBeCloseTo(7 / 18, 15)
    expect(Option.getOrThrow(passHatK(tasks, 4))).toBeCloseTo(1 / 3, 15)
  })

  it("is none when some task has fewer repetitions than k, or there is nothing", () => {
    expect(passHatK([{ n: 4, c: 3 }, { n: 2, c: 2 }], 3)).toEqual(Option.none())
    expect(passHatK([], 1)).toEqual(Option.none())
    expect(passHatK([{ n: 4, c: 3 }], 0)).toEqual(Option.none())
  })
})

describe("Student t", () => {
  it("matches the printed t table", () => {
    // One-sided critical values from any t table.
    const table: ReadonlyArray<readonly [p: number, df: number, t: number]> = [
      [0.95, 1, 6.314],
      [0.95, 2, 2.92],
      [0.95, 5, 2.015],
      [0.95, 10, 1.812],
      [0.95, 30, 1.697],
      [0.975, 10, 2.228],
      [0.99, 3, 4.541],
      [0.999, 1, 318.309]
    ]
    for (const [p, df, t] of table) expect(studentTQuantile(p, df)).toBeCloseTo(t, 3)
  })

  it("matches scipy and the closed forms to ten digits", () => {
    // reference: scipy.stats.t.ppf
    expect(studentTQuantile(0.95, 5)).toBeCloseTo(2.0150483733330233, 10)
    expect(studentTQuantile(0.95, 30)).toBeCloseTo(1.697260886593957, 10)
    expect(studentTQuantile(0.95, 2.5)).toBeCloseTo(2.5582186141359355, 10)
    // df = 1 is Cauchy: tan(π(p - 1/2)); df = 2: (2p - 1)/sqrt(2p(1 - p)).
    expect(studentTQuantile(0.95, 1)).toBeCloseTo(Math.tan(Math.PI * 0.45), 9)
    expect(studentTQuantile(0.9, 2)).toBeCloseTo(0.8 / Math.sqrt(2 * 0.9 * 0.1), 10)
    expect(studentTQuantile(0.05, 5)).toBeCloseTo(-2.0150483733330233, 10)
    expect(studentTQuantile(0.5, 7)).toBe(0)
  })

  it("computes I_x(a, b) for the uniform and symmetric cases", () => {
    expect(regularizedIncompleteBeta(0.3, 1, 1)).toBeCloseTo(0.3, 14)
    expect(regularizedIncompleteBeta(0.5, 3.5, 3.5)).toBeCloseTo(0.5, 14)
  })

  it("bounds a mean from above as scipy does", () => {
    const costs = [0.012, 0.034, 0.019, 0.051, 0.022, 0.017]
    // mean + t(0.95, 5) · s/√6; reference: 0.03764521468019094 (0.95), 0.0455579982166041 (0.99)
    expect(Option.getOrThrow(oneSidedUpperMean(costs))).toBeCloseTo(0.03764521468019094, 12)
    expect(Option.getOrThrow(oneSidedUpperMean(costs, 0.99))).toBeCloseTo(0.0455579982166041, 12)
  })

  it("gives no bound from a single bill", () => {
    expect(oneSidedUpperMean([0.02])).toEqual(Option.none())
    expect(oneSidedUpperMean([])).toEqual(Option.none())
    expect(oneSidedUpperMean([0.02, 0.02])).toEqual(Option.some(0.02))
  })
})

describe("frontier", () => {
  it("keeps the points nothing cheaper beats, leaves unknown cost out", () => {
    const points = [
      { id: "gold", score: 1, cost: 0 },
      { id: "cheap", score: 0.4, cost: 0.5 },
      { id: "good", score: 0.8, cost: 2 },
      { id: "dominated", score: 0.7, cost: 3 },
      { id: "best", score: 0.95, cost: 10 },
      { id: "unknown", score: 0.99, cost: null }
    ]
    expect(frontier(points).map((p) => p.id)).toEqual(["gold"])
    expect(frontier(points.filter((p) => p.id !== "gold")).map((p) => p.id)).toEqual(["cheap", "good", "best"])
  })

  it("keeps equal points and drops a point equal in score but dearer", () => {
    const points = [
      { id: "a", score: 0.5, cost: 1 },
      { id: "b", score: 0.5, cost: 1 },
      { id: "c", score: 0.5, cost: 2 }
    ]
    expect(frontier(points).map((p) => p.id)).toEqual(["a", "b"])
  })
})
