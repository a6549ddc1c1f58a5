/**
 * The one line a run prints about its outages: cells ended in a fault met live (an endpoint
 * unreachable, failing past the retries, an agent CLI that never reached its model). They are
 * not the candidates' scores, and the next run retries them; the line says so for every kind.
 */
import { isOutage, summaryOf } from "../experiment/Scorecards.ts"
import type { Attempt } from "../schema/Attempt.ts"

export const outageLine = (attempts: ReadonlyArray<Attempt>): string | null => {
  // The scorecards' own rule, so the line and the figures it explains count the same cells.
  const live = attempts.filter((a) => isOutage(summaryOf(a)))
  const first = live[0]?.verdict.ended
  if (first === undefined || first === null) return null
  const why = live.every((a) => a.verdict.ended?.fault === "unreachable")
    ? "because the model endpoint could not be reached"
    : "in an outage (an endpoint failing past the retries, rate limits or timeouts)"
  return `assay: ${live.length} cells ended as faults ${why} (${first.detail}); they are not scored as the candidates' failures, and the next run retries them`
}

/** Ends that are the candidate's failure but say why only in the cell (a 400, a tool the world refused, a broken answer). */
const unexplained = new Set(["protocol-failed", "setup-failed", "evaluator-failed"])

/**
 * The one line a run prints about cells that ended before a verdict and are scored 0 as the
 * candidates' failures: how many, of which candidates, and the first one's reason, which the
 * report's tables show only as a count (`ended:protocol-failed`). The benchmark's own failures
 * have a line of their own.
 */
export const endedEarlyLine = (attempts: ReadonlyArray<Attempt>): string | null => {
  const early = attempts.filter((a) => a.verdict.ended !== null && unexplained.has(a.verdict.ended.reason) && a.verdict.ended.provider === undefined)
  const first = early[0]?.verdict.ended
  if (first === undefined || first === null) return null
  const byCandidate = new Map<string, number>()
  for (const a of early) byCandidate.set(a.candidate, (byCandidate.get(a.candidate) ?? 0) + 1)
  const who = [...byCandidate].map(([c, n]) => `${c}: ${n}`).join(", ")
  const detail = first.detail.replace(/\s+/g, " ").trim()
  const shown = detail.length > 240 ? `${detail.slice(0, 240)}…` : detail
  const reasons = [...new Set(early.map((a) => a.verdict.ended!.reason))].join(" or ")
  return `assay: ${early.length} cells ended ${reasons} before a verdict and are scored 0 as the candidates' failures (${who}); the first: ${shown}`
}
