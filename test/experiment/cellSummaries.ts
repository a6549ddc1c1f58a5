/** Cell summaries as the store gives them to scorecards and comparisons, for the statistics tests. */
import type { CellSummary } from "../../src/experiment/Scorecards.ts"

/** One ledger cell of `candidate` on `task` with its reward (a reward under 1 fails the answer check). */
export const cell = (candidate: string, task: string, repetition: number, reward: number, extra: Partial<CellSummary> = {}): CellSummary => ({
  environmentId: `env-${task}`,
  benchmark: "ledger",
  task,
  stratum: null,
  candidate,
  repetition,
  reward,
  failures: reward >= 1 ? [] : ["answer"],
  ended: null,
  injected: 0,
  faults: [],
  usage: { inputTokens: 10, outputTokens: 1, costUsd: 0.001, wallSeconds: 0.1 },
  ...extra
})
