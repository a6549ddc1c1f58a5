/**
 * A tool is a pure function of the world and its arguments: it reads the world and answers with
 * its output and the writes it makes. It never mutates anything; WorldEffects performs it,
 * records the outcome (writes included) and applies the writes to the Attempt's fork, so a
 * replay reproduces the final world without running the tool.
 */
import type { Json } from "../content/Canonical.ts"
import type { World, Write } from "./World.ts"

// What a model is offered (name, description, JSON-schema parameters): one schema for the library.
import type { ToolSpec } from "../schema/Message.ts"
export type { ToolSpec } from "../schema/Message.ts"

/**
 * The outcome of a tool call. `error: true` is a tool-level failure the agent sees as a tool
 * message (upstream benchmarks answer "Error: ..."); it is an ordinary result, not a fault.
 */
export interface ToolOutcome {
  readonly output: string
  readonly error: boolean
  readonly writes: ReadonlyArray<Write>
}

export interface Tool {
  readonly spec: ToolSpec
  /** `read` tools never write; read-only admission refuses `write` tools before they run. */
  readonly access: "read" | "write"
  /**
   * `argumentsText` is the arguments' JSON text as the model wrote it, when its client kept it:
   * `args` are JavaScript numbers (`2.0` and `2` are one), the text tells them apart.
   */
  readonly run: (world: World, args: { readonly [key: string]: Json }, argumentsText?: string) => ToolOutcome
}

export const ok = (output: string, writes: ReadonlyArray<Write> = []): ToolOutcome => ({ output, error: false, writes })
export const fail = (output: string): ToolOutcome => ({ output, error: true, writes: [] })
