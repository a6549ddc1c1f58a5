/**
 * A worker's watch over its database. A worker without its Postgres can do nothing, and every
 * part of it (the cluster's shard locks, its lanes, the spend cap's heartbeat) fails at once and
 * again: the watch says what happened once per change of state (lost, retrying, back), probes
 * with a capped exponential backoff, silences the other parts' logs while the database is gone
 * (their failures are the outage, already said), and gives up after a configured outage.
 */
import { Cause, Clock, Duration, Effect, Logger, LogLevel, Schema } from "effect"

export class WorkerOutage extends Schema.TaggedError<WorkerOutage>()("WorkerOutage", {
  reason: Schema.Literal("database-gone"),
  seconds: Schema.Number,
  detail: Schema.String
}) {
  override get message() {
    return `the worker's database was unreachable for more than ${this.seconds} s (${this.detail}): the worker stops; start it again once the database is back`
  }
}

export interface WatchOptions {
  /** How long the database may be gone before the watch gives up; null: never. */
  readonly maxOutage: Duration.Duration | null
  /** Between probes while the database answers. Default 2 s. */
  readonly every?: Duration.Duration
  /** The first wait once it is lost, doubled at each failed retry up to `maxBackoff`. Defaults 0.5 s and 15 s. */
  readonly firstBackoff?: Duration.Duration
  readonly maxBackoff?: Duration.Duration
  /** How long a probe may take before it counts as failed. Default 5 s. */
  readonly probeTimeout?: Duration.Duration
  /** Where the state lines go (the worker's stderr). */
  readonly say: (line: string) => Effect.Effect<void>
}

export interface Watch {
  /** Whether the database is gone now (as the last probe found it). */
  readonly down: () => boolean
  /** Probes for as long as it runs; fails once the database has been gone longer than `maxOutage`. */
  readonly run: Effect.Effect<never, WorkerOutage>
}

const firstLine = (text: string): string => (text.split("\n")[0] ?? "").slice(0, 300)

/** A short reason of a failed probe: its first line, no stack. */
const reasonOf = (cause: Cause.Cause<unknown>): string => {
  const squashed = Cause.squash(cause)
  const text = squashed instanceof Error
    ? (squashed.cause instanceof Error ? squashed.cause.message : "") || squashed.message
    : String(squashed)
  return (text.split("\n")[0] ?? "").slice(0, 200) || "no answer"
}

export const make = (probe: Effect.Effect<unknown, unknown>, options: WatchOptions): Watch => {
  const every = options.every ?? Duration.seconds(2)
  const first = options.firstBackoff ?? Duration.millis(500)
  const cap = options.maxBackoff ?? Duration.seconds(15)
  const timeout = options.probeTimeout ?? Duration.seconds(5)
  let down = false
  const tryProbe = probe.pipe(
    Effect.timeoutFail({ duration: timeout, onTimeout: () => new Error(`no answer in ${Duration.format(timeout)}`) }),
    Effect.sandbox,
    Effect.either
  )
  const run = Effect.gen(function*() {
    for (;;) {
      // Up: a probe every `every`.
      const ok = yield* tryProbe
      if (ok._tag === "Right") {
        yield* Effect.sleep(every)
        continue
      }
      down = true
      const lostAt = yield* Clock.currentTimeMillis
      yield* options.say(`assay: worker lost its database (${reasonOf(ok.left)}); its cells wait`)
      let wait = first
      let said = false
      for (;;) {
        yield* Effect.sleep(wait)
        const again = yield* tryProbe
        const gone = ((yield* Clock.currentTimeMillis) - lostAt) / 1000
        if (again._tag === "Right") {
          down = false
          yield* options.say(`assay: worker's database is back after ${gone.toFixed(1)} s`)
          break
        }
        if (options.maxOutage !== null && gone > Duration.toSeconds(options.maxOutage)) {
          return yield* new WorkerOutage({ reason: "database-gone", seconds: Duration.toSeconds(options.maxOutage), detail: reasonOf(again.left) })
        }
        if (!said) {
          said = true
          const limit = options.maxOutage === null ? "" : `, stopping after ${Duration.toSeconds(options.maxOutage)} s without it`
          yield* options.say(`assay: worker retrying its database, waiting up to ${Duration.format(cap)} between tries${limit}`)
        }
        wait = Duration.min(Duration.times(wait, 2), cap)
      }
    }
  })
  return { down: () => down, run }
}

/**
 * The worker's logger: warnings and errors, one line a message (a cause by its first line, never
 * a stack), nothing while the database is gone, and a message said again at most once a minute.
 */
export const quietLogger = (watch: Pick<Watch, "down">, write: (line: string) => void) => {
  const said = new Map<string, number>()
  return Logger.make(({ cause, logLevel, message }) => {
    // Below a warning is the libraries' chatter ("Listening on …"); the worker says its own start.
    if (watch.down() || LogLevel.lessThan(logLevel, LogLevel.Warning)) return
    const parts: ReadonlyArray<unknown> = Array.isArray(message) ? message : [message]
    const text = parts.map((m) => firstLine(m instanceof Error ? m.message : typeof m === "string" ? m : String(m))).join(": ")
    const line = Cause.isEmpty(cause) ? text : `${text}: ${reasonOf(cause)}`
    const now = Date.now()
    const last = said.get(line)
    if (last !== undefined && now - last < 60_000) return
    // Messages with changing figures would grow it without end: forgotten by the thousand.
    if (said.size >= 1000) said.clear()
    said.set(line, now)
    write(`assay: worker ${logLevel.label.toLowerCase()}: ${line}\n`)
  })
}
