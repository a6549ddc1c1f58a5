/**
 * Preflight: before an experiment commits, a pilot of one cell per candidate per stratum (first
 * repetition) predicts what the rest will cost, and the gate refuses what the budget cannot pay.
 * Pilot cells are cells of the experiment, so nothing is paid twice.
 *
 * Per candidate, for dollars, tokens and wall time: `expected` (the pilot mean per cell),
 * `conservative` (a one-sided 95% upper bound on that mean; the dearest pilot cell when there
 * are fewer than two) and `worstSeen` (the dearest pilot cell), each times the cells left.
 * A faulted or refused pilot cell is never extrapolated: what it spent is reported as faulted.
 */
import { Option } from "effect"
import type { Attempt } from "../schema/Attempt.ts"
import type { Cell } from "./Runner.ts"
import { oneSidedUpperMean } from "./Statistics.ts"

export interface Bound {
  readonly expected: number
  readonly conservative: number
  readonly worstSeen: number
}

export interface CandidateEstimate {
  readonly candidate: string
  readonly pilotCells: number
  readonly cellsLeft: number
  /** Null when a pilot call's price is unknown: the cost cannot be predicted. */
  readonly usd: Bound | null
  readonly tokens: Bound
  readonly wallSeconds: Bound
  readonly faulted: { readonly cells: number; readonly usd: number | null }
}

export interface Estimate {
  readonly budgetUsd: number
  readonly parallel: number
  readonly candidates: ReadonlyArray<CandidateEstimate>
  /** Candidates with cells left whose pilot left no Attempt with a verdict. */
  readonly unpiloted: ReadonlyArray<string>
  /** Totals over candidates; usd null when any candidate's is unknown. */
  readonly total: {
    readonly usd: Bound | null
    readonly tokens: Bound
    /** Wall time of the cells left at the run's parallelism. */
    readonly wallSeconds: Bound
  }
  readonly verdict: "within-budget" | "over-budget" | "unpiloted" | "cost-unknown"
}

/** The pilot: for each candidate and stratum, the first environment's first repetition. */
export const pilotOf = (cells: ReadonlyArray<Cell>): ReadonlySet<Cell> => {
  const chosen = new Map<string, Cell>()
  for (const cell of cells) {
    if (cell.repetition !== 0) continue
    const key = `${cell.lane.provider.name}\u0000${cell.candidate.def.name}\u0000${cell.env.stratum ?? ""}`
    if (!chosen.has(key)) chosen.set(key, cell)
  }
  return new Set(chosen.values())
}

const isFaulted = (a: Attempt): boolean => a.verdict.ended?.reason === "fault" || a.verdict.ended?.reason === "refused"

/** `values` scaled to `cells` cells: mean, one-sided upper bound on the mean, maximum. */
export const bound = (values: ReadonlyArray<number>, cells: number): Bound => {
  if (values.length === 0 || cells === 0) return { expected: 0, conservative: 0, worstSeen: 0 }
  const mean = values.reduce((s, v) => s + v, 0) / values.length
  const worst = Math.max(...values)
  // With fewer than two pilot cells there is no spread to bound: the dearest one stands in.
  const upper = Option.getOrElse(oneSidedUpperMean(values, 0.95), () => worst)
  return { expected: mean * cells, conservative: Math.max(upper, mean) * cells, worstSeen: worst * cells }
}

const add = (a: Bound, b: Bound): Bound => ({
  expected: a.expected + b.expected,
  conservative: a.conservative + b.conservative,
  worstSeen: a.worstSeen + b.worstSeen
})

const zero: Bound = { expected: 0, conservative: 0, worstSeen: 0 }

/**
 * The estimate for the cells still to run, from the pilot Attempts. `left` are the cells that
 * will run after the pilot (new or stale, pilot excluded).
 */
export const estimate = (options: {
  readonly pilot: ReadonlyArray<Attempt>
  readonly left: ReadonlyArray<Cell>
  readonly budgetUsd: number
  readonly parallel: number
}): Estimate => {
  const names = Array.from(new Set([...options.left.map((c) => c.candidate.def.name), ...options.pilot.map((a) => a.candidate)]))
  const candidates = names.map((candidate): CandidateEstimate => {
    const attempts = options.pilot.filter((a) => a.candidate === candidate)
    const billed = attempts.filter((a) => !isFaulted(a))
    const faulted = attempts.filter(isFaulted)
    const cellsLeft = options.left.filter((c) => c.candidate.def.name === candidate).length
    const costs = billed.map((a) => a.usage.costUsd)
    const known = costs.every((c): c is number => c !== null)
    const faultedCosts = faulted.map((a) => a.usage.costUsd)
    return {
      candidate,
      pilotCells: billed.length,
      cellsLeft,
      usd: known ? bound(costs, cellsLeft) : null,
      tokens: bound(billed.map((a) => a.usage.inputTokens + a.usage.outputTokens), cellsLeft),
      wallSeconds: bound(billed.map((a) => a.usage.wallSeconds), cellsLeft),
      faulted: {
        cells: faulted.length,
        usd: faultedCosts.every((c): c is number => c !== null) ? faultedCosts.reduce((s, c) => s + c, 0) : null
      }
    }
  })
  const unpiloted = candidates.filter((c) => c.cellsLeft > 0 && c.pilotCells === 0).map((c) => c.candidate)
  const usd = candidates.some((c) => c.usd === null) ? null : candidates.reduce((s, c) => add(s, c.usd!), zero)
  const wall = candidates.reduce((s, c) => add(s, c.wallSeconds), zero)
  const parallel = Math.max(1, options.parallel)
  const total = {
    usd,
    tokens: candidates.reduce((s, c) => add(s, c.tokens), zero),
    wallSeconds: { expected: wall.expected / parallel, conservative: wall.conservative / parallel, worstSeen: wall.worstSeen / parallel }
  }
  const verdict = unpiloted.length > 0
    ? "unpiloted"
    : usd === null
    ? "cost-unknown"
    : usd.conservative > options.budgetUsd
    ? "over-budget"
    : "within-budget"
  return { budgetUsd: options.budgetUsd, parallel, candidates, unpiloted, total, verdict }
}
