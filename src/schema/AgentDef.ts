/**
 * A candidate. Anything that changes what the candidate is belongs here, so a change makes a
 * new candidate (a new content id) rather than silently altering an old one.
 */
import { Schema } from "effect"
import * as ContentId from "../content/ContentId.ts"
import { Limits } from "./EnvironmentDef.ts"

export const AgentKind = Schema.Literal("llm", "scripted", "echo", "harness")
export type AgentKind = typeof AgentKind.Type

export const AgentDef = Schema.Struct({
  /** The name people use: `gold`, `echo`, `openai:gpt-4o-mini`, `harness:codex:gpt-5`. */
  name: Schema.String,
  kind: AgentKind,
  /** PROVIDER:MODEL for llm and harness candidates. */
  model: Schema.NullOr(Schema.String),
  actionSpace: Schema.Literal("tools", "text"),
  /** The candidate's own prompt, appended to the benchmark's. */
  prompt: Schema.String,
  limits: Limits
}).annotations({ identifier: "AgentDef" })
export type AgentDef = typeof AgentDef.Type

export const idOf = (agent: AgentDef): ContentId.ContentId => ContentId.ofUnsafe(Schema.encodeSync(AgentDef)(agent))
