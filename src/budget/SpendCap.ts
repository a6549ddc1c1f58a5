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
 *
 * The cap does not trust the server. A call that reports more than it reserved (a server that
 * breaks `max_output_tokens`) is charged in full, counted as an overshoot, and every later
 * reservation is held at the largest ratio of cost to reservation seen, so that what such a server
 * answers still stays within the cap. Until one call has settled, only one call is in flight: the
 * first answer says whether the server keeps to its bounds before a wave of calls trusts it. A
 * call interrupted in flight (its answer may have been billed) is charged its reservation.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Cause, Duration, Effect, Layer, Schedule, Schema, STM, TRef } from "effect"
import { costOf, dearestRates } from "../model/Cost.ts"
import { boundedRequest, defaultOutputBound, Model, ModelError, type ModelRequest, type Usage } from "../model/Model.ts"
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
  /**
   * Of `spentUsd`, the worst cases of calls whose worker died before it could settle them (shared
   * wallets only): counted as spent so that the cap holds whatever those calls cost.
   */
  readonly unsettledUsd: number
  /** Calls whose reported usage cost more than they reserved: charged in full. */
  readonly overshoots: number
  /** What those calls cost beyond their reservations. */
  readonly overshootUsd: number
  /** The largest cost / reservation seen (1 until a call overshoots): later reservations are held at this many times their worst case. */
  readonly overshootFactor: number
  /** The models (`provider:model`) whose calls overshot, in the order first seen. */
  readonly overshotBy: ReadonlyArray<string>
  /** Calls settled so far (answered, failed or interrupted). */
  readonly settled: number
}

/** A cap's state before any call: nothing spent, reserved or seen. */
const initialState = (capUsd: number | null, spentUsd: number): CapState => ({
  capUsd,
  spentUsd,
  reservedUsd: 0,
  unknownCalls: 0,
  refused: 0,
  unsettledUsd: 0,
  overshoots: 0,
  overshootUsd: 0,
  overshootFactor: 1,
  overshotBy: [],
  settled: 0
})

/** Which call settles: named when it overshoots. */
export interface SettledCall {
  readonly provider: string
  readonly model: string
}

/** A reservation's cost above which it overshot (floating sums leave hairs). */
const overshot = (reservedUsd: number, costUsd: number | null): costUsd is number =>
  costUsd !== null && reservedUsd > 0 && costUsd > reservedUsd * (1 + 1e-9)

/** The state after a call settles: spent in full, its reservation released, an overshoot learned. */
const settled = (s: CapState, reservedUsd: number, costUsd: number | null, call: SettledCall | undefined): CapState => {
  const over = overshot(reservedUsd, costUsd)
  const name = call === undefined ? null : `${call.provider}:${call.model}`
  return {
    ...s,
    // Floating sums may leave a hair below zero; a reservation is never negative.
    reservedUsd: Math.max(0, s.reservedUsd - reservedUsd),
    spentUsd: s.spentUsd + (costUsd ?? 0),
    unknownCalls: s.unknownCalls + (costUsd === null ? 1 : 0),
    settled: s.settled + 1,
    ...(over
      ? {
        overshoots: s.overshoots + 1,
        overshootUsd: s.overshootUsd + (costUsd - reservedUsd),
        overshootFactor: Math.max(s.overshootFactor, costUsd / reservedUsd),
        overshotBy: name === null || s.overshotBy.includes(name) ? s.overshotBy : [...s.overshotBy, name]
      }
      : {})
  }
}

