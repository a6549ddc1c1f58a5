/**
 * The model registry: which models exist, how to reach them and what they cost at list price.
 * The shipped fixture `fixtures/registry/models.json` is a snapshot in models.dev's shape.
 */
import { existsSync, readFileSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { homedir } from "node:os"
import { join, resolve as resolvePath } from "node:path"
import { fileURLToPath } from "node:url"
import { Config, Context, Effect, Either, Layer, Option, ParseResult, Schema } from "effect"

export const ApiType = Schema.Literal("openai-responses", "openai-chat", "anthropic-messages", "google")
export type ApiType = typeof ApiType.Type

/** USD per million tokens. An absent cache price means that kind of token is billed as input. */
export const Rates = Schema.Struct({
  input: Schema.Number,
  output: Schema.Number,
  cache_read: Schema.optional(Schema.Number),
  cache_write: Schema.optional(Schema.Number)
})
export type Rates = typeof Rates.Type

/**
 * A price that rises with the prompt (models.dev's `tiers`): a call whose prompt (input, cache read
 * and cache write tokens) is over `tier.size` tokens pays these rates for all of its tokens.
 */
export const ContextTier = Schema.Struct({
  tier: Schema.Struct({ type: Schema.Literal("context"), size: Schema.NonNegativeInt }),
  ...Rates.fields
})
export type ContextTier = typeof ContextTier.Type

/** A model's list price: its base rates and, for some (Gemini 2.5 Pro), dearer rates for long prompts. */
export const Cost = Schema.Struct({
  ...Rates.fields,
  tiers: Schema.optional(Schema.Array(ContextTier))
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
  /** sha256 of the catalogue a refreshed registry was made from (absent in the shipped snapshot) */
  catalogue_sha256: Schema.optional(Schema.String),
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

/**
 * A resolved model as it is part of a candidate's inputs id: what the model is asked and can
 * answer, not what a call costs. Its list price and status are left out, so a refresh that changes
 * a price keeps the cells; its limits stay in (the output a request asks for), and so does whether
 * it has a price at all (`priced`: a priced model's request bounds its output, ModelAgent.requestOf).
 */
export const presented = (resolved: ResolvedModel): ResolvedModel & { readonly priced: boolean } => {
  const { cost, status: _status, ...model } = resolved.model
  return { ...resolved, model, priced: cost !== undefined }
}

/** The list price of a resolved model in a registry file, when it has one. */
export const priceIn = (file: RegistryFile, ref: string): Cost | undefined =>
  Either.getOrUndefined(resolveIn(file, ref))?.model.cost

export class ModelNotFound extends Schema.TaggedError<ModelNotFound>()("ModelNotFound", {
  ref: Schema.String,
  suggestions: Schema.Array(Schema.String)
}) {
  override get message() {
    const hint = this.suggestions.length > 0 ? `; did you mean ${this.suggestions.join(", ")}?` : "; `assay models` lists the models it has"
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
  /** the file it was read from; null when made from a value */
  readonly path: string | null
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
    // Said as PROVIDER:MODEL, the form every flag takes: an alias as the model it names.
    .map((s) => (s.name.includes(":") ? s.name : file.aliases[s.name] ?? s.name))
    .filter((name, i, all) => all.indexOf(name) === i)
    .slice(0, 5)
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

export const make = (file: RegistryFile, path: string | null = null): Registry => ({
  file,
  path,
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

/** The shipped snapshot, whatever has been refreshed: what tests and library users get. */
export const layer: Layer.Layer<Registry> = Layer.effect(Registry, Effect.map(fixture, (file) => make(file, fixturePath)))

export const layerFromFile = (path: string): Layer.Layer<Registry, RegistryError> =>
  Layer.effect(Registry, Effect.map(fromFile(path), (file) => make(file, path)))

/** Resolves a reference with the Registry in context. */
export const resolve = (ref: string): Effect.Effect<ResolvedModel, ModelNotFound, Registry> =>
  Effect.flatMap(Registry, (registry) => registry.resolve(ref))

// ---------------------------------------------------------------------------------------------
// The refreshed registry: models.dev's public catalogue over the shipped snapshot
// ---------------------------------------------------------------------------------------------

/** The one place `assay models refresh` fetches from (models.dev's public catalogue). */
export const CATALOGUE_URL = "https://models.dev/api.json"

/**
 * Where the refreshed registry is written and read: `ASSAY_REGISTRY` when set, else
 * `$XDG_CONFIG_HOME/assay/models.json` (default `~/.config/assay/models.json`): the user's, for
 * every home, as a key is. `ASSAY_REGISTRY=shipped` uses the shipped snapshot (null here).
 */
export const refreshedPath: Effect.Effect<string | null> = Effect.gen(function*() {
  const env = (name: string) => Config.string(name).pipe(Config.option, Effect.map(Option.filter((v) => v.length > 0)), Effect.orElseSucceed(() => Option.none<string>()))
  const given = yield* env("ASSAY_REGISTRY")
  if (Option.isSome(given)) return given.value === "shipped" ? null : resolvePath(given.value)
  const config = yield* env("XDG_CONFIG_HOME")
  return join(Option.getOrElse(config, () => join(homedir(), ".config")), "assay", "models.json")
})

/**
 * The registry commands use: the refreshed one when there is one, else the shipped snapshot. A
 * refreshed file that cannot be read fails (never a silent fall back to other prices).
 */
export const current: Effect.Effect<Registry, RegistryError> = Effect.gen(function*() {
  const path = yield* refreshedPath
  if (path === null || !existsSync(path)) return make(yield* fixture, fixturePath)
  const file = yield* fromFile(path).pipe(
    Effect.mapError((e) => new RegistryError({ path: e.path, reason: e.reason, detail: `${e.detail} (remove it, or set ASSAY_REGISTRY=shipped, to use the shipped snapshot)` }))
  )
  return make(file, path)
})

/** The refreshed registry when there is one, else the shipped snapshot: what the command provides. */
export const layerCurrent: Layer.Layer<Registry, RegistryError> = Layer.effect(Registry, current)

/** Whether a registry is the shipped snapshot (not refreshed, not another file). */
export const isShipped = (registry: Registry): boolean => registry.path === fixturePath

// The catalogue's shape (models.dev's api.json): only what a registry entry needs is read, every
// other field is ignored, so a field models.dev adds changes nothing here.
const Price = Schema.NonNegative
const CatalogueModel = Schema.Struct({
  name: Schema.optional(Schema.String),
  family: Schema.optional(Schema.String),
  release_date: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String),
  tool_call: Schema.optional(Schema.Union(Schema.Boolean, Schema.Struct({ supported: Schema.Boolean }))),
  reasoning: Schema.optional(Schema.Boolean),
  limit: Schema.Struct({ context: Schema.NonNegative, output: Schema.NonNegative }),
  cost: Schema.optional(Schema.Struct({
    input: Price,
    output: Price,
    cache_read: Schema.optional(Price),
    cache_write: Schema.optional(Price),
    // Dearer rates for long prompts: `tiers` (newer), or `context_over_200k` (one tier over 200,000
    // tokens). A tier of another type fails the model's read, so it is skipped, never under-priced.
    tiers: Schema.optional(Schema.Array(Schema.Struct({
      tier: Schema.Struct({ type: Schema.Literal("context"), size: Schema.NonNegativeInt }),
      input: Price,
      output: Price,
      cache_read: Schema.optional(Price),
      cache_write: Schema.optional(Price)
    }))),
    context_over_200k: Schema.optional(Schema.Struct({
      input: Price,
      output: Price,
      cache_read: Schema.optional(Price),
      cache_write: Schema.optional(Price)
    }))
  })),
  /** a model served by another package (and so perhaps another wire API) than its provider's */
  provider: Schema.optional(Schema.Struct({ npm: Schema.optional(Schema.String), api: Schema.optional(Schema.String) }))
})
const CatalogueProvider = Schema.Struct({
  name: Schema.String,
  env: Schema.Array(Schema.String),
  npm: Schema.optional(Schema.String),
  api: Schema.optional(Schema.String),
  models: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
const Catalogue = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * The wire API each AI-SDK package speaks, and its base URL where the catalogue gives none (it
 * gives `api` only for @ai-sdk/openai-compatible). A provider whose package is not here is left
 * out: assay has no client for it (Bedrock, Azure and Vertex sign requests their own way).
 */
const packages: Readonly<Record<string, { readonly api: ApiType; readonly base_url?: string }>> = {
  "@ai-sdk/openai-compatible": { api: "openai-chat" },
  "@ai-sdk/openai": { api: "openai-responses", base_url: "https://api.openai.com/v1" },
  "@ai-sdk/anthropic": { api: "anthropic-messages", base_url: "https://api.anthropic.com" },
  "@ai-sdk/google": { api: "google", base_url: "https://generativelanguage.googleapis.com/v1beta" },
  "@ai-sdk/groq": { api: "openai-chat", base_url: "https://api.groq.com/openai/v1" },
  "@ai-sdk/mistral": { api: "openai-chat", base_url: "https://api.mistral.ai/v1" },
  "@ai-sdk/xai": { api: "openai-chat", base_url: "https://api.x.ai/v1" },
  "@ai-sdk/deepseek": { api: "openai-chat", base_url: "https://api.deepseek.com" },
  "@ai-sdk/togetherai": { api: "openai-chat", base_url: "https://api.together.xyz/v1" },
  "@ai-sdk/cerebras": { api: "openai-chat", base_url: "https://api.cerebras.ai/v1" },
  "@ai-sdk/fireworks": { api: "openai-chat", base_url: "https://api.fireworks.ai/inference/v1" },
  "@ai-sdk/deepinfra": { api: "openai-chat", base_url: "https://api.deepinfra.com/v1/openai" },
  "@ai-sdk/perplexity": { api: "openai-chat", base_url: "https://api.perplexity.ai" },
  "@openrouter/ai-sdk-provider": { api: "openai-chat", base_url: "https://openrouter.ai/api/v1" }
}

/** How a provider is reached: its wire API and base URL, or why assay cannot reach it. */
const reachOf = (npm: string | undefined, api: string | undefined): Either.Either<{ readonly api: ApiType; readonly base_url: string | undefined }, string> => {
  const known = npm === undefined ? undefined : packages[npm]
  // A base URL given by the catalogue is an OpenAI-compatible one (models.dev gives `api` only then).
  if (api !== undefined) return Either.right({ api: known?.api ?? "openai-chat", base_url: api })
  if (known === undefined) return Either.left(npm === undefined ? "no package and no base URL" : `no client for ${npm}`)
  if (known.base_url === undefined) return Either.left(`${npm} without a base URL`)
  return Either.right({ api: known.api, base_url: known.base_url })
}

/** A catalogue entry left out of the registry, and why. */
export interface Skipped {
  /** `provider` or `provider:model` */
  readonly name: string
  readonly reason: string
}

export interface Refreshed {
  readonly file: RegistryFile
  readonly skipped: ReadonlyArray<Skipped>
  /** catalogue models whose id is an alias of a pinned snapshot model (`provider:alias`): the alias keeps its meaning */
  readonly pinned: ReadonlyArray<string>
  /** providers and models in the registry written (the snapshot's included) */
  readonly providers: number
  readonly models: number
}

export class CatalogueError extends Schema.TaggedError<CatalogueError>()("CatalogueError", {
  source: Schema.String,
  reason: Schema.Literal("unreachable", "unreadable", "invalid", "unwritable"),
  detail: Schema.String
}) {
  override get message() {
    return `the model catalogue ${this.source} is ${this.reason}: ${this.detail}`
  }
}

const firstLine = (error: ParseResult.ParseError): string => ParseResult.TreeFormatter.formatErrorSync(error).split("\n").slice(0, 3).join(" ").replace(/\s+/g, " ")

const statusOf = (status: string | undefined): ModelEntry["status"] =>
  status === "alpha" || status === "beta" || status === "deprecated" || status === "retired" ? status : undefined

// A catalogue price as the registry keeps it: `context_over_200k` becomes a tier over 200,000
// prompt tokens when the newer `tiers` is absent (both describe the same premium where both are given).
const costOfCatalogue = (cost: NonNullable<typeof CatalogueModel.Type["cost"]>): Cost => {
  const { context_over_200k, tiers, ...rates } = cost
  const kept = tiers ?? (context_over_200k !== undefined ? [{ tier: { type: "context" as const, size: 200_000 }, ...context_over_200k }] : undefined)
  return kept !== undefined && kept.length > 0 ? { ...rates, tiers: kept } : rates
}

/**
 * The registry `assay models refresh` writes: the shipped snapshot with every provider of a
 * models.dev-shaped catalogue that assay can reach. A provider in both keeps the snapshot's way of
 * being reached and its models, and gains the catalogue's models (its prices and limits win for an
 * id both list, except an id that is one of the snapshot's aliases: it keeps naming the pinned
 * model). Entries that cannot be read are left out and named in `skipped`; a catalogue of which
 * no provider, or under half of them, can be read is refused (its shape has changed).
 */
export const fromCatalogue = (
  json: unknown,
  options: { readonly base: RegistryFile; readonly source: string; readonly sha256: string; readonly date: string }
): Effect.Effect<Refreshed, CatalogueError> =>
  Effect.gen(function*() {
    const invalid = (detail: string) => new CatalogueError({ source: options.source, reason: "invalid", detail })
    const top = yield* Schema.decodeUnknown(Catalogue)(json).pipe(Effect.mapError((e) => invalid(`not an object of providers: ${firstLine(e)}`)))
    const skipped: Array<Skipped> = []
    const pinned: Array<string> = []
    const providers: Record<string, ProviderEntry> = { ...options.base.providers }
    const aliasTargets = new Map(Object.entries(options.base.aliases))
    let read = 0
    for (const [id, raw] of Object.entries(top)) {
      const decoded = Schema.decodeUnknownEither(CatalogueProvider)(raw)
      if (Either.isLeft(decoded)) {
        skipped.push({ name: id, reason: firstLine(decoded.left) })
        continue
      }
      read++
      const entry = decoded.right
      if (id.includes(":") || id.trim().length === 0) {
        skipped.push({ name: id, reason: "a provider id cannot contain ':' (PROVIDER:MODEL)" })
        continue
      }
      const reach = reachOf(entry.npm, entry.api)
      if (Either.isLeft(reach)) {
        skipped.push({ name: id, reason: reach.left })
        continue
      }
      const shipped = options.base.providers[id]
      const own: Record<string, ModelEntry> = {}
      for (const [modelId, rawModel] of Object.entries(entry.models)) {
        const name = `${id}:${modelId}`
        const model = Schema.decodeUnknownEither(CatalogueModel)(rawModel)
        if (Either.isLeft(model)) {
          skipped.push({ name, reason: firstLine(model.left) })
          continue
        }
        const m = model.right
        if (m.provider !== undefined && (m.provider.npm !== undefined || m.provider.api !== undefined)) {
          const served = reachOf(m.provider.npm ?? entry.npm, m.provider.api ?? entry.api)
          if (Either.isLeft(served) || served.right.api !== reach.right.api || served.right.base_url !== reach.right.base_url) {
            skipped.push({ name, reason: `served elsewhere than its provider (${m.provider.npm ?? m.provider.api ?? ""})` })
            continue
          }
        }
        const target = aliasTargets.get(modelId)
        if (shipped !== undefined && shipped.models[modelId] === undefined && target !== undefined && target.startsWith(`${id}:`)) {
          pinned.push(name)
          continue
        }
        const status = statusOf(m.status)
        // A model the snapshot lists keeps its names and date: they are part of a candidate's inputs id.
        const known = shipped?.models[modelId]
        own[modelId] = {
          id: modelId,
          name: known?.name ?? m.name ?? modelId,
          family: known?.family ?? m.family ?? "",
          release_date: known?.release_date ?? m.release_date ?? "",
          ...(status !== undefined ? { status } : {}),
          tool_call: typeof m.tool_call === "object" ? m.tool_call.supported : m.tool_call ?? false,
          reasoning: m.reasoning ?? false,
          limit: { context: m.limit.context, output: m.limit.output },
          ...(m.cost !== undefined ? { cost: costOfCatalogue(m.cost) } : {})
        }
      }
      providers[id] = shipped !== undefined
        ? { ...shipped, env: [...shipped.env, ...entry.env.filter((e) => !shipped.env.includes(e))], models: { ...shipped.models, ...own } }
        : { id, name: entry.name, api: reach.right.api, env: entry.env, ...(reach.right.base_url !== undefined ? { base_url: reach.right.base_url } : {}), models: own }
    }
    const total = Object.keys(top).length
    if (read === 0) return yield* invalid(total === 0 ? "it lists no provider" : `none of its ${total} providers could be read (first: ${skipped[0]?.name}: ${skipped[0]?.reason})`)
    if (read * 2 < total) return yield* invalid(`only ${read} of its ${total} providers could be read: its shape has changed`)
    const file: RegistryFile = {
      source: `models.dev catalogue ${options.source}, over assay's shipped snapshot of ${options.base.snapshot_date}`,
      snapshot_date: options.date,
      catalogue_sha256: options.sha256,
      providers,
      aliases: options.base.aliases
    }
    // What is written is what a command will read: checked here, not on the next start.
    yield* decode(file, options.source).pipe(Effect.mapError((e) => invalid(e.detail)))
    const models = Object.values(providers).reduce((n, p) => n + Object.keys(p.models).length, 0)
    return { file, skipped, pinned, providers: Object.keys(providers).length, models }
  })
