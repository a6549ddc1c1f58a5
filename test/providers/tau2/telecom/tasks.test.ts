import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as World from "../../../../src/world/World.ts"
import { loadTelecomData } from "../../../../providers/tau2/telecom/data.ts"
import { dbDigest, decodeTasks, envAssertionCheck, goldWorld, replayGold, taskInitialWorld, tasksOfSplit } from "../../../../providers/tau2/telecom/tasks.ts"
import { call } from "../../../../providers/tau2/telecom/tools.ts"

const load = Effect.gen(function* () {
  const data = yield* loadTelecomData()
  const tasks = yield* decodeTasks(data.tasksJson)
  return { data, tasks }
})

describe("telecom tasks", () => {
  it.effect("decodes the 114 base tasks; train and test split them 74 / 40", () =>
    Effect.gen(function* () {
      const { data, tasks } = yield* load
      expect(tasks).toHaveLength(114)
      expect(tasksOfSplit(tasks, data.splits)).toHaveLength(114)
      expect(tasksOfSplit(tasks, data.splits, "train")).toHaveLength(74)
      expect(tasksOfSplit(tasks, data.splits, "test")).toHaveLength(40)
      expect(tasks.every((t) => (t.evaluation_criteria?.reward_basis ?? []).includes("ENV_ASSERTION"))).toBe(true)
    }))

  it.effect("replaying every task's gold actions meets all of its env assertions and actions: reward 1", () =>
    Effect.gen(function* () {
      const { data, tasks } = yield* load
      const failing: Array<string> = []
      let assertions = 0
      for (const task of tasks) {
        const replay = yield* Either.mapLeft(replayGold(data.initialWorld, task), (e) => new Error(e))
        assertions += replay.envAssertions.checks.length
        if (replay.reward !== 1) failing.push(task.id)
      }
      expect(failing).toEqual([])
      expect(assertions).toBe(209)
    }), 120_000)

  it.effect("an agent that does nothing fails the env assertions of a task whose phone is broken", () =>
    Effect.gen(function* () {
      const { data, tasks } = yield* load
      const task = tasks[0]!
      const start = yield* Either.mapLeft(taskInitialWorld(data.initialWorld, task), (e) => new Error(e))
      const replay = yield* Either.mapLeft(replayGold(data.initialWorld, task), (e) => new Error(e))
      expect(replay.reward).toBe(1)
      // The same checks on the untouched initial state.
      expect(envAssertionCheck(task, start).reward).toBe(0)
    }))

  it.effect("upstream's evaluator reference skips syncs: a paid bill stays unpaid there, but not in a live run", () =>
    Effect.gen(function* () {
      const { data, tasks } = yield* load
      const payment = tasks.find((t) => (t.evaluation_criteria?.actions ?? []).some((a) => a.name === "make_payment"))!
      const live = yield* Either.mapLeft(goldWorld(data.initialWorld, payment, "live"), (e) => new Error(e))
      const reference = yield* Either.mapLeft(goldWorld(data.initialWorld, payment, "upstream-eval"), (e) => new Error(e))
      expect(dbDigest(live)).not.toBe(dbDigest(reference))
      const paid = (w: World.World) => World.entries(w, "bills").filter(([, b]) => (b as { status: string }).status === "Paid").length
      expect(paid(live)).toBe(paid(reference) + 1)
    }))

  it.effect("a fork is independent: calls on one fork leave the task's initial world unchanged", () =>
    Effect.gen(function* () {
      const { data, tasks } = yield* load
      const start = yield* Either.mapLeft(taskInitialWorld(data.initialWorld, tasks[0]!), (e) => new Error(e))
      const before = World.digest(start)
      const after = call(World.fork(start), "toggle_data", "user", {}).world
      expect(World.digest(after)).not.toBe(before)
      expect(World.digest(start)).toBe(before)
    }))
})
