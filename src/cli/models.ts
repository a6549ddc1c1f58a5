/**
 * `assay models [--provider P] [--json]`: the model registry a run resolves `PROVIDER:MODEL` in,
 * with its date: each provider's wire API, base URL and key variable, each model's list price and
 * limits. `assay models refresh [--from FILE]`: the registry remade from models.dev's public
 * catalogue (the pinned URL, or a copy of it) over the shipped snapshot, written to the user's
 * config dir (Registry.refreshedPath), where every later command reads it.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { Clock, Console, Effect, Option } from "effect"
import { sha256Hex } from "../content/ContentId.ts"
import * as Registry from "../model/Registry.ts"
import { UsageError } from "./benchmarks.ts"

export const modelsDoc = {
  about: "Show the model registry PROVIDER:MODEL candidates resolve in, with its date: each provider's wire API, base URL, key variable " +
    "and model count; --provider P lists its models with list prices (USD per million tokens) and limits. `assay models refresh` " +
    `updates it from models.dev's public catalogue (${Registry.CATALOGUE_URL}), for every provider there assay can reach`,
  args: {
    ACTION: "refresh: remake the registry from the catalogue (over the shipped snapshot) and write it to $ASSAY_REGISTRY, else " +
      "$XDG_CONFIG_HOME/assay/models.json (~/.config/assay/models.json), where every later command reads it. " +
      "Prices never change a candidate's inputs id (kept cells stay kept); limits do"
  },
  flags: {
    "--provider": { value: "P", about: "Only this provider, with each of its models" },
    "--json": { about: "Print one JSON document: { registry: { date, source, catalogueSha256, path, shipped }, providers: [...] } (with refresh: what was written and skipped)" },
    "--from": { value: "FILE", about: "With refresh: read the catalogue from this file (a copy of api.json) instead of fetching it" }
  }
} as const

/** Where the registry in use came from, as `plan` and `models` say it. */
export interface RegistryBrief {
  readonly date: string
  readonly source: string
  readonly catalogueSha256: string | null
  readonly path: string | null
  readonly shipped: boolean
}

export const registryBrief = (registry: Registry.Registry): RegistryBrief => ({
  date: registry.file.snapshot_date,
  source: registry.file.source,
  catalogueSha256: registry.file.catalogue_sha256 ?? null,
  path: registry.path,
  shipped: Registry.isShipped(registry)
})

/** One line: which registry prices and limits come from, and how old it is. */
export const registryLine = (registry: Registry.Registry): string => {
  const brief = registryBrief(registry)
  if (brief.shipped) return `model registry: the shipped snapshot of ${brief.date} (assay models refresh updates it from models.dev)`
  const sha = brief.catalogueSha256 === null ? "" : ` (catalogue sha256 ${brief.catalogueSha256.slice(0, 12)}…)`
  return `model registry: ${brief.date}${sha}, ${brief.path ?? "given as a value"}`
}

const baseUrlEnvOf = (provider: Registry.ProviderEntry): ReadonlyArray<string> =>
  provider.base_url_env?.map((s) => s.name) ?? [`${provider.id.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_BASE_URL`]

const keyText = (provider: Registry.ProviderEntry): string =>
  provider.env.length === 0
    ? provider.base_url_env !== undefined ? provider.base_url_env.flatMap((s) => s.env).join(" or ") + " (optional)" : "none"
    : provider.env.join(" or ") + (provider.key_optional === true ? " (optional)" : "")

const baseText = (provider: Registry.ProviderEntry): string =>
  provider.base_url !== undefined ? provider.base_url : `from ${baseUrlEnvOf(provider).join(" or ")}`

/** A table of plain columns, the last one free. */
const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? []
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ").trimEnd()).join("\n")
}

const price = (usd: number | undefined): string => (usd === undefined ? "-" : String(usd))

const providerJson = (registry: Registry.Registry, provider: Registry.ProviderEntry) => ({
  id: provider.id,
  name: provider.name,
  api: provider.api,
  keyEnv: provider.base_url_env !== undefined && provider.env.length === 0 ? provider.base_url_env.flatMap((s) => s.env) : provider.env,
  keyOptional: provider.key_optional === true,
  baseUrl: provider.base_url ?? null,
  baseUrlEnv: baseUrlEnvOf(provider),
  anyModel: provider.any_model !== undefined,
  aliases: Object.fromEntries(Object.entries(registry.file.aliases).filter(([, target]) => target.startsWith(`${provider.id}:`))),
  // As the registry has them (models.dev's field names): prices in USD per million tokens.
  models: Object.values(provider.models)
})