export interface SpendCap {
  /** Whether there is a cap: without one a reservation holds nothing, and a call need not price its worst case. */
  readonly bounded: boolean
  /**
   * Reserve `usd`; fails, reserving nothing, when spent + reserved + usd would pass the cap. Run it
   * uninterruptibly, with what settles the reservation installed in the same region (as
   * `wrapModel` does): it can then be interrupted only while it waits, holding nothing, and once
   * it returns the reservation is held. (Interrupted as it returns, a reservation it had taken
   * would be lost with its result, and held for the rest of the run.)
   */
  readonly reserve: (usd: number) => Effect.Effect<void, SpendCapReached>
  /**
   * Settle a reservation with what the call cost (null: unknown), charged in full even past its
   * reservation; the rest is released. `call` names the model should it have overshot.
   */
  readonly settle: (reservedUsd: number, costUsd: number | null, call?: SettledCall) => Effect.Effect<void>
  /** Spend that was not metered per call (an agent CLI's run): counted, never refused. */
  readonly charge: (usd: number) => Effect.Effect<void>
  readonly state: Effect.Effect<CapState>
}

/**
 * A cap of `capUsd` (null: none) over an experiment that has already spent `spentBefore`. A call
 * that would fit once the calls in flight settle waits for them (an STM retry: it wakes when the
 * state changes); a call that could not fit even then is refused at once. Reservations count at
 * `overshootFactor` times their worst case, and the first call goes alone (see above).
 */
export const make = (capUsd: number | null, spentBefore = 0, learned?: { readonly overshootFactor: number }): Effect.Effect<SpendCap> =>
  capUsd === null ? Effect.sync(() => uncapped(spentBefore)) : Effect.map(
    // What an earlier run of the experiment learned of the server: its calls are held at that factor from the start.
    TRef.make<CapState>({ ...initialState(capUsd, spentBefore), overshootFactor: Math.max(1, learned?.overshootFactor ?? 1) }).pipe(STM.commit),
    (state): SpendCap => {
      // Taking the reservation never waits, so it commits with no async boundary after which an
      // interruption could drop its result; the wait is a transaction of its own that takes nothing.
      const take = (usd: number) =>
        STM.gen(function*() {
          const s = yield* TRef.get(state)
          const fit = fitOf(s, usd)
          if (fit === "never") {
            yield* TRef.set(state, { ...s, refused: s.refused + 1 })
            const k = s.overshootFactor
            return new SpendCapReached({ capUsd: s.capUsd ?? 0, spentUsd: s.spentUsd, reservedUsd: s.reservedUsd * k, neededUsd: usd * k })
          }
          if (fit === "wait") return "wait" as const
          yield* TRef.set(state, { ...s, reservedUsd: s.reservedUsd + usd })
          return null
        }).pipe(STM.commit)
      // Wakes when the state changes so that the call fits (or never can); reserves nothing.
      const waitFor = (usd: number) => STM.flatMap(TRef.get(state), (s) => (fitOf(s, usd) === "wait" ? STM.retry : STM.void)).pipe(STM.commit)
      const reserve = (usd: number): Effect.Effect<void, SpendCapReached> =>
        Effect.flatMap(take(usd), (outcome) =>
          outcome === null
            ? Effect.void
            : outcome === "wait"
            ? Effect.zipRight(Effect.interruptible(waitFor(usd)), Effect.suspend(() => reserve(usd)))
            : Effect.fail(outcome))
      return {
        bounded: true,
        reserve,
        settle: (reservedUsd, costUsd, call) => TRef.update(state, (s) => settled(s, reservedUsd, costUsd, call)).pipe(STM.commit),
        charge: (usd) => TRef.update(state, (s) => ({ ...s, spentUsd: s.spentUsd + usd })).pipe(STM.commit),
        state: TRef.get(state).pipe(STM.commit)
      }
    }
  )

/**
 * Whether a call of `usd` fits the cap now, must wait for calls in flight to settle, or can never
 * fit. A server seen to overshoot its bounds by k is expected to again: every hold counts k times.
 * The first call goes alone: its answer shows whether the server keeps to its bounds.
 */
