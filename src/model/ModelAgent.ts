/**
 * Model calls as world effects, and the built-in `PROVIDER:MODEL` candidate.
 *
 * Every model call is a `model/generate` effect keyed by its role (`agent`, `user`, `judge`),
 * never by the model: the fault draws are the same whatever model a candidate runs, and the
 * model is part of the request (a replay with another model is a mismatch). So it is recorded,
 * replayed, faulted, admitted and debited like any other effect. Rate limits, server errors,
 * timeouts and unreachable endpoints (injected or real) are retried with bounded backoff; the
 * retries show in usage.
 */
import { Duration, Effect, Either, Schedule } from "effect"
import type { Json } from "../content/Canonical.ts"
import * as Canonical from "../content/Canonical.ts"
import { type BudgetExceeded, metered, type Wallet } from "../budget/Wallet.ts"
import { AgentError, type Agent, type AgentFailure } from "../evaluation/Agent.ts"
import type { AgentInput, AgentReply, Message } from "../evaluation/Conversation.ts"
import * as WE from "../world/WorldEffects.ts"
import { DEFAULT_MAX_OUTPUT_TOKENS, defaultOutputBound, type ModelRequest, ModelResponse } from "./Model.ts"
import { costOf } from "./Cost.ts"
import type { ResolvedModel } from "./Registry.ts"

/**
 * What the built-in agent asks for at most per reply on a priced model, when the registry allows
 * more: it bounds a call's worst case, which the spend cap reserves before the call is sent.
 */
export { DEFAULT_MAX_OUTPUT_TOKENS }

/**
 * The retry rule of a model call, whoever makes it (the built-in agent, or a harness CLI's request
 * at the bridge's proxy): a fault is retried this often, then the call fails with it.
 */
export const MODEL_CALL_RETRIES = 3

export interface CallOptions {
  /** Who is calling: `agent`, `user` (the simulated user), `judge`. */
  readonly role: string
  readonly model: ResolvedModel
  /** Attempts after the first on a rate limit or server error; default MODEL_CALL_RETRIES. */
  readonly retries?: number
}

const retryable = (e: WE.EffectError): boolean => e._tag === "EffectFault" && e.permanent !== true

// A fault's retries: the first after 200 ms, each later one after twice the one before, none
// started once ~20 s have passed since the first failure.
const firstRetryDelay = Duration.millis(200)
const laterRetries = Schedule.exponential(Duration.millis(400), 2).pipe(Schedule.upTo(Duration.millis(19_800)))

/**
 * One model call as a world effect, metered by the Attempt's wallet. Retries on faults with
 * exponential backoff (bounded), counting them in the wallet.
 */
export const call = (
  request: ModelRequest,
  options: CallOptions
): Effect.Effect<ModelResponse, WE.EffectError | BudgetExceeded, WE.WorldEffects | Wallet> => {
  const maxRetries = options.retries ?? MODEL_CALL_RETRIES
  const effect: WE.EffectRequest = {
    kind: "model/generate",
    key: options.role,
    // A ModelRequest's encoded form is itself (plain data, no transformations): no Schema pass.
    request: request as unknown as Json
  }
  let attempts = 0
  const once = Effect.suspend(() => {
    attempts++
    return WE.perform(effect, ModelResponse)
  })
  // The retry machinery (a schedule driver, its iteration service provided around each try) is
  // entered only once a try has failed: a call that succeeds at once, nearly every call, costs a
  // failure handler. The delays are as before: 200 ms, then doubling, for about 20 s.
  const withRetry = maxRetries <= 0 ? once : Effect.catchIf(once, retryable, () =>
    Effect.zipRight(
      Effect.sleep(firstRetryDelay),
      maxRetries === 1 ? once : Effect.retry(once, { while: retryable, schedule: laterRetries, times: maxRetries - 1 })
    ))
  return metered(withRetry, (response) => ({
    inputTokens: response.usage.inputTokens,
    outputTokens: response.usage.outputTokens,
    cacheReadTokens: response.usage.cacheReadTokens,
    cacheWriteTokens: response.usage.cacheWriteTokens,
    costUsd: costOf(options.model.model, response.usage),
    retries: attempts - 1
  }), () => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, retries: attempts - 1 }))
}

/** A conversation's messages as a model request carries them. */
export const toModelMessages = (messages: ReadonlyArray<Message>): ModelRequest["messages"] =>
  messages.map((m) => {
    switch (m.role) {
      case "user":
        return { role: "user" as const, content: m.content }
      case "assistant":
        return { role: "assistant" as const, content: m.content, toolCalls: m.toolCalls }
      case "tool":
        return { role: "tool" as const, toolCallId: m.toolCallId, name: m.name, content: m.content, isError: m.error }
    }
  })

// A tool as a request carries it, made once per tool spec (specs are immutable data), with its
// canonical text recorded: every recorded request of a run holds the same specs, and the
// Attempt's ids would otherwise write their JSON schemas again for every call.
const requestTools = new WeakMap<AgentInput["tools"][number], ModelRequest["tools"][number]>()
const requestToolOf = (t: AgentInput["tools"][number]): ModelRequest["tools"][number] => {
  let tool = requestTools.get(t)
  if (tool === undefined) {
    tool = { name: t.name, description: t.description, parameters: t.parameters }
    const text = Canonical.canonicalEither(tool)
    if (Either.isRight(text)) Canonical.remember(tool, text.right)
    requestTools.set(t, tool)
  }
  return tool
}

/** The request a model agent sends for one step. */
export const requestOf = (model: ResolvedModel, input: AgentInput): ModelRequest => ({
  provider: model.provider,
  model: model.model.id,
  system: input.system,
  messages: toModelMessages(input.messages),
  tools: input.tools.map(requestToolOf),
  // Bounded where a price makes it matter (the spend cap reserves it); a model of unknown price
  // (any id on a local server) gets the server's default, which a small context may need.
  ...(model.model.cost !== undefined ? { maxOutputTokens: defaultOutputBound(model.model.limit.output) } : {})
})

/**
 * The built-in tool-calling candidate on a registry model: one model call per step. Its tool
 * calls keep `argumentsText` (the arguments as the server sent them): it is part of the
 * recorded response, so a replay hands the tools and the grader the same text.
 */
export const modelAgent = (name: string, model: ResolvedModel, role = "agent"): Agent => ({
  name,
  reply: (input): Effect.Effect<AgentReply, AgentFailure, WE.WorldEffects | Wallet> =>
    call(requestOf(model, input), { role, model }).pipe(
      Effect.map((response): AgentReply => ({ text: response.text, toolCalls: response.toolCalls as AgentReply["toolCalls"] })),
      Effect.catchTag("EffectFailed", (e): Effect.Effect<never, WE.EffectFailed | AgentError> =>
        e.reason === "handler"
          ? Effect.fail(new AgentError({ agent: name, reason: "model-failed", detail: e.detail }))
          : Effect.fail(e))
    )
})
