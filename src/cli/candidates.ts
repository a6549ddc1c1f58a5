/**
 * Candidate names as people type them: a provider's own (`gold`, `echo`, `none`) or
 * `PROVIDER:MODEL` for the built-in tool-calling agent on a registry model; `PROVIDER:MODEL+text`
 * is the same model offered no tools (BFCL's prompt mode: it answers in text).
 */
import { Effect } from "effect"
import type { Json } from "../content/Canonical.ts"
import type { Provider } from "../evaluation/Provider.ts"
import type { Candidate } from "../experiment/Runner.ts"
import { Registry } from "../model/Registry.ts"
import { noLimits } from "../schema/EnvironmentDef.ts"
import { harnessNames, isHarnessName } from "../harness/Harness.ts"
import { UsageError } from "./benchmarks.ts"
import { harnessBinDirs } from "./harnessBin.ts"

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

export const resolveCandidate = (provider: Provider, name: string): Effect.Effect<Candidate, UsageError, Registry> => {
  if (provider.roster.includes(name)) {
    return Effect.succeed({
      def: provider.rosterDef(name),
      registryEntry: null,
      agentFor: (env) => provider.scripted(name, env)
    })
  }
  if (name.startsWith("harness:")) return resolveHarnessCandidate(provider, name)
  if (!name.includes(":")) {
    return Effect.fail(
      new UsageError({
        detail: `unknown candidate "${name}" for ${provider.name}: use one of ${provider.roster.join(", ")} or PROVIDER:MODEL (e.g. openai:gpt-4o-mini)`
      })
    )
  }
  const text = name.endsWith(TEXT_SUFFIX)
  return Effect.gen(function*() {
    const registry = yield* Registry
    const resolved = yield* registry.resolve(text ? name.slice(0, -TEXT_SUFFIX.length) : name).pipe(
      Effect.mapError((e) => new UsageError({ detail: e.message }))
    )
    return {
      def: { name, kind: "llm", model: resolved.ref, actionSpace: text ? "text" : "tools", prompt: "", limits: noLimits },
      registryEntry: resolved as unknown as Json,
      // Loaded on first use: the model clients take seconds to load.
      agentFor: () => Effect.map(loadModelAgent, (m) => m.modelAgent(name, resolved))
    } satisfies Candidate
  })
}
