import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, Ref, TestClock } from "effect"
import * as Wallet from "../../src/budget/Wallet.ts"
import type { Agent } from "../../src/evaluation/Agent.ts"
import { evaluate } from "../../src/evaluation/evaluate.ts"
import { type EnvironmentDef, noLimits } from "../../src/schema/EnvironmentDef.ts"
import { provider } from "../../providers/ledger/index.ts"

const usage = (inputTokens: number, outputTokens: number, costUsd: number | null = 0.001): Wallet.CallUsage => ({
  inputTokens,
  outputTokens,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd,
  retries: 0
})

describe("a wallet under concurrent calls", () => {
  it.effect("100 concurrent calls against a wallet of 10 calls: exactly 10 run, the rest fail with BudgetExceeded", () =>
    Effect.gen(function*() {
      const wallet = yield* Wallet.make({ ...noLimits, calls: 10 })
      const started = yield* Ref.make(0)
      const refused = yield* Ref.make(0)
      const release = yield* Deferred.make<void>()
      // Each call holds its reservation until released, so all 100 ask while 10 are in flight.
      const call = Effect.zipRight(Ref.update(started, (n) => n + 1), Deferred.await(release))
      const fiber = yield* Effect.forEach(
        Array.from({ length: 100 }, (_, i) => i),
        () =>
          Wallet.metered(call, () => usage(10, 5)).pipe(
            Effect.tapError(() => Ref.update(refused, (n) => n + 1)),
            Effect.either
          ),
        { concurrency: "unbounded" }
      ).pipe(Effect.provideService(Wallet.Wallet, wallet), Effect.fork)
      // Bounded wait for every fiber to have asked (at most 10,000 yields).
      for (let i = 0; i < 10_000 && (yield* Ref.get(refused)) < 90; i++) yield* Effect.yieldNow()
      expect(yield* Ref.get(refused)).toBe(90)
      expect(yield* Ref.get(started)).toBe(10)
      yield* Deferred.succeed(release, undefined)
      const results = yield* Fiber.join(fiber)

      expect(results.filter(Either.isRight)).toHaveLength(10)
      const failures = results.filter(Either.isLeft).map((r) => r.left)
      expect(failures).toHaveLength(90)
      for (const f of failures) expect(f).toMatchObject({ _tag: "BudgetExceeded", limit: "calls", allowed: 10 })
      for (const f of failures) expect(f.spent).toBeLessThanOrEqual(10)
      expect(yield* Ref.get(started)).toBe(10)
      expect(yield* wallet.usage).toMatchObject({ calls: 10, inputTokens: 100, outputTokens: 50 })
      // Spent, not reserved: the eleventh call is refused after settlement too.
      expect(yield* Effect.flip(wallet.reserve)).toMatchObject({ limit: "calls", spent: 10 })
    }))

  it.effect("calls from other fibers debit the same wallet", () =>
    Effect.gen(function*() {
      const wallet = yield* Wallet.Wallet
      const one = Wallet.metered(Effect.succeed("ok"), () => usage(100, 10, 0.5))
      const forked = yield* Effect.fork(Effect.all([one, one, one], { concurrency: "unbounded" }))
      const daemon = yield* Effect.forkDaemon(one)
      yield* Fiber.join(forked)
      yield* Fiber.join(daemon)
      yield* one
      expect(yield* wallet.usage).toMatchObject({ calls: 5, inputTokens: 500, outputTokens: 50, costUsd: 2.5 })
    }).pipe(Effect.provide(Wallet.layer(noLimits))))

  it.effect("a failed call counts as a call, an interrupted one gives its reservation back", () =>
    Effect.gen(function*() {
      const wallet = yield* Wallet.Wallet
      const failing = Wallet.metered(Effect.fail("boom" as const), () => usage(1, 1))
      expect(yield* Effect.flip(failing)).toBe("boom")
      const hang = yield* Effect.fork(Wallet.metered(Effect.never, () => usage(1, 1)))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(hang)
      expect(yield* Wallet.metered(Effect.succeed(1), () => usage(1, 1))).toBe(1)
      expect(yield* wallet.usage).toMatchObject({ calls: 2 })
      expect(yield* Effect.flip(wallet.reserve)).toMatchObject({ limit: "calls" })
    }).pipe(Effect.provide(Wallet.layer({ ...noLimits, calls: 2 }))))

  it.effect("token, dollar and wall-time limits refuse the next call once reached", () =>
    Effect.gen(function*() {
      const tokens = yield* Wallet.make({ ...noLimits, tokens: 100 })
      yield* Wallet.metered(Effect.void, () => usage(90, 20)).pipe(Effect.provideService(Wallet.Wallet, tokens))
      expect(yield* Effect.flip(tokens.reserve)).toMatchObject({ limit: "tokens", allowed: 100, spent: 110 })

      const dollars = yield* Wallet.make({ ...noLimits, dollars: 1 })
      yield* Wallet.metered(Effect.void, () => usage(1, 1, 1.25)).pipe(Effect.provideService(Wallet.Wallet, dollars))
      expect(yield* Effect.flip(dollars.reserve)).toMatchObject({ limit: "dollars", spent: 1.25 })

      const unknownPrice = yield* Wallet.make({ ...noLimits, dollars: 1 })
      yield* Wallet.metered(Effect.void, () => usage(1, 1, null)).pipe(Effect.provideService(Wallet.Wallet, unknownPrice))
      expect((yield* unknownPrice.usage).costUsd).toBeNull()

      const wall = yield* Wallet.make({ ...noLimits, wallSeconds: 5 })
      yield* wall.reserve
      yield* TestClock.adjust("6 seconds")
      expect(yield* Effect.flip(wall.reserve)).toMatchObject({ limit: "wall-seconds" })
    }))
})

