/**
 * What `--max-usd` will do, said before a run: the worst case a model candidate's call reserves
 * from the spend cap (its first, smallest request: the prompt and tools, the output bound at list
 * price), and how many such calls what is left of the cap covers. A cap that cannot cover one
 * call skips every cell of that candidate.
 */
import { Effect, Option, Schema } from "effect"
import { worstCaseUsd } from "../budget/SpendCap.ts"
import { assemble } from "../evaluation/evaluate.ts"
import type { Lane } from "../experiment/Runner.ts"
import { requestOf } from "../model/ModelAgent.ts"
import { priceIn, Registry, ResolvedModel } from "../model/Registry.ts"

export interface CapCoverage {
  readonly candidate: string
  readonly benchmark: string
  /** What the candidate's request asks for at most (null: the server's default, unbounded). */
  readonly maxOutputTokens: number | null
  /** The least a call of the candidate reserves (its first request); null: unknown price, not capped. */
  readonly worstCallUsd: number | null
  /** Calls the cap's remainder covers at that worst case; null when not capped. */
  readonly calls: number | null
}

const decodeResolved = Schema.decodeUnknownOption(ResolvedModel)

/** Each model candidate's worst call on each benchmark, against `remainingUsd` of the cap (null: no cap). */
export const coverageOf = (lanes: ReadonlyArray<Lane>, remainingUsd: number | null): Effect.Effect<ReadonlyArray<CapCoverage>> =>
  Effect.gen(function*() {
    const registry = yield* Effect.serviceOption(Registry)
    const out: Array<CapCoverage> = []
    for (const lane of lanes) {
      for (const candidate of lane.candidates) {
        if (candidate.def.kind !== "llm") continue
        const resolved = decodeResolved(candidate.registryEntry)
        if (resolved._tag === "None") continue
        // A candidate's registry entry has no price (it is not part of its identity): the registry's.
        const cost = Option.isSome(registry) ? priceIn(registry.value.file, resolved.value.ref) : undefined
        const model: ResolvedModel = { ...resolved.value, model: { ...resolved.value.model, ...(cost !== undefined ? { cost } : {}) } }
        // The smallest first request over the benchmark's tasks (a few suffice: the prompt and tools rarely differ).
        let worst: number | null = null
        let bound: number | null = null
        for (const env of lane.environments.slice(0, 20)) {
          const inputs = yield* Effect.option(lane.provider.capabilities.protocol.inputs(env, candidate.def))
          if (inputs._tag === "None") continue
          const assembled = assemble(inputs.value, candidate.def)
          const request = requestOf(model, { system: assembled.system, tools: assembled.tools, messages: [] })
          bound = request.maxOutputTokens ?? null
          const usd = worstCaseUsd(request, model.model)
          if (usd !== null && (worst === null || usd < worst)) worst = usd
        }
        out.push({
          candidate: candidate.def.name,
          benchmark: lane.provider.name,
          maxOutputTokens: bound,
          worstCallUsd: worst,
          calls: remainingUsd === null || worst === null ? null : Math.floor(Math.max(0, remainingUsd) / worst)
        })
      }
    }
    return out
  })

const usd = (n: number) => `$${n < 0.01 ? n.toFixed(5) : n.toFixed(4)}`

/** The lines `plan` prints under `--max-usd` (none without a cap or a priced model candidate). */
export const capLines = (capUsd: number | null, remainingUsd: number, coverage: ReadonlyArray<CapCoverage>): ReadonlyArray<string> => {
  if (capUsd === null) return []
  const priced = coverage.filter((c) => c.worstCallUsd !== null)
  const lines = [`  spend cap: $${capUsd} (${usd(Math.max(0, remainingUsd))} left for this experiment)`]
  for (const c of priced) {
    lines.push(
      `    ${c.candidate} on ${c.benchmark}: a call reserves at least ${usd(c.worstCallUsd!)} (its prompt and tools, output bound ` +
        `${c.maxOutputTokens ?? "unset"} tokens, at list price); at worst the cap covers ${c.calls} call${c.calls === 1 ? "" : "s"} (fewer as conversations grow)`
    )
  }
  for (const c of priced.filter((c) => c.calls === 0)) {
    lines.push(
      `warning: --max-usd ${capUsd} cannot cover one call of ${c.candidate} on ${c.benchmark} (${usd(c.worstCallUsd!)} at worst): every such cell ` +
        `would be skipped; lower --max-output-tokens (now ${c.maxOutputTokens ?? "unset"}) or raise --max-usd`
    )
  }
  return lines
}
