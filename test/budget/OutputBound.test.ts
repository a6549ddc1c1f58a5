/**
 * One output bound, in one place (Model.boundedRequest), for what a request is sent with and what
 * the spend cap reserves for it: a request to a priced model that names no bound gets the
 * model's output limit, at most DEFAULT_MAX_OUTPUT_TOKENS (the default when the limit is 0 or
 * less: unknown), on every wire. A judge's reservation is then what its call can cost as sent.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { tasks as discoveryTasks } from "../../providers/competitor-discovery/tasks.ts"
import { judgeRequest as discoveryJudgeRequest } from "../../providers/competitor-discovery/judge.ts"
import { userRequest } from "../../providers/tau2/common/conversation.ts"
import { judgeRequest } from "../../providers/tau2/common/evaluator.ts"
import * as SpendCap from "../../src/budget/SpendCap.ts"
import * as Clients from "../../src/model/Clients.ts"
import { costAt } from "../../src/model/Cost.ts"
import * as Gemini from "../../src/model/Gemini.ts"
import { boundedRequest, DEFAULT_MAX_OUTPUT_TOKENS, defaultOutputBound, type ModelRequest, scripted } from "../../src/model/Model.ts"
import * as Registry from "../../src/model/Registry.ts"

const registry = Effect.runSync(Registry.fixture)
const get = (ref: string) => Either.getOrThrow(Registry.resolveIn(registry, ref))
const sonnet = get("anthropic:claude-sonnet-4-5-20250929")
const gpt5 = get("openai:gpt-5-2025-08-07")

/** The output bound each wire format's body carries for a request. */
const sentBounds = (request: ModelRequest) => ({
  anthropic: Clients.anthropicBody(request, false)["max_tokens"],
  responses: Clients.responsesBody(request, false)["max_output_tokens"],
  chat: Clients.chatBody(request, false)["max_tokens"],
  gemini: (Gemini.bodyOf(request)["generationConfig"] as { maxOutputTokens?: number } | undefined)?.maxOutputTokens
})

/** The most a request can cost as sent: every input token at the dearest input rate, its bound of output. */
const mostItCanCost = (request: ModelRequest, cost: NonNullable<Registry.ModelEntry["cost"]>) =>
  costAt({ ...cost, input: Math.max(cost.input, cost.cache_write ?? 0, cost.cache_read ?? 0) }, {
    inputTokens: SpendCap.inputTokenBound(request),
    outputTokens: request.maxOutputTokens!
  })

describe("the output bound of a request that names none", () => {
  it("is the model's output limit, at most the default; a limit of 0 or less is unknown and gets the default", () => {
    expect(defaultOutputBound(4096)).toBe(4096)
    expect(defaultOutputBound(64_000)).toBe(DEFAULT_MAX_OUTPUT_TOKENS)
    expect(defaultOutputBound(0)).toBe(DEFAULT_MAX_OUTPUT_TOKENS)
    expect(defaultOutputBound(-1)).toBe(DEFAULT_MAX_OUTPUT_TOKENS)
  })

  it("the judges' and the simulated user's requests carry it, every wire sends it, and the cap reserves exactly what it lets the call cost", () => {
    const task = discoveryTasks[0]!
    const requests = [
      judgeRequest(sonnet, [], ["The agent cancelled the reservation."]),
      userRequest(gpt5, "You are a customer.", [], []),
      discoveryJudgeRequest(sonnet, task, [])
    ]
    for (const [request, model] of [[requests[0]!, sonnet], [requests[1]!, gpt5], [requests[2]!, sonnet]] as const) {
      const bound = defaultOutputBound(model.model.limit.output)
      expect(request.maxOutputTokens).toBe(bound)
      expect(sentBounds(request)).toEqual({ anthropic: bound, responses: bound, chat: bound, gemini: bound })
      expect(SpendCap.worstCaseUsd(request, model.model)).toBeCloseTo(mostItCanCost(request, model.model.cost!), 12)
    }
  })

  it("a model of unknown price keeps the server's default; an unbounded request on Anthropic's wire, which needs one, gets the default", () => {
    const unpriced = { limit: { context: 8000, output: 2048 } }
    const request: ModelRequest = { provider: "local", model: "m", system: "", messages: [{ role: "user", content: "hi" }], tools: [] }
    expect(boundedRequest(request, unpriced)).toBe(request)
    expect(boundedRequest(request, undefined)).toBe(request)
    expect(sentBounds(request)).toEqual({ anthropic: DEFAULT_MAX_OUTPUT_TOKENS, responses: undefined, chat: undefined, gemini: undefined })
  })

  it.effect("a judge call that can cost at most $0.13 as sent is sent with $0.50 of a $1 cap left", () =>
    Effect.gen(function*() {
      const model = scripted([{ text: "{}", usage: { inputTokens: 500, outputTokens: 200 } }])
      const cap = yield* SpendCap.make(1, 0.5)
      const capped = SpendCap.wrapModel(cap, model, { priceOf: () => sonnet.model })
      const response = yield* capped.generate(judgeRequest(sonnet, [], ["The agent cancelled the reservation."]))
      expect(response.text).toBe("{}")
    }))

  it.effect("under the cap, a request built without a bound (priced model) is sent with the bound its reservation covers, even for a registry output limit of 0", () =>
    Effect.gen(function*() {
      const entry = { cost: { input: 1, output: 4 }, limit: { context: 1_000_000, output: 0 } }
      const model = scripted([{ text: "ok" }])
      const cap = yield* SpendCap.make(1)
      const capped = SpendCap.wrapModel(cap, model, { priceOf: () => entry })
      const request: ModelRequest = { provider: "p", model: "m", system: "", messages: [{ role: "user", content: "hi" }], tools: [] }
      yield* capped.generate(request)
      expect(model.requests().map((r) => r.maxOutputTokens)).toEqual([DEFAULT_MAX_OUTPUT_TOKENS])
      expect(SpendCap.worstCaseUsd(request, entry)).toBe(SpendCap.worstCaseUsd(model.requests()[0]!, entry))
    }))
})
