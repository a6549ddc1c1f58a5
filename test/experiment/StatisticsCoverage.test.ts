/**
 * What the report's intervals promise, checked by simulation against a known model: tasks of
 * varying difficulty, each repeated, so a task's repetitions are correlated (they share its
 * difficulty). Seeded, so the figures are the same on every run and machine.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  bootstrapMean,
  clusteredMean,
  holm,
  minimumDetectable,
  noiseFloor,
  pairedBootstrap,
  pairedClustered,
  pairedVariance,
  seededUniform,
  tasksNeeded
} from "../../src/experiment/Statistics.ts"

type NonEmpty<T> = readonly [T, ...Array<T>]
const nonEmpty = <T>(xs: ReadonlyArray<T>): NonEmpty<T> => xs as unknown as NonEmpty<T>

/**
 * One experiment: `tasks` tasks × `reps` repetitions of two candidates. Task t has difficulty
 * x ~ U(0,1); a passes each repetition with chance x^1.5 (true mean 1/2.5), b with y^1.2 (true
 * mean 1/2.2), where y is the same x on half the tasks and a fresh draw on the others, so the
 * per-task difference itself varies from task to task.
 */
const experiment = (u: () => number, tasks: number, reps: number) => {
  const a: Array<Array<number>> = []
  const b: Array<Array<number>> = []
  for (let t = 0; t < tasks; t++) {
    const x = u()
    const y = u() < 0.5 ? x : u()
    const pa = x ** 1.5
    const pb = y ** 1.2
    const ra: Array<number> = []
    const rb: Array<number> = []
    for (let k = 0; k < reps; k++) {
      ra.push(u() < pa ? 1 : 0)
      rb.push(u() < pb ? 1 : 0)
    }
    a.push(ra)
    b.push(rb)
  }
  return { a, b, pairs: a.map((ra, i) => ({ a: ra, b: b[i] ?? [] })) }
}
const trueA = 1 / 2.5
const trueB = 1 / 2.2
const covers = (interval: readonly [number, number] | null, value: number) => interval !== null && interval[0] <= value && value <= interval[1]

describe("intervals clustered by task", () => {
  it("cover the true mean and the true paired difference in 94-96% of 2,000 experiments of 50 tasks × 5 repetitions; cell-level intervals do not", () => {
    const experiments = 2000
    const u = seededUniform(41)
    let mean = 0
    let meanCells = 0
    let paired = 0
    let pairedCells = 0
    for (let e = 0; e < experiments; e++) {
      const { a, b, pairs } = experiment(u, 50, 5)
      if (covers(clusteredMean(a, { seed: e }).interval, trueA)) mean++
      // 999 random flips (the report draws 9,998): coverage is what is read, not a small p.
      if (covers(pairedClustered(pairs, { seed: e, resamples: 999 }).interval, trueA - trueB)) paired++
      // The old intervals, resampling cells (and pairing repetition i with repetition i); 100
      // resamples, as they are only printed beside (and found well below).
      if (covers(bootstrapMean(nonEmpty(a.flat()), { seed: e, resamples: 100 }), trueA)) meanCells++
      const cellPairs = a.flatMap((ra, i) => ra.map((x, k) => [x, b[i]?.[k] ?? 0] as const))
      if (covers(pairedBootstrap(nonEmpty(cellPairs), { seed: e, resamples: 100 }).interval, trueA - trueB)) pairedCells++
    }
    const share = (x: number) => x / experiments
    console.log(
      `95% interval coverage over ${experiments} experiments of 50 tasks × 5 reps: mean clustered ${share(mean)}, cell-level ${share(meanCells)}; ` +
        `paired difference clustered ${share(paired)}, cell-level ${share(pairedCells)}`
    )
    expect(share(mean)).toBeGreaterThanOrEqual(0.94)
    expect(share(mean)).toBeLessThanOrEqual(0.96)
    expect(share(paired)).toBeGreaterThanOrEqual(0.94)
    expect(share(paired)).toBeLessThanOrEqual(0.96)
    expect(share(meanCells)).toBeLessThan(share(mean) - 0.05)
    expect(share(pairedCells)).toBeLessThan(share(paired) - 0.05)
  }, 60_000)

  it("do not shrink below what the number of tasks allows as repetitions grow", () => {
    const u = seededUniform(7)
    const widths = [2, 5, 20].map((reps) => {
      const { a } = experiment(u, 50, reps)
      const clustered = clusteredMean(a, { seed: 1 }).interval!
      const cells = bootstrapMean(nonEmpty(a.flat()), { seed: 1 })
      return { reps, clustered: clustered[1] - clustered[0], cells: cells[1] - cells[0] }
    })
    // The task-sampling floor: the spread of true task means x^1.5 (sd 0.3) over 50 tasks.
    const floor = 2 * 1.96 * (0.3 / Math.sqrt(50))
    for (const w of widths) expect(w.clustered).toBeGreaterThan(0.8 * floor)
    // Cells resampled as independent: the interval narrows like 1/√(cells) below that floor.
    expect(widths[2]!.cells).toBeLessThan(0.6 * floor)
  })
})

