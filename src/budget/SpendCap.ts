/**
 * The experiment's wallet, the spend cap (`--max-usd`): every model call of a run (candidate,
 * simulated user, judge) reserves its worst case before it is sent and settles what it cost
 * after, so the cap holds at any parallelism. The reservation is one atomic transaction: however
 * many calls are in flight, what is spent plus what is reserved never passes the cap. A call that
 * cannot reserve even once the calls in flight have settled is not sent; it fails with
 * `SpendCapReached`, which ends its cell as skipped (to run later with a larger cap), never as a
 * model failure.
 *
 * A call whose price is unknown reserves nothing and is not bounded by the cap: its cost is
 * unknown, never 0, and the report says so.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Schema, STM, TRef } from "effect"
import type { ModelRequest, ModelResponse } from "../model/Model.ts"
import { costOf } from "../model/Cost.ts"
import type { Model } from "../model/Model.ts"
import type { ModelEntry } from "../model/Registry.ts"
import * as Tracing from "../observability/Tracing.ts"

export class SpendCapReached extends Schema.TaggedError<SpendCapReached>()("SpendCapReached", {
  capUsd: Schema.Number,
  spentUsd: Schema.Number,
  reservedUsd: Schema.Number,
  /** The worst case of the call that was not sent. */
  neededUsd: Schema.Number
}) {
  override get message() {
    return `spend cap: a call of up to $${this.neededUsd.toFixed(4)} was not sent ($${this.spentUsd.toFixed(4)} spent, $${
      this.reservedUsd.toFixed(4)
    } reserved, cap $${this.capUsd})`
  }
}

export interface CapState {
  readonly capUsd: number | null
  /** Settled spend at list price, earlier runs of the experiment included. */
  readonly spentUsd: number
  readonly reservedUsd: number
  /** Calls whose price is unknown (not bounded by the cap). */
  readonly unknownCalls: number
  /** Calls not sent because they could not reserve. */
  readonly refused: number
}

export interface SpendCap {
  /** Reserve `usd`; fails, reserving nothing, when spent + reserved + usd would pass the cap. */
  readonly reserve: (usd: number) => Effect.Effect<void, SpendCapReached>
  /** Settle a reservation with what the call cost (null: unknown); the rest is released. */
  readonly settle: (reservedUsd: number, costUsd: number | null) => Effect.Effect<void>
  /** Spend that was not metered per call (an agent CLI's run): counted, never refused. */
  readonly charge: (usd: number) => Effect.Effect<void>
  readonly state: Effect.Effect<CapState>
}

/**
 * A cap of `capUsd` (null: none) over an experiment that has already spent `spentBefore`. A call
 * that would fit once the calls in flight settle waits for them (an STM retry: it wakes when the
 * state changes); a call that could not fit even then is refused at once.
 */
export const make = (capUsd: number | null, spentBefore = 0): Effect.Effect<SpendCap> =>
  Effect.map(
    TRef.make<CapState>({ capUsd, spentUsd: spentBefore, reservedUsd: 0, unknownCalls: 0, refused: 0 }).pipe(STM.commit),
    (state): SpendCap => ({
      reserve: (usd) =>
        STM.gen(function*() {
          const s = yield* TRef.get(state)
          if (s.capUsd === null) return null
          if (s.spentUsd + usd > s.capUsd) {
            yield* TRef.set(state, { ...s, refused: s.refused + 1 })
            return new SpendCapReached({ capUsd: s.capUsd, spentUsd: s.spentUsd, reservedUsd: s.reservedUsd, neededUsd: usd })
          }
          if (s.spentUsd + s.reservedUsd + usd > s.capUsd) return yield* STM.retry
          yield* TRef.set(state, { ...s, reservedUsd: s.reservedUsd + usd })
          return null
        }).pipe(STM.commit, Effect.flatMap((refusal) => (refusal === null ? Effect.void : Effect.fail(refusal)))),
      settle: (reservedUsd, costUsd) =>
        TRef.update(state, (s) => ({
          ...s,
          // Floating sums may leave a hair below zero; a reservation is never negative.
          reservedUsd: Math.max(0, s.reservedUsd - reservedUsd),
          spentUsd: s.spentUsd + (costUsd ?? 0),
          unknownCalls: s.unknownCalls + (costUsd === null ? 1 : 0)
        })).pipe(STM.commit),
      charge: (usd) => TRef.update(state, (s) => ({ ...s, spentUsd: s.spentUsd + usd })).pipe(STM.commit),
      state: TRef.get(state).pipe(STM.commit)
    })
  )

// ---------------------------------------------------------------------------------------------
// A call's worst case

/**
 * An upper bound of a request's input tokens: its UTF-8 bytes (a token is at least one byte in
 * the byte-level tokenizers providers use), plus a margin per message for the chat template.
 */
export const inputTokenBound = (request: ModelRequest): number =>
  Buffer.byteLength(JSON.stringify({ system: request.system, messages: request.messages, tools: request.tools }), "utf8") +
  16 * (request.messages.length + 1) +
  64

/** The most a request can cost at list price; null when the model's price is unknown. */
export const worstCaseUsd = (request: ModelRequest, entry: Pick<ModelEntry, "cost" | "limit"> | undefined): number | null => {
  if (entry?.cost === undefined) return null
  const price = entry.cost
  // Every input token at the dearest input rate (a cache write may cost more than plain input).
  const inputRate = Math.max(price.input, price.cache_write ?? price.input, price.cache_read ?? price.input)
  const output = request.maxOutputTokens ?? entry.limit.output
  return (inputTokenBound(request) * inputRate + output * price.output) / 1_000_000
}

