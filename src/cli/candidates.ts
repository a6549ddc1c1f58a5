/**
 * Candidate names as people type them: a provider's own (`gold`, `echo`, `none`) or
 * `PROVIDER:MODEL` for the built-in tool-calling agent on a registry model; `PROVIDER:MODEL+text`
 * is the same model offered no tools (BFCL's prompt mode: it answers in text).
 */
import { Effect } from "effect"
import type { Json } from "../content/Canonical.ts"
import type { Provider } from "../evaluation/Provider.ts"
import type { Candidate } from "../experiment/Runner.ts"
import { defaultOutputBound } from "../model/Model.ts"
import { presented, Registry, type ResolvedModel } from "../model/Registry.ts"
import { noLimits } from "../schema/EnvironmentDef.ts"
import { harnessNames, isHarnessName } from "../harness/Harness.ts"
import { UsageError } from "./benchmarks.ts"
import { harnessBinDirs } from "./harnessBin.ts"
import { importedCandidate, isImportedName } from "./imported.ts"

// Loaded once, on the first model cell (the clients take seconds to load), not imported per cell.
const loadModelAgent = Effect.runSync(Effect.cached(Effect.promise(() => import("../model/ModelAgent.ts"))))

/**
 * `harness:NAME[:MODEL]`: an agent CLI on the corpus benchmark. Its identity is the harness and the
 * model asked for (the CLI's default when none); the protocol runs it as a `process/spawn` effect.
 */
export const resolveHarnessCandidate = (provider: Provider, name: string): Effect.Effect<Candidate, UsageError, Registry> =>
  Effect.gen(function*() {
    const rest = name.slice("harness:".length)
    const i = rest.indexOf(":")
    const harness = i < 0 ? rest : rest.slice(0, i)
    const model = i < 0 || rest.slice(i + 1) === "default" ? null : rest.slice(i + 1)
    if (!isHarnessName(harness) || model === "") {
      return yield* new UsageError({ detail: `${name}: expected harness:NAME[:MODEL] with NAME one of ${harnessNames.join(", ")}` })
    }
    // On every benchmark but the corpus (whose protocol runs the CLI in the task's folder), the
    // CLI is bridged: the benchmark's tools over MCP, its model calls through assay.
    if (provider.name !== "corpus") {
      const { bridgedCandidate } = yield* Effect.promise(() => import("../harness/bridge/Candidate.ts"))
      return yield* bridgedCandidate(harness, model, { binDirs: harnessBinDirs() }).pipe(Effect.mapError((e) => new UsageError({ detail: e.message })))
    }
    const canonical = model === null ? `harness:${harness}` : `harness:${harness}:${model}`
    return {
      def: { name: canonical, kind: "harness", model: model === null ? harness : `${harness}:${model}`, actionSpace: "text", prompt: "", limits: noLimits },
      registryEntry: { harness, model },
      // The protocol runs the CLI itself; the agent only carries the candidate's name to it.
      agentFor: () => Effect.succeed({ name: canonical, reply: () => Effect.die(`${canonical} is run by the corpus protocol, not asked to reply`) })
    } satisfies Candidate
  })

/** `PROVIDER:MODEL+text`: the model offered no tools, answering in text. */
const TEXT_SUFFIX = "+text"

/**
 * The do-nothing candidate has one name on every benchmark: `none`, and `echo`, the name most
 * benchmarks gave it first. Each is an alias of the other: the same candidate, the same cells.
 */
const DO_NOTHING = ["none", "echo"] as const

/** The roster name `name` stands for on this benchmark, or null when it has none. */
export const rosterName = (provider: Provider, name: string): string | null => {
  if (provider.roster.includes(name)) return name
  if ((DO_NOTHING as ReadonlyArray<string>).includes(name)) return DO_NOTHING.find((n) => provider.roster.includes(n)) ?? null
  return null
}

export interface CandidateOptions {
  /**
   * `--max-output-tokens`: the most output a model candidate's call asks for (and so reserves
   * from the spend cap). Part of the candidate only where it lowers what the request asks for.
   */
  readonly maxOutputTokens?: number | null
  /** Whether an imported candidate (`import:NAME`) may be rebuilt: only a replay, which answers it from its recordings. */
  readonly imported?: boolean
}

/** What a priced model's request asks for at most today (ModelAgent.requestOf); null when unbounded. */
const requestBound = (resolved: ResolvedModel): number | null =>
  resolved.model.cost === undefined ? null : defaultOutputBound(resolved.model.limit.output)

/**
 * The model as the candidate calls it under `--max-output-tokens N`: its output limit lowered to N
 * where N is below what its request asks for now, so the request, the reservation and the inputs
 * id (the registry entry is in it) change together; otherwise the model as it is, the id unchanged.
 */
export const boundedModel = (resolved: ResolvedModel, maxOutputTokens: number | null | undefined): ResolvedModel => {
  const bound = requestBound(resolved)
  if (maxOutputTokens === null || maxOutputTokens === undefined || bound === null || maxOutputTokens >= bound) return resolved
  return { ...resolved, model: { ...resolved.model, limit: { ...resolved.model.limit, output: maxOutputTokens } } }
}

export const resolveCandidate = (provider: Provider, name: string, options: CandidateOptions = {}): Effect.Effect<Candidate, UsageError, Registry> => {
  const own = rosterName(provider, name)
  if (own !== null) {
    return Effect.succeed({
      def: provider.rosterDef(own),
      registryEntry: null,
      agentFor: (env) => provider.scripted(own, env)
    })
  }
  if (name.startsWith("harness:")) return resolveHarnessCandidate(provider, name)
  // Made by `assay import`; rebuilt here from its name for a replay, which answers it from its recordings.
  if (isImportedName(name)) {
    return options.imported === true
      ? Effect.succeed(importedCandidate(name))
      : Effect.fail(new UsageError({ detail: `${name} is another runner's recorded outputs: \`assay import bfcl DIR --as NAME\` stores them, \`assay replay\` grades them again; a run cannot make them` }))
  }
  if (!name.includes(":")) {
    return Effect.fail(
      new UsageError({
        detail: `unknown candidate "${name}" for ${provider.name}: use one of ${[...provider.roster, ...(rosterName(provider, "none") !== null && !provider.roster.includes("none") ? ["none"] : [])].join(", ")} or PROVIDER:MODEL (e.g. openai:gpt-4o-mini)`
      })
    )
  }
  const text = name.endsWith(TEXT_SUFFIX)
  return Effect.gen(function*() {
    const registry = yield* Registry
    const resolved = boundedModel(
      yield* registry.resolve(text ? name.slice(0, -TEXT_SUFFIX.length) : name).pipe(Effect.mapError((e) => new UsageError({ detail: e.message }))),
      options.maxOutputTokens
    )
    return {
      def: { name, kind: "llm", model: resolved.ref, actionSpace: text ? "text" : "tools", prompt: "", limits: noLimits },
      // Without its price: a price change is not a new candidate (its limits are).
      registryEntry: presented(resolved) as unknown as Json,
      modelProvider: resolved.provider,
      // Loaded on first use: the model clients take seconds to load.
      agentFor: () => Effect.map(loadModelAgent, (m) => m.modelAgent(name, resolved))
    } satisfies Candidate
  })
}
