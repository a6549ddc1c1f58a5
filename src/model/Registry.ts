/**
 * The model registry: which models exist, how to reach them and what they cost at list price.
 * The shipped fixture `fixtures/registry/models.json` is a snapshot in models.dev's shape.
 */
import { readFileSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { Context, Effect, Either, Layer, Schema } from "effect"

export const ApiType = Schema.Literal("openai-responses", "openai-chat", "anthropic-messages", "google")
export type ApiType = typeof ApiType.Type

/** USD per million tokens. An absent cache price means that kind of token is billed as input. */
export const Cost = Schema.Struct({
  input: Schema.Number,
  output: Schema.Number,
  cache_read: Schema.optional(Schema.Number),
  cache_write: Schema.optional(Schema.Number)
})
export type Cost = typeof Cost.Type

export const ModelStatus = Schema.Literal("alpha", "beta", "deprecated", "retired")

export const ModelEntry = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  family: Schema.String,
  release_date: Schema.String,
  status: Schema.optional(ModelStatus),
  tool_call: Schema.Boolean,
  reasoning: Schema.Boolean,
  limit: Schema.Struct({ context: Schema.Number, output: Schema.Number }),
  /** Absent when the model has no known price: its cost is unknown, never 0. */
  cost: Schema.optional(Cost)
})
export type ModelEntry = typeof ModelEntry.Type

/** An environment variable that may give a provider's base URL, with the key variables that go with it. */
export const BaseUrlEnv = Schema.Struct({
  name: Schema.String,
  /** a key is only sent to the base URL it was set beside */
  env: Schema.Array(Schema.String)
})

/** What a model id the registry does not list resolves to, for providers that take any model id. */
export const AnyModel = Schema.Struct({
  tool_call: Schema.Boolean,
  reasoning: Schema.Boolean,
  limit: Schema.Struct({ context: Schema.Number, output: Schema.Number })
})

export const ProviderEntry = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  api: ApiType,
  /** Names of the environment variables that hold the key, first one wins. Empty for local servers. */
  env: Schema.Array(Schema.String),
  base_url: Schema.optional(Schema.String),
  /** Where the environment gives the base URL, first set one wins; default `<ID>_BASE_URL` with `env`. */
  base_url_env: Schema.optional(Schema.Array(BaseUrlEnv)),
  /** A key is sent when one is set, and none is needed (keyless local servers). */
  key_optional: Schema.optional(Schema.Boolean),
  /**
   * Present when the provider serves whatever model id it is given (an OpenAI-compatible server):
   * an unlisted id resolves to an entry with these limits and no price (its cost is unknown).
   */
  any_model: Schema.optional(AnyModel),
  models: Schema.Record({ key: Schema.String, value: ModelEntry })
})
export type ProviderEntry = typeof ProviderEntry.Type

export const RegistryFile = Schema.Struct({
  source: Schema.String,
  snapshot_date: Schema.String,
  providers: Schema.Record({ key: Schema.String, value: ProviderEntry }),
  /** alias -> "provider:model" */
  aliases: Schema.Record({ key: Schema.String, value: Schema.String })
})
export type RegistryFile = typeof RegistryFile.Type

/** What a model reference resolves to; plain JSON, so it can be part of a candidate's inputs id. */
export const ResolvedModel = Schema.Struct({
  /** canonical "provider:model" with the provider's model id */
  ref: Schema.String,
  provider: Schema.String,
  api: ApiType,
  model: ModelEntry
})
export type ResolvedModel = typeof ResolvedModel.Type

export class ModelNotFound extends Schema.TaggedError<ModelNotFound>()("ModelNotFound", {
  ref: Schema.String,
  suggestions: Schema.Array(Schema.String)
}) {
  override get message() {
    const hint = this.suggestions.length > 0 ? `; did you mean ${this.suggestions.join(", ")}?` : ""
    return `no model "${this.ref}" in the registry${hint}`
  }
}

export class RegistryError extends Schema.TaggedError<RegistryError>()("RegistryError", {
  path: Schema.String,
  reason: Schema.Literal("unreadable", "invalid"),
  detail: Schema.String
}) {
  override get message() {
    return `registry ${this.path} is ${this.reason}: ${this.detail}`
  }
}

export interface Registry {
  readonly file: RegistryFile
  readonly providers: ReadonlyArray<ProviderEntry>
  readonly resolve: (ref: string) => Effect.Effect<ResolvedModel, ModelNotFound>
}
export const Registry = Context.GenericTag<Registry>("assay/model/Registry")

/** Path of the shipped snapshot. */
export const fixturePath: string = fileURLToPath(new URL("../../fixtures/registry/models.json", import.meta.url))

const levenshtein = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution))
    }
    previous = current
  }
  return previous[b.length] ?? 0
}

/** Every name a user may type: canonical refs, bare model ids and aliases. */
const knownNames = (file: RegistryFile): ReadonlyArray<string> => [
  ...Object.values(file.providers).flatMap((p) => Object.keys(p.models).map((m) => `${p.id}:${m}`)),
  ...Object.keys(file.aliases)
]