/** An agent whose every reply is a metered "model call": it asks for an account, then for another. */
const meteredAgent = (name: string, fanOut = 1): Agent => {
  let turn = 0
  return {
    name,
    reply: () =>
      Effect.gen(function*() {
        turn++
        // Calls made on other fibers (as a driver or a parallel tool planner would) debit the wallet too.
        yield* Effect.all(
          Array.from({ length: fanOut }, () => Wallet.metered(Effect.succeed(null), () => usage(100, 10))),
          { concurrency: "unbounded" }
        )
        return turn < 4
          ? { text: null, toolCalls: [{ id: `c${turn}`, name: "get_account", arguments: { account_id: "ACC-1001" } }] }
          : { text: "Done.", toolCalls: [] }
      })
  }
}

describe("an Attempt's budget", () => {
  const env: EnvironmentDef = Effect.runSync(provider.environments).find((e) => e.task === "ledger-06")!
  const attempt = (agent: Agent, calls: number | null) =>
    evaluate(env, {
      capabilities: provider.capabilities,
      agentDef: { name: agent.name, kind: "llm", model: "test:metered", actionSpace: "tools", prompt: "", limits: { ...noLimits, calls } },
      agent,
      repetition: 0
    })

  it.effect("an Attempt exceeding its call budget ends with budget-exceeded in its verdict, and keeps its transcript", () =>
    Effect.gen(function*() {
      const result = yield* attempt(meteredAgent("metered"), 2)
      expect(result.verdict.ended).toMatchObject({ reason: "budget-exceeded" })
      expect(result.verdict.ended?.detail).toContain("calls")
      expect(result.verdict.reward).toBe(0)
      expect(result.verdict.checks).toEqual({ "ended:budget-exceeded": false })
      expect(result.usage).toMatchObject({ calls: 2, inputTokens: 200, outputTokens: 20 })
      const transcript = (result.output as { transcript: ReadonlyArray<{ role: string }> }).transcript
      expect(transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool"])
    }))

  it.effect("calls on other fibers within the Attempt are debited from its wallet", () =>
    Effect.gen(function*() {
      const within = yield* attempt(meteredAgent("fan-out", 3), null)
      expect(within.verdict.ended).toBeNull()
      expect(within.usage).toMatchObject({ calls: 12, inputTokens: 1200, outputTokens: 120 })
      // The same fan-out against a budget of 10 calls stops in the fourth turn.
      const capped = yield* attempt(meteredAgent("fan-out", 3), 10)
      expect(capped.verdict.ended?.reason).toBe("budget-exceeded")
      expect(capped.usage.calls).toBeLessThanOrEqual(10)
    }))

  it.effect("an Attempt that outlives its wall-time limit ends with timeout", () =>
    Effect.gen(function*() {
      const slow: Agent = { name: "slow", reply: () => Effect.as(Effect.sleep("10 seconds"), { text: "late", toolCalls: [] }) }
      const fiber = yield* Effect.fork(
        evaluate(env, { capabilities: provider.capabilities, agentDef: provider.rosterDef("gold"), agent: slow, repetition: 0, timeoutSeconds: 5 })
      )
      yield* TestClock.adjust("6 seconds")
      const result = yield* Fiber.join(fiber)
      expect(result.verdict.ended?.reason).toBe("timeout")
      expect(result.verdict.ended?.detail).toContain("wall-seconds")
      expect((result.output as { transcript: ReadonlyArray<unknown> }).transcript).toHaveLength(1)
    }))

  it.effect("a failed call settles what it says it spent, its retries say", () =>
    Effect.gen(function*() {
      const wallet = yield* Wallet.Wallet
      yield* Effect.either(Wallet.metered(Effect.fail("gave up"), () => usage(1, 1), () => ({ ...usage(0, 0), retries: 3 })))
      expect(yield* wallet.usage).toMatchObject({ calls: 1, retries: 3, inputTokens: 0 })
    }).pipe(Effect.provide(Wallet.layer(noLimits))))
})
