/**
 * Statistics for Scorecards, comparisons and cost preflight. Every function here is pure and
 * deterministic: the bootstraps draw from a seeded generator of their own (splitmix32 seeding
 * xoshiro128**, 32-bit integer arithmetic only), so the same inputs and seed give the same
 * interval on every run and every machine.
 */
import { Array as Arr, Option } from "effect"

/** A closed interval `[lo, hi]`. */
export type Interval = readonly [lo: number, hi: number]

/** The 0.975 quantile of the standard normal distribution: a two-sided 95% interval. */
export const z95 = 1.959963984540054

// ---------------------------------------------------------------------------------------------
// Seeded uniform numbers

/**
 * A seeded source of uniform numbers in [0, 1), each a multiple of 2^-32. The seed is taken as an
 * unsigned 32-bit integer (`seed >>> 0`), so seeds that agree modulo 2^32 give the same stream.
 * The state is four words of xoshiro128** filled by splitmix32 from the seed.
 */
export const seededUniform = (seed: number): (() => number) => {
  let sm = seed >>> 0
  const splitmix32 = (): number => {
    sm = (sm + 0x9e3779b9) >>> 0
    let z = sm
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
    return (z ^ (z >>> 16)) >>> 0
  }
  let s0 = splitmix32()
  let s1 = splitmix32()
  let s2 = splitmix32()
  let s3 = splitmix32()
  const rotl = (x: number, k: number): number => (x << k) | (x >>> (32 - k))
  return () => {
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0
    const t = s1 << 9
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = rotl(s3, 11)
    return result / 4294967296
  }
}

// ---------------------------------------------------------------------------------------------
// Means and intervals

/** The arithmetic mean, summed left to right (the order the bootstrap replicas rely on). */
export const mean = (values: Arr.NonEmptyReadonlyArray<number>): number => {
  let sum = 0
  for (const v of values) sum += v
  return sum / values.length
}

/**
 * The Wilson score interval for a binomial proportion (95% with the default `z`). Unlike the
 * normal approximation it stays inside [0, 1] and is sensible at 0/n and n/n. With `n = 0` it is
 * the whole range [0, 1]: nothing is known.
 */
export const wilson = (successes: number, n: number, z: number = z95): Interval => {
  if (n <= 0) return [0, 1]
  const p = successes / n
  const z2 = z * z
  const denominator = 1 + z2 / n
  const center = (p + z2 / (2 * n)) / denominator
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))
  // At 0/n and n/n the bound is exactly 0 or 1; rounding would otherwise leave 1 - 2^-53.
  return [successes <= 0 ? 0 : Math.max(0, center - half), successes >= n ? 1 : Math.min(1, center + half)]
}

/**
 * The `p` quantile of already sorted numbers, interpolating linearly between order statistics
 * (Hyndman and Fan's type 7, the default of R and numpy).
 */
export const quantileSorted = (sorted: Arr.NonEmptyReadonlyArray<number>, p: number): number => {
  const h = (sorted.length - 1) * p
  const lo = Math.floor(h)
  const a = sorted[lo] ?? sorted[0]
  const b = sorted[Math.min(lo + 1, sorted.length - 1)] ?? a
  return a + (h - lo) * (b - a)
}

export interface BootstrapOptions {
  /** Seed of the resampling; a Scorecard uses a fixed one so its interval is reproducible. */
  readonly seed: number
  /** Number of bootstrap resamples (default 2000). */
  readonly resamples?: number
  /** Two-sided coverage of the percentile interval (default 0.95). */
  readonly confidence?: number
}

/**
 * Resample the `values` with replacement `resamples` times; returns the sorted means of the
 * resamples. Index i of a resample is `floor(u * n)` for the next uniform u, and each resample's
 * sum runs left to right. Typed arrays throughout: a coverage simulation runs millions of these.
 */
export const resampledMeansOf = (values: Float64Array, options: BootstrapOptions): Float64Array => {
  const n = values.length
  const resamples = Math.max(1, Math.floor(options.resamples ?? 2000))
  // seededUniform written out in the loop (the same draws): a call per draw was half the time.
  let sm = options.seed >>> 0
  const splitmix32 = (): number => {
    sm = (sm + 0x9e3779b9) >>> 0
    let z = sm
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
    return (z ^ (z >>> 16)) >>> 0
  }
  let s0 = splitmix32()
  let s1 = splitmix32()
  let s2 = splitmix32()
  let s3 = splitmix32()
  const means = new Float64Array(resamples)
  for (let r = 0; r < resamples; r++) {
    let sum = 0
    for (let i = 0; i < n; i++) {
      const x = Math.imul(s1, 5)
      const result = Math.imul((x << 7) | (x >>> 25), 9) >>> 0
      const t = s1 << 9
      s2 ^= s0
      s3 ^= s1
      s1 ^= s2
      s0 ^= s3
      s2 ^= t
      s3 = (s3 << 11) | (s3 >>> 21)
      sum += values[Math.floor((result / 4294967296) * n)]!
    }
    means[r] = sum / n
  }
  return means.sort()
}

