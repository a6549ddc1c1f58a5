/**
 * The content-addressed description of one task. It names the task by id only: private data
 * (gold actions, possible answers) stays in the provider's capabilities. Everything that changes
 * what a score means is in it: the world spec (faults, admission), the capability versions, the
 * upstream revision and the models that take part (user simulator, judge).
 */
import { Schema } from "effect"
import * as Canonical from "../content/Canonical.ts"
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

// The canonical text of an EnvironmentDef written field by field, in canonical key order: the
// same text as Canonical over Schema.encodeSync(EnvironmentDef), which cost ~55 µs a task (the
// encode and the generic walk), a fifth of `plan --benchmark bfcl` over 3,491 tasks. A number
// JSON cannot hold, or a text field that is not text, takes the schema's path, which decides; the
// ranges the schema checks (a positive limit, a rate in [0, 1]) are not checked again here.
const str = JSON.stringify
const num = (n: number | null): string | undefined => n === null ? "null" : Canonical.numberText(n)
const ref = (r: CapabilityRef): string => `{"name":${str(r.name)},"version":${str(r.version)}}`
const strings = (xs: ReadonlyArray<string>): string => `[${xs.map((x) => str(x)).join(",")}]`
const admissionText = (a: Admission): string => typeof a === "string" ? str(a) : `{"admit":${strings(a.admit)}}`
const modelsText = (models: Readonly<Record<string, string>>): string => {
  const keys = Object.keys(models).sort()
  return `{${keys.map((k) => `${str(k)}:${str(models[k])}`).join(",")}}`
}
const fastText = (env: EnvironmentDef): string | undefined => {
  const { world, capabilities: c, limits: l } = env
  const f = world.effects.faults
  const nums = [l.turns, l.tokens, l.calls, l.dollars, l.wallSeconds, f === null ? null : f.seed, f === null ? null : f.rate].map(num)
  if (nums.some((n) => n === undefined)) return undefined
  const texts = [env.benchmark, env.task, c.evaluator.name, c.evaluator.version, c.protocol.name, c.protocol.version, c.worldSetup.name, c.worldSetup.version]
  if (texts.some((t) => typeof t !== "string") || Object.values(c.models).some((m) => typeof m !== "string") || Object.hasOwn(c.models, "__proto__")) return undefined
  if ((env.stratum !== null && typeof env.stratum !== "string") || (c.upstream !== null && typeof c.upstream !== "string")) return undefined
  const [turns, tokens, calls, dollars, wallSeconds, seed, rate] = nums as Array<string>
  const faults = f === null
    ? "null"
    : `{"kinds":${strings(f.kinds)},"only":${f.only === null ? "null" : strings(f.only)},"rate":${rate},"seed":${seed}}`
  return `{"benchmark":${str(env.benchmark)},` +
    `"capabilities":{"evaluator":${ref(c.evaluator)},"models":${modelsText(c.models)},"protocol":${ref(c.protocol)},` +
    `"upstream":${c.upstream === null ? "null" : str(c.upstream)},"worldSetup":${ref(c.worldSetup)}},` +
    `"limits":{"calls":${calls},"dollars":${dollars},"tokens":${tokens},"turns":${turns},"wallSeconds":${wallSeconds}},` +
    `"stratum":${env.stratum === null ? "null" : str(env.stratum)},"task":${str(env.task)},` +
    `"world":{"effects":{"admission":${admissionText(world.effects.admission)},"faults":${faults}},` +
    `"isolation":${str(world.isolation)},"settlement":${str(world.settlement)}}}`
}

/** The id as the schema makes it: Canonical over the encoded value (the reference `idOf` agrees with). */
export const schemaIdOf = (env: EnvironmentDef): ContentId.ContentId => ContentId.ofUnsafe(Schema.encodeSync(EnvironmentDef)(env))

// An EnvironmentDef is immutable data: its id is made once per value (a plan asks it once per
// candidate, 7,000 times for BFCL's two reference candidates).
const ids = new WeakMap<EnvironmentDef, ContentId.ContentId>()
export const idOf = (env: EnvironmentDef): ContentId.ContentId => {
  let id = ids.get(env)
  if (id === undefined) {
    const text = fastText(env)
    ids.set(env, id = text === undefined ? schemaIdOf(env) : ContentId.ofText(text))
  }
  return id
}

/** The environment with its effects spec (admission and faults) replaced. */
export const withEffects = (env: EnvironmentDef, effects: EffectsSpec): EnvironmentDef => ({
  ...env,
  world: { ...env.world, effects }
})

/**
 * The environment with `faults` injected (`--faults`), its admission kept: a provider's read-only
 * world stays read-only under faults.
 */
export const withFaults = (env: EnvironmentDef, faults: FaultSpec | null): EnvironmentDef => ({
  ...env,
  world: { ...env.world, effects: { ...env.world.effects, faults } }
})

export const defaultEffects: EffectsSpec = { admission: "all", faults: null }
