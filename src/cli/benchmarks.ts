/**
 * The benchmarks the command knows, loaded on demand so that one benchmark's data is read only
 * when it is asked for, and benchmarks outside assay: a path to a module (TypeScript or
 * JavaScript) whose default export is a Provider, written against `import … from "assay"`.
 */
import { existsSync, readFileSync, statSync } from "node:fs"
import { register } from "node:module"
import { dirname, join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { Effect, Schema } from "effect"
import type { Provider } from "../evaluation/Provider.ts"
import type { ResultReader } from "../model/Imported.ts"
import { where } from "../evaluation/ProviderFailure.ts"
import { namedForPull } from "../evaluation/DataRoot.ts"

export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

const loaders: Record<string, () => Promise<Provider>> = {
  ledger: async () => (await import("../../providers/ledger/index.ts")).provider,
  "contract-review": async () => (await import("../../providers/contract-review/index.ts")).provider,
  bfcl: async () => (await import("../../providers/bfcl/index.ts")).provider,
  "bfcl-multi-turn": async () => (await import("../../providers/bfcl/multiturn/provider.ts")).provider,
  bird: async () => (await import("../../providers/bird/index.ts")).provider,
  "tau2-retail": async () => (await import("../../providers/tau2/retail/index.ts")).provider,
  "tau2-telecom": async () => (await import("../../providers/tau2/telecom/index.ts")).provider,
  "tau2-banking": async () => (await import("../../providers/tau2/banking/index.ts")).provider,
  "tau2-airline": async () => (await import("../../providers/tau2/airline/index.ts")).provider,
  corpus: async () => (await import("../../providers/corpus/index.ts")).provider,
  "coding-repair": async () => (await import("../../providers/coding-repair/index.ts")).provider,
  "competitor-discovery": async () => (await import("../../providers/competitor-discovery/index.ts")).provider
}

/** Terminal-Bench 2, pinned: the Harbor-format provider over its folder in the data root, loaded with the command's container options. */
const TERMINAL_BENCH_2 = "terminal-bench-2"

export const benchmarkNames = (): ReadonlyArray<string> => [...Object.keys(loaders), TERMINAL_BENCH_2]

/** Readers of other runners' result files (`assay import BENCHMARK DIR`), by benchmark. */
const resultReaders: Record<string, () => Promise<ResultReader>> = {
  bfcl: async () => (await import("../../providers/bfcl/results.ts")).reader
}

export const importableNames = (): ReadonlyArray<string> => Object.keys(resultReaders)

/** The reader of a benchmark's result files, or a usage error naming those assay reads. */
export const loadResultReader = (name: string): Effect.Effect<ResultReader, UsageError> => {
  const load = resultReaders[name]
  return load === undefined
    ? Effect.fail(new UsageError({ detail: `assay imports result files of ${importableNames().join(", ")}, not ${name}` }))
    : Effect.promise(load)
}

/** The harness corpus's `process/spawn` handler (`assay harness`): from the registry, the one module of src/ that imports providers/. */
export const corpusSpawnHandler = async () => (await import("../../providers/corpus/index.ts")).spawnHandler

/** `harbor:DIR`: a folder of Harbor-format tasks (providers/harbor). */
const HARBOR = "harbor:"

/** A benchmark given as a path (`./bench/provider.ts`, `/abs/index.js`) rather than a name. */
export const isBenchmarkPath = (name: string): boolean =>
  !name.startsWith(HARBOR) && (name.includes("/") || name.includes("\\") || /\.[cm]?[jt]sx?$/.test(name))

/**
 * What to keep of a `--benchmark` so that a later command (replay) finds it again: a name as
 * it is, a path made absolute (against the working directory).
 */
export const benchmarkRef = (name: string): string =>
  isBenchmarkPath(name) ? resolve(name) : name.startsWith(HARBOR) ? `${HARBOR}${resolve(name.slice(HARBOR.length))}` : name

const MODULE_EXTENSIONS = ["ts", "mts", "js", "mjs"]

/** The module file a path names: the file itself, or a folder's index.{ts,mts,js,mjs}. */
const moduleFile = (path: string): string | undefined => {
  const stat = statSync(path, { throwIfNoEntry: false })
  if (stat === undefined) return undefined
  if (!stat.isDirectory()) return path
  return MODULE_EXTENSIONS.map((ext) => join(path, `index.${ext}`)).find((file) => existsSync(file))
}

/**
 * The URL of the library surface (src/index.ts) this command runs with. bin/assay.js, which
 * runs a bundle, builds the surface as a sibling entry of the command and says where it is;
 * run from the sources (tsx), it is the source file itself.
 */
const surfaceUrl = (): string => {
  const built = (globalThis as { readonly [k: symbol]: unknown })[Symbol.for("assay/library-url")]
  return typeof built === "string" ? built : new URL("../index.ts", import.meta.url).href
}

/**
 * Lets the process import TypeScript (tsx) and makes `import … from "assay"` in a provider
 * resolve to the surface this command runs with, so a provider shares its modules and runs even
 * where no "assay" package is installed; `effect` and `@effect/*`, when the provider's folder
 * has none, are the ones assay itself uses. Once per process.
 */
let hooked: Promise<void> | undefined
const hookLoaders = (): Promise<void> =>
  (hooked ??= (async () => {
    const { register: registerTsx } = await import("tsx/esm/api")
    registerTsx()
    // Registered after tsx, so it runs first: "assay" is replaced by the surface's URL, which the
    // hooks after it (tsx's) then resolve and load as they would any file.
    const surface = JSON.stringify(surfaceUrl())
    const hook = `export async function resolve(specifier, context, next) {
      if (specifier === "assay") return next(${surface}, context)
      const effectPackage = specifier === "effect" || specifier.startsWith("effect/") || specifier.startsWith("@effect/")
      if (!effectPackage) return next(specifier, context)
      try {
        return await next(specifier, context)
      } catch (e) {
        if (e?.code !== "ERR_MODULE_NOT_FOUND") throw e
        return next(specifier, { ...context, parentURL: ${surface} })
      }
    }`
    register(`data:text/javascript,${encodeURIComponent(hook)}`)
  })())

const fields: ReadonlyArray<readonly [string, string]> = [
  ["name", "string"],
  ["version", "string"],
  ["environments", "object"],
  ["capabilities", "object"],
  ["roster", "object"],
  ["rosterDef", "function"],
  ["scripted", "function"]
]

/** Why a module's default export is not a Provider, or undefined when it is one. */
const notAProvider = (value: unknown): string | undefined => {
  if (value === undefined) return "it has no default export"
  if (typeof value !== "object" || value === null) return `its default export is a ${value === null ? "null" : typeof value}, not a Provider`
  const record = value as Record<string, unknown>
  const missing = fields.filter(([field, type]) => typeof record[field] !== type).map(([field]) => field)
  const capabilities = record["capabilities"] as Record<string, unknown> | undefined
  if (capabilities && typeof capabilities === "object") {
    for (const c of ["worldSetup", "protocol", "evaluator"]) {
      if (typeof capabilities[c] !== "object" || capabilities[c] === null) missing.push(`capabilities.${c}`)
    }
  }
  if (!Array.isArray(record["roster"]) && !missing.includes("roster")) missing.push("roster")
  return missing.length === 0 ? undefined : `its default export is not a Provider (no ${missing.join(", ")})`
}

/**
 * A provider is an ES module. A .ts or .js file whose package.json does not say
 * "type": "module" is CommonJS to node (and to tsx), and fails to load in ways that do not say so.
 */
const esmHint = (file: string): string => {
  if (!/\.[jt]s$/.test(file)) return ""
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const pkg = join(dir, "package.json")
    if (existsSync(pkg)) {
      let type: unknown
      try {
        type = (JSON.parse(readFileSync(pkg, "utf8")) as { readonly type?: unknown }).type
      } catch {
        return ""
      }
      return type === "module" ? "" : ` (a provider is an ES module: ${pkg} does not say "type": "module"; add it, or name the file .mts)`
    }
    if (dirname(dir) === dir) return ` (a provider is an ES module: no package.json above it says "type": "module"; add one, or name the file .mts)`
  }
}

const firstLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split("\n")[0] ?? ""

/**
 * Why a provider module did not load, in one line: a syntax error as the compiler's message at
 * its file, line and column (tsx's esbuild puts those on the lines after "Transform failed"); a
 * throw while the module ran with the file and line it came from.
 */
export const loadProblem = (e: unknown, file: string): string => {
  const text = e instanceof Error ? e.message : String(e)
  const compiler = /^(.*):(\d+):(\d+): ERROR: (.*)$/m.exec(text)
  if (compiler !== null) {
    // tsx names a .mts/.cts file by its .ts twin: the file it loaded is the one the user wrote.
    const named = compiler[1]!
    const shown = !existsSync(named) && named.replace(/\.[^./]+$/, "") === file.replace(/\.[^./]+$/, "") ? file : named
    return `syntax error at ${shown}:${compiler[2]}:${compiler[3]}: ${compiler[4]}`
  }
  if (e instanceof SyntaxError) return `syntax error: ${firstLine(e)}`
  const at = where(e)
  return at === undefined ? firstLine(e) : `${firstLine(e)} (${at})`
}

const loadPath = (name: string): Effect.Effect<Provider, UsageError> =>
  Effect.gen(function*() {
    const path = resolve(name)
    const file = moduleFile(path)
    if (file === undefined) {
      return yield* new UsageError({
        detail: existsSync(path)
          ? `benchmark ${name}: the folder has no index.${MODULE_EXTENSIONS.join("/")}`
          : `benchmark ${name}: no such file (${path})`
      })
    }
    const module = yield* Effect.tryPromise({
      try: async () => {
        await hookLoaders()
        return (await import(pathToFileURL(file).href)) as { readonly default?: unknown }
      },
      catch: (e) => new UsageError({ detail: `cannot load benchmark ${name}: ${loadProblem(e, file)}${esmHint(file)}` })
    })
    const why = notAProvider(module.default)
    if (why !== undefined) return yield* new UsageError({ detail: `benchmark ${name}: ${why}` })
    const provider = module.default as Provider
    // Its data's messages name the pull by the path given: `assay data pull NAME` would not find it.
    namedForPull(provider.name, name)
    return provider
  })