/** What one call through the cap cost, for the store (written as each call completes). */
export interface CallSpend {
  readonly provider: string
  readonly model: string
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWriteTokens: number
  readonly costUsd: number | null
}

export interface WrapOptions {
  /** The registry entry of a request's model (its price and output limit); undefined: unknown price. */
  readonly priceOf: (provider: string, model: string) => Pick<ModelEntry, "cost" | "limit"> | undefined
  /** Called as each call completes with what it cost, before its result is returned. */
  readonly onSpend?: (spend: CallSpend) => Effect.Effect<void>
}

/**
 * The Model service under the cap: reserve the call's worst case, send it, settle what it cost
 * (from the server's usage at list price) and release the rest. A call that was interrupted or
 * failed settles at 0: providers do not bill a failed request.
 */
export const wrapModel = (cap: SpendCap, inner: Model, options: WrapOptions): Model => ({
  generate: (request) =>
    Effect.gen(function*() {
      const entry = options.priceOf(request.provider, request.model)
      const worst = worstCaseUsd(request, entry)
      const reserved = worst ?? 0
      if (worst !== null) yield* cap.reserve(worst)
      const spendOf = (response: ModelResponse): CallSpend => ({
        provider: request.provider,
        model: request.model,
        inputTokens: response.usage.inputTokens,
        outputTokens: response.usage.outputTokens,
        cacheReadTokens: response.usage.cacheReadTokens,
        cacheWriteTokens: response.usage.cacheWriteTokens,
        costUsd: entry === undefined ? null : costOf(entry, response.usage)
      })
      return yield* inner.generate(request).pipe(
        Effect.tap((response) => {
          const spend = spendOf(response)
          return Effect.zipRight(cap.settle(reserved, spend.costUsd), options.onSpend ? options.onSpend(spend) : Effect.void).pipe(
            Effect.zipRight(Tracing.annotateModelCost(spend.costUsd))
          )
        }),
        Effect.onError(() => cap.settle(reserved, 0))
      )
    })
})

// ---------------------------------------------------------------------------------------------
// A wallet shared by a cluster's workers

/**
 * The same wallet kept in a SQL row (Postgres: `assay run --cluster`), so that every worker's
 * calls reserve from one cap. A reservation is one conditional UPDATE: it adds to `reserved_usd`
 * only while spent + reserved + the call's worst case stays within the cap, so two workers
 * cannot both take the last dollars. A call that would fit once calls in flight settle polls until
 * they do. A worker that dies leaves its reservations in place: the cap counts them as spent,
 * which may stop a run early but never lets it pass the cap. Database errors are defects here: a
 * wallet that cannot be read must not let a call through.
 */
export const makeShared = (sql: SqlClient.SqlClient, walletId: string, capUsd: number | null, spentBefore: number): Effect.Effect<SpendCap> =>
  Effect.gen(function*() {
    const local = yield* make(null, 0)
    if (capUsd === null) return yield* make(null, spentBefore)
    yield* sql`CREATE TABLE IF NOT EXISTS wallets (id TEXT PRIMARY KEY, cap_usd DOUBLE PRECISION NOT NULL,
      spent_usd DOUBLE PRECISION NOT NULL, reserved_usd DOUBLE PRECISION NOT NULL, refused INTEGER NOT NULL)`.pipe(
      // Two workers creating it at once: one of them meets the other's table.
      Effect.retry({ times: 3 })
    )
    yield* sql`INSERT INTO wallets (id, cap_usd, spent_usd, reserved_usd, refused) VALUES (${walletId}, ${capUsd}, ${spentBefore}, 0, 0)
      ON CONFLICT (id) DO NOTHING`
    const row = sql<{ cap_usd: number; spent_usd: number; reserved_usd: number; refused: number }>`
      SELECT cap_usd, spent_usd, reserved_usd, refused FROM wallets WHERE id = ${walletId}`.pipe(Effect.map((rows) => rows[0]!))
    const reserve = (usd: number): Effect.Effect<void, SpendCapReached> =>
      Effect.gen(function*() {
        for (;;) {
          const taken = yield* sql`UPDATE wallets SET reserved_usd = reserved_usd + ${usd}
            WHERE id = ${walletId} AND spent_usd + reserved_usd + ${usd} <= cap_usd RETURNING id`.pipe(Effect.orDie)
          if (taken.length > 0) return
          const s = yield* Effect.orDie(row)
          if (s.spent_usd + usd > s.cap_usd) {
            yield* sql`UPDATE wallets SET refused = refused + 1 WHERE id = ${walletId}`.pipe(Effect.orDie)
            return yield* new SpendCapReached({ capUsd: s.cap_usd, spentUsd: s.spent_usd, reservedUsd: s.reserved_usd, neededUsd: usd })
          }
          yield* Effect.sleep("100 millis")
        }
      })
    return {
      reserve,
      settle: (reservedUsd, costUsd) =>
        Effect.zipRight(
          sql`UPDATE wallets SET reserved_usd = GREATEST(0, reserved_usd - ${reservedUsd}), spent_usd = spent_usd + ${costUsd ?? 0}
            WHERE id = ${walletId}`.pipe(Effect.orDie),
          costUsd === null ? local.settle(0, null) : Effect.void
        ),
      charge: (usd) => sql`UPDATE wallets SET spent_usd = spent_usd + ${usd} WHERE id = ${walletId}`.pipe(Effect.asVoid, Effect.orDie),
      state: Effect.gen(function*() {
        const s = yield* Effect.orDie(row)
        const mine = yield* local.state
        return { capUsd: s.cap_usd, spentUsd: s.spent_usd, reservedUsd: s.reserved_usd, unknownCalls: mine.unknownCalls, refused: s.refused }
      })
    } satisfies SpendCap
  }).pipe(Effect.orDie)
