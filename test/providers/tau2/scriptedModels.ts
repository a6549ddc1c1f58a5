/**
 * A `model/generate` handler for tau2 conversation tests: the simulated user's calls (key
 * `user`) and the agent's are answered from two scripts in order, each call billed at a fixed
 * usage (user 1,000 + 10 tokens, agent 200 + 20), so a test can check what the wallet paid.
 */
import { Effect } from "effect"
import type { Json } from "../../../src/content/Canonical.ts"
import type * as WE from "../../../src/world/WorldEffects.ts"

export interface Turn {
  readonly text: string | null
  readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: Readonly<Record<string, unknown>> }>
}

export const USER_USAGE = { inputTokens: 1000, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 }
export const AGENT_USAGE = { inputTokens: 200, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 }

export const scriptedModels = (userTurns: ReadonlyArray<Turn>, agentTurns: ReadonlyArray<Turn>): WE.Handler => {
  let u = 0
  let a = 0
  return (effect) =>
    Effect.sync(() => {
      const fromUser = effect.key === "user"
      const turn = fromUser ? userTurns[u++]! : agentTurns[a++]!
      return { ...turn, usage: fromUser ? USER_USAGE : AGENT_USAGE, finishReason: "stop", model: "m" } as unknown as Json
    })
}