const fitOf = (s: CapState, usd: number): "fits" | "wait" | "never" => {
  if (s.capUsd === null) return "fits"
  const k = s.overshootFactor
  if (s.spentUsd + usd * k > s.capUsd) return "never"
  if (s.settled === 0 && s.reservedUsd > 0) return "wait"
  return s.spentUsd + (s.reservedUsd + usd) * k > s.capUsd ? "wait" : "fits"
}

/**
 * No cap: nothing to reserve or wait for, so no transaction either; the same state as the
 * transactional wallet keeps (what is spent, calls of unknown price). JavaScript runs one
 * fiber step at a time, so each update is whole.
 */
const uncapped = (spentBefore: number): SpendCap => {
  let s: CapState = initialState(null, spentBefore)
  return {
    bounded: false,
    reserve: () => Effect.void,
    settle: (reservedUsd, costUsd, call) =>
      Effect.sync(() => {
        s = settled(s, reservedUsd, costUsd, call)
      }),
    charge: (usd) =>
      Effect.sync(() => {
        s = { ...s, spentUsd: s.spentUsd + usd }
      }),
    state: Effect.sync(() => s)
  }
}

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
  const prompt = inputTokenBound(request)
  // Every input token at the dearest input rate (a cache write may cost more than plain input), of
  // every context tier the prompt can reach (a long prompt is billed at its tier's rates).
  const rates = dearestRates(entry.cost, prompt)
  // What the request is sent with (wrapModel sends `boundedRequest`): the same rule, in one place.
  const output = request.maxOutputTokens ?? defaultOutputBound(entry.limit.output)
  return (prompt * rates.input + output * rates.output) / 1_000_000
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
  /** The ledger's reservation this spend settles (`Ledger.reserve`), to be removed with its writing. */
  readonly reservation?: string
}

/**
 * Where the run's calls are written before they are sent: a call's worst case is in the ledger
 * (committed) before its request leaves, and its spend row replaces it once answered, so a run
 * killed at any point leaves every answered call counted, at its cost or at its worst case.
 */
export interface Ledger {
  /** Writes a call's worst case; its id, once committed. */
  readonly reserve: (call: { readonly provider: string; readonly model: string; readonly usd: number }) => Effect.Effect<string>
  /**
   * Removes a reservation whose call was not billed (never sent, or answered with an HTTP error).
   * One that may have been answered (interrupted in flight, timed out after it was sent) stays.
   */
  readonly release: (id: string) => Effect.Effect<void>
}

export interface WrapOptions {
  /** The registry entry of a request's model (its price and output limit); undefined: unknown price. */
  readonly priceOf: (provider: string, model: string) => Pick<ModelEntry, "cost" | "limit"> | undefined
  /** Called as each call completes with what it cost, before its result is returned. */
  readonly onSpend?: (spend: CallSpend) => Effect.Effect<void>
  /**
   * Told of each call the cap refused (not sent), as the caller gets it: the runner notes its
   * cell's first refusal here, and skips the cell on it whatever the protocol made of the refusal.
   */
  readonly onRefused?: (refusal: ModelError) => void
  /** The ledger reservations are written to before a call is sent (calls of known price). */
  readonly ledger?: Ledger
  /**
   * Send each call without reserving its worst case, and charge what it cost once answered: the
   * calls of a cell the cap admits whole and settles after (an agent CLI's run, whose cost is
   * known only at its end, and its judging). Refusing the judge of a run already paid for would
   * skip the cell, to be run and paid for again; a call interrupted in flight is then uncounted,
   * as the run's own cost is when it is unknown.
   */
  readonly unreserved?: boolean
}

/**
 * A call the cap refused, as the Model service says it: a ModelError whose reason is `spend-cap`
 * (the model module names no budget), its detail the refusal's message.
 */
export const refusedCall = (request: ModelRequest, refusal: SpendCapReached): ModelError =>
  new ModelError({ provider: request.provider, model: request.model, reason: "spend-cap", status: null, sent: false, detail: refusal.message })

