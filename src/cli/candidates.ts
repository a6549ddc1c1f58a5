/**
 * Candidate names as people type them: a provider's own (`gold`, `echo`, `none`) or
 * `PROVIDER:MODEL` for the built-in tool-calling agent on a registry model.
 */
import { Effect } from "effect"
import type { Json } from "../content/Canonical.ts"
import type { Provider } from "../evaluation/Provider.ts"
import type { Candidate } from "../experiment/Runner.ts"
import { Registry } from "../model/Registry.ts"
import { noLimits } from "../schema/EnvironmentDef.ts"
import { UsageError } from "./benchmarks.ts"

export const resolveCandidate = (provider: Provider, name: string): Effect.Effect<Candidate, UsageError, Registry> => {
  if (provider.roster.includes(name)) {
    return Effect.succeed({
      def: provider.rosterDef(name),
      registryEntry: null,
      agentFor: (env) => provider.scripted(name, env)
    })
  }
  if (name.startsWith("harness:")) {
    return Effect.fail(new UsageError({ detail: `harness candidates (${name}) are not wired into ${provider.name} yet` }))
  }
  if (!name.includes(":")) {
    return Effect.fail(
      new UsageError({
        detail: `unknown candidate "${name}" for ${provider.name}: use one of ${provider.roster.join(", ")} or PROVIDER:MODEL (e.g. openai:gpt-4o-mini)`
      })
    )
  }
  return Effect.gen(function*() {
    const registry = yield* Registry
    const resolved = yield* registry.resolve(name).pipe(
      Effect.mapError((e) => new UsageError({ detail: e.message }))
    )
    return {
      def: { name, kind: "llm", model: resolved.ref, actionSpace: "tools", prompt: "", limits: noLimits },
      registryEntry: resolved as unknown as Json,
      // Loaded on first use: the model clients take seconds to load.
      agentFor: () => Effect.map(Effect.promise(() => import("../model/ModelAgent.ts")), (m) => m.modelAgent(name, resolved))
    } satisfies Candidate
  })
}
