import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as JudgePanel from "../../src/evaluation/JudgePanel.ts"
import type { Judging } from "../../src/schema/Attempt.ts"
import * as EnvironmentDefs from "../../src/schema/EnvironmentDef.ts"
import { provider } from "../../providers/competitor-discovery/index.ts"

const env = Effect.runSync(provider.environments)[0]!
/** How the command put a judge into an environment before there could be two: every kept cell's id is of this. */
const asBefore = { ...env, capabilities: { ...env.capabilities, models: { ...env.capabilities.models, judge: "openai:gpt-4o-mini" } } }

describe("the judges in an EnvironmentDef", () => {
  it("one judge asked once names only the judge: the environment keeps the id it had", () => {
    const one = JudgePanel.withPanel(env, { judges: ["openai:gpt-4o-mini"], reps: 1 })
    expect(EnvironmentDefs.idOf(one)).toBe(EnvironmentDefs.idOf(asBefore))
    expect(JudgePanel.panelOf(one)).toEqual({ judges: ["openai:gpt-4o-mini"], reps: 1 })
  })

  it("a second judge or repetitions make another environment, and read back as given", () => {
    const two = JudgePanel.withPanel(env, { judges: ["openai:gpt-4o-mini", "openai:gpt-4.1-mini"], reps: 3 })
    expect(EnvironmentDefs.idOf(two)).not.toBe(EnvironmentDefs.idOf(asBefore))
    expect(JudgePanel.panelOf(two)).toEqual({ judges: ["openai:gpt-4o-mini", "openai:gpt-4.1-mini"], reps: 3 })
    expect(JudgePanel.panelOf(env)).toBeNull()
  })
})

describe("asking a panel", () => {
  const cost = (costUsd: number | null): Judging => ({ calls: 1, inputTokens: 10, outputTokens: 2, costUsd })

  it.effect("asks each judge K times in order; the first answer grades; every decision and every call's cost is kept", () =>
    Effect.gen(function*() {
      const asked: Array<string> = []
      const answers: Record<string, ReadonlyArray<ReadonlyArray<boolean>>> = { a: [[true, false, true], [true, true, true]], b: [[false, false, true], [false, false, true]] }
      const result = yield* JudgePanel.ask(
        { judges: ["a", "b"], reps: 2 },
        (j) => `judge-${j}`,
        // The middle position is not a judged input (a malformed entry): it stays out of the record.
        [{ input: "x", index: 0 }, { input: "z", index: 2 }],
        (j) =>
          Effect.sync(() => {
            const decisions = answers[j]![asked.filter((k) => k === j).length]!
            asked.push(j)
            return { decisions, judging: cost(0.5) }
          })
      )
      expect(asked).toEqual(["a", "a", "b", "b"])
      expect(result.first.decisions).toEqual([true, false, true])
      expect(result.judging).toEqual({ calls: 4, inputTokens: 40, outputTokens: 8, costUsd: 2 })
      expect(result.record).toEqual({
        judges: ["judge-a", "judge-b"],
        reps: 2,
        inputs: [{ input: "x", decisions: [[true, true], [false, false]] }, { input: "z", decisions: [[true, true], [true, true]] }]
      })
    }))

  it.effect("one judge asked once records nothing beside its answer, and its cost is its call's", () =>
    Effect.gen(function*() {
      const result = yield* JudgePanel.ask({ judges: ["a"], reps: 1 }, (j) => j, [{ input: "x", index: 0 }], () =>
        Effect.succeed({ decisions: [true], judging: cost(0.25) }))
      expect(result.record).toBeUndefined()
      expect(result.judging).toEqual(cost(0.25))
    }))

  it.effect("a call of unknown price makes the judging's cost unknown, never 0", () =>
    Effect.gen(function*() {
      let n = 0
      const result = yield* JudgePanel.ask({ judges: ["a", "b"], reps: 1 }, (j) => j, [], () =>
        Effect.sync(() => ({ decisions: [], judging: cost(n++ === 0 ? 0.25 : null) })))
      expect(result.judging.costUsd).toBeNull()
    }))
})
