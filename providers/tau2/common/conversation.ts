/**
 * tau2-bench's half-duplex conversation (upstream src/tau2/orchestrator/orchestrator.py,
 * `Orchestrator`) as a protocol any tau2 domain can host: the agent opens with a fixed message,
 * then agent, user and environment pass one message per step. Tool calls (the agent's, and the
 * user's own where a domain gives the user tools) run in the Attempt's fork through WorldEffects.
 *
 * Stop conditions, as upstream: the user says ###STOP###, ###TRANSFER### or ###OUT-OF-SCOPE###
 * (user_stop); a step limit (max_steps) and an error limit (too_many_errors), both checked only
 * when no tool answer is pending; an empty message ends with agent_error / user_error (upstream's
 * `Message.validate` raises there). Upstream's half-duplex LLM agent never stops by itself, so
 * `agentStopTools` is empty unless a domain asks for it.
 */
import { Effect, Ref } from "effect"
import { Agent, type Canonical, type Capabilities, type Clients, type Conversation, Model, type Registry, type Tool, ToolLoop, type Wallet, type WorldEffects as WE } from "../../../src/index.ts"

export const STOP = "###STOP###"
export const TRANSFER = "###TRANSFER###"
export const OUT_OF_SCOPE = "###OUT-OF-SCOPE###"

/** Upstream's defaults (src/tau2/config.py). */
export const DEFAULT_MAX_STEPS = 200
export const DEFAULT_MAX_ERRORS = 10

/** Upstream's `TerminationReason` values that a half-duplex text conversation can reach. */
export type TerminationReason = "user_stop" | "agent_stop" | "max_steps" | "too_many_errors" | "agent_error" | "user_error"

export type Requestor = "assistant" | "user"

/** A message of the full trajectory (upstream's `SimulationRun.messages`). */
export type Tau2Message =
  | { readonly role: "assistant"; readonly content: string | null; readonly toolCalls: ReadonlyArray<Conversation.ToolCall> }
  | { readonly role: "user"; readonly content: string | null; readonly toolCalls: ReadonlyArray<Conversation.ToolCall> }
  | {
    readonly role: "tool"
    readonly id: string
    readonly name: string
    readonly requestor: Requestor
    readonly content: string
    readonly error: boolean
  }

/** The protocol's output: what the evaluator grades. */
export interface ConversationOutput {
  readonly terminationReason: TerminationReason
  readonly steps: number
  readonly errors: number
  readonly messages: ReadonlyArray<Tau2Message>
}

/** What the user side says: text for the agent, or tool calls of its own tools. */
export interface UserReply {
  readonly text: string | null
  readonly toolCalls: ReadonlyArray<Conversation.ToolCall>
}

/** The user side of the conversation: the simulated user (a model) or a script. */
export interface User {
  readonly name: string
  /** Given the user's own view of the trajectory (see `userView`), the next user message. */
  readonly reply: (view: ReadonlyArray<Tau2Message>) => Effect.Effect<UserReply, Agent.AgentFailure, WE.WorldEffects | Wallet.Wallet>
}

/** `UserSimulator.is_stop`: a text message holding one of the three stop tokens. */
export const isUserStop = (reply: UserReply): boolean =>
  reply.toolCalls.length === 0 && reply.text !== null &&
  (reply.text.includes(STOP) || reply.text.includes(TRANSFER) || reply.text.includes(OUT_OF_SCOPE))

const hasText = (text: string | null): boolean => text !== null && text.trim().length > 0

/** What the agent sees (upstream's `is_valid_agent_history_message`), in the path's Message shape. */
export const agentView = (messages: ReadonlyArray<Tau2Message>): ReadonlyArray<Conversation.Message> =>
  messages.flatMap((m): ReadonlyArray<Conversation.Message> => {
    switch (m.role) {
      case "assistant":
        return [{ role: "assistant", content: m.content, toolCalls: m.toolCalls }]
      case "user":
        return m.toolCalls.length === 0 ? [{ role: "user", content: m.content ?? "" }] : []
      case "tool":
        return m.requestor === "assistant" ? [{ role: "tool", toolCallId: m.id, name: m.name, content: m.content, error: m.error }] : []
    }
  })