const resampledMeans = (
  n: number,
  valueAt: (index: number) => number,
  options: BootstrapOptions
): Arr.NonEmptyReadonlyArray<number> => {
  const values = new Float64Array(n)
  for (let i = 0; i < n; i++) values[i] = valueAt(i)
  return Array.from(resampledMeansOf(values, options)) as unknown as Arr.NonEmptyReadonlyArray<number>
}

const percentileInterval = (sorted: Arr.NonEmptyReadonlyArray<number>, confidence: number): Interval => {
  const tail = (1 - confidence) / 2
  return [quantileSorted(sorted, tail), quantileSorted(sorted, 1 - tail)]
}

/**
 * Percentile bootstrap interval for the mean of `values` (95% by default): `resamples` resamples
 * of the values with replacement, the interval between the 2.5% and 97.5% quantiles of their means.
 */
export const bootstrapMean = (values: Arr.NonEmptyReadonlyArray<number>, options: BootstrapOptions): Interval =>
  percentileInterval(
    resampledMeans(values.length, (i) => values[i] ?? Number.NaN, options),
    options.confidence ?? 0.95
  )

export interface PairedDifference {
  /** Number of pairs. */
  readonly n: number
  /** Mean of `a - b` over the pairs (equal to mean(a) - mean(b)). */
  readonly difference: number
  /** Percentile bootstrap interval of the difference, resampling whole pairs. */
  readonly interval: Interval
}

/**
 * Paired comparison of two candidates on the cells both have: each pair is `[a, b]` for one cell.
 * Resampling whole pairs keeps what the cells share (the same task, the same faults) out of the
 * interval's width, which is why it is narrower than comparing two independent intervals.
 */
export const pairedBootstrap = (
  pairs: Arr.NonEmptyReadonlyArray<readonly [a: number, b: number]>,
  options: BootstrapOptions
): PairedDifference => {
  const differences = Arr.map(pairs, ([a, b]) => a - b)
  return {
    n: pairs.length,
    difference: mean(differences),
    interval: percentileInterval(
      resampledMeans(differences.length, (i) => differences[i] ?? Number.NaN, options),
      options.confidence ?? 0.95
    )
  }
}

// ---------------------------------------------------------------------------------------------
// Clustered by task

/**
 * The unit a benchmark samples is the task, not the cell: the repetitions of one task share its
 * difficulty, so they are not independent draws. The functions below take each task's rewards
 * (all its repetitions) and resample tasks.
 *
 * Weighting: each task counts once, whatever number of repetitions it has (a resumed or skipped
 * cell leaves some tasks with fewer). The estimate is the mean over tasks of each task's mean over
 * its own repetitions, the quantity "the benchmark's score" means; with even repetitions it is
 * the plain mean of the cells. Resampling a task with all its repetitions and averaging is then
 * the same as resampling its per-task mean, which is what is done (fast: one number per task).
 */
export type TaskRewards = ReadonlyArray<number>

/** Each task's mean over its repetitions (tasks with none are skipped). */
export const taskMeans = (tasks: ReadonlyArray<TaskRewards>): Float64Array => {
  const out = new Float64Array(tasks.filter((t) => t.length > 0).length)
  let j = 0
  for (const t of tasks) {
    if (t.length === 0) continue
    let sum = 0
    for (const v of t) sum += v
    out[j++] = sum / t.length
  }
  return out
}

const meanOf = (values: Float64Array): number => {
  let sum = 0
  for (let i = 0; i < values.length; i++) sum += values[i]!
  return sum / values.length
}

/**
 * A 95% (by default) interval for the mean over tasks of each task's mean reward, rewards in
 * [0, 1]: Wilson's score interval on an effective number of tasks, with Student's t at n − 1
 * degrees of freedom in place of z. null for fewer than two tasks: one task says nothing of how
 * tasks vary.
 *
 * A value in [0, 1] with mean m has variance at most m(1 − m), so the task means' sample variance
 * s² gives a design effect: n_eff = m(1 − m) · n / s² tasks' worth of Bernoulli trials. It is
 * capped so that the mean is never taken as more precise than its N cells as independent draws,
 * each of variance v = max(the cells' sample variance, m(1 − m) × the share of cells scored
 * exactly 0 or 1: a pass/fail cell is a Bernoulli trial): n_eff ≤ N · m(1 − m) / v (N for
 * pass/fail rewards). With s² = 0 (every task alike, as at all-0 or all-1) n_eff = n. In the middle
 * of the scale this is as wide as a t interval; unlike any interval built from the observed spread
 * alone it does not collapse near 0 or 1: 0 of 10 tasks passing says the mean is below about 0.34,
 * not that it is 0. It stays within [0, 1], the scale, never within the range of the values seen.
 */
