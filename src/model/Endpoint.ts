/**
 * Where a model provider is reached and with which key: its endpoint (from the Registry, or the
 * built-in openai and anthropic ones), the base URL and key read from the environment. Keys are
 * read only from the environment and kept Redacted.
 */
import { Config, Effect, Either, Option, Redacted } from "effect"
import { type ApiType, type ProviderEntry, Registry } from "./Registry.ts"

/** An environment variable that may give the base URL, with the key variables that go with it. */
export interface BaseUrlSource {
  readonly name: string
  readonly keyEnv: ReadonlyArray<string>
}

/** Where a provider is reached. Not part of a request, so a recording does not depend on a port. */
export interface Endpoint {
  readonly api: ApiType
  /** explicit base URL; else from the environment (`baseUrlEnv`); else the registry's */
  readonly baseUrl?: string | undefined
  /** environment variables that may hold the key, first set one wins; empty for keyless servers */
  readonly keyEnv: ReadonlyArray<string>
  /** base URL when neither the explicit one nor the environment gives one */
  readonly defaultBaseUrl?: string | undefined
  /** a key is sent when one is set, and none is needed (keyless local servers) */
  readonly keyOptional?: boolean | undefined
  /**
   * where the environment may give the base URL, first set one wins, each with its own keys (a
   * key is only sent to the base URL it was set beside); default `<PROVIDER>_BASE_URL` with `keyEnv`
   */
  readonly baseUrlEnv?: ReadonlyArray<BaseUrlSource> | undefined
}

const builtinEndpoints: Readonly<Record<string, Endpoint>> = {
  openai: { api: "openai-responses", keyEnv: ["OPENAI_API_KEY"], defaultBaseUrl: "https://api.openai.com/v1" },
  anthropic: { api: "anthropic-messages", keyEnv: ["ANTHROPIC_API_KEY"], defaultBaseUrl: "https://api.anthropic.com" }
}

export const endpointOf = (provider: ProviderEntry): Endpoint => ({
  api: provider.api,
  keyEnv: provider.env,
  defaultBaseUrl: provider.base_url,
  keyOptional: provider.key_optional,
  baseUrlEnv: provider.base_url_env?.map((source) => ({ name: source.name, keyEnv: source.env }))
})

const baseUrlEnv = (provider: string): string => `${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_BASE_URL`

const optionalEnv = (name: string): Effect.Effect<Option.Option<string>> =>
  Config.option(Config.string(name)).pipe(
    Effect.map(Option.filter((value) => value.length > 0)),
    Effect.orElseSucceed(() => Option.none<string>())
  )

/** Reads the first key that is set among `names`. */
export const keyFromEnv = (names: ReadonlyArray<string>): Effect.Effect<Option.Option<{ readonly name: string; readonly key: Redacted.Redacted }>> =>
  Effect.gen(function*() {
    for (const name of names) {
      const value = yield* optionalEnv(name)
      if (Option.isSome(value)) return Option.some({ name, key: Redacted.make(value.value) })
    }
    return Option.none()
  })

const sourcesOf = (provider: string, endpoint: Endpoint): ReadonlyArray<BaseUrlSource> =>
  endpoint.baseUrlEnv ?? [{ name: baseUrlEnv(provider), keyEnv: endpoint.keyEnv }]

/** Where a call goes and with which key, once the environment has been read. */
export interface Connection {
  readonly baseUrl: string
  /** which variable the base URL came from, when it came from the environment */
  readonly baseUrlFrom: Option.Option<string>
  readonly key: Option.Option<{ readonly name: string; readonly key: Redacted.Redacted }>
  /** the key variables that were looked at */
  readonly keyEnv: ReadonlyArray<string>
}

/** Why no call can be made: a needed key is missing, or nothing says where to send it. */
export type NotConnected =
  | { readonly reason: "auth"; readonly keyEnv: ReadonlyArray<string> }
  | { readonly reason: "bad-request"; readonly baseUrlEnv: ReadonlyArray<string> }

export const notConnectedDetail = (provider: string, why: NotConnected): string =>
  why.reason === "auth" ? `no key: set ${why.keyEnv.join(" or ")}` : `no base URL for ${provider}: set ${why.baseUrlEnv.join(" or ")}`