/** What the user sees (upstream's `is_valid_user_history_message`): agent texts, its own messages, its tools' answers. */
export const userView = (messages: ReadonlyArray<Tau2Message>): ReadonlyArray<Tau2Message> =>
  messages.filter((m) =>
    m.role === "user" || (m.role === "assistant" && m.toolCalls.length === 0) || (m.role === "tool" && m.requestor === "user")
  )

// ---------------------------------------------------------------------------------------------
// The simulated user

/**
 * Upstream's user simulator prompt: the guidelines (with no persona text, as `PersonaConfig()`
 * gives none) and `str(user_scenario)` put into the template's two placeholders.
 */
export const userSystemPrompt = (template: string, guidelines: string, instructions: string): string =>
  template.replace("{global_user_sim_guidelines_with_persona}", () => guidelines.replace("<PERSONA_GUIDELINES>", "")).replace(
    "{instructions}",
    () => instructions
  )

/** The agent's system prompt: the instruction and the domain policy put into the template. */
export const agentSystemPrompt = (template: string, instruction: string, policy: string): string =>
  template.replace("{agent_instruction}", () => instruction).replace("{domain_policy}", () => policy)

/**
 * The user model's request: upstream's `UserState.flip_roles`: the agent's texts become user
 * messages, the user's own messages assistant messages, its tools' answers tool messages.
 */
export const userRequest = (model: Registry.ResolvedModel, system: string, view: ReadonlyArray<Tau2Message>, tools: ReadonlyArray<Tool.ToolSpec>): Clients.ModelRequest =>
  // Bounded as every request is (Model.boundedRequest): the spend cap reserves what is sent.
  Model.boundedRequest({
    provider: model.provider,
    model: model.model.id,
    system,
    messages: view.map((m): Clients.ModelRequest["messages"][number] => {
      switch (m.role) {
        case "assistant":
          return { role: "user", content: m.content ?? "" }
        case "user":
          return { role: "assistant", content: m.content, toolCalls: m.toolCalls }
        case "tool":
          return { role: "tool", toolCallId: m.id, name: m.name, content: m.content, isError: m.error }
      }
    }),
    tools: tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }))
  }, model.model)

/**
 * The simulated user: one model call per user turn through `ModelAgent.call` with role `user`,
 * so it is a `model/generate` effect keyed `user:<model>` that debits the Attempt's wallet.
 */
export const simulatedUser = (model: Registry.ResolvedModel, system: string, tools: ReadonlyArray<Tool.ToolSpec> = []): User => ({
  name: `user:${model.ref}`,
  reply: (view) =>
    Effect.flatMap(
      // Loaded on first use: the model clients take long to load and scripted runs never need them.
      Effect.promise(() => import("../../../src/model/ModelAgent.ts")),
      (ModelAgent) =>
        ModelAgent.call(userRequest(model, system, view, tools), { role: "user", model }).pipe(
          Effect.map((r): UserReply => ({ text: r.text, toolCalls: r.toolCalls as ReadonlyArray<Conversation.ToolCall> })),
          Effect.catchTag("EffectFailed", (e): Effect.Effect<never, WE.EffectFailed | Agent.AgentError | Wallet.BudgetExceeded> =>
            e.reason === "handler"
              ? Effect.fail(new Agent.AgentError({ agent: `user:${model.ref}`, reason: "model-failed", detail: e.detail }))
              : Effect.fail(e))
        )
    )
})

// ---------------------------------------------------------------------------------------------
// Scripted play (gold, echo): both sides without a model

/** A step of a scripted play: a gold action with the side that performs it. */
export interface PlayAction {
  readonly requestor: Requestor
  readonly name: string
  readonly arguments: { readonly [key: string]: Canonical.Json }
  /** The arguments as the task file writes them (`2.0` stays a float), played as a model's text. */
  readonly argumentsText?: string
}