const suggestionsFor = (file: RegistryFile, ref: string): ReadonlyArray<string> => {
  const needle = ref.toLowerCase()
  const bare = needle.includes(":") ? needle.slice(needle.indexOf(":") + 1) : needle
  return knownNames(file)
    .map((name) => {
      const lower = name.toLowerCase()
      const tail = lower.includes(":") ? lower.slice(lower.indexOf(":") + 1) : lower
      const contains = lower.includes(bare) || (bare.length >= 3 && bare.includes(tail)) ? 0 : 1
      return { name, score: contains * 100 + Math.min(levenshtein(needle, lower), levenshtein(bare, tail)) }
    })
    .filter((s) => s.score < 100 || s.score - 100 <= Math.max(2, Math.floor(bare.length / 3)))
    .sort((x, y) => x.score - y.score || x.name.localeCompare(y.name))
    .slice(0, 5)
    .map((s) => s.name)
}

const entryOf = (provider: ProviderEntry, model: ModelEntry): ResolvedModel => ({
  ref: `${provider.id}:${model.id}`,
  provider: provider.id,
  api: provider.api,
  model
})

/** An id the provider does not list, on a provider that serves any model id: no price, so its cost is unknown. */
const unlisted = (provider: ProviderEntry | undefined, modelId: string): ResolvedModel | undefined =>
  provider?.any_model === undefined || modelId.trim().length === 0
    ? undefined
    : entryOf(provider, {
      id: modelId,
      name: modelId,
      family: "",
      release_date: "",
      tool_call: provider.any_model.tool_call,
      reasoning: provider.any_model.reasoning,
      limit: provider.any_model.limit
    })

/**
 * Resolves "provider:model" (model id or an alias of that provider's model; any id on a provider
 * with `any_model`), an alias, or a bare model id that exactly one provider lists. Pure.
 */
export const resolveIn = (file: RegistryFile, ref: string): Either.Either<ResolvedModel, ModelNotFound> => {
  const lookup = (providerId: string, modelId: string): ResolvedModel | undefined => {
    const provider = file.providers[providerId]
    const model = provider?.models[modelId]
    return provider !== undefined && model !== undefined ? entryOf(provider, model) : undefined
  }
  const viaAlias = (name: string, providerId?: string): ResolvedModel | undefined => {
    const target = file.aliases[name]
    if (target === undefined) return undefined
    const colon = target.indexOf(":")
    const p = target.slice(0, colon)
    if (providerId !== undefined && p !== providerId) return undefined
    return lookup(p, target.slice(colon + 1))
  }
  const colon = ref.indexOf(":")
  let found: ResolvedModel | undefined
  if (colon > 0 && file.providers[ref.slice(0, colon)] !== undefined) {
    // Model ids may contain ':' themselves (ollama's "llama3.1:8b"), so split at the first one only.
    const providerId = ref.slice(0, colon)
    const modelId = ref.slice(colon + 1)
    found = lookup(providerId, modelId) ?? viaAlias(modelId, providerId) ?? unlisted(file.providers[providerId], modelId)
  }
  if (found === undefined) found = viaAlias(ref)
  if (found === undefined) {
    const owners = Object.values(file.providers).filter((p) => p.models[ref] !== undefined)
    const only = owners[0]
    if (owners.length === 1 && only !== undefined) found = lookup(only.id, ref)
  }
  return found !== undefined
    ? Either.right(found)
    : Either.left(new ModelNotFound({ ref, suggestions: suggestionsFor(file, ref) }))
}

export const make = (file: RegistryFile): Registry => ({
  file,
  providers: Object.values(file.providers),
  resolve: (ref) => resolveIn(file, ref)
})

export const decode = (json: unknown, path = "<value>"): Effect.Effect<RegistryFile, RegistryError> =>
  Schema.decodeUnknown(RegistryFile)(json).pipe(
    Effect.mapError((e) => new RegistryError({ path, reason: "invalid", detail: e.message }))
  )

const parseJson = (text: string, path: string): Effect.Effect<unknown, RegistryError> =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (e) => new RegistryError({ path, reason: "invalid", detail: String(e) })
  })

export const fromFile = (path: string): Effect.Effect<RegistryFile, RegistryError> =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (e) => new RegistryError({ path, reason: "unreadable", detail: String(e) })
  }).pipe(Effect.flatMap((text) => parseJson(text, path)), Effect.flatMap((json) => decode(json, path)))

/** The shipped snapshot, decoded. A broken shipped fixture is a bug in assay, hence a defect. */
export const fixture: Effect.Effect<RegistryFile> = Effect.suspend(() =>
  parseJson(readFileSync(fixturePath, "utf8"), fixturePath)
).pipe(Effect.flatMap((json) => decode(json, fixturePath)), Effect.orDie)

export const layer: Layer.Layer<Registry> = Layer.effect(Registry, Effect.map(fixture, make))

export const layerFromFile = (path: string): Layer.Layer<Registry, RegistryError> =>
  Layer.effect(Registry, Effect.map(fromFile(path), make))

/** Resolves a reference with the Registry in context. */
export const resolve = (ref: string): Effect.Effect<ResolvedModel, ModelNotFound, Registry> =>
  Effect.flatMap(Registry, (registry) => registry.resolve(ref))
