import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as World from "../../../../src/world/World.ts"
import { buildIndex } from "../../../../providers/tau2/banking/bm25.ts"
import { loadBankingData } from "../../../../providers/tau2/banking/data.ts"
import { bankingTools, step } from "../../../../providers/tau2/banking/tools.ts"

const setup = Effect.gen(function* () {
  const data = yield* loadBankingData()
  return { data, env: { index: buildIndex(data.documents), discoverable: data.discoverableTools } }
})

describe("banking tools", () => {
  it.effect("offers the 15 agent tools (KB_search first) and the 6 user tools, with the discoverable ones callable apart", () =>
    Effect.gen(function* () {
      const { data, env } = yield* setup
      const tools = bankingTools(env, data)
      expect(tools.agent).toHaveLength(15)
      expect(tools.agent[0]!.spec.name).toBe("KB_search")
      expect(tools.user.map((t) => t.spec.name)).toEqual(data.userToolSpecs.map((s) => s.name))
      expect(tools.agentHidden).toHaveLength(44)
      expect(tools.userHidden).toHaveLength(4)
      expect(tools.agent.find((t) => t.spec.name === "KB_search")!.access).toBe("read")
    }))

  it.effect("needs an unlock before call_discoverable_agent_tool, and logs only mutating or allowlisted calls", () =>
    Effect.gen(function* () {
      const { data, env } = yield* setup
      const w0 = data.initialWorld
      const call = { agent_tool_name: "get_closure_reason_history_8293", arguments: '{"credit_card_account_id": "x"}' }
      const [, locked] = step(w0, env, "assistant", "call_discoverable_agent_tool", call)
      expect(locked.output).toContain("has not been unlocked")
      const [w1] = step(w0, env, "assistant", "unlock_discoverable_agent_tool", { agent_tool_name: "get_closure_reason_history_8293" })
      const [w2, ran] = step(w1, env, "assistant", "call_discoverable_agent_tool", call)
      expect(ran.output).toContain("No closure reason records found")
      expect(World.size(w2, "agent_discoverable_tools")).toBe(0)
      const [, bad] = step(w1, env, "assistant", "call_discoverable_agent_tool", { ...call, arguments: "{'a': 1}" })
      expect(bad.output).toBe("Error: Invalid JSON in arguments: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)")
      const [, typeErr] = step(w1, env, "assistant", "call_discoverable_agent_tool", { ...call, arguments: '{"x": 1}' })
      expect(typeErr.output).toBe(
        "Error: Invalid arguments: KnowledgeTools.get_closure_reason_history_8293() got an unexpected keyword argument 'x'"
      )
    }))

  it.effect("answers a tool of the other side as not found, with the error flag", () =>
    Effect.gen(function* () {
      const { data, env } = yield* setup
      const [w, out] = step(data.initialWorld, env, "user", "KB_search", { query: "fee" })
      expect(out).toEqual({ output: "Error: Tool 'KB_search' not found.", error: true, writes: [] })
      expect(w).toBe(data.initialWorld)
    }))

  it.effect("a user discoverable tool refuses until the agent gave it", () =>
    Effect.gen(function* () {
      const { data, env } = yield* setup
      const args = { discoverable_tool_name: "get_referral_link", arguments: '{"user_id": "u", "card_name": "Gold Rewards Card"}' }
      const [, refused] = step(data.initialWorld, env, "user", "call_discoverable_user_tool", args)
      expect(refused.output).toContain("has not been given to you by the agent")
      const [given] = step(data.initialWorld, env, "assistant", "give_discoverable_user_tool", { discoverable_tool_name: "get_referral_link" })
      const [after, ok] = step(given, env, "user", "call_discoverable_user_tool", args)
      expect(ok.output).toContain("Referral link: https://rhobank.com/refer/")
      expect(World.size(after, "user_discoverable_tool_calls")).toBe(1)
    }))
})
