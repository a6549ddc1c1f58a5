/**
 * A counting semaphore that hands a freed permit to the longest waiter, and wakes only that one.
 *
 * Effect's own `Semaphore` wakes every waiter when one permit frees (each re-checks and all but
 * one queue again). The runner keeps up to 64 cells waiting on its `--parallel` slots, so each
 * freed slot cost ~580 fiber steps per cell (counted at --parallel 100), about a third of all
 * the steps a cell of one model call takes. Here a release is O(1) and the permit goes in FIFO
 * order, so a cell that has waited longest is sent first and no newcomer takes a slot before it.
 */
import { Effect } from "effect"

export interface Slots {
  /** Runs `self` holding one permit, waiting for one first; the permit is released however it ends. */
  readonly withPermit: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * As `withPermit`, and `self` may give the permit back before it ends by running the `release`
   * it is handed (once; later runs do nothing).
   */
  readonly withPermitUntil: <A, E, R>(self: (release: Effect.Effect<void>) => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Permits not held now (for tests and progress). */
  readonly free: () => number
  /** Fibers waiting for a permit now. */
  readonly waiting: () => number
}

interface Waiter {
  readonly resume: (effect: Effect.Effect<void>) => void
  /** Handed a permit by a release: from then on the permit is this waiter's to pass on. */
  granted: boolean
}

export const make = (permits: number): Slots => {
  let free = Math.max(0, permits)
  // A queue with a moving head: shift() on a long array is O(n).
  let queue: Array<Waiter | null> = []
  let head = 0
  const next = (): Waiter | null => {
    while (head < queue.length) {
      const w = queue[head] ?? null
      queue[head++] = null
      if (w !== null) {
        if (head > 1024 && head * 2 > queue.length) {
          queue = queue.slice(head)
          head = 0
        }
        return w
      }
    }
    queue = []
    head = 0
    return null
  }
  const release = (): void => {
    const w = next()
    if (w === null) {
      free++
      return
    }
    w.granted = true
    w.resume(Effect.void)
  }
  const take: Effect.Effect<void> = Effect.async<void>((resume) => {
    if (free > 0) {
      free--
      resume(Effect.void)
      return
    }
    const w: Waiter = { resume, granted: false }
    queue.push(w)
    // Interrupted while waiting: out of the queue. Should a permit have been handed over after
    // the interruption reached the fiber (its resume is then ignored), it is passed on, not lost;
    // Effect's runtime runs this canceler in the same step as the interruption, so that is a guard.
    return Effect.sync(() => {
      if (w.granted) release()
      else {
        const at = queue.indexOf(w, head)
        if (at >= 0) queue[at] = null
      }
    })
  })
  const releaseEffect = Effect.sync(release)
  // The release runs however `self` ends: matched inside the one uninterruptible region, as
  // Effect.ensuring would do in a second region of its own (each region is ~10 fiber steps, on the
  // path of every model call at --parallel 1000).
  const releasing = <A, E, R>(self: Effect.Effect<A, E, R>, release: Effect.Effect<void>) =>
    Effect.matchCauseEffect(self, {
      onFailure: (cause) => Effect.zipRight(release, Effect.failCause(cause)),
      onSuccess: (a) => Effect.as(release, a)
    })
  return {
    withPermit: (self) => Effect.uninterruptibleMask((restore) => Effect.zipRight(restore(take), releasing(restore(self), releaseEffect))),
    withPermitUntil: (self) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.zipRight(
          restore(take),
          Effect.suspend(() => {
            let held = true
            const giveBack = Effect.sync(() => {
              if (held) {
                held = false
                release()
              }
            })
            return releasing(restore(self(giveBack)), giveBack)
          })
        )
      ),
    free: () => free,
    waiting: () => {
      let n = 0
      for (let i = head; i < queue.length; i++) if (queue[i] !== null) n++
      return n
    }
  }
}
