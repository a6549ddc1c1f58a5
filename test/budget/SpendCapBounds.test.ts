/**
 * The spend cap when the server's usage is not what the cap predicted. The oracles here are
 * independent of the cap's own arithmetic: a model whose reported input is the UTF-8 size of the
 * request's text (a byte-level tokenizer's worst case, which `inputTokenBound` must cover), a
 * model that reports 20,000 output tokens whatever `maxOutputTokens` said, and a ledger that
 * records what it was asked to hold before the model saw the request.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Deferred, Duration, Effect, Either, Fiber, Layer } from "effect"
import * as SpendCap from "../../src/budget/SpendCap.ts"
import * as Live from "../../src/model/Live.ts"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { Model, ModelError, type ModelRequest, type ModelResponse } from "../../src/model/Model.ts"
import * as Registry from "../../src/model/Registry.ts"

// $1 per million input tokens, $4 per million output tokens.
const entry = { cost: { input: 1, output: 4 }, limit: { context: 1_000_000, output: 8192 } }
const priceOf = () => entry
const usd = (input: number, output: number) => (input * entry.cost.input + output * entry.cost.output) / 1_000_000

const requestOf = (text: string, maxOutputTokens = 8192): ModelRequest => ({
  provider: "p",
  model: "m",
  system: "You are terse.",
  messages: [{ role: "user", content: text }],
  tools: [],
  maxOutputTokens
})

/** The text a tokenizer sees: system prompt and message contents, nothing of the cap's measure. */
const textBytes = (r: ModelRequest): number =>
  Buffer.byteLength(r.system ?? "", "utf8") +
  r.messages.reduce((n, m) => n + Buffer.byteLength(typeof m.content === "string" ? m.content : JSON.stringify(m.content), "utf8"), 0)

const answer = (r: ModelRequest, inputTokens: number, outputTokens: number): ModelResponse => ({
  text: "ok",
  toolCalls: [],
  usage: { inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0 },
  finishReason: "stop",
  model: r.model
})

/** One token per byte of text in, every allowed token out: an honest server's largest bill. */
const byteModel: Model = {
  generate: (r) => Effect.as(Effect.sleep(Duration.millis(2)), answer(r, textBytes(r), r.maxOutputTokens ?? 0))
}