const providerText = (registry: Registry.Registry, provider: Registry.ProviderEntry): string => {
  const models = Object.values(provider.models).sort((a, b) => a.id.localeCompare(b.id))
  const aliases = Object.entries(registry.file.aliases).filter(([, target]) => target.startsWith(`${provider.id}:`))
  return [
    `${provider.id} (${provider.name}): ${provider.api} at ${baseText(provider)}` +
    (provider.base_url !== undefined ? ` (${baseUrlEnvOf(provider).join(" or ")} overrides it)` : "") + `; key: ${keyText(provider)}`,
    ...(provider.any_model !== undefined ? ["  any other model id is accepted too, with no price (its cost is unknown)"] : []),
    ...(aliases.length > 0 ? [`  aliases: ${aliases.map(([alias, target]) => `${alias} = ${target.slice(provider.id.length + 1)}`).join(", ")}`] : []),
    ...(models.length === 0
      ? ["  (no models listed)"]
      : [
        table([
          ["  model", "input", "output", "cache read", "cache write", "context", "max output", "tools"],
          ...models.map((m) => [
            `  ${m.id}${m.status !== undefined ? ` (${m.status})` : ""}`,
            price(m.cost?.input),
            price(m.cost?.output),
            price(m.cost?.cache_read),
            price(m.cost?.cache_write),
            String(m.limit.context),
            String(m.limit.output),
            m.tool_call ? "yes" : "no"
          ])
        ]),
        ...models.flatMap((m) =>
          (m.cost?.tiers ?? []).map((t) =>
            `  ${m.id} over ${t.tier.size.toLocaleString("en-US")} prompt tokens: input ${price(t.input)}, output ${price(t.output)}` +
            `, cache read ${price(t.cache_read)}, cache write ${price(t.cache_write)} (every token of such a call)`
          )
        ),
        "  prices: USD per million tokens at list price; - none listed (a model without a price has an unknown cost, never 0)"
      ])
  ].join("\n")
}

const nearest = (given: string, names: ReadonlyArray<string>): ReadonlyArray<string> => {
  const g = given.toLowerCase()
  return names.filter((n) => n.includes(g) || g.includes(n) || (g.length >= 3 && n.startsWith(g.slice(0, 3)))).slice(0, 5)
}

const show = (opts: { readonly provider: Option.Option<string>; readonly json: boolean }) =>
  Effect.gen(function*() {
    const registry = yield* Registry.Registry
    const all = [...registry.providers].sort((a, b) => a.id.localeCompare(b.id))
    const chosen = Option.match(opts.provider, { onNone: () => all, onSome: (id) => all.filter((p) => p.id === id) })
    if (Option.isSome(opts.provider) && chosen.length === 0) {
      const near = nearest(opts.provider.value, all.map((p) => p.id))
      return yield* new UsageError({
        detail: `no provider "${opts.provider.value}" in the model registry${near.length > 0 ? ` (did you mean ${near.join(", ")}?)` : ""}; assay models lists them`
      })
    }
    if (opts.json) {
      return yield* Console.log(JSON.stringify({ registry: registryBrief(registry), providers: chosen.map((p) => providerJson(registry, p)) }, null, 2))
    }
    if (Option.isSome(opts.provider)) return yield* Console.log([registryLine(registry), ...chosen.map((p) => providerText(registry, p))].join("\n"))
    yield* Console.log([
      registryLine(registry),
      table([
        ["provider", "api", "models", "priced", "key", "base URL"],
        ...all.map((p) => {
          const models = Object.values(p.models)
          return [p.id, p.api, String(models.length), String(models.filter((m) => m.cost !== undefined).length), keyText(p), baseText(p)]
        })
      ]),
      `A model is PROVIDER:MODEL (--model ${all[0] === undefined ? "openai:gpt-4o-mini" : `${all[0].id}:MODEL`}); assay models --provider P lists P's models with their prices.`
    ].join("\n"))
  })

/** The catalogue's bytes: the file given, else the pinned URL. */
const catalogueBytes = (from: Option.Option<string>): Effect.Effect<{ readonly bytes: Uint8Array; readonly source: string }, Registry.CatalogueError> =>
  Option.match(from, {
    onSome: (path) =>
      Effect.try({
        try: () => ({ bytes: new Uint8Array(readFileSync(path)), source: resolve(path) }),
        catch: (e) => new Registry.CatalogueError({ source: resolve(path), reason: "unreadable", detail: e instanceof Error ? e.message : String(e) })
      }),
    onNone: () =>
      Effect.tryPromise({
        try: async (signal) => {
          const response = await fetch(Registry.CATALOGUE_URL, { signal: AbortSignal.any([signal, AbortSignal.timeout(60_000)]) })
          if (!response.ok) throw new Error(`HTTP ${response.status}`)
          return { bytes: new Uint8Array(await response.arrayBuffer()), source: Registry.CATALOGUE_URL }
        },
        catch: (e) =>
          new Registry.CatalogueError({
            source: Registry.CATALOGUE_URL,
            reason: "unreachable",
            detail: `${e instanceof Error ? (e.cause instanceof Error ? `${e.message} (${e.cause.message})` : e.message) : String(e)}; with no network, give a copy of it with --from FILE`
          })
      })
  })

