import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { costOf, sumCosts } from "../../src/model/Cost.ts"
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

  it("a sum of call costs is unknown when any call's cost is unknown", () => {
    expect(sumCosts([0.5, 0.25])).toBe(0.75)
    expect(sumCosts([])).toBe(0)
    expect(sumCosts([0.5, null, 0.25])).toBeNull()
  })
})
