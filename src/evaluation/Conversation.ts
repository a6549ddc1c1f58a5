/** The portable shapes of an interaction: messages, tool calls, and what an agent is given. */
import type { Message, ToolSpec, TranscriptToolCall as ToolCall } from "../schema/Message.ts"

// The transcript's message and the tool call live in src/schema/Message.ts (one home for the library).
export type { Message, TranscriptToolCall as ToolCall } from "../schema/Message.ts"
export { ToolCall as ToolCallSchema } from "../schema/Message.ts"

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