export const taskMeanInterval = (tasks: ReadonlyArray<TaskRewards>, confidence = 0.95): Interval | null => {
  const means = taskMeans(tasks)
  const n = means.length
  if (n < 2) return null
  // Clamped: a mean of values in [0, 1] rounded by summation stays in [0, 1].
  const m = Math.min(1, Math.max(0, meanOf(means)))
  const s2 = sampleVariance(means)
  let effective = n
  if (s2 > 0) {
    const cells: Array<number> = []
    for (const t of tasks) for (const r of t) cells.push(r)
    let bernoulli = 0
    for (const r of cells) if (r === 0 || r === 1) bernoulli++
    const perCell = Math.max(sampleVariance(cells) / (m * (1 - m)), bernoulli / cells.length)
    const cap = cells.length / Math.min(1, perCell)
    effective = Math.min(cap, (m * (1 - m) * n) / s2)
  }
  return wilsonFractional(m, effective, studentTQuantile((1 + confidence) / 2, n - 1))
}

/** Wilson's interval at proportion p over n (n may be fractional: an effective size). */
const wilsonFractional = (p: number, n: number, z: number): Interval => {
  const z2 = z * z
  const denominator = 1 + z2 / n
  const center = (p + z2 / (2 * n)) / denominator
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))
  return [p <= 0 ? 0 : Math.max(0, center - half), p >= 1 ? 1 : Math.min(1, center + half)]
}

export interface ClusteredMean {
  /** Tasks with at least one reward. */
  readonly tasks: number
  /** The mean over tasks of each task's mean reward. */
  readonly mean: number
  /** Wilson on the effective number of tasks (taskMeanInterval); null with fewer than two tasks. */
  readonly interval: Interval | null
}

/**
 * The mean reward over tasks with a 95% (by default) interval clustered by task: each task's
 * rewards (all its repetitions, each in [0, 1]) enter as their mean. The interval is a closed
 * form (taskMeanInterval), so it needs no seed; `options.seed` is kept for the callers' sake.
 */
export const clusteredMean = (tasks: ReadonlyArray<TaskRewards>, options: BootstrapOptions): ClusteredMean => {
  const means = taskMeans(tasks)
  if (means.length === 0) return { tasks: 0, mean: Number.NaN, interval: null }
  return { tasks: means.length, mean: meanOf(means), interval: taskMeanInterval(tasks, options.confidence ?? 0.95) }
}

/** Up to this many tasks the sign-flip test enumerates every flip (2^(n−1) of them); above, it draws. */
export const EXACT_FLIP_TASKS = 14

/**
 * Random flips drawn above EXACT_FLIP_TASKS. With the observed one, 9,999 in all: p is a multiple
 * of 1/9,999, never exactly 0.05, so "p < 0.05" and "p ≤ 0.05" are the same test.
 */
export const SIGN_FLIPS = 9998

export interface SignFlip {
  /** Two-sided p-value of "the differences are symmetric about 0"; never 0. */
  readonly p: number
  /** Every δ the same test does not reject at the confidence level (never empty: it holds the mean). */
  readonly interval: Interval
  /** The smallest p this many tasks can give (2^(1−n) enumerated, 1/9,999 drawn). */
  readonly smallestP: number
  /** Whether every flip was enumerated (else SIGN_FLIPS were drawn, seeded). */
  readonly exact: boolean
}

/** A spread that is float residue of equal values (1e-16) is 0. */
const noResidue = (x: number): number => (Math.abs(x) < 1e-12 ? 0 : x)

/** Subset means on a grid of 2^-40 so that ties (a subset whose mean is exactly 0) survive rounding in sums. */
const snap = (x: number): number => Math.round(x * 1099511627776) / 1099511627776