/**
 * The Model service under the cap: reserve the call's worst case, send it, settle what it cost
 * (from the server's usage at list price) and release the rest. A call interrupted once handed
 * to the model, or that failed after its request was sent with no HTTP error status (a timeout, a
 * connection lost before the answer was read), is charged its reservation: the vendor may have
 * answered and billed it. A 2xx answer whose content could not be used (tool-call arguments cut
 * off at the output limit) settles at the usage it reported, its spend written as a success's;
 * one whose usage could not be read is charged its reservation. One never sent, or answered with
 * an HTTP error status, settles at 0: providers do not bill those. A call that cannot reserve is not
 * sent: it fails with a ModelError of reason `spend-cap` (`refusedCall`).
 *
 * The reservation and what settles it are taken in one uninterruptible region (only the wait
 * to reserve, holding nothing, and the call itself can be interrupted): a call interrupted as
 * its reservation is taken never leaves it held for the rest of the run.
 */
export const wrapModel = (cap: SpendCap, inner: Model, options: WrapOptions): Model => ({
  generate: (asked) =>
    Effect.suspend(() => {
      const entry = options.priceOf(asked.provider, asked.model)
      // Sent with the output bound its worst case is reserved for, whoever built it.
      const request = boundedRequest(asked, entry)
      const ledger = options.unreserved === true ? undefined : options.ledger
      // Without a cap or a ledger nothing is reserved: the worst case (the request's whole text measured) is not needed.
      const worst = options.unreserved !== true && (cap.bounded || ledger !== undefined) ? worstCaseUsd(request, entry) : null
      const reserved = cap.bounded ? worst ?? 0 : 0
      // The ledger's reservation, once written (an interruption before then leaves none).
      let written: string | undefined
      // Once settled, a failure after (writing the spend row) settles nothing again.
      let settledOnce = false
      // Whether the request was handed to the model: an interruption before then cannot have been billed.
      let handed = false
      const spendOf = (usage: Usage): CallSpend => ({
        provider: request.provider,
        model: request.model,
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        cacheReadTokens: usage.cacheReadTokens,
        cacheWriteTokens: usage.cacheWriteTokens,
        costUsd: entry === undefined ? null : costOf(entry, usage),
        ...(written !== undefined ? { reservation: written } : {})
      })
      // What the call cost, settled and written to the store (its spend row replaces its ledger row).
      const settleAt = (usage: Usage) => {
        settledOnce = true
        const spend = spendOf(usage)
        return Effect.zipRight(cap.settle(reserved, spend.costUsd, request), options.onSpend ? options.onSpend(spend) : Effect.void).pipe(
          Effect.zipRight(Tracing.annotateModelCost(spend.costUsd))
        )
      }
      const send = Effect.suspend(() => {
        handed = true
        return inner.generate(request)
      }).pipe(Effect.tap((response) => settleAt(response.usage)))
      const call = ledger === undefined || worst === null ? send : Effect.zipRight(
        Effect.map(ledger.reserve({ provider: request.provider, model: request.model, usd: worst }), (id) => {
          written = id
        }),
        send
      )
      // Settling nothing reserved at no cost changes nothing: without a reservation the call needs
      // no handler for its interruption (an uninterruptible region on every call); only a failure
      // whose answer reported its usage (it was billed) is settled, and its spend written.
      if (reserved === 0 && ledger === undefined) {
        return Effect.tapError(call, (e) => (e.usage !== undefined && !settledOnce ? settleAt(e.usage) : Effect.void))
      }
      // A failure whose answer reported its usage settles at that cost, its spend written; one
      // that may have been answered and billed otherwise (see `billingOf`) is charged its
      // reservation, and its ledger row stays (a resume counts it); any other was not billed.
      const onFailure = (cause: Cause.Cause<ModelError>) =>
        Effect.suspend(() => {
          if (settledOnce) return Effect.void
          const billing = billingOf(cause, handed)
          return billing === "none"
            ? Effect.zipRight(cap.settle(reserved, 0), written !== undefined && ledger !== undefined ? ledger.release(written) : Effect.void)
            : billing === "reservation"
            ? cap.settle(reserved, reserved)
            : settleAt(billing)
        })
      const reserve = reserved === 0 ? Effect.void : Effect.mapError(cap.reserve(reserved), (refusal) => {
        const refused = refusedCall(request, refusal)
        options.onRefused?.(refused)
        return refused
      })
      return Effect.uninterruptibleMask((restore) => Effect.zipRight(reserve, Effect.onError(restore(call), onFailure)))
    })
})

