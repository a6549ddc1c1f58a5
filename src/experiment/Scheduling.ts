/**
 * The run's scheduling: where a cell's own CPU work runs, apart from its model calls. The cells'
 * fibers run on `cellScheduler()`; a cell whose conversation has ended goes on at the FINISHING
 * priority, so the next cells' calls go out before finished cells are graded and stored.
 */
import { Scheduler } from "effect"

/**
 * Where a cell's own CPU work runs (preparing it, grading it, ids, the store write, progress):
 * below the model calls. A slot's call is sent and its answer taken on Effect's default
 * scheduler (microtasks, within the I/O callback that freed the slot); everything else is
 * queued here and run from `setImmediate` in slices of a few milliseconds, so when 100 answers
 * arrive together the 100 next calls are sent before any of the 100 finished cells is graded,
 * and new answers are read between slices.
 */
const SLICE_MS = 4
/** Cells prepared up to their next call beyond the N with one in flight (see run). */
export const PREPARED = 64
/**
 * The scheduling priority of a cell once its conversation has ended (grading, ids, its Attempt's
 * store write, progress): run only when no conversing cell has work queued. When a wave of
 * answers arrives together, the cells taking the freed slots are prepared and their calls sent
 * first; the finished cells are graded while the calls are out.
 */
export const FINISHING = -1
export const cellScheduler = (): Scheduler.Scheduler => {
  const urgent = taskQueue()
  const later = taskQueue()
  let scheduled = false
  const drain = () => {
    const until = performance.now() + SLICE_MS
    for (;;) {
      const task = urgent.take() ?? later.take()
      if (task === undefined) break
      task()
      if (performance.now() >= until) break
    }
    if (urgent.empty() && later.empty()) scheduled = false
    else setImmediate(drain)
  }
  return Scheduler.make((task, priority) => {
    ;(priority < 0 ? later : urgent).push(task)
    if (!scheduled) {
      scheduled = true
      setImmediate(drain)
    }
  })
}
/** A FIFO of tasks with a moving head (Array.shift is O(n)). */
const taskQueue = () => {
  let queue: Array<() => void> = []
  let head = 0
  return {
    push: (task: () => void) => {
      queue.push(task)
    },
    take: (): (() => void) | undefined => {
      if (head >= queue.length) {
        if (head > 0) {
          queue = []
          head = 0
        }
        return undefined
      }
      const task = queue[head]!
      queue[head++] = noop
      return task
    },
    empty: () => head >= queue.length
  }
}
const noop = () => {}
