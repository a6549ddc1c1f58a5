/**
 * List-price cost of model calls. A model without a price makes the cost unknown (null), never 0.
 */
import type { Cost, ModelEntry } from "./Registry.ts"

/**
 * Token counts of one call. The four counts are disjoint: `inputTokens` are the prompt tokens billed
 * at the input price (neither read from nor written to a cache).
 */
export interface TokenUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens?: number | undefined
  readonly cacheWriteTokens?: number | undefined
}

const perToken = (usdPerMillion: number): number => usdPerMillion / 1_000_000

/** Cost in USD at the given price table; cache tokens without their own price are billed as input. */
export const costAt = (price: Cost, usage: TokenUsage): number =>
  usage.inputTokens * perToken(price.input) +
  usage.outputTokens * perToken(price.output) +
  (usage.cacheReadTokens ?? 0) * perToken(price.cache_read ?? price.input) +
  (usage.cacheWriteTokens ?? 0) * perToken(price.cache_write ?? price.input)

/** Cost in USD of one call to `entry`, or null when the registry has no price for it. */
export const costOf = (entry: Pick<ModelEntry, "cost">, usage: TokenUsage): number | null =>
  entry.cost === undefined ? null : costAt(entry.cost, usage)

/** Sum of many calls' costs; any unknown (null) makes the sum unknown. */
export const sumCosts = (costs: Iterable<number | null>): number | null => {
  let total = 0
  for (const cost of costs) {
    if (cost === null) return null
    total += cost
  }
  return total
}

/** Adds two costs where unknown is absorbing. */
export const addCost = (a: number | null, b: number | null): number | null =>
  a === null || b === null ? null : a + b