// A property of the agent, not an identity-keyed side table: the evaluation path may hand the
// protocol a copy of the agent (`{ ...agent, reply }`), and a copy keeps its own symbol properties.
const scriptedUserKey: unique symbol = Symbol("tau2/scriptedUser")

type WithScriptedUser = Agent.Agent & { readonly [scriptedUserKey]?: User }

/** The scripted user a roster candidate brings (gold, echo), if any; otherwise the protocol simulates one. */
export const scriptedUserOf = (agent: Agent.Agent): User | undefined => (agent as WithScriptedUser)[scriptedUserKey]

/** Pair a scripted agent with the scripted user it plays against. */
export const withScriptedUser = (agent: Agent.Agent, user: User): Agent.Agent => {
  const paired: WithScriptedUser = { ...agent, [scriptedUserKey]: user }
  return paired
}

/**
 * The gold play: the actions in order, each by its requestor (agent tool calls, user tool calls),
 * then the agent's closing text; the user opens with `opening`, hands the turn back while the
 * agent has work left, and says ###STOP### after the closing text.
 */
export const goldPlay = (actions: ReadonlyArray<PlayAction>, opening: string, closing: string): Agent.Agent => {
  let next = 0
  let openingSent = false
  let closed = false
  const call = (a: PlayAction): Conversation.ToolCall => ({
    id: `gold-${next}`,
    name: a.name,
    arguments: a.arguments,
    ...(a.argumentsText !== undefined ? { argumentsText: a.argumentsText } : {})
  })
  const agent: Agent.Agent = {
    name: "gold",
    reply: () =>
      Effect.sync((): Conversation.AgentReply => {
        const action = actions[next]
        if (action?.requestor === "assistant") {
          const reply = { text: null, toolCalls: [call(action)] }
          next++
          return reply
        }
        if (action !== undefined) return { text: `Please go ahead with ${action.name}.`, toolCalls: [] }
        closed = true
        return { text: closing, toolCalls: [] }
      })
  }
  const user: User = {
    name: "gold-user",
    reply: () =>
      Effect.sync((): UserReply => {
        if (!openingSent) {
          openingSent = true
          return { text: opening, toolCalls: [] }
        }
        const action = actions[next]
        if (action?.requestor === "user") {
          const reply = { text: null, toolCalls: [call(action)] }
          next++
          return reply
        }
        return closed ? { text: STOP, toolCalls: [] } : { text: "Please go on.", toolCalls: [] }
      })
  }
  return withScriptedUser(agent, user)
}

/** `gold` on a tau2 task: its gold actions, each by its side, closing with the task's communicate_info. */
export const goldAgent = (actions: ReadonlyArray<PlayAction>, opening: string, communicateInfo: ReadonlyArray<string>): Agent.Agent =>
  goldPlay(actions, opening, communicateInfo.length > 0 ? communicateInfo.join("\n") : "Your request is complete.")

/** A user that says `opening`, then ###STOP### (what `echo` plays against). */
export const openingOnlyUser = (opening: string): User => {
  let said = false
  return {
    name: "opening-user",
    reply: () =>
      Effect.sync((): UserReply => {
        if (said) return { text: STOP, toolCalls: [] }
        said = true
        return { text: opening, toolCalls: [] }
      })
  }
}

// ---------------------------------------------------------------------------------------------
// The orchestration

export interface ConversationSpec {
  /** Upstream's `DEFAULT_FIRST_AGENT_MESSAGE`, said before anyone else. */
  readonly firstAgentMessage: string
  readonly user: User
  /** The agent's tools (their access decides tool/read or tool/write). */
  readonly agentTools: ReadonlyArray<Tool.Tool>
  /** The user's own tools, run in the same fork; none in retail. */
  readonly userTools?: ReadonlyArray<Tool.Tool>
  readonly maxSteps?: number
  readonly maxErrors?: number
  /** Agent tools whose call ends the conversation with agent_stop after it runs (none upstream in text mode). */
  readonly agentStopTools?: ReadonlyArray<string>
}

