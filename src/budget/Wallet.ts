/**
 * A wallet is an Attempt's model budget, acquired as a scoped resource: tokens, calls, dollars
 * and wall time. Every model call of the candidate and of the driver reserves a call before it
 * is made and settles its usage after, from any fiber; the reservation is one atomic update, so
 * concurrent calls can never overspend the call limit. The judge runs outside any wallet.
 */
import { Cause, Clock, Context, Effect, Layer, Option, Ref, Schema } from "effect"
import type { Limits } from "../schema/EnvironmentDef.ts"
import type { Usage } from "../schema/Attempt.ts"

export class BudgetExceeded extends Schema.TaggedError<BudgetExceeded>()("BudgetExceeded", {
  limit: Schema.Literal("tokens", "calls", "dollars", "wall-seconds"),
  allowed: Schema.Number,
  spent: Schema.Number
}) {
  override get message() {
    return `budget exceeded: ${this.limit} ${this.spent} of ${this.allowed}`
  }
}

export interface CallUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWriteTokens: number
  /** List-price dollars of the call; null when its price is unknown. */
  readonly costUsd: number | null
  readonly retries: number
}

interface Spent {
  readonly calls: number
  readonly reserved: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWriteTokens: number
  readonly retries: number
  readonly costUsd: number | null
}

const nothingSpent: Spent = {
  calls: 0,
  reserved: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  retries: 0,
  costUsd: 0
}

export interface Wallet {
  /** Reserve one model call; fails when any limit is already reached. */
  readonly reserve: Effect.Effect<void, BudgetExceeded>
  /** Settle a reserved call with its usage. */
  readonly settle: (usage: CallUsage) => Effect.Effect<void>
  /** Give back a reservation whose call was never made. */
  readonly release: Effect.Effect<void>
  readonly usage: Effect.Effect<Usage>
}
export const Wallet = Context.GenericTag<Wallet>("assay/Wallet")

const tokensOf = (s: Spent) => s.inputTokens + s.outputTokens

export const make = (limits: Limits): Effect.Effect<Wallet> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const state = yield* Ref.make(nothingSpent)
    const elapsed = Effect.map(Clock.currentTimeMillis, (now) => (now - startedAt) / 1000)
    const reserve = Effect.gen(function*() {
      const seconds = yield* elapsed
      if (limits.wallSeconds !== null && seconds >= limits.wallSeconds) {
        return yield* new BudgetExceeded({ limit: "wall-seconds", allowed: limits.wallSeconds, spent: seconds })
      }
      const refusal = yield* Ref.modify(state, (s): [BudgetExceeded | null, Spent] => {
        if (limits.calls !== null && s.calls + s.reserved >= limits.calls) {
          return [new BudgetExceeded({ limit: "calls", allowed: limits.calls, spent: s.calls + s.reserved }), s]
        }
        if (limits.tokens !== null && tokensOf(s) >= limits.tokens) {
          return [new BudgetExceeded({ limit: "tokens", allowed: limits.tokens, spent: tokensOf(s) }), s]
        }
        if (limits.dollars !== null && s.costUsd !== null && s.costUsd >= limits.dollars) {
          return [new BudgetExceeded({ limit: "dollars", allowed: limits.dollars, spent: s.costUsd }), s]
        }
        return [null, { ...s, reserved: s.reserved + 1 }]
      })
      if (refusal) return yield* refusal
    })
    const settle = (u: CallUsage) =>
      Ref.update(state, (s) => ({
        calls: s.calls + 1,
        reserved: Math.max(0, s.reserved - 1),
        inputTokens: s.inputTokens + u.inputTokens,
        outputTokens: s.outputTokens + u.outputTokens,
        cacheReadTokens: s.cacheReadTokens + u.cacheReadTokens,
        cacheWriteTokens: s.cacheWriteTokens + u.cacheWriteTokens,
        retries: s.retries + u.retries,
        costUsd: s.costUsd === null || u.costUsd === null ? null : s.costUsd + u.costUsd
      }))
    const release = Ref.update(state, (s) => ({ ...s, reserved: Math.max(0, s.reserved - 1) }))
    const usage = Effect.gen(function*() {
      const s = yield* Ref.get(state)
      const wallSeconds = yield* elapsed
      return {
        inputTokens: s.inputTokens,
        outputTokens: s.outputTokens,
        cacheReadTokens: s.cacheReadTokens,
        cacheWriteTokens: s.cacheWriteTokens,
        calls: s.calls,
        retries: s.retries,
        costUsd: s.costUsd,
        wallSeconds
      } satisfies Usage
    })
    return { reserve, settle, release, usage }
  })

/** A wallet for one Attempt; the scope that acquires it is the Attempt's. */
export const layer = (limits: Limits): Layer.Layer<Wallet> => Layer.scoped(Wallet, make(limits))

const noCallUsage: CallUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, retries: 0 }

/**
 * Runs a model call under the wallet: reserve, call, settle. A failed call still counts as a
 * call, with what `usageOfFailure` says it spent (its retries, say); nothing by default.
 */
export const metered = <A, E, R>(
  call: Effect.Effect<A, E, R>,
  usageOf: (a: A) => CallUsage,
  usageOfFailure: (e: E) => CallUsage = () => noCallUsage
): Effect.Effect<A, E | BudgetExceeded, R | Wallet> =>
  Effect.flatMap(Wallet, (wallet) =>
    Effect.zipRight(
      wallet.reserve,
      // One uninterruptible region for the three outcomes (a tap, a tapError and an onInterrupt
      // were ~20 fiber steps on every model call): settled with what the call said it cost, with
      // what its failure cost, or released when it was interrupted; a defect leaves it as it was.
      Effect.uninterruptibleMask((restore) =>
        Effect.matchCauseEffect(restore(call), {
          onFailure: (cause) => {
            const failure = Cause.failureOption(cause)
            const settled = Option.isSome(failure)
              ? wallet.settle(usageOfFailure(failure.value))
              : Cause.isInterruptedOnly(cause)
              ? wallet.release
              : Effect.void
            return Effect.zipRight(settled, Effect.failCause(cause))
          },
          onSuccess: (a) => Effect.as(wallet.settle(usageOf(a)), a)
        })
      )
    ))
