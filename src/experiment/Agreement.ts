/**
 * How far two judges agree, and how far one judge agrees with itself, on yes/no decisions (a
 * tau2 NL assertion met or not, a listed product a competitor or not). Pure and seeded, as
 * Statistics.ts is: the same decisions give the same intervals on every machine.
 *
 * The decisions of one task are not independent draws (they are made on the same conversation,
 * the same answer), so intervals resample tasks, each with all its decisions, as the Scorecards'
 * intervals do; a Wilson interval over decisions would be too narrow.
 */
import { Array as Arr } from "effect"
import { type BootstrapOptions, type Interval, quantileSorted, seededUniform } from "./Statistics.ts"

/** One input both judges decided: `a` by the first judge, `b` by the second; `cluster` is its task. */
export interface PairedDecision {
  readonly cluster: string
  readonly a: boolean
  readonly b: boolean
}

/** A 2×2 table of two judges' decisions: yes/yes, yes/no (a yes, b no), no/yes, no/no. */
interface Table {
  yy: number
  yn: number
  ny: number
  nn: number
}

export interface Kappa {
  readonly n: number
  /** Raw agreement: the share of inputs both judges decided alike. */
  readonly observed: number
  /** The agreement chance alone would give, from each judge's own share of yes. */
  readonly expected: number
  /**
   * Cohen's kappa, (observed − expected) / (1 − expected); NaN when expected is 1 (both judges
   * said the same one answer to everything: there is no disagreement chance could explain) or n is 0.
   */
  readonly kappa: number
}

const kappaOfTable = (t: Table): Kappa => {
  const n = t.yy + t.yn + t.ny + t.nn
  if (n === 0) return { n: 0, observed: Number.NaN, expected: Number.NaN, kappa: Number.NaN }
  const observed = (t.yy + t.nn) / n
  const aYes = (t.yy + t.yn) / n
  const bYes = (t.yy + t.ny) / n
  const expected = aYes * bYes + (1 - aYes) * (1 - bYes)
  return { n, observed, expected, kappa: expected >= 1 ? Number.NaN : (observed - expected) / (1 - expected) }
}

/** Cohen's kappa of pairs of decisions `[a, b]`. */
export const cohensKappa = (pairs: ReadonlyArray<readonly [a: boolean, b: boolean]>): Kappa => {
  const t: Table = { yy: 0, yn: 0, ny: 0, nn: 0 }
  for (const [a, b] of pairs) add(t, a, b)
  return kappaOfTable(t)
}

const add = (t: Table, a: boolean, b: boolean): void => {
  if (a && b) t.yy++
  else if (a) t.yn++
  else if (b) t.ny++
  else t.nn++
}

export interface Agreement extends Kappa {
  /** Tasks the decisions come from: the unit the intervals resample. */
  readonly clusters: number
  /** Inputs decided alike. */
  readonly agree: number
  /** Percentile bootstrap interval of the raw agreement, resampling tasks; null with fewer than 2 tasks. */
  readonly observedInterval: Interval | null
  /**
   * The same for kappa, over the resamples where kappa is defined; null with fewer than 2 tasks,
   * when kappa itself is undefined, or when it is undefined in half the resamples or more.
   */
  readonly kappaInterval: Interval | null
}

/** Raw agreement and Cohen's kappa of two judges with intervals clustered by task (95% by default). */
export const agreement = (decisions: ReadonlyArray<PairedDecision>, options: BootstrapOptions): Agreement => {
  const byCluster = new Map<string, Table>()
  const total: Table = { yy: 0, yn: 0, ny: 0, nn: 0 }
  for (const d of decisions) {
    let t = byCluster.get(d.cluster)
    if (t === undefined) byCluster.set(d.cluster, t = { yy: 0, yn: 0, ny: 0, nn: 0 })
    add(t, d.a, d.b)
    add(total, d.a, d.b)
  }
  const point = kappaOfTable(total)
  const tables = [...byCluster.values()]
  const base = { ...point, clusters: tables.length, agree: total.yy + total.nn }
  if (tables.length < 2) return { ...base, observedInterval: null, kappaInterval: null }
  const resamples = Math.max(1, Math.floor(options.resamples ?? 2000))
  const tail = (1 - (options.confidence ?? 0.95)) / 2
  const next = seededUniform(options.seed)
  const observed = new Float64Array(resamples)
  const kappas: Array<number> = []
  for (let r = 0; r < resamples; r++) {
    const t: Table = { yy: 0, yn: 0, ny: 0, nn: 0 }
    for (let i = 0; i < tables.length; i++) {
      const c = tables[Math.floor(next() * tables.length)]!
      t.yy += c.yy
      t.yn += c.yn
      t.ny += c.ny
      t.nn += c.nn
    }
    const k = kappaOfTable(t)
    observed[r] = k.observed
    if (!Number.isNaN(k.kappa)) kappas.push(k.kappa)
  }
  observed.sort()
  const sortedObserved = Array.from(observed) as unknown as Arr.NonEmptyReadonlyArray<number>
  kappas.sort((x, y) => x - y)
  const kappaInterval: Interval | null = Number.isNaN(point.kappa) || kappas.length * 2 <= resamples || !Arr.isNonEmptyReadonlyArray(kappas)
    ? null
    : [quantileSorted(kappas, tail), quantileSorted(kappas, 1 - tail)]
  return { ...base, observedInterval: [quantileSorted(sortedObserved, tail), quantileSorted(sortedObserved, 1 - tail)], kappaInterval }
}

export interface Consistency {
  /** Inputs the judge was asked about at least twice. */
  readonly inputs: number
  /** The most times one input was asked. */
  readonly repetitions: number
  /** The share of those inputs on which every answer was the same. */
  readonly unanimous: number
  /** The mean over inputs of the share of pairs of its answers that agree. */
  readonly pairwise: number
}

/**
 * A judge's self-consistency over its repeated answers to the same inputs (each element: one
 * input's answers, in order); inputs answered fewer than twice say nothing and are left out.
 * Null when none is left.
 */
export const selfConsistency = (answers: ReadonlyArray<ReadonlyArray<boolean>>): Consistency | null => {
  const repeated = answers.filter((a) => a.length >= 2)
  if (repeated.length === 0) return null
  let unanimous = 0
  let pairwise = 0
  let repetitions = 0
  for (const a of repeated) {
    const yes = a.filter(Boolean).length
    const no = a.length - yes
    if (yes === 0 || no === 0) unanimous++
    // Pairs that agree: both yes or both no, among the k(k−1)/2 pairs of answers.
    pairwise += (yes * (yes - 1) + no * (no - 1)) / (a.length * (a.length - 1))
    repetitions = Math.max(repetitions, a.length)
  }
  return { inputs: repeated.length, repetitions, unanimous: unanimous / repeated.length, pairwise: pairwise / repeated.length }
}
