/**
 * The content-addressed description of one task. It names the task by id only: private data
 * (gold actions, possible answers) stays in the provider's capabilities. Everything that changes
 * what a score means is in it: the world spec (faults, admission), the capability versions, the
 * upstream revision and the models that take part (user simulator, judge).
 */
import { Schema } from "effect"
import * as ContentId from "../content/ContentId.ts"

export const EffectKind = Schema.Literal(
  "http/request",
  "model/generate",
  "tool/read",
  "tool/write",
  "fs/read",
  "fs/write",
  "process/spawn"
)
export type EffectKind = typeof EffectKind.Type

export const FaultReason = Schema.Literal("rate-limit", "server-error", "timeout")
export type FaultReason = typeof FaultReason.Type

export const FaultSpec = Schema.Struct({
  seed: Schema.Int,
  rate: Schema.Number.pipe(Schema.between(0, 1)),
  /** Effect kinds that may fault; null = every kind. */
  only: Schema.NullOr(Schema.Array(EffectKind)),
  kinds: Schema.NonEmptyArray(FaultReason)
})
export type FaultSpec = typeof FaultSpec.Type

export const Admission = Schema.Union(
  Schema.Literal("all", "read-only"),
  Schema.Struct({ admit: Schema.Array(EffectKind) })
)
export type Admission = typeof Admission.Type

export const EffectsSpec = Schema.Struct({
  admission: Admission,
  faults: Schema.NullOr(FaultSpec)
})
export type EffectsSpec = typeof EffectsSpec.Type

export const CapabilityRef = Schema.Struct({ name: Schema.String, version: Schema.String })
export type CapabilityRef = typeof CapabilityRef.Type

export const Limits = Schema.Struct({
  turns: Schema.NullOr(Schema.Int.pipe(Schema.positive())),
  tokens: Schema.NullOr(Schema.Int.pipe(Schema.positive())),
  calls: Schema.NullOr(Schema.Int.pipe(Schema.positive())),
  dollars: Schema.NullOr(Schema.Number.pipe(Schema.positive())),
  wallSeconds: Schema.NullOr(Schema.Number.pipe(Schema.positive()))
})
export type Limits = typeof Limits.Type

export const noLimits: Limits = { turns: null, tokens: null, calls: null, dollars: null, wallSeconds: null }

export const EnvironmentDef = Schema.Struct({
  benchmark: Schema.String,
  task: Schema.String,
  stratum: Schema.NullOr(Schema.String),
  world: Schema.Struct({
    isolation: Schema.Literal("fork", "none"),
    settlement: Schema.Literal("discard"),
    effects: EffectsSpec
  }),
  capabilities: Schema.Struct({
    worldSetup: CapabilityRef,
    protocol: CapabilityRef,
    evaluator: CapabilityRef,
    /** The upstream revision the transcription follows, if any. */
    upstream: Schema.NullOr(Schema.String),
    /** Models that are part of what a score means: role -> PROVIDER:MODEL. */
    models: Schema.Record({ key: Schema.String, value: Schema.String })
  }),
  limits: Limits
}).annotations({ identifier: "EnvironmentDef" })
export type EnvironmentDef = typeof EnvironmentDef.Type

// An EnvironmentDef is immutable data: its id is made once per value (a plan asks it once per
// candidate, 7,000 times for BFCL's two reference candidates).
const ids = new WeakMap<EnvironmentDef, ContentId.ContentId>()
export const idOf = (env: EnvironmentDef): ContentId.ContentId => {
  let id = ids.get(env)
  if (id === undefined) ids.set(env, id = ContentId.ofUnsafe(Schema.encodeSync(EnvironmentDef)(env)))
  return id
}

export const withEffects = (env: EnvironmentDef, effects: EffectsSpec): EnvironmentDef => ({
  ...env,
  world: { ...env.world, effects }
})

export const defaultEffects: EffectsSpec = { admission: "all", faults: null }