/**
 * The sign-flip (randomization) test of the mean of paired differences d, and the interval that
 * inverts it. Under "no difference" each task's difference is as likely to be d as −d (the two
 * candidates are exchangeable on it), so the mean's distribution is that of Σ ±dₜ / n over the 2ⁿ
 * sign flips: p is the share of flips whose |Σ εₜ dₜ| reaches the observed |Σ dₜ| (the observed
 * one and its mirror included, so p ≥ 2^(1−n)). Exact for any distribution of the differences.
 *
 * The interval is the set of δ whose test (on dₜ − δ) is not rejected. A flip that changes the
 * sign of the tasks in F reaches the observed statistic exactly when δ lies between the mean of d
 * over F and the mean over the rest (the factors of (A − δS)² − (D − nδ)²), an interval that
 * holds the estimate; so the accepted set is one interval, read off sorted ends, and p < α exactly
 * when it leaves out 0. Clamped to [lower, upper], the scale (with ≤ 5 tasks no δ is rejected at
 * 5%: the interval is the whole scale).
 */
export const signFlip = (
  d: ArrayLike<number>,
  options: { readonly seed: number; readonly confidence?: number; readonly lower?: number; readonly upper?: number; readonly flips?: number }
): SignFlip => {
  const n = d.length
  const alpha = 1 - (options.confidence ?? 0.95)
  const lower = options.lower ?? -1
  const upper = options.upper ?? 1
  let total = 0
  for (let i = 0; i < n; i++) total += d[i]!
  const estimate = snap(total / n)
  const exact = n <= EXACT_FLIP_TASKS
  const flips = exact ? 2 ** Math.max(0, n - 1) : Math.max(1, Math.floor(options.flips ?? SIGN_FLIPS))
  // Each flip's range of δ: typed arrays, as a simulation runs many of these.
  const lows = new Float64Array(flips)
  const highs = new Float64Array(flips)
  let ranges = 0
  let always = 0
  const add = (flippedSum: number, flipped: number): void => {
    // No task flipped, or all: the observed statistic itself (or its mirror), reached for every δ.
    if (flipped === 0 || flipped === n) {
      always++
      return
    }
    const f = snap(flippedSum / flipped)
    const u = snap((total - flippedSum) / (n - flipped))
    lows[ranges] = Math.min(f, u, estimate)
    highs[ranges] = Math.max(f, u, estimate)
    ranges++
  }
  let partitions: number
  if (exact) {
    // A flip and its mirror give the same partition of the tasks: task 0 is never flipped here.
    partitions = flips
    for (let mask = 0; mask < partitions; mask++) {
      let s = 0
      let c = 0
      for (let i = 1; i < n; i++) {
        if (mask & (1 << (i - 1))) {
          s += d[i]!
          c++
        }
      }
      add(s, c)
    }
  } else {
    const u = seededUniform(options.seed)
    partitions = flips + 1
    always = 1 // the observed flip
    for (let b = 0; b < flips; b++) {
      let s = 0
      let c = 0
      let word = 0
      for (let i = 0; i < n; i++) {
        if ((i & 31) === 0) word = (u() * 4294967296) >>> 0
        if (word & 1) {
          s += d[i]!
          c++
        }
        word >>>= 1
      }
      add(s, c)
    }
  }
  let reaching = always
  for (let b = 0; b < ranges; b++) if (lows[b]! <= 0 && 0 <= highs[b]!) reaching++
  // δ is accepted when always + #{flips whose range holds δ} > α · partitions: `need` of the ranges.
  const need = Math.floor(alpha * partitions - always) + 1
  let lo = lower
  let hi = upper
  if (need > 0 && need <= ranges) {
    const sortedLows = lows.subarray(0, ranges).sort()
    const sortedHighs = highs.subarray(0, ranges).sort()
    lo = Math.max(lower, sortedLows[need - 1]!)
    hi = Math.min(upper, sortedHighs[ranges - need]!)
  }
  return { p: Math.min(1, reaching / partitions), interval: [lo, hi], smallestP: 1 / partitions, exact }
}

export interface ClusteredDifference {
  /** Tasks both candidates have a reward on. */
  readonly tasks: number
  /** Mean over those tasks of (a's mean on the task − b's mean on the task). */
  readonly difference: number
  /**
   * The sign-flip test's interval over tasks (signFlip), widened where it collapses near ±1 or at
   * ties (boundedDifference), within [−1, 1]; null with one task.
   */
  readonly interval: Interval | null
  /** Standard error of the difference from the per-task differences' spread (sd / √tasks). */
  readonly standardError: number
  /**
   * Two-sided p-value of "no difference" over tasks: the larger of the sign-flip test's and the
   * bound's score test's, the tests the interval inverts, so below 0.05 exactly when the 95%
   * interval leaves out 0. Never 0. NaN with one task.
   */
  readonly p: number
  /** The smallest p this many tasks can give; NaN with one task. */
  readonly smallestP: number
}

/**
 * A paired comparison on the tasks both candidates have: per task, a's mean reward minus b's (all
 * repetitions of each; repetition i of a and repetition i of b share nothing more than any other
 * two repetitions, so they are not paired cell by cell). The tasks' differences are tested and
 * bounded by the sign-flip test (signFlip), seeded where it draws; `options.resamples`, when
 * given, is the number of flips drawn (a simulation's economy; the report uses SIGN_FLIPS).
 */
