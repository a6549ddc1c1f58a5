/**
 * The three trusted closures a provider gives the evaluation path. Private data (gold actions,
 * possible answers) is captured inside them and never appears in an EnvironmentDef.
 */
import { Effect, Ref, Schema } from "effect"
import type { Json } from "../content/Canonical.ts"
import type { Wallet } from "../budget/Wallet.ts"
import type { AgentDef } from "../schema/AgentDef.ts"
import type { Judging } from "../schema/Attempt.ts"
import type { EnvironmentDef } from "../schema/EnvironmentDef.ts"
import type { Trust } from "../schema/Verdict.ts"
import type { Tool, ToolSpec } from "../world/Tool.ts"
import type * as World from "../world/World.ts"
import type { AttemptWorld, EffectError, Handlers, WorldEffects } from "../world/WorldEffects.ts"
import type { Agent, AgentFailure } from "./Agent.ts"
import type { Message } from "./Conversation.ts"

export class CapabilityError extends Schema.TaggedError<CapabilityError>()("CapabilityError", {
  capability: Schema.String,
  /** `provider`: the benchmark's own code threw (a bug in it, not the candidate's failure). */
  reason: Schema.Literal("setup", "protocol", "evaluator", "data", "provider"),
  detail: Schema.String,
  /** For `provider`: where it threw, as file:line, when the stack shows it. */
  at: Schema.optional(Schema.String)
}) {
  override get message() {
    return this.reason === "provider" ? this.detail : `${this.capability} (${this.reason}): ${this.detail}`
  }
}

// ---------------------------------------------------------------------------------------------

export interface SetupResult {
  readonly world: World.World
  /** Evidence about the installed world (tau2: initial DB hash; BFCL: digest of tool specs). */
  readonly evidence: Json
  /** The tools this world answers to; the live handler runs them. */
  readonly tools: ReadonlyArray<Tool>
  /**
   * Live handlers of effects this world answers beyond its tools (coding-repair's commands as
   * `process/spawn`), under admission, faults and recording like any handler; a replay answers
   * from the recording instead. A caller's own handlers for the same kind take precedence.
   */
  readonly handlers?: Handlers
}

export interface WorldSetup {
  readonly name: string
  readonly version: string
  readonly trust: Trust
  readonly setup: (env: EnvironmentDef) => Effect.Effect<SetupResult, CapabilityError>
}

export const makeWorldSetup = (def: WorldSetup): WorldSetup => def

// ---------------------------------------------------------------------------------------------

/** What the candidate is presented with at run start: the inputs id is computed from this. */
export interface ProtocolInputs {
  /** The benchmark's system prompt (the candidate's own prompt is appended to it). */
  readonly system: string
  readonly tools: ReadonlyArray<ToolSpec>
}

export interface ProtocolContext {
  readonly env: EnvironmentDef
  readonly agent: Agent
  /** The assembled inputs: benchmark prompt + candidate prompt, tools offered. */
  readonly inputs: ProtocolInputs
  readonly evidence: Json
  /** The transcript so far; kept by the path, so a failed protocol loses nothing. */
  readonly transcript: Ref.Ref<ReadonlyArray<Message>>
}

export type ProtocolFailure = AgentFailure | EffectError | CapabilityError

export interface Protocol {
  readonly name: string
  readonly version: string
  readonly trust: Trust
  /** What the candidate is offered; the action space may change it (prompt mode vs tools). */
  readonly inputs: (env: EnvironmentDef, agent: AgentDef) => Effect.Effect<ProtocolInputs, CapabilityError>
  /** Hosts the interaction; returns portable data beside the transcript, never the grade. */
  readonly run: (ctx: ProtocolContext) => Effect.Effect<Json, ProtocolFailure, WorldEffects | Wallet | AttemptWorld>
}

export const makeProtocol = (def: Protocol): Protocol => def

// ---------------------------------------------------------------------------------------------

export interface Grade {
  readonly reward: number
  readonly checks: Readonly<Record<string, boolean>>
  readonly notEvaluated?: ReadonlyArray<string>
  readonly details?: Json
  /** This grade's trust where it differs from the evaluator's: "judge" when a judge decided a check. */
  readonly trust?: Trust
  /** What asking a judge cost, when one was asked. */
  readonly judging?: Judging
}

export interface EvaluationContext {
  readonly env: EnvironmentDef
  readonly evidence: Json
  readonly transcript: ReadonlyArray<Message>
  readonly output: Json
  readonly initial: World.World
  readonly final: World.World
}

export interface Evaluator {
  readonly name: string
  readonly version: string
  readonly trust: Trust
  readonly evaluate: (ctx: EvaluationContext) => Effect.Effect<Grade, CapabilityError>
}

export const makeEvaluator = (def: Evaluator): Evaluator => def

export interface Capabilities {
  readonly worldSetup: WorldSetup
  readonly protocol: Protocol
  readonly evaluator: Evaluator
}
