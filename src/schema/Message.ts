/**
 * The library's one home for the shapes an interaction is made of: a tool as it is offered
 * (`ToolSpec`), a tool call (`ToolCall`), and the two forms a message takes. `Message` is the
 * transcript's (what the protocol records and the grade reads); `ModelMessage` is a model
 * request's (what `model/generate` effects carry, and recordings hold). They are two forms
 * because both are recorded data: changing either would change content ids and stop old
 * recordings replaying. src/world/Tool.ts, src/evaluation/Conversation.ts and src/model/Model.ts
 * re-export these.
 */
import { Schema } from "effect"
import type { Json } from "../content/Canonical.ts"

/** A JSON object (its values are not walked when decoded: they came from JSON text). */
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** What a model is offered: name, description, JSON-schema parameters. */
export const ToolSpec = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  /** JSON schema of the arguments object */
  parameters: JsonObject
})
export type ToolSpec = typeof ToolSpec.Type

export const ToolCall = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  /** the parsed JSON object the model passed (JavaScript numbers: `5.0` and `5` are one value) */
  arguments: JsonObject,
  /**
   * the arguments' JSON text as the server sent it: OpenAI Responses and chat completions
   * `arguments`, Anthropic's `input_json_delta` (streaming) or the `input` slice of its message
   * body. Python-semantics consumers read it to keep `5.0` (a float) apart from `5` (an int).
   */
  argumentsText: Schema.optional(Schema.String)
})
export type ToolCall = typeof ToolCall.Type

/**
 * A tool call as a transcript holds it: the one ToolCall, its arguments typed as the JSON they
 * are (a transcript is canonical JSON; the tools and graders read the arguments as JSON).
 */
export interface TranscriptToolCall extends Omit<ToolCall, "arguments"> {
  readonly arguments: { readonly [key: string]: Json }
}

/** A transcript's message: what the protocol records of the conversation, and the grade reads. */
export type Message =
  | { readonly role: "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string | null; readonly toolCalls: ReadonlyArray<TranscriptToolCall> }
  | { readonly role: "tool"; readonly toolCallId: string; readonly name: string; readonly content: string; readonly error: boolean }

export const UserMessage = Schema.Struct({ role: Schema.Literal("user"), content: Schema.String })
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.NullOr(Schema.String),
  toolCalls: Schema.optional(Schema.Array(ToolCall))
})
export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  toolCallId: Schema.String,
  /** name of the tool that was called */
  name: Schema.String,
  /** the result as text; JSON text is passed on as JSON */
  content: Schema.String,
  isError: Schema.optional(Schema.Boolean)
})
/** A model request's message, as `model/generate` effects carry it and recordings hold it. */
export const ModelMessage = Schema.Union(UserMessage, AssistantMessage, ToolMessage)
export type ModelMessage = typeof ModelMessage.Type
