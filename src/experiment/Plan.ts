/**
 * The shapes of an experiment's plan: lanes (a benchmark, its environments, the candidates run
 * on them) and the cells made of them (environment x candidate x repetition), each with the
 * inputs id its candidate is predicted to be presented with. `Runner.makePlan` makes one.
 */
import type { Json } from "../content/Canonical.ts"
import type { Agent } from "../evaluation/Agent.ts"
import type { CapabilityError } from "../evaluation/Capabilities.ts"
import type { PredictedInputs } from "../evaluation/evaluate.ts"
import type { Provider } from "../evaluation/Provider.ts"
import type { AgentDef } from "../schema/AgentDef.ts"
import type { RecordedEffect } from "../schema/Attempt.ts"
import type { EnvironmentDef } from "../schema/EnvironmentDef.ts"
import type { ExperimentDef } from "../schema/ExperimentDef.ts"
import type { Effect } from "effect"
import type { CellKey } from "./Store.ts"

export interface Candidate {
  readonly def: AgentDef
  /** The resolved registry entry of a model candidate: part of its inputs id. */
  readonly registryEntry: Json | null
  /**
   * A fresh agent for one Attempt; given the Attempt's recording when it is replayed (an agent
   * that cannot run offline, a harness CLI, then makes its recorded calls again).
   */
  readonly agentFor: (env: EnvironmentDef, context?: { readonly recording?: ReadonlyArray<RecordedEffect> }) => Effect.Effect<Agent, CapabilityError>
  /**
   * Its model calls go through the Model service, each one metered and capped (a bridged harness
   * CLI, as a model candidate): its cost is not charged again from the Attempt's own figures.
   */
  readonly callsMetered?: boolean
  /**
   * The model provider whose key its calls use through assay (a model candidate's; a bridged CLI's
   * off a subscription), so a run refuses before any cell when that provider is not live.
   */
  readonly modelProvider?: string
}

export interface Lane {
  readonly provider: Provider
  readonly environments: ReadonlyArray<EnvironmentDef>
  readonly candidates: ReadonlyArray<Candidate>
}

export interface Cell {
  readonly key: CellKey
  readonly lane: Lane
  readonly env: EnvironmentDef
  readonly candidate: Candidate
  readonly repetition: number
  readonly predictedInputsId: string
  /** What the candidate is presented with, as predicted with `predictedInputsId`: carried into its Attempt. */
  readonly predictedInputs?: PredictedInputs
}

export interface Plan {
  readonly experiment: ExperimentDef
  readonly experimentId: string
  readonly cells: ReadonlyArray<Cell>
}
