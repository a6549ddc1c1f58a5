import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as World from "../../../../src/world/World.ts"
import { type AirlineData, loadAirlineData } from "../../../../providers/tau2/airline/data.ts"
import { dbCheck, decodeTasks, goldCalls, goldDigest, goldWorld, type Task, tasksOfSplit } from "../../../../providers/tau2/airline/tasks.ts"
import { step } from "../../../../providers/tau2/airline/tools.ts"
import { actionCheck } from "../../../../providers/tau2/common/task.ts"

let data: AirlineData
let tasks: ReadonlyArray<Task>

beforeAll(async () => {
  data = await Effect.runPromise(loadAirlineData())
  tasks = await Effect.runPromise(decodeTasks(data.tasksJson))
})

describe("airline tasks", () => {
  it("decodes the 50 tasks and upstream's splits; every task is graded on DB and COMMUNICATE", () => {
    expect(tasks).toHaveLength(50)
    expect(tasksOfSplit(tasks, data.splits, "base")).toHaveLength(50)
    expect(tasksOfSplit(tasks, data.splits, "train")).toHaveLength(30)
    expect(tasksOfSplit(tasks, data.splits, "test")).toHaveLength(20)
    for (const t of tasks) expect(t.evaluation_criteria?.reward_basis, t.id).toEqual(["DB", "COMMUNICATE"])
    expect(tasks.reduce((n, t) => n + goldCalls(t).length, 0)).toBe(142)
  })

  it("every task's gold trajectory passes the DB and ACTION checks", () => {
    for (const task of tasks) {
      const final = World.replay(data.initialWorld, goldCalls(task), (w, c) => step(w, c.name, c.arguments)[0])
      expect(dbCheck(data.initialWorld, task, final), task.id).toBe(true)
      expect(actionCheck(task, goldCalls(task)).reward, task.id).toBe(1)
    }
  })

  it("a task whose gold changes the DB fails the check on the untouched DB; one with no actions passes only on it", () => {
    const booking = tasks.find((t) => goldCalls(t).some((c) => c.name === "book_reservation"))!
    expect(goldDigest(data.initialWorld, booking)).toBe(World.digest(goldWorld(data.initialWorld, booking)))
    expect(dbCheck(data.initialWorld, booking, data.initialWorld)).toBe(false)
    const none = tasks.find((t) => t.id === "0")!
    expect(goldCalls(none)).toEqual([])
    expect(dbCheck(data.initialWorld, none, data.initialWorld)).toBe(true)
    const [changed] = step(data.initialWorld, "send_certificate", { user_id: "raj_sanchez_7340", amount: 50 })
    expect(dbCheck(data.initialWorld, none, changed)).toBe(false)
  })
})
