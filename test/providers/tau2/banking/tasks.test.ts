import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as World from "../../../../src/world/World.ts"
import { buildIndex } from "../../../../providers/tau2/banking/bm25.ts"
import { loadBankingData } from "../../../../providers/tau2/banking/data.ts"
import { dbCheck, decodeTasks, goldDigest, goldWorld, initialWorld } from "../../../../providers/tau2/banking/tasks.ts"
import { step } from "../../../../providers/tau2/banking/tools.ts"

const setup = Effect.gen(function* () {
  const data = yield* loadBankingData()
  const env = { index: buildIndex(data.documents), discoverable: data.discoverableTools }
  const tasks = yield* decodeTasks(data)
  return { data, env, tasks }
})

describe("banking tasks", () => {
  it.effect("decodes the 97 tasks in file order with their reward basis, user tools and allowlist", () =>
    Effect.gen(function* () {
      const { tasks } = yield* setup
      expect(tasks).toHaveLength(97)
      expect(tasks[0]!.id).toBe("task_001")
      expect(tasks[0]!.userTools).toEqual(["apply_for_credit_card"])
      expect(tasks[0]!.task.evaluation_criteria?.reward_basis).toEqual(["DB"])
      const t26 = tasks.find((t) => t.id === "task_026")!
      expect(t26.readLogAllowlist).toEqual(["update_transaction_rewards_3847"])
      expect(tasks.filter((t) => t.agentData !== null)).toHaveLength(35)
    }))

  it.effect("replays every task's gold actions and passes the DB check", () =>
    Effect.gen(function* () {
      const { data, env, tasks } = yield* setup
      for (const t of tasks) {
        const init = Either.getOrThrow(initialWorld(data, t))
        expect(dbCheck(env, init, t, goldWorld(env, init, t)), t.id).toBe(true)
      }
    }), 120_000)

  it.effect("fails the DB check when the final DB differs, but not for unlocks alone", () =>
    Effect.gen(function* () {
      const { data, env, tasks } = yield* setup
      const t = tasks.find((x) => x.id === "task_001")!
      const init = Either.getOrThrow(initialWorld(data, t))
      expect(dbCheck(env, init, t, init)).toBe(false)
      const gold = goldWorld(env, init, t)
      // Unlocking lives outside the DB upstream: it must not change the comparison.
      const [unlocked] = step(gold, env, "assistant", "unlock_discoverable_agent_tool", { agent_tool_name: "freeze_debit_card_3892" })
      expect(World.digest(unlocked)).not.toBe(World.digest(gold))
      expect(dbCheck(env, init, t, unlocked)).toBe(true)
      expect(goldDigest(env, init, t)).toBe(goldDigest(env, init, t))
    }))

  it.effect("starts a task from db.json with its agent data deep-merged", () =>
    Effect.gen(function* () {
      const { data, tasks } = yield* setup
      const t = tasks.find((x) => x.id === "task_026")!
      const init = Either.getOrThrow(initialWorld(data, t))
      expect(World.get(init, "task_config", "dispute_settings")).toEqual({ auto_resolve_disputes: true })
      expect(World.get(data.initialWorld, "task_config", "dispute_settings")).toBeUndefined()
    }))
})
