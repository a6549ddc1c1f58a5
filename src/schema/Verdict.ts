/**
 * What an evaluator says of a finished Attempt: a reward in [0, 1] and one boolean per way a
 * candidate can lose (true = passed). Checks that could not be evaluated (no judge) are listed,
 * never counted as passed.
 */
import { Schema } from "effect"

export const Trust = Schema.Literal("deterministic", "judge", "self-report")
export type Trust = typeof Trust.Type

export const Verdict = Schema.Struct({
  reward: Schema.Number.pipe(Schema.between(0, 1)),
  checks: Schema.Record({ key: Schema.String, value: Schema.Boolean }),
  notEvaluated: Schema.Array(Schema.String),
  trust: Trust,
  /** Why the Attempt ended early, if it did: a fault, a refusal, a budget, a protocol failure. */
  ended: Schema.NullOr(
    Schema.Struct({
      /**
       * `fault`: an infrastructure fault (injected, or an outage: rate limits, server errors,
       * timeouts, an unreachable endpoint), never the candidate's failure. `spend-cap`: the
       * experiment's spend cap refused a call; such a cell is skipped and runs again later.
       * `timeout`: the Attempt's wall-time limit (`--timeout-secs`) passed; `budget-exceeded`: its
       * tokens, calls or dollars ran out (wall time too, in Attempts stored before `timeout`).
       */
      reason: Schema.Literal("budget-exceeded", "timeout", "fault", "refused", "protocol-failed", "setup-failed", "evaluator-failed", "spend-cap"),
      detail: Schema.String,
      /** For a fault: whether it was injected by the environment's faults (true) or met live (false). */
      injected: Schema.optional(Schema.Boolean),
      /**
       * Set when the benchmark failed, not the candidate: a throw in its setup, protocol or grade,
       * a typed failure of its setup or grade, or a grade out of shape. Where, as file:line, or the
       * capability's name when the stack does not show it.
       */
      provider: Schema.optional(Schema.String),
      /** With `provider`: the benchmark's data is missing or damaged (bring it and run again), not its code. */
      data: Schema.optional(Schema.Boolean),
      /** For a fault: which (`unreachable`: the endpoint could not be reached, never injected). */
      fault: Schema.optional(Schema.Literal("rate-limit", "server-error", "timeout", "unreachable"))
    })
  ),
  details: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "Verdict" })
export type Verdict = typeof Verdict.Type

export const failuresOf = (verdict: Verdict): ReadonlyArray<string> =>
  Object.entries(verdict.checks)
    .filter(([, passed]) => !passed)
    .map(([name]) => name)
