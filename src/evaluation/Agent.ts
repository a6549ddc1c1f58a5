/**
 * A candidate at work: given the conversation so far, it replies. Scripted candidates (gold)
 * come from providers, model candidates from src/model, harnesses from src/harness.
 */
import { Effect, Schema } from "effect"
import type { BudgetExceeded, Wallet } from "../budget/Wallet.ts"
import type { AgentDef } from "../schema/AgentDef.ts"
import type { CliUsage } from "../schema/Attempt.ts"
import { noLimits } from "../schema/EnvironmentDef.ts"
import type { EffectError, WorldEffects } from "../world/WorldEffects.ts"
import type { AgentInput, AgentReply } from "./Conversation.ts"

export class AgentError extends Schema.TaggedError<AgentError>()("AgentError", {
  agent: Schema.String,
  reason: Schema.Literal("model-failed", "script-exhausted", "bad-reply"),
  detail: Schema.String
}) {
  override get message() {
    return `${this.agent}: ${this.reason}: ${this.detail}`
  }
}

export type AgentFailure = AgentError | EffectError | BudgetExceeded

export interface Agent {
  readonly name: string
  readonly reply: (input: AgentInput) => Effect.Effect<AgentReply, AgentFailure, WorldEffects | Wallet>
  /** Ends what the agent holds for its Attempt (a harness CLI, its servers); run when the conversation ends. */
  readonly close?: Effect.Effect<void>
  /** An agent CLI's own count of its model calls beside assay's, read once it is closed (a harness's cross-check). */
  readonly cliUsage?: Effect.Effect<CliUsage | undefined>
}

/** A scripted agent that plays replies in order, then ends the conversation with a fixed text. */
export const scripted = (name: string, replies: ReadonlyArray<AgentReply>, finalText = "###STOP###"): Agent => {
  let i = 0
  return {
    name,
    reply: () => Effect.sync(() => replies[i++] ?? { text: finalText, toolCalls: [] })
  }
}

/** The `echo` candidate: repeats the last user message and never acts. */
export const echo: Agent = {
  name: "echo",
  reply: (input) =>
    Effect.sync(() => {
      const lastUser = [...input.messages].reverse().find((m) => m.role === "user")
      return { text: lastUser && lastUser.role === "user" ? lastUser.content : "", toolCalls: [] }
    })
}

/** The AgentDef of a candidate a provider plays itself (`gold`, `echo`, `none`): no model, no limits. */
export const referenceDef = (name: string, actionSpace: AgentDef["actionSpace"] = "tools"): AgentDef => ({
  name,
  kind: name === "echo" ? "echo" : "scripted",
  model: null,
  actionSpace,
  prompt: "",
  limits: noLimits
})
