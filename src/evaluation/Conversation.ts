/** The portable shapes of an interaction: messages, tool calls, and what an agent is given. */
import { Schema } from "effect"
import type { Json } from "../content/Canonical.ts"
import type { ToolSpec } from "../world/Tool.ts"

export interface ToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: { readonly [key: string]: Json }
  /** the arguments' JSON text as the model wrote it, where the client had it (`5.0` vs `5`) */
  readonly argumentsText?: string
}

export type Message =
  | { readonly role: "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string | null; readonly toolCalls: ReadonlyArray<ToolCall> }
  | { readonly role: "tool"; readonly toolCallId: string; readonly name: string; readonly content: string; readonly error: boolean }

export const ToolCallSchema = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  arguments: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  argumentsText: Schema.optional(Schema.String)
})

/** What an agent is given at each step. */
export interface AgentInput {
  readonly system: string
  readonly messages: ReadonlyArray<Message>
  readonly tools: ReadonlyArray<ToolSpec>
}

/** One reply: text for the other party, tool calls for the world, or both. */
export interface AgentReply {
  readonly text: string | null
  readonly toolCalls: ReadonlyArray<ToolCall>
}
