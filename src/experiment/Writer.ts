/**
 * The run's one store writer (see `Writer`): spend rows, reservations and Attempts queued by the
 * cells and committed together, one transaction for the many cells that finish at once.
 */
import { Effect, Exit, Fiber, Queue } from "effect"
import type { Attempt } from "../schema/Attempt.ts"
import { FINISHING } from "./Scheduling.ts"
import { type CellKey, type Reservation, type SpendRow, type Store, type StoreError, type StoredForm, storedFormOf } from "./Store.ts"

/**
 * The run's store writes, from one fiber: each call's spend row and each Attempt is queued, and
 * the writer commits whatever is queued in one transaction (`Store.putBatch`), then answers each
 * caller. A caller goes on only once its row is committed, as with a write of its own: a call's
 * spend is in the store before its answer is used, so a run killed at any point and resumed
 * counts every answered call. One commit serves the many cells that finish together.
 */
export interface Writer {
  readonly spend: Store["putSpend"]
  readonly attempt: Store["putAttempt"]
  /**
   * A call's worst case, committed before the call is sent (the ledger's reservation). Absent for
   * a cluster's worker, whose calls its shared wallet's holds count.
   */
  readonly reserve?: (reservation: Reservation) => Effect.Effect<void, StoreError>
  /** A failed call's reservation, removed. */
  readonly release?: (id: string) => Effect.Effect<void, StoreError>
  /** Stops the writer once what is queued is written. */
  readonly close: Effect.Effect<void>
}

/** How the writer answers a queued row's caller: once, with the row's outcome. */
type Answer<A> = (exit: Exit.Exit<A, StoreError>) => void

type Queued =
  | { readonly reserve: Reservation; readonly done: Answer<void> }
  | { readonly release: string; readonly done: Answer<void> }
  | { readonly spend: { readonly runId: string; readonly experimentId: string; readonly cell: CellKey; readonly spend: SpendRow }; readonly done: Answer<void> }
  | { readonly attempt: { readonly runId: string; readonly attempt: Attempt; readonly stored: StoredForm }; readonly done: Answer<string> }

const BATCH = 512

export const makeWriter = (store: Store): Effect.Effect<Writer> =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Queued>()
    const writeBatch = (items: ReadonlyArray<Queued>) =>
      Effect.gen(function*() {
        const spend = items.flatMap((q) => ("spend" in q ? [q.spend] : []))
        const attempts = items.flatMap((q) => ("attempt" in q ? [q] : []))
        const reserve = items.flatMap((q) => ("reserve" in q ? [q.reserve] : []))
        const release = items.flatMap((q) => ("release" in q ? [q.release] : []))
        const written = yield* Effect.exit(store.putBatch({ spend, attempts: attempts.map((q) => q.attempt), reserve, release }))
        // A batch that fails (one Attempt that cannot be stored) rolls back all of it: then each
        // row is written on its own, so the others' spend and Attempts are kept and only the
        // failing row's caller sees the error.
        if (Exit.isFailure(written) && items.length > 1) {
          for (const q of items) {
            if ("spend" in q) q.done(Exit.asVoid(yield* Effect.exit(store.putBatch({ spend: [q.spend], attempts: [] }))))
            else if ("reserve" in q) q.done(Exit.asVoid(yield* Effect.exit(store.putBatch({ spend: [], attempts: [], reserve: [q.reserve] }))))
            else if ("release" in q) q.done(Exit.asVoid(yield* Effect.exit(store.putBatch({ spend: [], attempts: [], release: [q.release] }))))
            else q.done(Exit.map(yield* Effect.exit(store.putBatch({ spend: [], attempts: [q.attempt] })), (ids) => ids[0]!))
          }
          return
        }
        for (const q of items) {
          if (!("attempt" in q)) q.done(Exit.asVoid(written))
        }
        for (let i = 0; i < attempts.length; i++) {
          attempts[i]!.done(Exit.map(written, (ids) => ids[i]!))
        }
      })
    // A spend row is written at once: its call's cell waits on it. An Attempt waits for the cells
    // finishing beside it (the FINISHING queue runs first), so they share one transaction: woken
    // at once by each, the writer wrote one Attempt per commit (5,449 commits for 5,000 cells at
    // --parallel 1000, ~1.5 s of the run's CPU in SQLite).
    const fiber = yield* Queue.take(queue).pipe(
      Effect.tap((first) => ("attempt" in first ? Effect.yieldNow({ priority: FINISHING }) : Effect.void)),
      Effect.flatMap((first) => Effect.flatMap(Queue.takeUpTo(queue, BATCH - 1), (rest) => writeBatch([first, ...rest]))),
      Effect.forever,
      Effect.forkDaemon
    )
    // The caller waits on its own answer, resumed once by the writer. No canceler: a caller
    // interrupted meanwhile is no longer waiting, its row is written all the same and the late
    // answer is dropped by Effect (an async resumes once). A Deferred with its await cost each
    // model call two more uninterruptible regions and ~40 fiber steps.
    const enqueue = <A>(make: (done: Answer<A>) => Queued) =>
      Effect.async<A, StoreError>((resume) => {
        if (!Queue.unsafeOffer(queue, make(resume))) resume(Effect.dieMessage("the run's store writer was closed with cells still writing"))
      })
    return {
      spend: (runId, experimentId, cell, spend) =>
        enqueue<void>((done) => ({ spend: { runId, experimentId, cell, spend }, done } as Queued)),
      reserve: (reservation) => enqueue<void>((done) => ({ reserve: reservation, done } as Queued)),
      release: (id) => enqueue<void>((done) => ({ release: id, done } as Queued)),
      // Encoded by the cell itself (at its priority), not by the writer its calls wait on.
      attempt: (runId, attempt) =>
        Effect.flatMap(storedFormOf(attempt), (stored) => enqueue<string>((done) => ({ attempt: { runId, attempt, stored }, done } as Queued))),
      // Every caller awaits its own row, so once the cells are done nothing is left queued.
      close: Effect.zipRight(Queue.shutdown(queue), Fiber.interrupt(fiber)).pipe(Effect.asVoid)
    } satisfies Writer
  })
