/**
 * One evaluate(env, agent): setup evidence, the protocol's portable output, the verdict, usage,
 * the inputs id, and a receipt of content ids. Certified = stored under the content id of its
 * record.
 */
import { Schema } from "effect"
import * as ContentId from "../content/ContentId.ts"
import { Verdict } from "./Verdict.ts"

export const Usage = Schema.Struct({
  inputTokens: Schema.Int,
  outputTokens: Schema.Int,
  cacheReadTokens: Schema.Int,
  cacheWriteTokens: Schema.Int,
  calls: Schema.Int,
  retries: Schema.Int,
  /** List-price dollars; null when any call's price is unknown (never 0 for unknown). */
  costUsd: Schema.NullOr(Schema.Number),
  wallSeconds: Schema.Number
})
export type Usage = typeof Usage.Type

/** What judging an Attempt cost: model calls made by the evaluation, outside the candidate's wallet. */
export const Judging = Schema.Struct({
  calls: Schema.Int,
  inputTokens: Schema.Int,
  outputTokens: Schema.Int,
  /** List-price dollars; null when a judge's price is unknown. */
  costUsd: Schema.NullOr(Schema.Number)
})
export type Judging = typeof Judging.Type

/** Token counts of an agent's model calls, disjoint as in `Usage`. */
export const TokenCounts = Schema.Struct({
  inputTokens: Schema.Int,
  outputTokens: Schema.Int,
  cacheReadTokens: Schema.Int,
  cacheWriteTokens: Schema.Int
})
export type TokenCounts = typeof TokenCounts.Type

/**
 * A harness Attempt's model calls counted twice: by assay (the answers its proxy passed to the
 * CLI) and by the CLI itself (its output and session files), kept as a cross-check of each other.
 */
export const CliUsage = Schema.Struct({
  harness: Schema.String,
  assay: TokenCounts,
  /** null when the CLI reported no usage (it was ended before it wrote it, or its output is unreadable) */
  cli: Schema.NullOr(TokenCounts)
})
export type CliUsage = typeof CliUsage.Type

/** Whether the CLI's own count is assay's (no count from the CLI is no agreement). */
export const cliAgrees = (u: CliUsage): boolean =>
  u.cli !== null && u.cli.inputTokens === u.assay.inputTokens && u.cli.outputTokens === u.assay.outputTokens &&
  u.cli.cacheReadTokens === u.assay.cacheReadTokens && u.cli.cacheWriteTokens === u.assay.cacheWriteTokens

export const noUsage: Usage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  calls: 0,
  retries: 0,
  costUsd: 0,
  wallSeconds: 0
}

export const RecordedEffect = Schema.Struct({
  kind: Schema.String,
  key: Schema.String,
  occurrence: Schema.Int,
  request: Schema.Unknown,
  // The error member first: `{ ok: Unknown }` also accepts an object without `ok` (Unknown takes
  // the missing value), so tried first it took every error outcome and encoded it as `{}`.
  outcome: Schema.Union(
    // `permanent`: a fault retrying cannot help (a refused key), so the replay does not retry it either.
    Schema.Struct({ error: Schema.Struct({ reason: Schema.String, message: Schema.String, permanent: Schema.optional(Schema.Boolean) }) }),
    Schema.Struct({ ok: Schema.Unknown })
  )
})
export type RecordedEffect = typeof RecordedEffect.Type

/**
 * The kind of the entry a bridged agent CLI's recording ends with when a failure ended its session
 * (src/harness/bridge/Bridge.ts): not an effect but a note kept for replay, so every reader of a
 * recording (replay, the viewer) tells it from the effects by this kind.
 */
export const SESSION_ENDED_KIND = "harness/ended"

export const Attempt = Schema.Struct({
  environmentId: Schema.String,
  agentId: Schema.String,
  benchmark: Schema.String,
  task: Schema.String,
  stratum: Schema.NullOr(Schema.String),
  candidate: Schema.String,
  repetition: Schema.Int,
  inputsId: Schema.String,
  evidence: Schema.Unknown,
  output: Schema.Unknown,
  verdict: Verdict,
  usage: Usage,
  faults: Schema.Array(Schema.Struct({ key: Schema.String, occurrence: Schema.Int, reason: Schema.String })),
  finalWorld: Schema.NullOr(Schema.String),
  recording: Schema.Array(RecordedEffect),
  receipt: Schema.Struct({
    evidenceId: Schema.String,
    outputId: Schema.String,
    verdictId: Schema.String,
    recordingId: Schema.String,
    library: Schema.String
  }),
  startedAt: Schema.String,
  /** Absent when no judge was asked. */
  judging: Schema.optionalWith(Judging, { exact: true }),
  /** A harness (agent CLI) Attempt's usage as the CLI reported it beside assay's; absent otherwise. */
  cliUsage: Schema.optionalWith(CliUsage, { exact: true })
}).annotations({ identifier: "Attempt" })
export type Attempt = typeof Attempt.Type

export const idOf = (attempt: Attempt): ContentId.ContentId => ContentId.ofUnsafe(Schema.encodeSync(Attempt)(attempt))