export const pairedClustered = (
  tasks: ReadonlyArray<{ readonly a: TaskRewards; readonly b: TaskRewards }>,
  options: BootstrapOptions
): ClusteredDifference => {
  const both = tasks.filter((t) => t.a.length > 0 && t.b.length > 0)
  const a = taskMeans(both.map((t) => t.a))
  const b = taskMeans(both.map((t) => t.b))
  const d = new Float64Array(both.length)
  for (let i = 0; i < d.length; i++) d[i] = a[i]! - b[i]!
  if (d.length === 0) return { tasks: 0, difference: Number.NaN, interval: null, standardError: Number.NaN, p: Number.NaN, smallestP: Number.NaN }
  const difference = meanOf(d)
  if (d.length === 1) return { tasks: 1, difference, interval: null, standardError: Number.NaN, p: Number.NaN, smallestP: Number.NaN }
  const confidence = options.confidence ?? 0.95
  const test = signFlip(d, {
    seed: options.seed,
    confidence,
    ...(options.resamples !== undefined ? { flips: options.resamples } : {})
  })
  const bounded = boundedDifference(d, difference, confidence)
  return {
    tasks: d.length,
    difference,
    // Each holds the estimate, so the hull leaves out 0 exactly when both do: when both p < α.
    interval: [Math.min(test.interval[0], bounded.interval[0]), Math.max(test.interval[1], bounded.interval[1])],
    standardError: Math.sqrt(sampleVariance(d) / d.length),
    p: Math.max(test.p, bounded.p),
    smallestP: test.smallestP
  }
}

/**
 * The bound the sign-flip test lacks near ±1 and at ties. When every task's difference is the
 * same (a candidate that wins every task, or two that tie on every one) no flip of signs can reach
 * another mean, and the test's interval is that one point: 20 of 20 tasks won would say the
 * difference is exactly 1. On the scale x = (d + 1) / 2, in [0, 1], a difference is a mean like
 * any other: Wilson's score interval on an effective number of tasks (as `taskMeanInterval`: n
 * when the differences do not vary) and its score test of "no difference" (x = ½), whose p is
 * below α exactly when the interval leaves out 0. Normal quantiles, not t: where the differences
 * vary the sign-flip test is the exact one, and the bound matters only where they barely do.
 */
const boundedDifference = (d: Float64Array, difference: number, confidence: number): { readonly interval: Interval; readonly p: number } => {
  const n = d.length
  const x = Math.min(1, Math.max(0, (difference + 1) / 2))
  const s2 = sampleVariance(d) / 4
  const effective = s2 > 0 ? Math.max(1, (x * (1 - x) * n) / s2) : n
  const z = normalQuantile((1 + confidence) / 2)
  const [lo, hi] = wilsonFractional(x, effective, z)
  const score = Math.abs(x - 0.5) / Math.sqrt(0.25 / effective)
  return { interval: [2 * lo - 1, 2 * hi - 1], p: Math.min(1, 2 * normalUpperTail(score)) }
}

/** The sample variance (n − 1 divisor); 0 for fewer than two values. */
export const sampleVariance = (values: ArrayLike<number>): number => {
  const n = values.length
  if (n < 2) return 0
  let sum = 0
  for (let i = 0; i < n; i++) sum += values[i]!
  const m = sum / n
  let squares = 0
  for (let i = 0; i < n; i++) squares += (values[i]! - m) * (values[i]! - m)
  return squares / (n - 1)
}

// ---------------------------------------------------------------------------------------------
// The noise floor

/** One task's rewards by repetition number. */
export type Repetitions = ReadonlyArray<readonly [repetition: number, reward: number]>

export interface NoiseFloor {
  /** The most repetitions any task has. */
  readonly repetitions: number
  /** Tasks with at least two repetitions (those the flip rate is over). */
  readonly tasks: number
  /** Share of those tasks whose verdict (full reward or not) differs between repetitions. */
  readonly flipRate: number
  /**
   * Standard deviation, across repetition numbers, of the benchmark mean made from that
   * repetition alone: how far one run of the benchmark moves from the next. null with fewer
   * than two repetition numbers.
   */
  readonly repetitionSd: number | null
  /**
   * Share of the clustered interval's variance (its squared width) that comes from within-task
   * noise (a task's repetitions disagreeing), the rest being task sampling: more repetitions
   * shrink only this share. In [0, 1]; null when no reward varies at all (nothing to split).
   */
  readonly withinShare: number | null
}