/**
 * What a call that ended with `cause` was billed: the usage its answer reported (a 2xx whose
 * content could not be used), nothing, or an unknown amount up to its reservation. A vendor
 * finishes (and bills) a request it received whatever the client does: a call interrupted once
 * handed to the model, or that failed after its request was sent (a timeout, a connection lost
 * while waiting for or reading the answer, a 2xx body that could not be read) may have been. One
 * never sent, or answered with an HTTP error status, was not.
 */
const billingOf = (cause: Cause.Cause<ModelError>, handed: boolean): Usage | "none" | "reservation" => {
  if (!handed) return "none"
  if (Cause.isInterruptedOnly(cause)) return "reservation"
  const failure = Cause.failureOption(cause)
  // A defect is no answer of the server's: billed or not is unknown, so counted.
  if (failure._tag === "None") return "reservation"
  const error = failure.value
  if (error.usage !== undefined) return error.usage
  if (error.status !== null && (error.status < 200 || error.status >= 300)) return "none"
  return error.sent === true ? "reservation" : "none"
}

/** The cap as a wrapping layer: the Model below it, under the cap. */
export const layer = (cap: SpendCap, options: WrapOptions): Layer.Layer<Model, never, Model> =>
  Layer.effect(Model, Effect.map(Model, (inner) => wrapModel(cap, inner, options)))

// ---------------------------------------------------------------------------------------------
// A wallet shared by a cluster's workers

/**
 * The same wallet kept in Postgres (`assay run --cluster`), so that every worker's calls reserve
 * from one cap. The wallet's row holds the cap and what is spent; what is reserved is one row per
 * holder (a worker process), stamped by that holder's heartbeat. A reservation is one transaction
 * under the wallet row's lock: holds whose heartbeat is older than `staleAfter` (their worker
 * died) are moved into what is spent, at their worst case, then the call's worst case is added to
 * the caller's hold only while spent + every live hold + it stays within the cap, so two workers
 * cannot both take the last dollars. A dead worker's calls in flight may have been answered (and
 * billed) with no one left to settle them: counting their worst case keeps the cap holding
 * whatever they cost, where freeing them would let the others spend those dollars a second time;
 * the price is budget the cap may not have needed to keep, said as `unsettledUsd`. A call that
 * would fit once calls in flight settle polls until they do. As on one machine, the wallet does
 * not trust the server: its row keeps the largest cost / reservation any worker settled at
 * (`overshoot_factor`; every hold is its worst case times that) and how many calls settled (until
 * one has, one call is in flight across the workers). Database errors are defects here: a
 * wallet that cannot be read must not let a call through.
 *
 * A holder's heartbeat (`heartbeat`) must run for as long as it may hold: a worker forks it for
 * its whole life. Were it late by more than `staleAfter` (15 s; it beats every 3 s), another worker
 * could take that hold's dollars and the cap could pass by what that holder had in flight.
 */
export interface SharedOptions {
  /** Who reserves: one id per process, the same its heartbeat stamps. */
  readonly holder: string
  /** How old a hold's heartbeat may be before its dollars are freed. Default 15 s. */
  readonly staleAfter?: Duration.Duration
}

/**
 * The shared wallet's store failing is a defect of the run (the cap cannot be kept without it); its
 * driver's cause is kept in the message, which an SqlError's own message often lacks.
 */
