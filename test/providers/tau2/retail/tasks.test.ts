import { readFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Json } from "../../../../src/content/Canonical.ts"
import * as World from "../../../../src/world/World.ts"
import { loadRetailData, tau2Dir, type RetailData } from "../../../../providers/tau2/retail/data.ts"
import { actionCheck, actionMatches, communicateCheck, renderUserScenario, type Task, tasksOfSplit } from "../../../../providers/tau2/common/task.ts"
import { dbCheck, decodeTasks, goldDigest, goldOf, goldWorld } from "../../../../providers/tau2/retail/tasks.ts"
import { step } from "../../../../providers/tau2/retail/tools.ts"

let data: RetailData
let tasks: ReadonlyArray<Task>

beforeAll(async () => {
  data = await Effect.runPromise(loadRetailData())
  tasks = await Effect.runPromise(decodeTasks(data.tasksJson))
})

const goldCalls = (task: Task) =>
  (task.evaluation_criteria?.actions ?? []).map((a) => ({ name: a.name, arguments: a.arguments as { readonly [key: string]: Json } }))

describe("retail tasks", () => {
  it("decodes the 114 tasks and upstream's train/test split", () => {
    expect(tasks).toHaveLength(114)
    expect(tasksOfSplit(tasks, data.splits, "train")).toHaveLength(74)
    expect(tasksOfSplit(tasks, data.splits, "test")).toHaveLength(40)
    expect(tasksOfSplit(tasks, data.splits, "base")).toHaveLength(114)
    expect(tasks[0]!.evaluation_criteria?.reward_basis).toEqual(["DB", "NL_ASSERTION"])
  })

  it("every task's gold trajectory passes the DB and ACTION checks", () => {
    for (const task of tasks) {
      const final = World.replay(data.initialWorld, goldCalls(task), (w, c) => step(w, c.name, c.arguments)[0])
      expect(dbCheck(data.initialWorld, task, final), task.id).toBe(true)
      expect(actionCheck(task, goldCalls(task)).reward, task.id).toBe(1)
    }
  })

  it("the gold digest is computed once per task and a different final DB fails the check", () => {
    const task = tasks.find((t) => t.id === "0")!
    expect(goldDigest(data.initialWorld, task)).toBe(World.digest(goldWorld(data.initialWorld, task)))
    expect(dbCheck(data.initialWorld, task, data.initialWorld)).toBe(false)
    const bound = goldOf(data.initialWorld)
    expect(bound.dbCheck(bound.goldWorld(task), task)).toBe(true)
    // Task 0 exchanges items: the gold world differs from the initial one in that order only.
    const gold = goldWorld(data.initialWorld, task)
    expect(World.get(gold, "orders", "#W2378156")).not.toEqual(World.get(data.initialWorld, "orders", "#W2378156"))
  })

  it("a task without gold actions (24, 57) passes the DB check only on the untouched DB", () => {
    const task = tasks.find((t) => t.id === "24")!
    expect(goldCalls(task)).toEqual([])
    expect(dbCheck(data.initialWorld, task, data.initialWorld)).toBe(true)
  })

  it("ACTION compares all the call's arguments as Python dicts, or only compare_args", () => {
    const action = { action_id: "a", requestor: "assistant" as const, name: "calculate", arguments: { expression: "1 + 1" }, info: null, compare_args: null }
    expect(actionMatches(action, { name: "calculate", arguments: { expression: "1 + 1" } })).toBe(true)
    expect(actionMatches(action, { name: "calculate", arguments: { expression: "1+1" } })).toBe(false)
    expect(actionMatches(action, { name: "calculate", arguments: {} })).toBe(true) // no argument to compare
    expect(actionMatches({ ...action, compare_args: [] }, { name: "calculate", arguments: { expression: "2" } })).toBe(true)
    expect(actionMatches({ ...action, arguments: { n: 1 }, compare_args: ["n"] }, { name: "calculate", arguments: { n: 1.0, m: 2 } })).toBe(true)
    expect(actionMatches(action, { name: "think", arguments: { expression: "1 + 1" } })).toBe(false)
    const task = tasks.find((t) => t.id === "0")!
    const partial = actionCheck(task, goldCalls(task).slice(0, 2))
    expect(partial.reward).toBe(0)
    expect(partial.checks.map((c) => c.matched)).toEqual([true, true, false, false, false])
  })

  it("COMMUNICATE finds each string in an assistant message, ignoring case and the message's commas", () => {
    const task = tasks.find((t) => (t.evaluation_criteria?.communicate_info ?? []).includes("8276.23"))!
    expect(communicateCheck(task, ["Your total is 8,276.23 dollars."]).reward).toBe(1)
    expect(communicateCheck(task, ["Your total is 8276.2"]).reward).toBe(0)
    expect(communicateCheck(task, [null, "   "]).reward).toBe(0)
    const none = tasks.find((t) => (t.evaluation_criteria?.communicate_info ?? []).length === 0)!
    expect(communicateCheck(none, []).reward).toBe(1)
  })

  it("renders the user scenario exactly as upstream's user simulator prompt has it", () => {
    const lines = readFileSync(join(tau2Dir(), "prompts", "retail_user_system_prompts.jsonl"), "utf8").split("\n").filter(Boolean)
    const expected = new Map(lines.map((l) => {
      const o = JSON.parse(l) as { task_id: string; instructions: string }
      return [o.task_id, o.instructions] as const
    }))
    for (const task of tasks) expect(renderUserScenario(task.user_scenario), task.id).toBe(expected.get(task.id))
  })
})
