/**
 * Preflight: before an experiment commits, a pilot of one cell per candidate per stratum (first
 * repetition) predicts what the rest will cost, and the gate refuses what the budget cannot pay.
 * Pilot cells are cells of the experiment, so nothing is paid twice.
 *
 * Per candidate, for dollars (the cell's calls and its judging), tokens, wall time and
 * subscription window points: `expected` (the pilot mean per cell), `conservative` (a one-sided
 * 95% upper bound on that mean; the dearest pilot cell when there are fewer than two) and
 * `worstSeen` (the dearest pilot cell), each times the cells left. A faulted or refused pilot cell is never extrapolated: what it spent is
 * reported as faulted.
 */
import { Effect, Option } from "effect"
import type { Attempt } from "../schema/Attempt.ts"
import { type Cell, classify, type Plan, run, type RunOutcome, type RunSettings } from "./Runner.ts"
import { oneSidedUpperMean } from "./Statistics.ts"
import { Store } from "./Store.ts"

export interface Bound {
  readonly expected: number
  readonly conservative: number
  readonly worstSeen: number
}

/** A reading of a subscription quota window: percent of it used, by anyone on the account. */
export interface Reading {
  readonly window: string
  readonly usedPercent: number
}

export interface CandidateEstimate {
  readonly candidate: string
  readonly pilotCells: number
  readonly cellsLeft: number
  /** Null when a pilot call's price is unknown: the cost cannot be predicted. */
  readonly usd: Bound | null
  readonly tokens: Bound
  readonly wallSeconds: Bound
  /** Points (percent) of each subscription window the cells left will use; empty off subscriptions. */
  readonly windows: Readonly<Record<string, Bound>>
  readonly faulted: { readonly cells: number; readonly usd: number | null }
}

/** Where the experiment stands against its subscription allowance when the pilot is done. */
export interface AllowanceState {
  /** Fraction of a window the experiment may use, e.g. 0.10 = ten points. */
  readonly share: number
  /** Fraction used (by anyone) at which no new cell starts. */
  readonly pauseAt: number
  /** Points of each window the experiment has used since it started. */
  readonly used: Readonly<Record<string, number>>
  /** Each window's newest reading. */
  readonly latest: Readonly<Record<string, number>>
}

export type Verdict = "within-budget" | "over-budget" | "over-allowance" | "unpiloted" | "cost-unknown"

export interface Estimate {
  /** Null when only a subscription share was given: dollars are estimated, not gated. */
  readonly budgetUsd: number | null
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
    readonly windows: Readonly<Record<string, Bound>>
  }
  readonly allowance: AllowanceState | null
  readonly verdict: Verdict
  /** The verdict in words, one line per reason; empty when within budget. */
  readonly reasons: ReadonlyArray<string>
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

/** What a cell costs at list price: the candidate's calls and its judging (the judge is paid too). */
const billOf = (a: Attempt): number | null =>
  a.usage.costUsd === null || a.judging?.costUsd === null ? null : a.usage.costUsd + (a.judging?.costUsd ?? 0)

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

/**
 * The points of each window each Attempt used, from the readings of Attempts that ran one at a
 * time, taken in the order they started: a cell's last reading minus the window's last reading
 * before the cell. The first cell to read a window counts from its own first reading (its first
 * call goes unseen), and so does a cell whose last reading is below the one before it (the window
 * reset or rolled on: what it used before that is unknown, and never negative).
 */
export const windowPoints = (
  attempts: ReadonlyArray<Attempt>,
  readingsOf: (a: Attempt) => ReadonlyArray<Reading>
): ReadonlyMap<Attempt, Readonly<Record<string, number>>> => {
  const last = new Map<string, number>()
  const out = new Map<Attempt, Record<string, number>>()
  for (const a of [...attempts].sort((x, y) => (x.startedAt < y.startedAt ? -1 : x.startedAt > y.startedAt ? 1 : 0))) {
    const points: Record<string, number> = {}
    const before = new Map<string, number>()
    const first = new Map<string, number>()
    for (const r of readingsOf(a)) {
      if (!first.has(r.window)) {
        first.set(r.window, r.usedPercent)
        before.set(r.window, last.get(r.window) ?? r.usedPercent)
      }
      last.set(r.window, r.usedPercent)
    }
    for (const [window, start] of before) {
      const end = last.get(window) ?? start
      points[window] = end >= start ? end - start : Math.max(0, end - (first.get(window) ?? end))
    }
    out.set(a, points)
  }
  return out
}

const add = (a: Bound, b: Bound): Bound => ({
  expected: a.expected + b.expected,
  conservative: a.conservative + b.conservative,
  worstSeen: a.worstSeen + b.worstSeen
})

const zero: Bound = { expected: 0, conservative: 0, worstSeen: 0 }

const addWindows = (a: Readonly<Record<string, Bound>>, b: Readonly<Record<string, Bound>>): Record<string, Bound> => {
  const out: Record<string, Bound> = { ...a }
  for (const [w, v] of Object.entries(b)) out[w] = add(out[w] ?? zero, v)
  return out
}

