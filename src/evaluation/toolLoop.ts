/**
 * The single-agent tool loop most benchmarks host: the agent replies, its tool calls run in the
 * Attempt's fork through WorldEffects, and the loop ends on a reply without tool calls, a stop
 * tool or the turn limit. Refused and faulted tool calls reach the agent as tool errors it may
 * handle; the Attempt goes on.
 */
import { Effect, Ref, Schema } from "effect"
import type { Json } from "../content/Canonical.ts"
import * as Tracing from "../observability/Tracing.ts"
import type { Tool } from "../world/Tool.ts"
import * as WE from "../world/WorldEffects.ts"
import type { ProtocolContext } from "./Capabilities.ts"
import type { Message, ToolCall } from "./Conversation.ts"

const ToolResult = Schema.Struct({ output: Schema.String, error: Schema.Boolean })

export interface ToolMessageContent {
  readonly content: string
  readonly error: boolean
}

/**
 * Perform one tool call as a `tool/read` or `tool/write` effect, by the tool's access. The
 * arguments' text goes with the parsed arguments when the call has it, so a tool can read them
 * as Python would (`2.0` a float); a call without it makes the same request as before.
 */
export const callTool = (
  tools: ReadonlyMap<string, Tool>,
  call: ToolCall
): Effect.Effect<ToolMessageContent, WE.EffectFailed, WE.WorldEffects> => {
  const tool = tools.get(call.name)
  // An unknown tool is answered by the handler, as upstream benchmarks answer it; it writes nothing.
  const kind = tool?.access === "write" ? "tool/write" : "tool/read"
  const request: Json = {
    tool: call.name,
    args: call.arguments,
    ...(call.argumentsText !== undefined ? { argumentsText: call.argumentsText } : {})
  }
  return WE.perform({ kind, key: call.name, request }, ToolResult).pipe(
    Effect.map((r) => ({ content: r.output, error: r.error })),
    Tracing.toolSpan({ tool: call.name, kind }),
    Effect.catchTags({
      EffectRefused: (e) => Effect.succeed({ content: `Error: ${e.message}`, error: true }),
      EffectFault: (e) => Effect.succeed({ content: `Error: ${e.message}`, error: true })
    })
  )
}

/** What `runToolLoop` returns: how the loop ended, after how many turns, and the last answer. */
export const Outcome = Schema.Struct({
  ended: Schema.Literal("answer", "stop-tool", "turn-limit"),
  turns: Schema.Number,
  answer: Schema.NullOr(Schema.String)
})
export type Outcome = typeof Outcome.Type

const outcome = (ended: Outcome["ended"], turns: number, answer: string | null): Outcome => ({ ended, turns, answer })

export interface ToolLoopOptions<E = never, R = never> {
  readonly firstMessage: string
  readonly tools: ReadonlyArray<Tool>
  readonly maxTurns: number
  /** A tool whose call ends the loop (after it runs). */
  readonly stopTool?: string
  /**
   * Tools answered by an effect of the benchmark's own rather than a world tool (a command run in a
   * sandbox or a container, a `process/spawn` effect), by name.
   */
  readonly own?: Readonly<Record<string, (call: ToolCall) => Effect.Effect<ToolMessageContent, E, R>>>
}

export const runToolLoop = <E = never, R = never>(ctx: ProtocolContext, options: ToolLoopOptions<E, R>) =>
  Effect.gen(function*() {
    const byName = new Map(options.tools.map((t) => [t.spec.name, t]))
    const append = (m: Message) => Ref.update(ctx.transcript, (ms) => [...ms, m])
    yield* append({ role: "user", content: options.firstMessage })
    for (let turn = 1; turn <= options.maxTurns; turn++) {
      const messages = yield* Ref.get(ctx.transcript)
      const reply = yield* ctx.agent.reply({ system: ctx.inputs.system, messages, tools: ctx.inputs.tools })
      yield* append({ role: "assistant", content: reply.text, toolCalls: reply.toolCalls })
      if (reply.toolCalls.length === 0) return outcome("answer", turn, reply.text)
      let stopped = false
      for (const call of reply.toolCalls) {
        const own = options.own?.[call.name]
        const result = own !== undefined ? yield* own(call) : yield* callTool(byName, call)
        yield* append({ role: "tool", toolCallId: call.id, name: call.name, content: result.content, error: result.error })
        if (call.name === options.stopTool) stopped = true
      }
      if (stopped) return outcome("stop-tool", turn, reply.text)
    }
    return outcome("turn-limit", options.maxTurns, null)
  })

/** The last assistant text of a transcript, if any. */
export const lastAnswer = (transcript: ReadonlyArray<Message>): string | null => {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const m = transcript[i]!
    if (m.role === "assistant" && m.content !== null && m.content.length > 0) return m.content
  }
  return null
}