/** The command's options of container benchmarks (`--engine`, `--image FROM=TO`). */
export interface ContainerOptions {
  readonly engine?: "podman" | "docker" | undefined
  readonly images?: ReadonlyArray<string>
}

/**
 * A Harbor-format folder (or terminal-bench-2: `dir` null), with the command's container options,
 * or else the environment's: ASSAY_CONTAINER_ENGINE (podman or docker), ASSAY_IMAGES
 * (`FROM=TO,FROM=TO`: local images used for those a Dockerfile names), ASSAY_HARBOR_VERIFIER
 * (auto, test.sh or provided-pytest).
 */
const loadHarbor = (dir: string | null, options: ContainerOptions): Effect.Effect<Provider, UsageError> =>
  Effect.gen(function*() {
    if (dir === "") return yield* new UsageError({ detail: "harbor: needs a folder of Harbor tasks, e.g. --benchmark harbor:./tasks" })
    const engine = options.engine ?? process.env["ASSAY_CONTAINER_ENGINE"]
    if (engine !== undefined && engine !== "podman" && engine !== "docker") {
      return yield* new UsageError({ detail: `ASSAY_CONTAINER_ENGINE=${engine}: use podman or docker` })
    }
    const images: Record<string, string> = {}
    const given = options.images !== undefined && options.images.length > 0 ? options.images : (process.env["ASSAY_IMAGES"] ?? "").split(",")
    for (const pair of given.filter((p) => p.trim() !== "")) {
      const at = pair.indexOf("=")
      if (at <= 0 || at === pair.length - 1) return yield* new UsageError({ detail: `ASSAY_IMAGES: ${pair} is not FROM=TO` })
      images[pair.slice(0, at).trim()] = pair.slice(at + 1).trim()
    }
    const verifier = process.env["ASSAY_HARBOR_VERIFIER"] ?? "auto"
    if (verifier !== "auto" && verifier !== "test.sh" && verifier !== "provided-pytest") {
      return yield* new UsageError({ detail: `ASSAY_HARBOR_VERIFIER=${verifier}: use auto, test.sh or provided-pytest` })
    }
    if (dir === null) {
      const tb2 = yield* Effect.promise(() => import("../../providers/harbor/terminalBench2.ts"))
      return tb2.make({ images, verifier, ...(engine !== undefined ? { engine } : {}) })
    }
    const harbor = yield* Effect.promise(() => import("../../providers/harbor/index.ts"))
    return harbor.make({ dir: resolve(dir), images, verifier, ...(engine !== undefined ? { engine } : {}) })
  })

export const loadBenchmark = (name: string, containers: ContainerOptions = {}): Effect.Effect<Provider, UsageError> => {
  if (name.startsWith(HARBOR)) return loadHarbor(name.slice(HARBOR.length), containers)
  if (name === TERMINAL_BENCH_2) return loadHarbor(null, containers)
  if (isBenchmarkPath(name)) return loadPath(name)
  const load = loaders[name]
  if (!load) {
    return Effect.fail(
      new UsageError({
        detail: `unknown benchmark "${name}": choose one of ${benchmarkNames().join(", ")}, or give the path of a provider module (./my-benchmark/index.ts)`
      })
    )
  }
  return Effect.tryPromise({
    try: load,
    catch: (e) => new UsageError({ detail: `cannot load benchmark ${name}: ${e instanceof Error ? e.message : String(e)}` })
  })
}