const usd = (x: number) => `$${x.toFixed(4)}`
const points = (x: number) => `${Number(x.toFixed(1))}`

/**
 * The estimate for the cells still to run, from the pilot Attempts. `left` are the cells that
 * will run after the pilot (new or stale, pilot excluded). `points` gives the window points of a
 * pilot Attempt (see `windowPoints`); `allowance` where the experiment stands on its subscription.
 */
export const estimate = (options: {
  readonly pilot: ReadonlyArray<Attempt>
  readonly left: ReadonlyArray<Cell>
  readonly budgetUsd: number | null
  readonly parallel: number
  readonly points?: ReadonlyMap<Attempt, Readonly<Record<string, number>>>
  readonly allowance?: AllowanceState
}): Estimate => {
  const names = Array.from(new Set([...options.left.map((c) => c.candidate.def.name), ...options.pilot.map((a) => a.candidate)]))
  const candidates = names.map((candidate): CandidateEstimate => {
    const attempts = options.pilot.filter((a) => a.candidate === candidate)
    const billed = attempts.filter((a) => !isFaulted(a))
    const faulted = attempts.filter(isFaulted)
    const cellsLeft = options.left.filter((c) => c.candidate.def.name === candidate).length
    const costs = billed.map(billOf)
    const known = costs.every((c): c is number => c !== null)
    const faultedCosts = faulted.map(billOf)
    const pointsOf = (a: Attempt) => options.points?.get(a) ?? {}
    const windows: Record<string, Bound> = {}
    for (const w of new Set(billed.flatMap((a) => Object.keys(pointsOf(a))))) {
      windows[w] = bound(billed.map((a) => pointsOf(a)[w] ?? 0), cellsLeft)
    }
    return {
      candidate,
      pilotCells: billed.length,
      cellsLeft,
      usd: known ? bound(costs, cellsLeft) : null,
      tokens: bound(billed.map((a) => a.usage.inputTokens + a.usage.outputTokens), cellsLeft),
      wallSeconds: bound(billed.map((a) => a.usage.wallSeconds), cellsLeft),
      windows,
      faulted: {
        cells: faulted.length,
        usd: faultedCosts.every((c): c is number => c !== null) ? faultedCosts.reduce((s, c) => s + c, 0) : null
      }
    }
  })
  const unpiloted = candidates.filter((c) => c.cellsLeft > 0 && c.pilotCells === 0).map((c) => c.candidate)
  const totalUsd = candidates.some((c) => c.usd === null) ? null : candidates.reduce((s, c) => add(s, c.usd!), zero)
  const wall = candidates.reduce((s, c) => add(s, c.wallSeconds), zero)
  const parallel = Math.max(1, options.parallel)
  const total = {
    usd: totalUsd,
    tokens: candidates.reduce((s, c) => add(s, c.tokens), zero),
    wallSeconds: { expected: wall.expected / parallel, conservative: wall.conservative / parallel, worstSeen: wall.worstSeen / parallel },
    windows: candidates.reduce((s, c) => addWindows(s, c.windows), {} as Record<string, Bound>)
  }
  const allowance = options.allowance ?? null
  const overAllowance = allowance === null
    ? []
    : Object.entries(total.windows).flatMap(([w, need]) => {
      const used = allowance.used[w] ?? 0
      const latest = allowance.latest[w] ?? 0
      const share = allowance.share * 100
      const pause = allowance.pauseAt * 100
      return [
        ...(used + need.conservative > share
          ? [`the ${w} window: ${points(used)} points used and ${points(need.conservative)} more needed (conservative), over the allowance of ${points(share)}`]
          : []),
        ...(latest + need.conservative >= pause
          ? [`the ${w} window: ${points(latest)}% used and ${points(need.conservative)} more points needed (conservative) would reach the pause at ${points(pause)}%`]
          : [])
      ]
    })
  const budget = options.budgetUsd
  const [verdict, reasons]: [Verdict, ReadonlyArray<string>] = unpiloted.length > 0
    ? ["unpiloted", [`no pilot Attempt with a verdict for ${unpiloted.join(", ")}: nothing to extrapolate from`]]
    : budget !== null && totalUsd === null
    ? ["cost-unknown", ["a pilot call's price is unknown: the cost of the rest cannot be predicted"]]
    : budget !== null && totalUsd !== null && totalUsd.conservative > budget
    ? ["over-budget", [`the rest costs ${usd(totalUsd.conservative)} (conservative), over the budget of ${usd(budget)}`]]
    : overAllowance.length > 0
    ? ["over-allowance", overAllowance]
    : ["within-budget", []]
  return { budgetUsd: budget, parallel, candidates, unpiloted, total, allowance, verdict, reasons }
}

/** What the gate is given besides the plan: budgets, and how to read subscription windows. */
export interface Gate {
  readonly budgetUsd: number | null
  readonly parallel: number
  /** The window readings an Attempt carries (harness runs on a subscription). */
  readonly readings?: (a: Attempt) => ReadonlyArray<Reading>
  /** Where the experiment stands on its allowance once the pilot is done. */
  readonly allowance?: Effect.Effect<AllowanceState>
}

