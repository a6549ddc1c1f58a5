/**
 * tau2's NL assertions with a second judge and repetitions (src/evaluation/JudgePanel.ts): the
 * first judge's first answer grades; every answer is kept in the verdict for the report.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as JudgePanel from "../../../src/evaluation/JudgePanel.ts"
import { evaluate } from "../../../src/evaluation/evaluate.ts"
import type { ModelRequest } from "../../../src/model/Clients.ts"
import type { JudgeCall } from "../../../providers/tau2/common/evaluator.ts"
import { makeCapabilities, provider } from "../../../providers/tau2/retail/index.ts"

const environments = await Effect.runPromise(provider.environments)

describe("tau2 NL assertions judged by two judges, each asked twice", () => {
  it.effect("the first judge's first answer grades; both judges' answers, every time, are kept in the verdict and all four calls are judging", () =>
    Effect.gen(function*() {
      // Task 36 has two NL assertions.
      const env = JudgePanel.withPanel(environments.find((e) => e.task === "36")!, { judges: ["openai:gpt-4o-mini", "openai:gpt-4.1-mini"], reps: 2 })
      const requests: Array<ModelRequest> = []
      const saying = (request: ModelRequest): ReadonlyArray<boolean> => {
        const before = requests.filter((r) => r.model === request.model).length
        // A: both met, then (asked again) the second not; B: the first not, both times.
        return request.model.startsWith("gpt-4o-mini") ? (before === 0 ? [true, true] : [true, false]) : [false, true]
      }
      const judge: JudgeCall = (request) =>
        Effect.sync(() => {
          const met = saying(request)
          requests.push(request)
          return {
            text: JSON.stringify({ results: met.map((m) => ({ reasoning: "r", metExpectation: m })) }),
            toolCalls: [],
            usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
            finishReason: "stop" as const,
            model: request.model
          }
        })
      const agent = yield* provider.scripted("gold", env)
      const attempt = yield* evaluate(env, { capabilities: makeCapabilities({ judge }), agentDef: provider.rosterDef("gold"), agent, repetition: 0 })
      expect(requests.map((r) => r.model)).toEqual(["gpt-4o-mini-2024-07-18", "gpt-4o-mini-2024-07-18", "gpt-4.1-mini-2025-04-14", "gpt-4.1-mini-2025-04-14"])
      // The same request of each judge, but for the model it names.
      expect(new Set(requests.map((r) => JSON.stringify({ ...r, model: "" }))).size).toBe(1)
      expect(attempt.verdict).toMatchObject({ reward: 1, checks: { "nl:0": true, "nl:1": true }, trust: "judge" })
      expect(attempt.judging).toMatchObject({ calls: 4, inputTokens: 400, outputTokens: 40 })
      expect(JudgePanel.recordOf(attempt.verdict.details)).toEqual({
        judges: ["openai:gpt-4o-mini-2024-07-18", "openai:gpt-4.1-mini-2025-04-14"],
        reps: 2,
        inputs: [
          { input: "nl:0", decisions: [[true, true], [false, false]] },
          { input: "nl:1", decisions: [[true, false], [true, true]] }
        ]
      })
    }))
})
