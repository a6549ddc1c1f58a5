import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Json } from "../../../src/content/Canonical.ts"
import type { Agent } from "../../../src/evaluation/Agent.ts"
import { type Capabilities, makeEvaluator, makeProtocol, makeWorldSetup } from "../../../src/evaluation/Capabilities.ts"
import type { AgentReply, Message } from "../../../src/evaluation/Conversation.ts"
import { evaluate } from "../../../src/evaluation/evaluate.ts"
import { modelAgent } from "../../../src/model/ModelAgent.ts"
import * as Registry from "../../../src/model/Registry.ts"
import type { AgentDef } from "../../../src/schema/AgentDef.ts"
import type { Attempt } from "../../../src/schema/Attempt.ts"
import { type EnvironmentDef, noLimits } from "../../../src/schema/EnvironmentDef.ts"
import type { Tool } from "../../../src/world/Tool.ts"
import * as World from "../../../src/world/World.ts"
import {
  type ConversationOutput,
  runConversation,
  type User,
  type UserReply,
  withScriptedUser
} from "../../../providers/tau2/common/conversation.ts"
import { loadPrompts } from "../../../providers/tau2/common/prompts.ts"
import { capabilities, provider, userPromptOf } from "../../../providers/tau2/retail/index.ts"
import { loadRetailData } from "../../../providers/tau2/retail/data.ts"
import { decodeTasks } from "../../../providers/tau2/retail/tasks.ts"
import { scriptedModels } from "./scriptedModels.ts"

const environments = await Effect.runPromise(provider.environments)
const envOf = (id: string, patch: Partial<EnvironmentDef> = {}): EnvironmentDef => ({ ...environments.find((e) => e.task === id)!, ...patch })

const llmDef: AgentDef = { name: "openai:gpt-4o-mini", kind: "llm", model: "openai:gpt-4o-mini", actionSpace: "tools", prompt: "", limits: noLimits }
const scriptedDef: AgentDef = { name: "script", kind: "scripted", model: null, actionSpace: "tools", prompt: "", limits: noLimits }

/** An agent that plays `replies` in order, then repeats the last one. */
const agentPlaying = (replies: ReadonlyArray<AgentReply>): Agent => {
  let i = 0
  return { name: "script", reply: () => Effect.sync(() => replies[Math.min(i++, replies.length - 1)]!) }
}
/** A user that says `replies` in order, then repeats the last one. */
const userSaying = (replies: ReadonlyArray<UserReply | string>): User => {
  let i = 0
  return {
    name: "script-user",
    reply: () =>
      Effect.sync(() => {
        const r = replies[Math.min(i++, replies.length - 1)]!
        return typeof r === "string" ? { text: r, toolCalls: [] } : r
      })
  }
}
const say = (text: string): AgentReply => ({ text, toolCalls: [] })
const callOf = (name: string, args: { readonly [key: string]: Json }, id = "c1"): AgentReply => ({ text: null, toolCalls: [{ id, name, arguments: args }] })

const resultOf = (attempt: Attempt) => (attempt.output as { result: ConversationOutput }).result
const transcriptOf = (attempt: Attempt) => (attempt.output as { transcript: ReadonlyArray<Message> }).transcript

const runScripted = (env: EnvironmentDef, agent: Agent, user: User, caps: Capabilities = capabilities) =>
  evaluate(env, { capabilities: caps, agentDef: scriptedDef, agent: withScriptedUser(agent, user), repetition: 0 })