const walletDefect = (e: { readonly message: string; readonly cause?: unknown }): Error =>
  new Error(`the shared spend cap's store failed: ${e.message}${e.cause === undefined ? "" : `: ${e.cause instanceof Error ? e.cause.message : String(e.cause)}`}`)

export const staleAfterDefault = Duration.seconds(15)

/** The shared wallet of a run: one per run, so a later run of the experiment (a resume) starts a new one. */
export const walletIdOfRun = (runId: string): string => `run:${runId}`

/**
 * A hold smaller than this is what floating sums leave of settled calls (a call's worst case is
 * far larger): not a call in flight.
 */
const residue = 1e-9

/**
 * What dead holders left unsettled on each wallet: the worst cases already counted as spent
 * (`unsettled_usd`), plus the holds still on it whose holder's heartbeat is stale (no call has
 * reserved since, so nobody moved them yet). On a wallet in `over` (its run has finished: every
 * cell returned, so every live call has settled) every hold left counts, stale or not: a worker
 * that died a few seconds before the end would otherwise be missed. Read only; wallets a store has
 * never had (no cluster ran on it) leave nothing. Keyed by wallet id; absent wallets are left out.
 */
export const unsettledOfWallets = (
  sql: SqlClient.SqlClient,
  walletIds: ReadonlyArray<string>,
  over: ReadonlySet<string>,
  staleAfter: Duration.Duration = staleAfterDefault
) =>
  Effect.gen(function*() {
    const out = new Map<string, number>()
    if (walletIds.length === 0) return out
    const made = yield* sql<{ n: number }>`SELECT CASE WHEN to_regclass('wallets') IS NULL OR to_regclass('wallet_holds') IS NULL THEN 0 ELSE 1 END AS n`
    if (Number(made[0]?.n ?? 0) === 0) return out
    const wallets = yield* sql<{ id: string; unsettled_usd: number }>`SELECT id, unsettled_usd FROM wallets WHERE id IN ${sql.in(walletIds)}`
    for (const w of wallets) out.set(w.id, Number(w.unsettled_usd))
    const holds = yield* sql<{ wallet_id: string; reserved_usd: number; stale: boolean }>`SELECT wallet_id, reserved_usd,
        heartbeat_at < clock_timestamp() - make_interval(secs => ${Duration.toSeconds(staleAfter)}) AS stale
      FROM wallet_holds WHERE wallet_id IN ${sql.in(walletIds)} AND reserved_usd > ${residue}`
    for (const h of holds) {
      if (h.stale || over.has(h.wallet_id)) out.set(h.wallet_id, (out.get(h.wallet_id) ?? 0) + Number(h.reserved_usd))
    }
    return out
  })

/** The wallet's tables, made by one process at a time (concurrent CREATE TABLE races on Postgres's catalog). */
export const makeSharedTables = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(4242003)`
    yield* sql`CREATE TABLE IF NOT EXISTS wallets (id TEXT PRIMARY KEY, cap_usd DOUBLE PRECISION NOT NULL,
      spent_usd DOUBLE PRECISION NOT NULL, refused INTEGER NOT NULL)`
    // What dead holders had reserved, counted into spent_usd (a store made before this column gets it).
    yield* sql`ALTER TABLE wallets ADD COLUMN IF NOT EXISTS unsettled_usd DOUBLE PRECISION NOT NULL DEFAULT 0`
    // The largest cost / reservation any worker's call has settled at: every worker's holds are that many times their worst case.
    yield* sql`ALTER TABLE wallets ADD COLUMN IF NOT EXISTS overshoot_factor DOUBLE PRECISION NOT NULL DEFAULT 1`
    // Calls settled on the wallet: until one has, one call is in flight across the workers.
    yield* sql`ALTER TABLE wallets ADD COLUMN IF NOT EXISTS settled INTEGER NOT NULL DEFAULT 0`
    yield* sql`CREATE TABLE IF NOT EXISTS wallet_holds (wallet_id TEXT NOT NULL, holder TEXT NOT NULL,
      reserved_usd DOUBLE PRECISION NOT NULL, heartbeat_at TIMESTAMPTZ NOT NULL, PRIMARY KEY (wallet_id, holder))`
  }).pipe(sql.withTransaction)

/** Stamps `holder`'s holds as alive every `every` (3 s), for as long as it runs (fork it for the holder's life). */
export const heartbeat = (sql: SqlClient.SqlClient, holder: string, every: Duration.Duration = Duration.seconds(3)) =>
  makeSharedTables(sql).pipe(
    Effect.orDieWith(walletDefect),
    Effect.zipRight(
      sql`UPDATE wallet_holds SET heartbeat_at = clock_timestamp() WHERE holder = ${holder}`.pipe(
        // A missed beat is not fatal (the next may pass), but a run of them frees this holder's dollars: said.
        Effect.catchAll((e) => Effect.logWarning(`the spend cap's heartbeat failed: ${e.message}`)),
        Effect.repeat(Schedule.spaced(every))
      )
    ),
    Effect.asVoid
  )