describe("the cap's worst case covers an honest server's bill", () => {
  // 10 B to 300 KB of text, ASCII and multi-byte: the bill grows with the request, so must the reservation.
  const sizes = [10, 1_000, 40_000, 300_000]
  const prompts = sizes.flatMap((n) => ["x".repeat(n), "é".repeat(Math.ceil(n / 2)), "漢".repeat(Math.ceil(n / 3))])

  it.live("prompts of very different sizes under a cap: no call costs more than it reserved, and the total stays within the cap", () =>
    Effect.gen(function*() {
      const bills = prompts.map((p) => usd(textBytes(requestOf(p)), 8192))
      // Room for about half of the calls: some are refused, none passes the cap.
      const capUsd = bills.reduce((a, b) => a + b, 0) / 2
      const cap = yield* SpendCap.make(capUsd)
      const model = SpendCap.wrapModel(cap, byteModel, { priceOf })
      const results = yield* Effect.forEach(prompts, (p) => Effect.either(model.generate(requestOf(p))), { concurrency: 8 })
      const answered = results.flatMap((r, i) => (r._tag === "Right" ? [bills[i]!] : []))
      expect(answered.length).toBeGreaterThan(0)
      expect(answered.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(capUsd)
      const state = yield* cap.state
      expect(state.overshoots).toBe(0)
      expect(state.overshotBy).toEqual([])
    }))

  it("each prompt's worst case is at least what a one-token-per-byte server bills for it", () => {
    for (const p of prompts) {
      const r = requestOf(p)
      expect(SpendCap.worstCaseUsd(r, entry)!).toBeGreaterThanOrEqual(usd(textBytes(r), 8192))
    }
  })
})

describe("a server that breaks max_output_tokens", () => {
  /** Reports 20,000 output tokens whatever was asked (and an honest input). */
  const liar = (sent: { n: number; usd: number }): Model => ({
    generate: (r) =>
      Effect.gen(function*() {
        sent.n++
        yield* Effect.sleep(Duration.millis(5))
        sent.usd += usd(textBytes(r), 20_000)
        return answer(r, textBytes(r), 20_000)
      })
  })

  it.live("50 calls at once against a cap of ten reservations: what it answered never passes the cap, the excess is charged and the model named", () =>
    Effect.gen(function*() {
      const sent = { n: 0, usd: 0 }
      const request = requestOf("How much is left?")
      const reservation = SpendCap.worstCaseUsd(request, entry)!
      const capUsd = reservation * 10
      const cap = yield* SpendCap.make(capUsd)
      const model = SpendCap.wrapModel(cap, liar(sent), { priceOf })
      const results = yield* Effect.forEach(Array.from({ length: 50 }), () => Effect.either(model.generate(request)), { concurrency: 50 })
      expect(sent.usd).toBeLessThanOrEqual(capUsd)
      // At 20,000 / 8,192 tokens a call, four answers fit where ten reservations would.
      expect(sent.n).toBeGreaterThanOrEqual(3)
      expect(results.filter((r) => r._tag === "Left").every((r) => r._tag === "Left" && r.left.reason === "spend-cap")).toBe(true)
      const state = yield* cap.state
      expect(state.spentUsd).toBeCloseTo(sent.usd, 12)
      expect(state.overshoots).toBe(sent.n)
      expect(state.overshootUsd).toBeCloseTo(sent.usd - sent.n * reservation, 12)
      expect(state.overshotBy).toEqual(["p:m"])
    }))
})

describe("the ledger a run writes before it sends", () => {
  /** A ledger in memory: what is held, and what the model saw held when it was called. */
  const memoryLedger = () => {
    const held = new Map<string, number>()
    let next = 0
    const ledger: SpendCap.Ledger = {
      reserve: ({ usd }) => Effect.sync(() => {
        const id = `r${++next}`
        held.set(id, usd)
        return id
      }),
      release: (id) => Effect.sync(() => void held.delete(id))
    }
    return { held, ledger }
  }

  it.live("a call's worst case is written before the model sees it; its spend row settles it; a failed call's is removed", () =>
    Effect.gen(function*() {
      const { held, ledger } = memoryLedger()
      const seenHeld: Array<number> = []
      const settledIds: Array<string | undefined> = []
      let fail = false
      const inner: Model = {
        generate: (r) =>
          Effect.suspend(() => {
            seenHeld.push(held.size)
            return fail ? Effect.fail(new ModelError({ provider: "p", model: "m", reason: "server-error", status: 500, detail: "boom" })) : Effect.succeed(answer(r, 10, 10))
          })
      }
      const cap = yield* SpendCap.make(null)
      const model = SpendCap.wrapModel(cap, inner, {
        priceOf,
        ledger,
        onSpend: (spend) =>
          Effect.sync(() => {
            settledIds.push(spend.reservation)
            if (spend.reservation !== undefined) held.delete(spend.reservation)
          })
      })
      yield* model.generate(requestOf("hello"))
      expect(seenHeld).toEqual([1])
      expect(settledIds).toEqual(["r1"])
      expect(held.size).toBe(0)
      fail = true
      yield* Effect.flip(model.generate(requestOf("hello")))
      expect(seenHeld).toEqual([1, 1])
      expect(held.size).toBe(0)
    }))

  it.live("a call interrupted in flight is charged its reservation, and its ledger row stays", () =>
    Effect.gen(function*() {
      const { held, ledger } = memoryLedger()
      const reached = yield* Deferred.make<void>()
      const inner: Model = { generate: () => Effect.zipRight(Deferred.succeed(reached, undefined), Effect.never) }
      const request = requestOf("hello")
      const worst = SpendCap.worstCaseUsd(request, entry)!
      const cap = yield* SpendCap.make(worst * 3)
      const model = SpendCap.wrapModel(cap, inner, { priceOf, ledger })
      const fiber = yield* Effect.fork(model.generate(request))
      yield* Deferred.await(reached)
      yield* Fiber.interrupt(fiber)
      const state = yield* cap.state
      expect(state.reservedUsd).toBe(0)
      expect(state.spentUsd).toBeCloseTo(worst, 12)
      expect([...held.values()]).toEqual([worst])
    }))
})

describe("through the live client against a loopback server whose reported input grows with the request", () => {
  const registry = Effect.runSync(Registry.fixture)
  const resolved = Registry.resolveIn(registry, "openai:gpt-4o-mini")
  const mini = Either.getOrThrow(resolved).model
  const live = Live.layerNode.pipe(Layer.provide(Registry.layer))
  const withEnv = (env: Record<string, string>) => Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

  it.scopedLive("prompts of 10 B to 300 KB under a cap: no call's reported usage passes its reservation, and what the server answered stays within the cap", () =>
    Effect.gen(function*() {
      // No usage scripted: the server reports one input token per four characters of the body it received.
      const server = yield* LoopbackServer.start([{ repeat: true, text: "ok" }])
      const prompts = [10, 1_000, 40_000, 300_000].flatMap((n) => ["x".repeat(n), "漢".repeat(Math.ceil(n / 3))])
      const requests = prompts.map((p): ModelRequest => ({ ...requestOf(p, 64), provider: "openai", model: mini.id }))
      const worst = requests.map((r) => SpendCap.worstCaseUsd(r, mini)!)
      const capUsd = worst.reduce((a, b) => a + b, 0) * 0.6
      const cap = yield* SpendCap.make(capUsd)
      const inner = Context.get(yield* Layer.build(live), Model)
      const model = SpendCap.wrapModel(cap, inner, { priceOf: () => mini })
      yield* Effect.forEach(requests, (r) => Effect.either(model.generate(r)), { concurrency: 4 }).pipe(withEnv({ OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" }))
      const answered = server.requests().filter((r) => r.status === 200 && r.usage !== null)
      expect(answered.length).toBeGreaterThan(1)
      // The server's input grew with the request: the largest prompt reported thousands of tokens.
      expect(Math.max(...answered.map((r) => r.usage!.input))).toBeGreaterThan(10_000)
      const answeredUsd = answered.reduce((sum, r) => sum + (r.usage!.input * mini.cost!.input + r.usage!.output * mini.cost!.output) / 1e6, 0)
      expect(answeredUsd).toBeLessThanOrEqual(capUsd)
      expect((yield* cap.state).overshoots).toBe(0)
    }), 60_000)
})
