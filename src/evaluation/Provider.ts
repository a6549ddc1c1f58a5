/**
 * A provider is one benchmark: its environments, its capabilities and its built-in candidates.
 * It is run by the path and never runs anything itself.
 */
import type { Effect, Either } from "effect"
import type { AgentDef } from "../schema/AgentDef.ts"
import type { EnvironmentDef } from "../schema/EnvironmentDef.ts"
import type { Agent } from "./Agent.ts"
import type { Capabilities, CapabilityError } from "./Capabilities.ts"

/** An upstream file the provider reads, pinned by URL and sha256, at `path` under the data root. */
export interface PinnedFile {
  readonly path: string
  /** Where `assay data pull` downloads it; "" for a file made from upstream code (no upstream blob), which only `--from DIR` brings. */
  readonly url: string
  readonly sha256: string
  /** Read only by `assay equivalence` (an oracle corpus): a pull that cannot bring it says so and goes on. */
  readonly oracle?: boolean
  /**
   * Needed only by some tasks (what needs it, e.g. "the 200 multi_turn_long_context tasks"): a pull
   * that cannot bring it (no network, not in `--from DIR`) says so and goes on, and those tasks end
   * with a data error naming the file.
   */
  readonly optional?: string
  /** Read only to derive `derived` files: a pull `--from DIR` that holds the derived files does not need it. */
  readonly derivationInput?: boolean
}

/** Files `assay data pull` makes from the pinned ones (contract-review's gold from CUAD's CSV), each checked against its sha256. */
export interface DerivedData {
  readonly files: ReadonlyArray<{ readonly path: string; readonly sha256: string }>
  /** The derived files' bytes by path, from the pinned files (`read` gives a pinned file's bytes, hash already checked). */
  readonly derive: (read: (path: string) => Uint8Array) => Either.Either<ReadonlyMap<string, Uint8Array>, string>
}

/** What `assay equivalence` prints: agreement of the transcription with upstream's own output. */
export interface EquivalenceResult {
  readonly benchmark: string
  readonly corpus: string
  readonly lines: number
  readonly agree: number
  readonly disagree: ReadonlyArray<unknown>
  /** Lines that could not be checked here (a file they need is absent; the notes say which): counted in `lines`, not in `agree`. */
  readonly notChecked?: number
  /** Lines the text output prints after the count (bird: which SQLite graded, and how to get the oracle's). */
  readonly notes?: ReadonlyArray<string>
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
  /** Its Attempts run a candidate's code (commands, tests): `run` refuses them without a sandbox. */
  readonly untrusted?: boolean
  /** Text that a report must carry (licence attribution). */
  readonly attribution?: string
  /** The upstream files `assay data pull` fetches. */
  readonly data?: ReadonlyArray<PinnedFile>
  /** Files the pull derives from `data`. */
  readonly derived?: DerivedData
  /** Runs the transcription over an oracle corpus (the provider's own when null). */
  readonly equivalence?: (corpus: string | null) => Effect.Effect<EquivalenceResult, CapabilityError>
}
