/**
 * A provider is one benchmark: its environments, its capabilities and its built-in candidates.
 * It is run by the path and never runs anything itself.
 */
import type { Effect } from "effect"
import type { AgentDef } from "../schema/AgentDef.ts"
import type { EnvironmentDef } from "../schema/EnvironmentDef.ts"
import type { Agent } from "./Agent.ts"
import type { Capabilities, CapabilityError } from "./Capabilities.ts"

/** An upstream file the provider reads, pinned by URL and sha256, at `path` under the data root. */
export interface PinnedFile {
  readonly path: string
  readonly url: string
  readonly sha256: string
}

/** What `assay equivalence` prints: agreement of the transcription with upstream's own output. */
export interface EquivalenceResult {
  readonly benchmark: string
  readonly corpus: string
  readonly lines: number
  readonly agree: number
  readonly disagree: ReadonlyArray<unknown>
}

export interface Provider {
  readonly name: string
  readonly version: string
  readonly description: string
  /** Every task of the benchmark, as EnvironmentDefs with the default world spec. */
  readonly environments: Effect.Effect<ReadonlyArray<EnvironmentDef>, CapabilityError>
  readonly capabilities: Capabilities
  /** Candidates the provider itself plays (gold, echo, none), by name. */
  readonly roster: ReadonlyArray<string>
  /** The AgentDef of a roster candidate. */
  readonly rosterDef: (name: string) => AgentDef
  /** A fresh scripted agent for one Attempt of a roster candidate on one environment. */
  readonly scripted: (name: string, env: EnvironmentDef) => Effect.Effect<Agent, CapabilityError>
  /** Tasks no answer can pass, reported apart. */
  readonly impassable?: ReadonlySet<string>
  /** Some checks need a judge model (`--judge` sets it in each EnvironmentDef's models). */
  readonly judged?: boolean
  /** Text that a report must carry (licence attribution). */
  readonly attribution?: string
  /** The upstream files `assay data pull` fetches. */
  readonly data?: ReadonlyArray<PinnedFile>
  /** Runs the transcription over an oracle corpus (the provider's own when null). */
  readonly equivalence?: (corpus: string | null) => Effect.Effect<EquivalenceResult, CapabilityError>
}