/**
 * The noise floor of a candidate from each task's repetitions; null when no task has two. The
 * variance of the mean of per-task means splits as Var(task mean) = between + within / k: the
 * within part is estimated per task by s²_t / k_t (s² with the k − 1 divisor), averaged over the
 * tasks, and set against the sample variance of the task means.
 */
export const noiseFloor = (tasks: ReadonlyArray<Repetitions>): NoiseFloor | null => {
  const repeated = tasks.filter((t) => t.length >= 2)
  if (repeated.length === 0) return null
  let flips = 0
  let within = 0
  for (const t of repeated) {
    const passes = t.filter(([, r]) => r >= 1).length
    if (passes > 0 && passes < t.length) flips++
    within += sampleVariance(t.map(([, r]) => r)) / t.length
  }
  // Averaged over every task: one with a single repetition adds nothing within (none can be
  // seen) but is part of the task means' spread.
  within = within / tasks.filter((t) => t.length > 0).length
  const total = sampleVariance(taskMeans(tasks.map((t) => t.map(([, r]) => r))))
  // Sums and counts per repetition number (no spread of long arrays: a run can have 100,000 tasks).
  const byRepetition = new Map<number, { sum: number; n: number }>()
  let most = 0
  for (const t of tasks) {
    if (t.length > most) most = t.length
    for (const [rep, r] of t) {
      const acc = byRepetition.get(rep)
      if (acc === undefined) byRepetition.set(rep, { sum: r, n: 1 })
      else {
        acc.sum += r
        acc.n += 1
      }
    }
  }
  const repMeans = Array.from(byRepetition.values(), (acc) => acc.sum / acc.n)
  return {
    repetitions: most,
    tasks: repeated.length,
    flipRate: flips / repeated.length,
    repetitionSd: repMeans.length >= 2 ? noResidue(Math.sqrt(sampleVariance(repMeans))) : null,
    withinShare: total > 0 ? Math.min(1, within / total) : within > 0 ? 1 : null
  }
}

// ---------------------------------------------------------------------------------------------
// Power

/** The 0.8 quantile of the standard normal distribution: 80% power. */
export const z80 = 0.8416212335729143

/**
 * The smallest true difference a paired comparison with this standard error detects with 80%
 * power at 95% confidence (two-sided): (z₀.₉₇₅ + z₀.₈) · SE.
 */
export const minimumDetectable = (standardError: number): number => (z95 + z80) * standardError

/**
 * What pilot cells say about the paired per-task difference of two candidates: the variance of
 * the true per-task difference across tasks (between) and the variance of one repetition's reward
 * around its task's mean, summed over both candidates (within).
 */
export interface PairedVariance {
  readonly tasks: number
  readonly between: number
  readonly within: number
  /** The sample variance of the per-task differences as observed (what the report's SE is made of). */
  readonly observed: number
}

/**
 * Estimated from the tasks both candidates have: Var(d_t) = between + within_a / k_a + within_b / k_b,
 * with d_t the difference of per-task means. The within parts come from each task's repetitions
 * (s² with the k − 1 divisor, pooled over tasks with two or more); between is the rest of the
 * sample variance of d_t, never below 0. Without repetitions within is unknown and taken as 0, so
 * all of the spread counts as between (the conservative side for "how many tasks").
 */
export const pairedVariance = (tasks: ReadonlyArray<{ readonly a: TaskRewards; readonly b: TaskRewards }>): PairedVariance => {
  const both = tasks.filter((t) => t.a.length > 0 && t.b.length > 0)
  const a = taskMeans(both.map((t) => t.a))
  const b = taskMeans(both.map((t) => t.b))
  const d = both.map((_, i) => a[i]! - b[i]!)
  const pooled = (side: "a" | "b"): { perRep: number; ofMeans: number } => {
    const repeated = both.filter((t) => t[side].length >= 2)
    if (repeated.length === 0) return { perRep: 0, ofMeans: 0 }
    const perRep = repeated.reduce((sum, t) => sum + sampleVariance(t[side]), 0) / repeated.length
    const ofMeans = both.reduce((sum, t) => sum + perRep / t[side].length, 0) / both.length
    return { perRep, ofMeans }
  }
  const wa = pooled("a")
  const wb = pooled("b")
  const observed = sampleVariance(d)
  return { tasks: both.length, between: Math.max(0, observed - wa.ofMeans - wb.ofMeans), within: wa.perRep + wb.perRep, observed }
}

/**
 * The fewest tasks a paired comparison can be significant on: the report's sign-flip test gives
 * no p below 2 · 2⁻ⁿ, which reaches 5% only from 6 tasks.
 */
export const FEWEST_SIGNIFICANT_TASKS = 6