describe("power", () => {
  it("the tasks needed to detect a difference with 80% power match a simulation at that size within 10%", () => {
    const u = seededUniform(2026)
    // A large pilot, so the figure under test is the method's, not a small pilot's noise.
    const pilot = pairedVariance(experiment(u, 2000, 5).pairs)
    const detect = trueB - trueA
    for (const reps of [1, 5]) {
      const tasks = tasksNeeded(pilot, detect, reps)!
      expect(tasks).toBeGreaterThanOrEqual(6)
      // 400 experiments: power's standard error is 2 points, the bounds are 8 away; 200 resamples
      // each, as only whether the interval holds 0 is read.
      const experiments = 400
      let detected = 0
      for (let e = 0; e < experiments; e++) {
        const d = pairedClustered(experiment(u, tasks, reps).pairs, { seed: e, resamples: 200 })
        if (d.interval !== null && (d.interval[1] < 0 || d.interval[0] > 0)) detected++
      }
      const power = detected / experiments
      console.log(`detect ${detect.toFixed(4)} at ${reps} reps: ${tasks} tasks planned, simulated power ${power}`)
      expect(power).toBeGreaterThanOrEqual(0.72)
      expect(power).toBeLessThanOrEqual(0.88)
      // The minimum detectable difference at the planned size is the difference planned for.
      const at = pairedClustered(experiment(u, tasks, reps).pairs, { seed: 1 })
      expect(minimumDetectable(at.standardError) / detect).toBeGreaterThan(0.85)
      expect(minimumDetectable(at.standardError) / detect).toBeLessThan(1.15)
    }
  }, 60_000)
})

describe("the noise floor", () => {
  it("counts tasks whose verdict flips, the spread across repetitions and the within-task share", () => {
    // Task 1 always passes, task 2 always fails, task 3 flips.
    const noise = noiseFloor([
      [[0, 1], [1, 1]],
      [[0, 0], [1, 0]],
      [[0, 1], [1, 0]]
    ])
    expect(noise?.flipRate).toBeCloseTo(1 / 3, 12)
    expect(noise?.repetitions).toBe(2)
    // Repetition means 2/3 and 1/3: sd of those two is √((1/6)² · 2) = 0.2357.
    expect(noise?.repetitionSd).toBeCloseTo(Math.SQRT2 / 6, 12)
    // Task means 1, 0, 0.5 (variance 0.25); within: task 3 s² = 0.5 over 2 reps, averaged over 3 tasks.
    expect(noise?.withinShare).toBeCloseTo((0.5 / 2 / 3) / 0.25, 12)
    expect(noiseFloor([[[0, 1]], [[0, 0]]])).toBeNull()
  })

  it("has no within-task share when no reward varies: nothing to split, not 0% within", () => {
    const still = noiseFloor([[[0, 1], [1, 1]], [[0, 1], [1, 1]]])
    expect(still).toMatchObject({ flipRate: 0, repetitionSd: 0, withinShare: null })
    // Task means differ but repetitions agree: all of it is task sampling.
    expect(noiseFloor([[[0, 1], [1, 1]], [[0, 0], [1, 0]]])?.withinShare).toBe(0)
  })

  it("has a within-task share near what the model says", () => {
    // Between: Var(x^1.5) = 1/4 − 0.16 = 0.09. Within per repetition: E[p(1−p)] = 0.4 − 0.25 = 0.15, so 0.03 at 5 reps.
    const noise = noiseFloor(experiment(seededUniform(3), 4000, 5).a.map((rs) => rs.map((r, k) => [k, r] as const)))
    expect(noise?.withinShare).toBeCloseTo(0.03 / 0.12, 1)
  })
})

describe("Holm's correction", () => {
  it("rejects step-down against alpha / (m − i)", () => {
    // m = 4: 0.01 ≤ 0.0125, 0.02 ≤ 0.0167 fails, so only the first; the rest stop there.
    expect(holm([0.04, 0.01, 0.02, 0.5])).toEqual([false, true, false, false])
    expect(holm([0.001, 0.01, 0.02, 0.03])).toEqual([true, true, true, true])
    expect(holm([])).toEqual([])
  })
})