describe("the tau2 conversation protocol", () => {
  it.effect("a model agent talks to the simulated user, whose calls carry upstream's prompt and debit the Attempt's wallet", () =>
    Effect.gen(function*() {
      const env = envOf("70")
      const prompts = yield* loadPrompts()
      const data = yield* loadRetailData()
      const task = (yield* decodeTasks(data.tasksJson)).find((t) => t.id === "70")!
      const agentModel = yield* Registry.resolve("openai:gpt-4o-mini").pipe(Effect.provide(Registry.layer))
      const userTurns = ["I want to exchange a jigsaw puzzle.", "###STOP###"].map((text) => ({ text, toolCalls: [] }))
      const agentTurns = [
        { text: null, toolCalls: [{ id: "a1", name: "find_user_id_by_name_zip", arguments: { first_name: "Ava", last_name: "Nguyen", zip: "94128" } }] },
        { text: "I found your account.", toolCalls: [] }
      ]
      const model = scriptedModels(userTurns, agentTurns)
      const attempt = yield* evaluate(env, {
        capabilities,
        agentDef: llmDef,
        agent: modelAgent(llmDef.name, agentModel),
        repetition: 0,
        handlers: { "model/generate": model }
      })
      expect(attempt.verdict.ended).toBeNull()
      expect(resultOf(attempt).terminationReason).toBe("user_stop")
      // Two user calls at 1000 + 10 tokens and two agent calls at 200 + 20, all on one wallet.
      expect(attempt.usage).toMatchObject({ calls: 4, inputTokens: 2400, outputTokens: 60 })
      const userCalls = attempt.recording.filter((r) => r.kind === "model/generate" && r.key === "user")
      expect(userCalls).toHaveLength(2)
      const first = userCalls[0]!.request as { system: string; messages: ReadonlyArray<{ role: string; content: string }> }
      expect(first.system).toBe(userPromptOf(prompts, task))
      // The user model sees the agent's greeting as the user turn (upstream's flip_roles).
      expect(first.messages).toEqual([{ role: "user", content: "Hi! How can I help you today?" }])
      const second = userCalls[1]!.request as { messages: ReadonlyArray<{ role: string }> }
      expect(second.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"])
      // The agent saw its greeting, the user's text and its tool's answer; the user never saw the tool.
      expect(transcriptOf(attempt).map((m) => m.role)).toEqual(["assistant", "user", "assistant", "tool", "assistant", "user"])
      expect(attempt.recording.some((r) => r.kind === "tool/read" && r.key === "find_user_id_by_name_zip")).toBe(true)
    }))

  it.effect("the user's ###TRANSFER### and ###OUT-OF-SCOPE### end the conversation as a user stop", () =>
    Effect.gen(function*() {
      for (const token of ["###TRANSFER###", "###OUT-OF-SCOPE###"]) {
        const attempt = yield* runScripted(envOf("24"), agentPlaying([say("Let me check.")]), userSaying(["Hello", `bye ${token}`]))
        expect(resultOf(attempt).terminationReason).toBe("user_stop")
        expect(attempt.verdict.checks["termination:user_stop"]).toBeUndefined()
      }
    }))

  it.effect("the step limit ends a conversation that never stops, with reward 0", () =>
    Effect.gen(function*() {
      const env = envOf("24", { limits: { ...noLimits, turns: 6 } })
      const attempt = yield* runScripted(env, agentPlaying([say("Anything else?")]), userSaying(["Yes, one more thing."]))
      expect(resultOf(attempt)).toMatchObject({ terminationReason: "max_steps", steps: 6 })
      expect(attempt.verdict.reward).toBe(0)
      expect(attempt.verdict.checks).toEqual({ "termination:max_steps": false })
    }))

  it.effect("ten failing tool calls end the conversation with too_many_errors", () =>
    Effect.gen(function*() {
      const attempt = yield* runScripted(envOf("24"), agentPlaying([callOf("get_order_details", { order_id: "#nope" })]), userSaying(["Hi"]))
      const result = resultOf(attempt)
      expect(result).toMatchObject({ terminationReason: "too_many_errors", errors: 10 })
      expect(result.messages.filter((m) => m.role === "tool" && m.error)).toHaveLength(10)
      expect(attempt.verdict.reward).toBe(0)
    }))

  it.effect("an empty agent message ends with agent_error; transfer_to_human_agents alone does not end it (upstream's text mode)", () =>
    Effect.gen(function*() {
      const empty = yield* runScripted(envOf("24"), agentPlaying([say("  ")]), userSaying(["Hi"]))
      expect(resultOf(empty).terminationReason).toBe("agent_error")
      expect(empty.verdict.checks).toEqual({ "termination:agent_error": false })

      const transfer = yield* runScripted(
        envOf("50"),
        agentPlaying([callOf("transfer_to_human_agents", { summary: "urgent" }), say("You are being transferred.")]),
        userSaying(["Undo my cancellation!", "###TRANSFER###"])
      )
      const result = resultOf(transfer)
      expect(result.terminationReason).toBe("user_stop")
      expect(result.messages.map((m) => m.role)).toEqual(["assistant", "user", "assistant", "tool", "assistant", "user"])
      expect(result.messages[3]).toMatchObject({ role: "tool", content: "Transfer successful", requestor: "assistant" })
    }))

  it.effect("a user's own tools run in the same fork, out of the agent's sight and reach", () =>
    Effect.gen(function*() {
      const counter = (name: string, access: "read" | "write"): Tool => ({
        spec: { name, description: name, parameters: { type: "object", properties: {} } },
        access,
        run: (world) => {
          const n = (World.get(world, "counter", "c") as { n: number }).n
          return access === "write"
            ? { output: String(n + 1), error: false, writes: [{ table: "counter", key: "c", value: { n: n + 1 } }] }
            : { output: String(n), error: false, writes: [] }
        }
      })
      const peek = counter("peek", "read")
      const bump = counter("bump", "write")
      const initial = World.make({ counter: { c: { n: 0 } } })
      const caps: Capabilities = {
        worldSetup: makeWorldSetup({ name: "t", version: "1", trust: "deterministic", setup: () => Effect.succeed({ world: initial, evidence: null, tools: [peek, bump] }) }),
        protocol: makeProtocol({
          name: "t",
          version: "1",
          trust: "deterministic",
          inputs: () => Effect.succeed({ system: "s", tools: [peek.spec] }),
          run: (ctx) =>
            Effect.map(
              runConversation(ctx, {
                firstAgentMessage: "Hi!",
                user: userSaying([{ text: null, toolCalls: [{ id: "u1", name: "bump", arguments: {} }] }, "It says 1. ###STOP###"]),
                agentTools: [peek],
                userTools: [bump]
              }),
              (o) => o as unknown as Json
            )
        }),
        evaluator: makeEvaluator({ name: "t", version: "1", trust: "deterministic", evaluate: () => Effect.succeed({ reward: 1, checks: {} }) })
      }
      const env: EnvironmentDef = { ...envOf("24"), benchmark: "t" }
      const attempt = yield* evaluate(env, { capabilities: caps, agentDef: scriptedDef, agent: agentPlaying([say("ok")]), repetition: 0 })
      const result = resultOf(attempt)
      expect(result.terminationReason).toBe("user_stop")
      expect(result.messages[2]).toMatchObject({ role: "tool", name: "bump", requestor: "user", content: "1", error: false })
      expect(attempt.finalWorld).toBe(World.digest(World.set(initial, "counter", "c", { n: 1 })))
      expect(attempt.recording.filter((r) => r.kind === "tool/write" && r.key === "bump")).toHaveLength(1)
      // The agent saw neither the user's tool call nor its answer.
      expect(transcriptOf(attempt).map((m) => m.role)).toEqual(["assistant", "user"])

      // And the agent cannot call the user's tool.
      const reaching: Capabilities = {
        ...caps,
        protocol: makeProtocol({
          ...caps.protocol,
          run: (ctx) =>
            Effect.map(
              runConversation(ctx, { firstAgentMessage: "Hi!", user: userSaying(["hello", "###STOP###"]), agentTools: [peek], userTools: [bump] }),
              (o) => o as unknown as Json
            )
        })
      }
      const reached = yield* evaluate(env, { capabilities: reaching, agentDef: scriptedDef, agent: agentPlaying([callOf("bump", {}), say("sorry")]), repetition: 0 })
      expect(resultOf(reached).messages[3]).toMatchObject({ role: "tool", content: "Error: Tool 'bump' not found.", error: true })
      expect(reached.recording.some((r) => r.key === "bump")).toBe(false)
    }))
})
