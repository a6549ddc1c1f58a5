/**
 * The tool files every tau2 domain pins, rendered from upstream code at the revision:
 * `tools.json` (each tool's `openai_schema`, in upstream order) and `tools-types.json` (each
 * tool's ToolType and `mutates_state`).
 */
import { Schema } from "effect"
import type { Canonical, Tool } from "../../../src/index.ts"

export const ToolTypes = Schema.Array(
  Schema.Struct({ name: Schema.String, type: Schema.Literal("read", "write", "generic", "think"), mutates_state: Schema.Boolean })
)
export type ToolTypes = typeof ToolTypes.Type

export const OpenAiTools = Schema.Array(
  Schema.Struct({
    type: Schema.Literal("function"),
    function: Schema.Struct({
      name: Schema.String,
      description: Schema.String,
      parameters: Schema.Record({ key: Schema.String, value: Schema.Unknown })
    })
  })
)
export type OpenAiTools = typeof OpenAiTools.Type

/** The tools as the agent (or the user simulator) is offered them, in the file's order. */
export const toolSpecsOf = (tools: OpenAiTools): ReadonlyArray<Tool.ToolSpec> =>
  tools.map((t) => ({
    name: t.function.name,
    description: t.function.description,
    parameters: t.function.parameters as { readonly [key: string]: Canonical.Json }
  }))