/** Reads the base URL and the key of a provider's endpoint from the environment. */
export const connectionOf = (provider: string, endpoint: Endpoint): Effect.Effect<Either.Either<Connection, NotConnected>> =>
  Effect.gen(function*() {
    let found: { readonly baseUrl: string; readonly from: Option.Option<string>; readonly keyEnv: ReadonlyArray<string> } | undefined
    if (endpoint.baseUrl !== undefined) found = { baseUrl: endpoint.baseUrl, from: Option.none(), keyEnv: endpoint.keyEnv }
    const sources = sourcesOf(provider, endpoint)
    for (const source of sources) {
      if (found !== undefined) break
      const value = yield* optionalEnv(source.name)
      if (Option.isSome(value)) found = { baseUrl: value.value, from: Option.some(source.name), keyEnv: source.keyEnv }
    }
    if (found === undefined && endpoint.defaultBaseUrl !== undefined) {
      found = { baseUrl: endpoint.defaultBaseUrl, from: Option.none(), keyEnv: endpoint.keyEnv }
    }
    const keyEnv = found?.keyEnv ?? endpoint.keyEnv
    const key = yield* keyFromEnv(keyEnv)
    if (Option.isNone(key) && keyEnv.length > 0 && endpoint.keyOptional !== true) {
      return Either.left<NotConnected>({ reason: "auth", keyEnv })
    }
    if (found === undefined) {
      return Either.left<NotConnected>({ reason: "bad-request", baseUrlEnv: sources.map((s) => s.name) })
    }
    return Either.right<Connection>({ baseUrl: found.baseUrl.replace(/\/+$/, ""), baseUrlFrom: found.from, key, keyEnv })
  })

/** The endpoint of a provider in a registry, else the built-in openai and anthropic ones. */
export const endpointIn = (registry: Option.Option<Registry>, provider: string): Option.Option<Endpoint> => {
  const entry = Option.flatMapNullable(registry, (r) => r.file.providers[provider])
  return Option.isSome(entry) ? Option.some(endpointOfEntry(entry.value)) : Option.fromNullable(builtinEndpoints[provider])
}

// One Endpoint per registry entry (entries are immutable data), so a call's connection can be
// remembered by its endpoint (`connectionFor`).
const endpoints = new WeakMap<ProviderEntry, Endpoint>()
const endpointOfEntry = (entry: ProviderEntry): Endpoint => {
  let endpoint = endpoints.get(entry)
  if (endpoint === undefined) endpoints.set(entry, endpoint = endpointOf(entry))
  return endpoint
}

// The ConfigProvider a program has unless it sets its own: it reads process.env.
const defaultConfigProvider = Effect.runSync(Effect.configProviderWith(Effect.succeed))

// Connections made under the default ConfigProvider, by endpoint and provider, with the values
// of every variable they were read from: reading them through Config on every call cost ~40-80 us
// of CPU per model call. A change of any of those variables reads the environment again.
const connections = new WeakMap<Endpoint, Map<string, { readonly seen: string; readonly connected: Either.Either<Connection, NotConnected> }>>()

const envNamesOf = (provider: string, endpoint: Endpoint): Array<string> => {
  const names: Array<string> = [...endpoint.keyEnv]
  for (const source of sourcesOf(provider, endpoint)) names.push(source.name, ...source.keyEnv)
  return names
}

/** `connectionOf`, remembered while the environment variables it read are unchanged. */
export const connectionFor = (provider: string, endpoint: Endpoint): Effect.Effect<Either.Either<Connection, NotConnected>> =>
  Effect.configProviderWith((config) => {
    if (config !== defaultConfigProvider) return connectionOf(provider, endpoint)
    const seen = envNamesOf(provider, endpoint).map((name) => process.env[name] ?? "").join("\u0000")
    let byProvider = connections.get(endpoint)
    const known = byProvider?.get(provider)
    if (known !== undefined && known.seen === seen) return Effect.succeed(known.connected)
    if (byProvider === undefined) connections.set(endpoint, byProvider = new Map())
    const remember = byProvider
    return Effect.tap(connectionOf(provider, endpoint), (connected) => {
      remember.set(provider, { seen, connected })
    })
  })

/** The endpoint of a provider: the Registry's when one is in context, else the built-in openai and anthropic ones. */
export const endpointFor = (provider: string): Effect.Effect<Option.Option<Endpoint>> =>
  Effect.map(Effect.serviceOption(Registry), (registry) => endpointIn(registry, provider))

