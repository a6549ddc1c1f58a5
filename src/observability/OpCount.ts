/**
 * `ASSAY_COUNT_OPS=FILE`: the command counts the Effect operations its fibers run (every step of
 * Effect's run loop, through a Supervisor under the runtime's op supervision) and writes the
 * number to FILE as it ends. `npm run bench` (section slots) reads it: Effect operations per cell
 * hardly move from one run to the next, where timings on a shared 2-core machine moved by ±15%
 * for the same binary, so a change to the cell's path is judged by it. Without the variable
 * nothing is counted and nothing is written.
 */
import { writeFileSync } from "node:fs"
import { Effect, RuntimeFlags, RuntimeFlagsPatch, Supervisor } from "effect"

class Counter extends Supervisor.AbstractSupervisor<number> {
  count = 0
  get value() {
    return Effect.sync(() => this.count)
  }
  override onEffect(): void {
    this.count++
  }
}

/** `self`, counted into the file `ASSAY_COUNT_OPS` names, when it names one. */
export const countedIfAsked = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  const file = process.env["ASSAY_COUNT_OPS"]
  if (file === undefined || file === "") return self
  const counter = new Counter()
  return self.pipe(
    Effect.supervised(counter),
    Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision)),
    // A file that cannot be written loses only the count, said on stderr; the command's own outcome stands.
    Effect.ensuring(Effect.sync(() => {
      try {
        writeFileSync(file, `${counter.count}\n`)
      } catch (e) {
        process.stderr.write(`assay: could not write the operation count to ${file}: ${String(e)}\n`)
      }
    }))
  )
}
