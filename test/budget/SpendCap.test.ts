/**
 * The experiment's wallet: the spend cap holds at any parallelism, because every call reserves
 * its worst case before it is sent.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Ref } from "effect"
import * as SpendCap from "../../src/budget/SpendCap.ts"
import type { Model, ModelRequest, ModelResponse } from "../../src/model/Model.ts"

// $1 per million tokens in and out, 100 output tokens at most.
const entry = { cost: { input: 1, output: 1 }, limit: { context: 100_000, output: 100 } }
const request: ModelRequest = {
  provider: "p",
  model: "m",
  system: "You are terse.",
  messages: [{ role: "user", content: "hello" }],
  tools: [],
  maxOutputTokens: 100
}
const worst = SpendCap.worstCaseUsd(request, entry)!

/** Waits (yielding, never sleeping) until `fiber` is suspended: a call waiting to reserve. */
const untilSuspended = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) =>
  Effect.repeat(Effect.zipRight(Effect.yieldNow(), Fiber.status(fiber)), { until: (status) => status._tag === "Suspended" })

/** A model whose every call costs exactly its worst case, counting what reached it. */
const exactModel = (sent: Ref.Ref<number>, latency = Duration.millis(5)): Model => ({
  generate: (r) =>
    Effect.gen(function*() {
      yield* Ref.update(sent, (n) => n + 1)
      yield* Effect.sleep(latency)
      return {
        text: "ok",
        toolCalls: [],
        usage: { inputTokens: SpendCap.inputTokenBound(r), outputTokens: r.maxOutputTokens ?? 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
        finishReason: "stop",
        model: r.model
      } satisfies ModelResponse
    })
})

describe("the spend cap", () => {
  it.live("100 concurrent calls against a cap of ten calls' cost: exactly 10 are sent, the rest refused", () =>
    Effect.gen(function*() {
      const sent = yield* Ref.make(0)
      const cap = yield* SpendCap.make(worst * 10)
      const model = SpendCap.wrapModel(cap, exactModel(sent), { priceOf: () => entry })
      const results = yield* Effect.forEach(Array.from({ length: 100 }), () => Effect.either(model.generate(request)), { concurrency: 100 })
      expect(yield* Ref.get(sent)).toBe(10)
      expect(results.filter((r) => r._tag === "Right")).toHaveLength(10)
      const refused = results.filter((r) => r._tag === "Left")
      expect(refused).toHaveLength(90)
      expect(refused.every((r) => r._tag === "Left" && r.left.reason === "spend-cap")).toBe(true)
      const state = yield* cap.state
      expect(state.spentUsd).toBeCloseTo(worst * 10, 12)
      expect(state.spentUsd).toBeLessThanOrEqual(worst * 10 * (1 + 1e-12))
      expect(state.reservedUsd).toBeCloseTo(0, 12)
    }))

  it.live("a call that fits once the calls in flight settle waits for them instead of being refused", () =>
    Effect.gen(function*() {
      const sent = yield* Ref.make(0)
      // Room for two calls' worst case, one in flight at a time; each costs a tenth of its worst.
      const cheap: Model = {
        generate: (r) =>
          Effect.map(exactModel(sent, Duration.millis(20)).generate(r), (res) => ({
            ...res,
            usage: { ...res.usage, inputTokens: 1, outputTokens: 1 }
          }))
      }
      const cap = yield* SpendCap.make(worst * 1.5)
      const model = SpendCap.wrapModel(cap, cheap, { priceOf: () => entry })
      const results = yield* Effect.forEach(Array.from({ length: 5 }), () => Effect.either(model.generate(request)), { concurrency: 5 })
      expect(results.every((r) => r._tag === "Right")).toBe(true)
      expect(yield* Ref.get(sent)).toBe(5)
    }))

  it.live("a call that cannot fit even with nothing in flight is refused at once and nothing is sent", () =>
    Effect.gen(function*() {
      const sent = yield* Ref.make(0)
      const cap = yield* SpendCap.make(worst / 2)
      const model = SpendCap.wrapModel(cap, exactModel(sent), { priceOf: () => entry })
      const error = yield* Effect.flip(model.generate(request))
      expect(error.reason).toBe("spend-cap")
      expect(error.message).toContain("spend cap")
      expect(yield* Ref.get(sent)).toBe(0)
    }))

  it.live("what earlier runs spent counts: a cap already reached sends nothing", () =>
    Effect.gen(function*() {
      const sent = yield* Ref.make(0)
      const cap = yield* SpendCap.make(1, 1)
      const model = SpendCap.wrapModel(cap, exactModel(sent), { priceOf: () => entry })
      expect((yield* Effect.flip(model.generate(request))).reason).toBe("spend-cap")
      expect(yield* Ref.get(sent)).toBe(0)
    }))

  it.live("a call of unknown price is not bounded by the cap, and counts as unknown, never as $0", () =>
    Effect.gen(function*() {
      const sent = yield* Ref.make(0)
      const cap = yield* SpendCap.make(0)
      const spends: Array<SpendCap.CallSpend> = []
      const model = SpendCap.wrapModel(cap, exactModel(sent), { priceOf: () => undefined, onSpend: (s) => Effect.sync(() => spends.push(s)) })
      yield* model.generate(request)
      expect(yield* Ref.get(sent)).toBe(1)
      expect(spends).toHaveLength(1)
      expect(spends[0]!.costUsd).toBeNull()
      expect((yield* cap.state).unknownCalls).toBe(1)
    }))

  it.live("an interrupted call is charged its reservation: it may have been answered and billed", () =>
    Effect.gen(function*() {
      const sent = yield* Ref.make(0)
      const cap = yield* SpendCap.make(worst * 1.5)
      const model = SpendCap.wrapModel(cap, exactModel(sent, Duration.seconds(30)), { priceOf: () => entry })
      const fiber = yield* Effect.fork(model.generate(request))
      yield* Effect.sleep(Duration.millis(20))
      expect((yield* cap.state).reservedUsd).toBeCloseTo(worst, 12)
      yield* Fiber.interrupt(fiber)
      expect((yield* cap.state).reservedUsd).toBe(0)
      expect((yield* cap.state).spentUsd).toBeCloseTo(worst, 12)
    }))

  it.live("calls interrupted as another's settling wakes their reservations hold nothing, and a call that fits what is left is then sent", () =>
    Effect.gen(function*() {
      // The first call goes alone (the cap waits for its answer), so the others wait to reserve
      // until it settles; its settling wakes them, and they are interrupted then (a cell's time
      // limit, the run ending), whether or not they have taken their reservation or been sent yet.
      const answer = yield* Deferred.make<void>()
      const firstReached = yield* Deferred.make<void>()
      const sent = yield* Ref.make(0)
      const usage = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }
      const inner: Model = {
        generate: (r) =>
          Effect.gen(function*() {
            const n = yield* Ref.getAndUpdate(sent, (k) => k + 1)
            // The later calls stay in flight until interrupted: each sent one is charged its reservation.
            if (n > 0) return yield* Effect.never
            yield* Deferred.succeed(firstReached, undefined)
            yield* Deferred.await(answer)
            return { text: "ok", toolCalls: [], usage, finishReason: "stop", model: r.model } satisfies ModelResponse
          })
      }
      const cap = yield* SpendCap.make(worst * 3)
      const model = SpendCap.wrapModel(cap, inner, { priceOf: () => entry })
      const first = yield* Effect.fork(model.generate(request))
      yield* Deferred.await(firstReached)
      const waiting = yield* Effect.forEach(Array.from({ length: 20 }), () => Effect.fork(model.generate(request)))
      yield* Effect.forEach(waiting, untilSuspended)
      expect((yield* cap.state).reservedUsd).toBe(worst)
      yield* Deferred.succeed(answer, undefined)
      yield* Fiber.join(first)
      yield* Effect.forEach(waiting, Fiber.interrupt)
      const state = yield* cap.state
      expect(state.reservedUsd).toBe(0)
      const inFlight = (yield* Ref.get(sent)) - 1
      expect(inFlight).toBeLessThanOrEqual(2)
      expect(state.spentUsd).toBeCloseTo(2e-6 + inFlight * worst, 12)
      // A call whose worst case is what is left fits only if nothing is still held.
      const left = worst * 3 - state.spentUsd
      const last = { ...request, maxOutputTokens: Math.floor(left * 1e6) - SpendCap.inputTokenBound(request) }
      expect(SpendCap.worstCaseUsd(last, entry)!).toBeLessThanOrEqual(left)
      expect(SpendCap.worstCaseUsd(last, entry)!).toBeGreaterThan(left - worst)
      const answering = SpendCap.wrapModel(cap, exactModel(sent, Duration.zero), { priceOf: () => entry })
      expect((yield* answering.generate(last)).text).toBe("ok")
    }))

  it.live("without a cap every call is sent at once, and what they cost (known and unknown) is still counted", () =>
    Effect.gen(function*() {
      const sent = yield* Ref.make(0)
      const cap = yield* SpendCap.make(null, 0.5)
      expect(cap.bounded).toBe(false)
      const priced = SpendCap.wrapModel(cap, exactModel(sent), { priceOf: () => entry })
      const unpriced = SpendCap.wrapModel(cap, exactModel(sent), { priceOf: () => undefined })
      yield* Effect.all([...Array.from({ length: 20 }, () => priced.generate(request)), unpriced.generate(request)], { concurrency: "unbounded" })
      yield* cap.charge(0.25)
      const state = yield* cap.state
      expect(yield* Ref.get(sent)).toBe(21)
      expect(state).toMatchObject({ capUsd: null, reservedUsd: 0, unknownCalls: 1, refused: 0 })
      expect(state.spentUsd).toBeCloseTo(0.5 + 20 * worst + 0.25, 12)
    }))

  it.live("unreserved (a cell settled after it ends): a call past what the cap has left is sent, not refused, and charged what it cost", () =>
    Effect.gen(function*() {
      const sent = yield* Ref.make(0)
      // Less left than one call's worst case: reserved, it would be refused.
      const cap = yield* SpendCap.make(1, 1 - worst / 2)
      const spends: Array<number | null> = []
      const model = SpendCap.wrapModel(cap, exactModel(sent, Duration.zero), {
        priceOf: () => entry,
        unreserved: true,
        onSpend: (spend) => Effect.sync(() => void spends.push(spend.costUsd))
      })
      expect((yield* model.generate(request)).text).toBe("ok")
      const state = yield* cap.state
      expect(yield* Ref.get(sent)).toBe(1)
      expect(state).toMatchObject({ refused: 0, reservedUsd: 0 })
      expect(state.spentUsd).toBeCloseTo(1 + worst / 2, 12)
      expect(spends).toEqual([expect.closeTo(worst, 12)])

      const reserving = SpendCap.wrapModel(cap, exactModel(sent, Duration.zero), { priceOf: () => entry })
      expect((yield* Effect.either(reserving.generate(request)))._tag).toBe("Left")
      expect(yield* Ref.get(sent)).toBe(1)
    }))
})

