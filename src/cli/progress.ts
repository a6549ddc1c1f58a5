/**
 * Progress on stderr: a live bar (done/total, pass rate, spend, ETA) on a terminal, plain lines
 * otherwise, so logs of long runs stay readable.
 */
import { Effect } from "effect"
import type { Progress } from "../experiment/Runner.ts"
import { isUnscored, summaryOf } from "../experiment/Scorecards.ts"

/** Passed of scored, as a whole percent; "-" before any cell was scored. */
const percent = (t: { readonly done: number; readonly passed: number }): string => (t.done > 0 ? `${((t.passed / t.done) * 100).toFixed(0)}%` : "-")

const money = (usd: number | null): string => (usd === null ? "unknown" : `$${usd.toFixed(4)}`)

const duration = (seconds: number): string => {
  if (!Number.isFinite(seconds)) return "?"
  const s = Math.round(seconds)
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m` : s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`
}

export const stderrProgress = (options: { readonly quiet?: boolean } = {}): Progress => {
  const tty = process.stderr.isTTY === true
  let started = 0
  let total = 0
  let lastLine = 0
  // Each candidate's own cells done and passed: a plain line names one candidate, so its rate is that candidate's.
  const byCandidate = new Map<string, { done: number; passed: number }>()
  const write = (text: string) => Effect.sync(() => process.stderr.write(text))
  return {
    start: ({ total: all, toRun, kept }) => {
      started = Date.now()
      total = toRun
      return options.quiet ? Effect.void : write(`assay: ${all} cells: ${kept} kept, ${toRun} to run\n`)
    },
    cell: ({ done, spentUsd, last }) => {
      if (options.quiet) return Effect.void
      // A cell that says nothing of the candidate (an outage, the benchmark's failure) is in no pass rate.
      const unscored = isUnscored(summaryOf(last))
      const own = byCandidate.get(last.candidate) ?? { done: 0, passed: 0 }
      if (!unscored) own.done++
      if (!unscored && last.verdict.reward >= 1) own.passed++
      byCandidate.set(last.candidate, own)
      const all = [...byCandidate.values()].reduce((a, c) => ({ done: a.done + c.done, passed: a.passed + c.passed }), { done: 0, passed: 0 })
      const elapsed = (Date.now() - started) / 1000
      const eta = done > 0 ? (elapsed / done) * (total - done) : Number.POSITIVE_INFINITY
      const rate = percent(all)
      if (tty) {
        const width = 28
        const filled = total > 0 ? Math.round((done / total) * width) : width
        const bar = "#".repeat(filled) + "-".repeat(width - filled)
        return write(`\r[${bar}] ${done}/${total} pass ${rate} spend ${money(spentUsd)} eta ${duration(eta)}   `)
      }
      // Plain lines: one per cell for short runs, at most one a second for long ones.
      const now = Date.now()
      if (done !== total && total > 50 && now - lastLine < 1000) return Effect.void
      lastLine = now
      return write(
        `assay: ${done}/${total} ${last.candidate} ${last.task}#${last.repetition} ${unscored ? `not scored (${last.verdict.ended?.reason})` : `reward ${last.verdict.reward.toFixed(2)}`}` +
          ` | ${last.candidate} pass ${percent(own)}${byCandidate.size > 1 ? ` (all ${rate})` : ""}` +
          ` spend ${money(spentUsd)} eta ${duration(eta)}\n`
      )
    },
    end: tty && !options.quiet ? write("\n") : Effect.void
  }
}
