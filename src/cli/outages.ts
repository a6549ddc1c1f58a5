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