describe("a price with a long-context tier", () => {
  // Gemini 2.5 Pro's shape: $1.25 / $10 per million, $2.50 / $15 for a prompt over 200,000 tokens.
  const tiered = {
    cost: { input: 1.25, output: 10, tiers: [{ tier: { type: "context" as const, size: 200_000 }, input: 2.5, output: 15 }] },
    limit: { context: 1_048_576, output: 65_536 }
  }
  const withPrompt = (bytes: number): ModelRequest => ({ ...request, messages: [{ role: "user", content: "x".repeat(bytes) }], maxOutputTokens: 8192 })

  it("a prompt that can pass the tier's size is reserved at the tier's rates, so its reservation covers what it is billed", () => {
    const long = withPrompt(300_000)
    const bound = SpendCap.inputTokenBound(long)
    expect(bound).toBeGreaterThan(200_000)
    // The most such a call is billed: all of its bound of prompt and output at the tier's rates.
    expect(SpendCap.worstCaseUsd(long, tiered)).toBeCloseTo((bound * 2.5 + 8192 * 15) / 1e6, 12)
  })

  it("a prompt that cannot reach the tier is reserved at the base rates", () => {
    const short = withPrompt(1000)
    expect(SpendCap.worstCaseUsd(short, tiered)).toBeCloseTo((SpendCap.inputTokenBound(short) * 1.25 + 8192 * 10) / 1e6, 12)
  })
})