const parsed = (bytes: Uint8Array, source: string): Effect.Effect<unknown, Registry.CatalogueError> =>
  Effect.try({
    try: (): unknown => JSON.parse(new TextDecoder().decode(bytes)),
    catch: (e) => new Registry.CatalogueError({ source, reason: "invalid", detail: `not JSON: ${e instanceof Error ? e.message : String(e)}` })
  })

/** Written beside its final place and renamed: a command never reads half a registry. */
const writeAtomically = (path: string, text: string, source: string): Effect.Effect<void, Registry.CatalogueError> =>
  Effect.try({
    try: () => {
      mkdirSync(dirname(path), { recursive: true })
      const staging = `${path}.${process.pid}.tmp`
      writeFileSync(staging, text)
      renameSync(staging, path)
    },
    catch: (e) => new Registry.CatalogueError({ source, reason: "unwritable", detail: `${path}: ${e instanceof Error ? e.message : String(e)}` })
  })

const SHOWN_SKIPPED = 10

const refresh = (opts: { readonly from: Option.Option<string>; readonly json: boolean }) =>
  Effect.gen(function*() {
    const target = yield* Registry.refreshedPath
    if (target === null) return yield* new UsageError({ detail: "ASSAY_REGISTRY=shipped uses the shipped snapshot: unset it, or set it to a file, to refresh" })
    const { bytes, source } = yield* catalogueBytes(opts.from)
    const sha256 = sha256Hex(bytes)
    const json = yield* parsed(bytes, source)
    const date = new Date(yield* Clock.currentTimeMillis).toISOString().slice(0, 10)
    const refreshed = yield* Registry.fromCatalogue(json, { base: yield* Registry.fixture, source, sha256, date })
    yield* writeAtomically(target, JSON.stringify(refreshed.file, null, 1) + "\n", source)
    const added = Object.keys(refreshed.file.providers).length - Object.keys((yield* Registry.fixture).providers).length
    if (opts.json) {
      return yield* Console.log(JSON.stringify({
        path: target,
        source,
        sha256,
        bytes: bytes.length,
        date,
        providers: refreshed.providers,
        models: refreshed.models,
        skipped: refreshed.skipped,
        pinned: refreshed.pinned
      }, null, 2))
    }
    const skippedProviders = refreshed.skipped.filter((s) => !s.name.includes(":"))
    const skippedModels = refreshed.skipped.filter((s) => s.name.includes(":"))
    const listed = (items: ReadonlyArray<Registry.Skipped>) =>
      items.slice(0, SHOWN_SKIPPED).map((s) => `    ${s.name}: ${s.reason}`).concat(items.length > SHOWN_SKIPPED ? [`    and ${items.length - SHOWN_SKIPPED} more (--json lists them)`] : [])
    yield* Console.log([
      `read ${source}: ${bytes.length} bytes, sha256 ${sha256}`,
      `wrote ${target}, dated ${date}: ${refreshed.providers} providers (${added} more than the shipped snapshot), ${refreshed.models} models`,
      ...(skippedProviders.length > 0 ? [`  left out ${skippedProviders.length} providers:`, ...listed(skippedProviders)] : []),
      ...(skippedModels.length > 0 ? [`  left out ${skippedModels.length} models:`, ...listed(skippedModels)] : []),
      ...(refreshed.pinned.length > 0
        ? [`  kept ${refreshed.pinned.length} names as aliases of the snapshot's pinned models (${refreshed.pinned.slice(0, 3).join(", ")}${refreshed.pinned.length > 3 ? ", …" : ""})`]
        : [])
    ].join("\n"))
  })

export const modelsCommand = Command.make(
  "models",
  {
    action: Args.text({ name: "ACTION" }).pipe(Args.optional),
    provider: Options.text("provider").pipe(Options.optional),
    json: Options.boolean("json"),
    from: Options.text("from").pipe(Options.optional)
  },
  (opts) =>
    Effect.gen(function*() {
      if (Option.isNone(opts.action)) {
        if (Option.isSome(opts.from)) return yield* new UsageError({ detail: "--from goes with refresh: assay models refresh --from FILE" })
        return yield* show(opts)
      }
      if (opts.action.value !== "refresh") {
        return yield* new UsageError({ detail: `unknown action ${opts.action.value}: assay models takes refresh (or nothing, to show the registry)` })
      }
      if (Option.isSome(opts.provider)) return yield* new UsageError({ detail: "--provider goes with showing the registry, not with refresh (which reads every provider)" })
      return yield* refresh(opts)
    })
).pipe(Command.withDescription(modelsDoc.about))