/**
 * Runs the pilot cells not kept already, estimates the rest from the pilot's Attempts (kept or
 * fresh), and keeps the estimate in the store for `plan` and later runs.
 */
export const runPilot = (plan: Plan, settings: RunSettings, gate: Gate) =>
  Effect.gen(function*() {
    const store = yield* Store
    const pilot = pilotOf(plan.cells)
    // The pilot is bounded by the preflight budget as a run is by its cap: no call is sent that
    // could take the experiment's spend past it.
    const maxUsd = gate.budgetUsd === null ? settings.maxUsd : settings.maxUsd === null ? gate.budgetUsd : Math.min(settings.maxUsd, gate.budgetUsd)
    const pilotRun: RunOutcome = yield* run(plan, { ...settings, maxUsd, only: (cell) => pilot.has(cell) })
    const stored = yield* store.latestAttempts(Array.from(pilot, (c) => c.key))
    const attempts = Array.from(stored.values(), (s) => s.attempt)
    const states = yield* classify(plan)
    const left = states.filter((s) => s.state !== "kept" && !pilot.has(s.cell)).map((s) => s.cell)
    // A pilot cell the budget could not pay for: the budget cannot cover the experiment.
    const capped = (yield* store.skippedOfRun(pilotRun.report.runId)).filter((s) => s.reason.startsWith("spend cap"))
    const estimated = estimate({
        pilot: attempts,
        left,
        budgetUsd: gate.budgetUsd,
        parallel: gate.parallel,
        ...(gate.readings ? { points: windowPoints(attempts, gate.readings) } : {}),
        ...(gate.allowance ? { allowance: yield* gate.allowance } : {})
      })
    const result = {
      ...estimated,
      ...(capped.length > 0 && gate.budgetUsd !== null
        ? {
          verdict: "over-budget" as const,
          reasons: [
            `the pilot alone would pass the budget: ${capped.length} pilot cells were not run, since their calls could not be paid within ${usd(gate.budgetUsd)}`,
            ...estimated.reasons.filter((r) => !r.startsWith("no pilot Attempt"))
          ]
        }
        : {}),
      runId: pilotRun.report.runId
    }
    yield* store.putNote(pilotRun.report.runId, "estimate", result)
    return { estimate: result, pilotRun }
  })

/** The estimate as text: per candidate, the totals, and why the gate stopped. */
export const renderEstimate = (e: Estimate): string => {
  const line = (b: Bound | null, f: (x: number) => string) =>
    b === null ? "unknown" : `${f(b.expected)} expected, ${f(b.conservative)} conservative, ${f(b.worstSeen)} worst seen`
  const windows = (ws: Readonly<Record<string, Bound>>, indent: string) =>
    Object.entries(ws).map(([w, b]) => `${indent}${w} window: ${line(b, (x) => `${points(x)} points`)}`)
  const budgets = [
    ...(e.budgetUsd === null ? [] : [`budget ${usd(e.budgetUsd)}`]),
    ...(e.allowance === null ? [] : [`allowance ${points(e.allowance.share * 100)} points of any window, pause at ${points(e.allowance.pauseAt * 100)}%`])
  ]
  return [
    `preflight estimate for the cells left (${budgets.join("; ") || "no budget"}):`,
    ...e.candidates.flatMap((c) => [
      `  ${c.candidate}: ${c.cellsLeft} cells left, piloted on ${c.pilotCells}${
        c.faulted.cells > 0 ? ` (${c.faulted.cells} faulted, spent ${c.faulted.usd === null ? "unknown" : usd(c.faulted.usd)})` : ""
      }: ${line(c.usd, usd)}`,
      ...windows(c.windows, "    ")
    ]),
    `  total: ${line(e.total.usd, usd)}; tokens ${line(e.total.tokens, (x) => Math.round(x).toString())}; wall ${
      line(e.total.wallSeconds, (x) => `${x.toFixed(0)}s`)
    }`,
    ...windows(e.total.windows, "  total "),
    ...(e.allowance === null
      ? []
      : Object.keys(e.allowance.latest).sort().map((w) =>
        `  ${w} window now ${points(e.allowance!.latest[w] ?? 0)}% used, ${points(e.allowance!.used[w] ?? 0)} points by this experiment`
      )),
    ...e.reasons.map((r) => `  ${e.verdict}: ${r}`)
  ].join("\n")
}

/** A stored estimate note, read back; estimates kept before window points existed get their defaults. */
export const fromNote = (note: unknown): Estimate | null => {
  if (typeof note !== "object" || note === null || !("candidates" in note) || !Array.isArray(note.candidates) || !("total" in note)) return null
  const e = note as Estimate
  return {
    ...e,
    candidates: e.candidates.map((c) => ({ ...c, windows: c.windows ?? {} })),
    total: { ...e.total, windows: e.total.windows ?? {} },
    allowance: e.allowance ?? null,
    reasons: e.reasons ?? []
  }
}
