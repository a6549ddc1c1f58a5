/**
 * The recommendation from harness results.
 *
 * Orchestrator: the highest mean score on orchestrator tasks; candidates within 0.005 of it are
 * tied and go to the lower median cost (only when every tied cost is known: unknown is never
 * treated as cheap), then to the lower median wall time.
 * Worker: among candidates within 0.10 of the best worker score, the lowest known median cost; the
 * fastest when no cost is known; ties to the higher score.
 * Tasks of role `both` count for both. Skipped and unscored rows are not samples.
 */
import type { Role } from "./Corpus.ts"

export interface ResultRow {
  /** Candidate label, e.g. `codex:gpt-5`. */
  readonly candidate: string
  readonly task: string
  readonly role: Role
  readonly status: "done" | "skipped"
  /** Composite score in [0,1]; undefined = not scored. */
  readonly score: number | undefined
  /** undefined = unknown cost. */
  readonly costUsd: number | undefined
  readonly wallMs: number
}

export interface Standing {
  readonly candidate: string
  readonly score: number
  /** Median over the candidate's runs; undefined when any of them has an unknown cost. */
  readonly medianCostUsd: number | undefined
  readonly medianWallMs: number
  readonly runs: number
  /** Fewest scored runs of this candidate on one task. */
  readonly smallestCell: number
}

export interface Pick extends Standing {
  /** Why this one, in words. */
  readonly basis: string
}

export interface Recommendation {
  readonly orchestrator: Pick | undefined
  readonly worker: Pick | undefined
  readonly standings: { readonly orchestrator: ReadonlyArray<Standing>; readonly worker: ReadonlyArray<Standing> }
  /** Fewest scored runs in any (candidate, task) cell; undefined when nothing was scored. */
  readonly smallestSample: number | undefined
  readonly warnings: ReadonlyArray<string>
}

export const ORCHESTRATOR_TIE = 0.005
export const WORKER_WINDOW = 0.1
export const MIN_SAMPLE = 3

export const median = (xs: ReadonlyArray<number>): number | undefined => {
  if (xs.length === 0) return undefined
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1]! + s[mid]!) / 2
}

const mean = (xs: ReadonlyArray<number>): number => xs.reduce((a, b) => a + b, 0) / xs.length

const servesAs = (role: Role, as: "orchestrator" | "worker"): boolean => role === "both" || role === as

export const standings = (rows: ReadonlyArray<ResultRow>, as: "orchestrator" | "worker"): ReadonlyArray<Standing> => {
  const scored = rows.filter((r) => r.status === "done" && r.score !== undefined && servesAs(r.role, as))
  const byCandidate = new Map<string, Array<ResultRow>>()
  for (const r of scored) byCandidate.set(r.candidate, [...(byCandidate.get(r.candidate) ?? []), r])
  return [...byCandidate.entries()]
    .map(([candidate, rs]): Standing => {
      const cells = new Map<string, number>()
      for (const r of rs) cells.set(r.task, (cells.get(r.task) ?? 0) + 1)
      const costs = rs.map((r) => r.costUsd)
      return {
        candidate,
        score: mean(rs.map((r) => r.score ?? 0)),
        medianCostUsd: costs.every((c) => c !== undefined) ? median(costs as Array<number>) : undefined,
        medianWallMs: median(rs.map((r) => r.wallMs)) ?? 0,
        runs: rs.length,
        smallestCell: Math.min(...cells.values())
      }
    })
    .sort((a, b) => b.score - a.score || a.candidate.localeCompare(b.candidate))
}

const fmt = (x: number) => x.toFixed(3)

// Scores are means of fractions: compare with a little slack so 0.9 - 0.1 counts as within 0.1.
const EPS = 1e-9

const pickOrchestrator = (list: ReadonlyArray<Standing>, tie: number): Pick | undefined => {
  const best = list[0]
  if (best === undefined) return undefined
  const tied = list.filter((s) => s.score >= best.score - tie - EPS)
  if (tied.length === 1) return { ...best, basis: `highest orchestrator score ${fmt(best.score)}` }
  const allCostsKnown = tied.every((s) => s.medianCostUsd !== undefined)
  const ordered = [...tied].sort(
    (a, b) =>
      (allCostsKnown ? a.medianCostUsd! - b.medianCostUsd! : 0) ||
      a.medianWallMs - b.medianWallMs ||
      b.score - a.score ||
      a.candidate.localeCompare(b.candidate)
  )
  const chosen = ordered[0]!
  const by = allCostsKnown ? "lower median cost, then lower median wall time" : "lower median wall time (a tied cost is unknown)"
  return { ...chosen, basis: `${tied.length} scores within ${tie} of ${fmt(best.score)}; ${by}` }
}

const pickWorker = (list: ReadonlyArray<Standing>, window: number): Pick | undefined => {
  const best = list[0]
  if (best === undefined) return undefined
  const eligible = list.filter((s) => s.score >= best.score - window - EPS)
  const priced = eligible.filter((s) => s.medianCostUsd !== undefined)
  if (priced.length > 0) {
    const chosen = [...priced].sort(
      (a, b) =>
        a.medianCostUsd! - b.medianCostUsd! || b.score - a.score || a.medianWallMs - b.medianWallMs || a.candidate.localeCompare(b.candidate)
    )[0]!
    return { ...chosen, basis: `lowest median cost among ${eligible.length} scoring within ${window} of ${fmt(best.score)}` }
  }
  const chosen = [...eligible].sort(
    (a, b) => a.medianWallMs - b.medianWallMs || b.score - a.score || a.candidate.localeCompare(b.candidate)
  )[0]!
  return { ...chosen, basis: `fastest among ${eligible.length} scoring within ${window} of ${fmt(best.score)} (no cost known)` }
}

export const recommend = (
  rows: ReadonlyArray<ResultRow>,
  options: { readonly orchestratorTie?: number; readonly workerWindow?: number; readonly minSample?: number } = {}
): Recommendation => {
  const orchestrator = standings(rows, "orchestrator")
  const worker = standings(rows, "worker")
  const cells = [...orchestrator, ...worker].map((s) => s.smallestCell)
  const smallestSample = cells.length === 0 ? undefined : Math.min(...cells)
  const minSample = options.minSample ?? MIN_SAMPLE
  const warnings: Array<string> = []
  if (smallestSample === undefined) warnings.push("no scored runs: nothing to recommend")
  else if (smallestSample < minSample) {
    warnings.push(`smallest sample per cell is ${smallestSample} (below ${minSample}): the recommendation is not reliable`)
  }
  return {
    orchestrator: pickOrchestrator(orchestrator, options.orchestratorTie ?? ORCHESTRATOR_TIE),
    worker: pickWorker(worker, options.workerWindow ?? WORKER_WINDOW),
    standings: { orchestrator, worker },
    smallestSample,
    warnings
  }
}
