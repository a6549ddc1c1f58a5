/** The model behind the bridge's proxy in the harness tests, and one bridged Attempt. */
import { Context, Effect } from "effect"
import { fileURLToPath } from "node:url"
import { Wallet } from "../../src/budget/Wallet.ts"
import type { Agent } from "../../src/evaluation/Agent.ts"
import type { ToolCall } from "../../src/evaluation/Conversation.ts"
import { evaluate } from "../../src/evaluation/evaluate.ts"
import type { Provider } from "../../src/evaluation/Provider.ts"
import { bridgedCandidate } from "../../src/harness/bridge/Candidate.ts"
import type { HarnessName } from "../../src/harness/Harness.ts"
import * as Model from "../../src/model/Model.ts"
import * as Registry from "../../src/model/Registry.ts"
import type { Attempt } from "../../src/schema/Attempt.ts"
import type { EnvironmentDef } from "../../src/schema/EnvironmentDef.ts"
import * as WE from "../../src/world/WorldEffects.ts"
import { scriptedUserOf } from "../../providers/tau2/common/conversation.ts"

export const toolsBin = fileURLToPath(new URL("../../tools/harnesses/node_modules/.bin", import.meta.url))
export const clis: ReadonlyArray<HarnessName> = ["claude", "codex", "gemini", "qwen", "opencode"]

export const USER_PROMPT = "User Simulation Guidelines"

/** A gold agent's replies need no world: it plays a script. */
export const noWorld = Context.make(WE.WorldEffects, { perform: () => Effect.die("a scripted gold agent performs no effect") }).pipe(
  Context.add(Wallet, {} as Wallet)
)

const scriptedReplyOf = (reply: { readonly text: string | null; readonly toolCalls: ReadonlyArray<ToolCall> }): Model.ScriptedReply => ({
  text: reply.text,
  toolCalls: reply.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments, ...(c.argumentsText !== undefined ? { argumentsText: c.argumentsText } : {}) }))
})

/**
 * The model behind the proxy: the agent's calls answered by the task's gold agent, in order; the
 * simulated user (tau2) is the gold play's user where the task has one (its opening, its own
 * tool calls: telecom's device, banking's applications), else it opens, then says ###STOP###
 * once the agent has spoken.
 */
export const goldModel = (gold: Agent): Model.Model => {
  let userTurns = 0
  const user = scriptedUserOf(gold)
  return Model.scripted((request) => {
    if (request.system.includes(USER_PROMPT)) {
      if (user === undefined) return { text: userTurns++ === 0 ? "Hi, I need help with my request." : "###STOP###" }
      return Effect.map(Effect.provide(user.reply([]), noWorld).pipe(Effect.orDie), scriptedReplyOf)
    }
    return Effect.map(
      Effect.provide(gold.reply({ system: request.system, messages: [], tools: [] }), noWorld).pipe(Effect.orDie),
      scriptedReplyOf
    )
  })
}

/** A model that answers every call in words and never acts. */
export const idleModel: Model.Model = Model.scripted((request) => ({
  text: request.system.includes(USER_PROMPT) ? "###STOP###" : "I am sorry, I cannot help with that."
}))

/**
 * One bridged Attempt of `harness` as the runner makes it (bridgedCandidate), the CLI found in
 * `binDirs` (the pinned CLIs by default); given a recording, its replay.
 */
export const runBridged = (
  provider: Provider,
  env: EnvironmentDef,
  harness: HarnessName,
  model: Model.Model,
  recording?: Attempt["recording"],
  options: {
    readonly modelName?: string
    readonly binDirs?: ReadonlyArray<string>
    readonly onStderr?: (line: string) => void
    readonly timeoutSeconds?: number
  } = {}
): Effect.Effect<Attempt, unknown> =>
  Effect.gen(function*() {
    const candidate = yield* bridgedCandidate(harness, options.modelName ?? null, {
      binDirs: options.binDirs ?? [toolsBin],
      ...(options.onStderr !== undefined ? { onStderr: options.onStderr } : {})
    })
    // Given a recording, the Attempt is replayed from it (the CLI makes its recorded calls again).
    const agent = yield* candidate.agentFor(env, recording !== undefined ? { recording } : undefined)
    return yield* evaluate(env, {
      capabilities: provider.capabilities,
      agentDef: candidate.def,
      agent,
      repetition: 0,
      registryEntry: candidate.registryEntry,
      timeoutSeconds: options.timeoutSeconds ?? 240,
      model,
      ...(recording !== undefined ? { replay: recording } : {})
    })
  }).pipe(Effect.provide(Registry.layer))

