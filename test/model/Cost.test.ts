import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { costOf, dearestRates, sumCosts } from "../../src/model/Cost.ts"
import * as Registry from "../../src/model/Registry.ts"

const entry = (ref: string) => {
  const result = Effect.runSync(Effect.either(Registry.resolve(ref).pipe(Effect.provide(Registry.layer))))
  if (Either.isLeft(result)) throw result.left
  return result.right.model
}

describe("Cost", () => {
  it("gpt-4o-mini costs its list price: $0.15 per million input, $0.60 per million output", () => {
    expect(costOf(entry("openai:gpt-4o-mini"), { inputTokens: 1_000_000, outputTokens: 0 })).toBeCloseTo(0.15, 12)
    expect(costOf(entry("openai:gpt-4o-mini"), { inputTokens: 1200, outputTokens: 300 })).toBeCloseTo(
      1200 * 0.15e-6 + 300 * 0.6e-6,
      15
    )
  })

  it("cache reads and writes are billed at their own prices (Claude Sonnet 4.5)", () => {
    const cost = costOf(entry("sonnet"), {
      inputTokens: 1000,
      outputTokens: 100,
      cacheReadTokens: 10_000,
      cacheWriteTokens: 2000
    })
    expect(cost).toBeCloseTo(1000 * 3e-6 + 100 * 15e-6 + 10_000 * 0.3e-6 + 2000 * 3.75e-6, 15)
  })

  it("cache writes on a model without a cache-write price are billed as input", () => {
    const withWrites = costOf(entry("gpt-4o"), { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 1_000_000 })
    expect(withWrites).toBeCloseTo(2.5, 12)
  })

  it("a model without a price has unknown cost, never 0", () => {
    expect(costOf(entry("ollama:llama3.1:8b"), { inputTokens: 10, outputTokens: 10 })).toBeNull()
    expect(costOf(entry("ollama:llama3.1:8b"), { inputTokens: 0, outputTokens: 0 })).toBeNull()
  })

  it("Gemini 2.5 Pro bills a prompt over 200,000 tokens at its long-context rates, every token of the call", () => {
    const pro = entry("google:gemini-2.5-pro")
    // At 200,000 prompt tokens: the base rates ($1.25 in, $10 out, $0.125 cache read per million).
    expect(costOf(pro, { inputTokens: 200_000, outputTokens: 1000 })).toBeCloseTo(200_000 * 1.25e-6 + 1000 * 10e-6, 12)
    // Over it: $2.50 in, $15 out, $0.25 cache read, for all of the call's tokens.
    expect(costOf(pro, { inputTokens: 250_000, outputTokens: 8192 })).toBeCloseTo(250_000 * 2.5e-6 + 8192 * 15e-6, 12)
    // Cached prompt tokens count towards the prompt's size.
    expect(costOf(pro, { inputTokens: 150_000, outputTokens: 0, cacheReadTokens: 60_000 })).toBeCloseTo(150_000 * 2.5e-6 + 60_000 * 0.25e-6, 12)
    // A model without tiers is billed at one rate whatever the prompt.
    expect(costOf(entry("google:gemini-2.5-flash"), { inputTokens: 500_000, outputTokens: 0 })).toBeCloseTo(500_000 * 0.3e-6, 12)
  })

  it("a reservation's rates are the dearest of every tier a prompt bound can reach", () => {
    const price = entry("google:gemini-2.5-pro").cost!
    expect(dearestRates(price, 1000)).toEqual({ input: 1.25, output: 10 })
    expect(dearestRates(price, 300_000)).toEqual({ input: 2.5, output: 15 })
    // A cache write dearer than input (Claude) is the input rate a reservation takes.
    expect(dearestRates(entry("sonnet").cost!, 1000)).toEqual({ input: 3.75, output: 15 })
  })

  it("a sum of call costs is unknown when any call's cost is unknown", () => {
    expect(sumCosts([0.5, 0.25])).toBe(0.75)
    expect(sumCosts([])).toBe(0)
    expect(sumCosts([0.5, null, 0.25])).toBeNull()
  })
})
