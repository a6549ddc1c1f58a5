/**
 * List-price cost of model calls. A model without a price makes the cost unknown (null), never 0.
 */
import type { Cost, ModelEntry, Rates } from "./Registry.ts"

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

/** The prompt's size as a price tier reads it: input, cache read and cache write tokens. */
export const promptTokens = (usage: TokenUsage): number =>
  usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0)

/** The rates a call whose prompt has `prompt` tokens pays: the highest tier it is over, else the base. */
export const ratesFor = (price: Cost, prompt: number): Rates => {
  let rates: Rates = price
  let size = -1
  for (const t of price.tiers ?? []) {
    if (prompt > t.tier.size && t.tier.size > size) {
      rates = t
      size = t.tier.size
    }
  }
  return rates
}

/**
 * The dearest rates a call of at most `promptBound` prompt tokens can pay, per token of input (of
 * any kind: a cache write may cost more than plain input) and of output, over the base and every
 * tier the bound reaches: what a reservation takes.
 */
export const dearestRates = (price: Cost, promptBound: number): { readonly input: number; readonly output: number } => {
  const reached = [price, ...(price.tiers ?? []).filter((t) => promptBound > t.tier.size)]
  return {
    input: Math.max(...reached.map((r) => Math.max(r.input, r.cache_write ?? r.input, r.cache_read ?? r.input))),
    output: Math.max(...reached.map((r) => r.output))
  }
}

/**
 * Cost in USD at the given price; cache tokens without their own price are billed as input. A
 * price with context tiers bills every token of the call at the rates of the tier its prompt is in.
 */
export const costAt = (price: Cost, usage: TokenUsage): number => {
  const rates = ratesFor(price, promptTokens(usage))
  return usage.inputTokens * perToken(rates.input) +
    usage.outputTokens * perToken(rates.output) +
    (usage.cacheReadTokens ?? 0) * perToken(rates.cache_read ?? rates.input) +
    (usage.cacheWriteTokens ?? 0) * perToken(rates.cache_write ?? rates.input)
}

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