export const makeShared = (
  sql: SqlClient.SqlClient,
  walletId: string,
  capUsd: number | null,
  spentBefore: number,
  options: SharedOptions
): Effect.Effect<SpendCap> =>
  Effect.gen(function*() {
    const local = yield* make(null, 0)
    if (capUsd === null) return yield* make(null, spentBefore)
    const holder = options.holder
    const staleSecs = Duration.toSeconds(options.staleAfter ?? staleAfterDefault)
    yield* makeSharedTables(sql)
    yield* sql`INSERT INTO wallets (id, cap_usd, spent_usd, refused) VALUES (${walletId}, ${capUsd}, ${spentBefore}, 0)
      ON CONFLICT (id) DO NOTHING`
    const live = sql`wallet_id = ${walletId} AND heartbeat_at >= clock_timestamp() - make_interval(secs => ${staleSecs})`
    const held = sql<{ held: number }>`SELECT COALESCE(SUM(reserved_usd), 0) AS held FROM wallet_holds WHERE ${live}`.pipe(
      Effect.map((rows) => Number(rows[0]?.held ?? 0))
    )
    type Outcome = { readonly _tag: "taken"; readonly held: number } | { readonly _tag: "wait" } | { readonly _tag: "refused"; readonly error: SpendCapReached }
    // What each reservation of this holder holds in the wallet (its worst case times the factor
    // then), by the worst case its settle names: released as held, whatever the factor is now.
    const holding = new Map<number, Array<number>>()
    const tryReserve = (face: number): Effect.Effect<Outcome> =>
      Effect.gen(function*() {
        const wallet = { ...(yield* sql<{ cap_usd: number; spent_usd: number; overshoot_factor: number; settled: number }>`SELECT cap_usd, spent_usd,
          overshoot_factor, settled FROM wallets WHERE id = ${walletId} FOR UPDATE`)[0]! }
        const usd = face * Math.max(1, Number(wallet.overshoot_factor))
        const stale = yield* sql<{ usd: number }>`DELETE FROM wallet_holds
          WHERE wallet_id = ${walletId} AND heartbeat_at < clock_timestamp() - make_interval(secs => ${staleSecs})
          RETURNING reserved_usd AS usd`
        const unsettled = stale.reduce((sum, r) => sum + Number(r.usd), 0)
        if (unsettled > 0) {
          yield* sql`UPDATE wallets SET spent_usd = spent_usd + ${unsettled}, unsettled_usd = unsettled_usd + ${unsettled} WHERE id = ${walletId}`
          wallet.spent_usd += unsettled
        }
        const reserved = yield* held
        // The first call goes alone, across the workers: its answer shows whether the server keeps to its bounds.
        const alone = Number(wallet.settled) > 0 || reserved <= residue
        if (alone && wallet.spent_usd + reserved + usd <= wallet.cap_usd) {
          yield* sql`INSERT INTO wallet_holds (wallet_id, holder, reserved_usd, heartbeat_at) VALUES (${walletId}, ${holder}, ${usd}, clock_timestamp())
            ON CONFLICT (wallet_id, holder) DO UPDATE SET reserved_usd = wallet_holds.reserved_usd + ${usd}, heartbeat_at = clock_timestamp()`
          return { _tag: "taken", held: usd } as const
        }
        if (wallet.spent_usd + usd > wallet.cap_usd) {
          yield* sql`UPDATE wallets SET refused = refused + 1 WHERE id = ${walletId}`
          return { _tag: "refused", error: new SpendCapReached({ capUsd: wallet.cap_usd, spentUsd: wallet.spent_usd, reservedUsd: reserved, neededUsd: usd }) } as const
        }
        return { _tag: "wait" } as const
      }).pipe(sql.withTransaction, Effect.orDieWith(walletDefect))
    const reserve = (usd: number): Effect.Effect<void, SpendCapReached> =>
      Effect.gen(function*() {
        for (;;) {
          const outcome = yield* tryReserve(usd)
          if (outcome._tag === "taken") {
            holding.set(usd, [...(holding.get(usd) ?? []), outcome.held])
            return
          }
          if (outcome._tag === "refused") return yield* outcome.error
          // Only the wait may be interrupted (see SpendCap.reserve): a transaction that took a hold always returns it.
          yield* Effect.interruptible(Effect.sleep("100 millis"))
        }
      })
    return {
      bounded: true,
      reserve,
      settle: (reservedUsd, costUsd, call) =>
        Effect.zipRight(
          Effect.gen(function*() {
            const holds = holding.get(reservedUsd)
            const held = holds?.shift() ?? reservedUsd
            if (holds !== undefined && holds.length === 0) holding.delete(reservedUsd)
            // An overshoot raises the factor every worker's later holds are taken at.
            const factor = overshot(reservedUsd, costUsd) ? costUsd / reservedUsd : 1
            // Spend first, then the hold: in between the cap counts the call twice, never not at all.
            yield* sql`UPDATE wallets SET spent_usd = spent_usd + ${costUsd ?? 0}, overshoot_factor = GREATEST(overshoot_factor, ${factor}),
              settled = settled + 1 WHERE id = ${walletId}`
            yield* sql`UPDATE wallet_holds SET reserved_usd = GREATEST(0, reserved_usd - ${held}), heartbeat_at = clock_timestamp()
              WHERE wallet_id = ${walletId} AND holder = ${holder}`
          }).pipe(sql.withTransaction, Effect.orDieWith(walletDefect)),
          // This process's own count of unknown prices and overshoots (the wallet's row has neither).
          local.settle(reservedUsd, costUsd, call)
        ),
      charge: (usd) => sql`UPDATE wallets SET spent_usd = spent_usd + ${usd} WHERE id = ${walletId}`.pipe(Effect.asVoid, Effect.orDieWith(walletDefect)),
      state: Effect.gen(function*() {
        const s = (yield* sql<{ cap_usd: number; spent_usd: number; refused: number; unsettled_usd: number; overshoot_factor: number }>`SELECT cap_usd,
          spent_usd, refused, unsettled_usd, overshoot_factor FROM wallets WHERE id = ${walletId}`)[0]!
        const reserved = yield* held
        const mine = yield* local.state
        return {
          ...mine,
          capUsd: s.cap_usd,
          spentUsd: s.spent_usd,
          reservedUsd: reserved,
          refused: s.refused,
          unsettledUsd: Number(s.unsettled_usd),
          overshootFactor: Math.max(mine.overshootFactor, Number(s.overshoot_factor))
        }
      }).pipe(Effect.orDieWith(walletDefect))
    } satisfies SpendCap
  }).pipe(Effect.orDieWith(walletDefect))