/**
 * Tasks needed to detect a difference `detect` with 80% power at 95% confidence (two-sided), with
 * `repetitions` repetitions of each candidate on each task: ⌈(z₀.₉₇₅ + z₀.₈)² · (between + within / k) / D²⌉,
 * at least FEWEST_SIGNIFICANT_TASKS. Null when the pilot shows no variance at all: nothing to size from.
 */
export const tasksNeeded = (variance: PairedVariance, detect: number, repetitions: number): number | null => {
  if (variance.observed === 0 && variance.within === 0) return null
  const perTask = variance.between + variance.within / repetitions
  return Math.max(FEWEST_SIGNIFICANT_TASKS, Math.ceil(((z95 + z80) ** 2 * perTask) / (detect * detect)))
}

// ---------------------------------------------------------------------------------------------
// Many comparisons

/**
 * Holm's step-down correction at family-wise level `alpha`: for each p-value (in the given
 * order), whether it stays significant. Sorted ascending, the i-th smallest (from 0) is rejected
 * while p ≤ alpha / (m − i); the first that is not stops the rest.
 */
export const holm = (pValues: ReadonlyArray<number>, alpha = 0.05): ReadonlyArray<boolean> => {
  const m = pValues.length
  const order = pValues.map((p, i) => [p, i] as const).sort((x, y) => x[0] - y[0] || x[1] - y[1])
  const out = pValues.map(() => false)
  for (let i = 0; i < m; i++) {
    const [p, index] = order[i]!
    if (!(p <= alpha / (m - i))) break
    out[index] = true
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// pass^k

/** One task's repetitions: `n` trials of which `c` succeeded. */
export interface TaskTrials {
  readonly n: number
  readonly c: number
}

/**
 * tau-bench's pass^k: the chance that k independent trials of a task all succeed, estimated
 * without bias per task as C(c, k) / C(n, k) and averaged over tasks. `None` when k < 1, when
 * there is no task, or when some task has fewer than k trials (then the repetitions do not
 * allow pass^k, and dropping those tasks would bias the mean).
 */
export const passHatK = (tasks: ReadonlyArray<TaskTrials>, k: number): Option.Option<number> => {
  if (!Number.isInteger(k) || k < 1 || tasks.length === 0) return Option.none()
  let sum = 0
  for (const { c, n } of tasks) {
    if (n < k) return Option.none()
    // C(c,k)/C(n,k) = prod_{i<k} (c-i)/(n-i): no large binomials, exactly 0 once c < k.
    let ratio = 1
    for (let i = 0; i < k; i++) ratio *= Math.max(0, c - i) / (n - i)
    sum += ratio
  }
  return Option.some(sum / tasks.length)
}

// ---------------------------------------------------------------------------------------------
// Student t and the one-sided upper bound on a mean

/**
 * log Γ(x) for x > 0: Stirling's series once x >= 10, reached by the recurrence
 * Γ(x) = Γ(x + k) / (x (x + 1) ... (x + k - 1)); about 14 significant digits.
 */
export const logGamma = (x: number): number => {
  let shift = 0
  let z = x
  let product = 1
  while (z < 10) {
    product *= z
    z += 1
    shift = 1
  }
  const r = 1 / z
  const r2 = r * r
  const series =
    r * (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 * (1 / 1680 - r2 * (1 / 1188 - r2 * (691 / 360360 - r2 / 156))))))
  const stirling = (z - 0.5) * Math.log(z) - z + 0.5 * Math.log(2 * Math.PI) + series
  return shift === 0 ? stirling : stirling - Math.log(product)
}

/** Continued fraction of the incomplete beta function, evaluated by the modified Lentz method. */
const betaContinuedFraction = (x: number, a: number, b: number): number => {
  const tiny = 1e-300
  const guard = (v: number): number => (Math.abs(v) < tiny ? tiny : v)
  let c = 1
  let d = 1 / guard(1 - ((a + b) * x) / (a + 1))
  let h = d
  for (let m = 1; m <= 1000; m++) {
    const m2 = 2 * m
    const even = (m * (b - m) * x) / ((a - 1 + m2) * (a + m2))
    d = 1 / guard(1 + even * d)
    c = guard(1 + even / c)
    h *= d * c
    const odd = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + 1 + m2))
    d = 1 / guard(1 + odd * d)
    c = guard(1 + odd / c)
    const step = d * c
    h *= step
    if (Math.abs(step - 1) < 1e-16) break
  }
  return h
}