type Role = "agent" | "user" | "env"

/**
 * Runs upstream's `Orchestrator.run` loop. The path's transcript (ctx.transcript) holds what the
 * agent sees; the output holds the full trajectory (with the user's tool calls) and how it ended.
 */
export const runConversation = (
  ctx: Capabilities.ProtocolContext,
  spec: ConversationSpec
): Effect.Effect<ConversationOutput, Capabilities.ProtocolFailure, WE.WorldEffects | Wallet.Wallet> =>
  Effect.gen(function*() {
    const maxSteps = spec.maxSteps ?? DEFAULT_MAX_STEPS
    const maxErrors = spec.maxErrors ?? DEFAULT_MAX_ERRORS
    const agentTools = new Map(spec.agentTools.map((t) => [t.spec.name, t]))
    const userTools = new Map((spec.userTools ?? []).map((t) => [t.spec.name, t]))
    const stopTools = new Set(spec.agentStopTools ?? [])
    const trajectory: Array<Tau2Message> = []
    const append = (m: Tau2Message) =>
      Effect.suspend(() => {
        trajectory.push(m)
        const seen = agentView([m])
        return seen.length === 0 ? Effect.void : Ref.update(ctx.transcript, (ms) => [...ms, ...seen])
      })

    yield* append({ role: "assistant", content: spec.firstAgentMessage, toolCalls: [] })
    let from: Role = "agent"
    let to: Role = "user"
    let pending: ReadonlyArray<Conversation.ToolCall> = []
    let steps = 0
    let errors = 0
    let ended: TerminationReason | null = null

    while (ended === null) {
      if (to === "user") {
        const reply = yield* spec.user.reply(userView(trajectory))
        if (!hasText(reply.text) && reply.toolCalls.length === 0) {
          ended = "user_error"
          break
        }
        if (isUserStop(reply)) ended = "user_stop"
        yield* append({ role: "user", content: reply.text, toolCalls: reply.toolCalls })
        from = "user"
        pending = reply.toolCalls
        to = reply.toolCalls.length > 0 ? "env" : "agent"
      } else if (to === "agent") {
        const reply = yield* ctx.agent.reply({ system: ctx.inputs.system, messages: yield* Ref.get(ctx.transcript), tools: ctx.inputs.tools })
        if (!hasText(reply.text) && reply.toolCalls.length === 0) {
          ended = "agent_error"
          break
        }
        yield* append({ role: "assistant", content: reply.text, toolCalls: reply.toolCalls })
        from = "agent"
        pending = reply.toolCalls
        to = reply.toolCalls.length > 0 ? "env" : "user"
      } else {
        const requestor: Requestor = from === "user" ? "user" : "assistant"
        const own = requestor === "user" ? userTools : agentTools
        const other = requestor === "user" ? agentTools : userTools
        let stopped = false
        for (const call of pending) {
          // A side cannot reach the other side's tools: upstream looks a call up in the requestor's toolkit only.
          const foreign = !own.has(call.name) && (requestor === "user" || other.has(call.name))
          const result = foreign ? { content: `Error: Tool '${call.name}' not found.`, error: true } : yield* ToolLoop.callTool(own, call)
          if (result.error) errors++
          yield* append({ role: "tool", id: call.id, name: call.name, requestor, content: result.content, error: result.error })
          if (requestor === "assistant" && stopTools.has(call.name)) stopped = true
        }
        pending = []
        to = from
        from = "env"
        if (stopped) ended = "agent_stop"
      }
      steps++
      // Upstream checks the limits only when no tool answer is pending, after the step's own stop.
      if (to !== "env") {
        if (steps >= maxSteps) ended = "max_steps"
        if (errors >= maxErrors) ended = "too_many_errors"
      }
    }
    return { terminationReason: ended, steps, errors, messages: trajectory }
  })

/** The output as the path keeps it (plain JSON). */
export const outputJson = (output: ConversationOutput): Canonical.Json => output as unknown as Canonical.Json