/** The regularized incomplete beta function I_x(a, b). */
export const regularizedIncompleteBeta = (x: number, a: number, b: number): number => {
  if (x <= 0) return 0
  if (x >= 1) return 1
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x))
  // The fraction converges fast only on one side of the mean; use the symmetry I_x(a,b) = 1 - I_{1-x}(b,a).
  return x < (a + 1) / (a + b + 2)
    ? (front * betaContinuedFraction(x, a, b)) / a
    : 1 - (front * betaContinuedFraction(1 - x, b, a)) / b
}

/**
 * P(Z > z) for a standard normal Z: ½ erfc(z / √2), erfc by the Chebyshev-fitted formula of
 * Numerical Recipes (fractional error below 1.2e-7 everywhere), ample for a printed p.
 */
export const normalUpperTail = (z: number): number => {
  const x = Math.abs(z) / Math.SQRT2
  const t = 1 / (1 + 0.5 * x)
  const erfc = t * Math.exp(
    -x * x - 1.26551223 +
      t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
  )
  return z >= 0 ? erfc / 2 : 1 - erfc / 2
}

/** The `p` quantile of the standard normal (0 < p < 1), by bisection on normalUpperTail. */
export const normalQuantile = (p: number): number => {
  if (!(p > 0 && p < 1)) return Number.NaN
  let lo = -40
  let hi = 40
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2
    if (1 - normalUpperTail(mid) < p) lo = mid
    else hi = mid
  }
  return (lo + hi) / 2
}

/** P(T > t) for Student's t with `df` degrees of freedom, t >= 0. */
const studentTUpperTail = (t: number, df: number): number =>
  0.5 * regularizedIncompleteBeta(df / (df + t * t), df / 2, 0.5)

/**
 * The `p` quantile of Student's t distribution with `df` > 0 degrees of freedom (NaN outside
 * 0 < p < 1 or for df <= 0). The CDF comes from the regularized incomplete beta function; the
 * quantile is found by bisection to about 12 significant digits.
 */
export const studentTQuantile = (p: number, df: number): number => {
  if (!(p > 0 && p < 1) || !(df > 0)) return Number.NaN
  if (p === 0.5) return 0
  if (p < 0.5) return -studentTQuantile(1 - p, df)
  const tail = 1 - p
  let lo = 0
  let hi = 1
  while (studentTUpperTail(hi, df) > tail) {
    lo = hi
    hi *= 2
  }
  for (let i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
    const mid = (lo + hi) / 2
    if (studentTUpperTail(mid, df) > tail) lo = mid
    else hi = mid
  }
  return (lo + hi) / 2
}

/**
 * A one-sided upper confidence bound on the mean of the distribution `values` were drawn from:
 * mean + t(confidence, n - 1) · s / √n, with s the sample standard deviation (n - 1 divisor) and
 * t the Student t quantile. It is exact for normal data and approximate otherwise; costs are
 * right-skewed, so with few pilot cells it can understate the mean's true bound, which is why
 * preflight also reports worst-seen. `None` for fewer than two values: one bill says nothing
 * about the spread, and the caller must choose (for instance worst-seen).
 */
export const oneSidedUpperMean = (values: ReadonlyArray<number>, confidence: number = 0.95): Option.Option<number> => {
  if (!Arr.isNonEmptyReadonlyArray(values) || values.length < 2) return Option.none()
  const n = values.length
  const m = mean(values)
  let squares = 0
  for (const v of values) squares += (v - m) * (v - m)
  const sd = Math.sqrt(squares / (n - 1))
  return Option.some(m + (studentTQuantile(confidence, n - 1) * sd) / Math.sqrt(n))
}

// ---------------------------------------------------------------------------------------------
// The score–cost frontier

export interface FrontierPoint {
  readonly id: string
  readonly score: number
  /** List-price dollars; null when unknown (such a point is left out of the frontier). */
  readonly cost: number | null
}

/**
 * The Pareto frontier of score (higher is better) against cost (lower is better): the points no
 * other point beats on one axis without losing on the other. Points of unknown cost are left out,
 * never treated as free. Sorted by cost, then by score descending; equal points are all kept.
 */
export const frontier = <P extends FrontierPoint>(points: ReadonlyArray<P>): ReadonlyArray<P> => {
  const known = points.filter(
    (p): p is P & { readonly cost: number } => p.cost !== null && Number.isFinite(p.cost) && Number.isFinite(p.score)
  )
  const sorted = [...known].sort((x, y) => x.cost - y.cost || y.score - x.score)
  const kept: Array<P> = []
  let best = Number.NEGATIVE_INFINITY
  let bestCost = Number.NaN
  for (const p of sorted) {
    // Kept when strictly better than everything cheaper, or tying the best at the same cost.
    if (p.score > best || (p.score === best && p.cost === bestCost)) {
      kept.push(p)
      best = p.score
      bestCost = p.cost
    }
  }
  return kept
}
