/**
 * `assay worker --store postgres://… [--concurrency N] [--port P] [--host H] [--max-outage-secs S]`:
 * join the cluster whose shards and messages live in that Postgres and run the cells submitted to
 * it (by `assay run … --store URL --cluster`) until stopped. It behaves as a service: losing its
 * database is said once per change of state and retried with a capped backoff (src/cluster/Outage.ts),
 * an outage longer than `--max-outage-secs` ends it with exit 1, and SIGTERM or SIGINT ends it
 * within seconds: it gives back its cells if the database lets it, and exits regardless.
 */
import { createServer } from "node:net"
import { Command, Options } from "@effect/cli"
import * as SqlClient from "@effect/sql/SqlClient"
import { Console, Context, Data, Duration, Effect, Layer, Logger, Option, Predicate } from "effect"
import { UsageError } from "./benchmarks.ts"
import { checkedLocation, storeOption } from "./storeFlag.ts"

const freePort = Effect.async<number>((resume) => {
  const server = createServer()
  server.listen(0, "0.0.0.0", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** The runner's listen failing because the port is taken (SocketServerError "Open", EADDRINUSE). */
const isAddressInUse = (e: unknown): boolean =>
  Predicate.isTagged(e, "SocketServerError") && Predicate.hasProperty(e, "cause") && Predicate.hasProperty(e.cause, "code") && e.cause.code === "EADDRINUSE"

/** A listen failure said with its port and cause (the library's own message is only "Open"). */
const withPort = (port: number) => <E>(e: E): E | WorkerPortError =>
  Predicate.isTagged(e, "SocketServerError") && Predicate.hasProperty(e, "cause")
    ? new WorkerPortError({ port, detail: Predicate.hasProperty(e.cause, "message") ? String(e.cause.message) : String(e.cause) })
    : e

export class WorkerPortError extends Data.TaggedError("WorkerPortError")<{ readonly port: number; readonly detail: string }> {
  override get message() {
    return `the worker cannot listen on port ${this.port} (${this.detail}): pass a free one with --port P, or leave --port out to have one found`
  }
}

export const workerDoc = {
  about: "Join the cluster whose shards and messages live in the --store Postgres and run the cells that `assay run … --store URL --cluster` submits, until stopped.",
  flags: {
    "--store": { value: "URL", about: "The Postgres store the cluster lives in (or ASSAY_STORE)" },
    "--home": { value: "DIR", fallback: ".assay", about: "The local folder for what is kept beside the store" },
    "--concurrency": { value: "N", fallback: "4", about: "Slots, as run's --parallel: model calls this worker has in flight at once (a model candidate's cell holds one only while a call is out; up to 2N cells open; under a run's --max-usd, and for any other candidate, a cell holds one for its whole run). A whole number 1 or more" },
    "--port": { value: "P", about: "The port other runners reach this one on. Default: a free one" },
    "--host": { value: "H", about: "The host name other runners reach this one by. Default: this machine's host name" },
    "--max-outage-secs": { value: "S", fallback: "300", about: "How long the worker waits for its database once it is gone (retrying with a backoff of up to 15 s) before it exits 1. A whole number 1 or more" }
  }
}

/** How long a stopping worker may take to give back its cells before it exits regardless. */
const STOP_GRACE_MS = 3_500

/**
 * Ends the process `STOP_GRACE_MS` from now unless it has ended by then: the graceful stop (shards
 * and lanes given back) needs the database, and a worker must stop whether or not it answers.
 * Other workers take the cells of one that could not give them back once its locks lapse.
 */
const stopWithin = (code: number, line: string) => {
  setTimeout(() => {
    process.stderr.write(line)
    process.exit(code)
  }, STOP_GRACE_MS).unref()
}

export const workerCommand = Command.make(
  "worker",
  {
    store: storeOption,
    home: Options.text("home").pipe(Options.withDefault(".assay")),
    concurrency: Options.integer("concurrency").pipe(Options.withDefault(4)),
    port: Options.integer("port").pipe(Options.optional),
    host: Options.text("host").pipe(Options.optional),
    maxOutageSecs: Options.integer("max-outage-secs").pipe(Options.withDefault(300))
  },
  (opts) =>
    Effect.gen(function*() {
      const at = yield* checkedLocation(opts.home, opts.store)
      if (at.store === null || at.store === undefined) return yield* new UsageError({ detail: "assay worker needs --store postgres://… (or ASSAY_STORE): the cluster lives there" })
      if (opts.concurrency < 1) return yield* new UsageError({ detail: `--concurrency ${opts.concurrency}: expected a whole number 1 or more` })
      if (opts.maxOutageSecs < 1) return yield* new UsageError({ detail: `--max-outage-secs ${opts.maxOutageSecs}: expected a whole number 1 or more` })
      if (Option.isSome(opts.port) && (opts.port.value < 0 || opts.port.value > 65535)) {
        return yield* new UsageError({ detail: `--port ${opts.port.value}: expected a whole number from 0 to 65535` })
      }
      const { workerLayer } = yield* Effect.promise(() => import("../cluster/Cluster.ts"))
      const Outage = yield* Effect.promise(() => import("../cluster/Outage.ts"))
      const { openError, postgresClient } = yield* Effect.promise(() => import("../experiment/Store.ts"))
      const url = at.store
      const stopping = () =>
        stopWithin(130, `assay: worker stopped before it could give back its cells (its database did not answer); other workers take them once its locks lapse\n`)
      process.once("SIGTERM", stopping)
      process.once("SIGINT", stopping)
      // The watch probes on a connection pool of its own: the cluster's may be busy or stuck.
      const probeSql = yield* Effect.map(Layer.build(postgresClient(url)), (context) => Context.get(context, SqlClient.SqlClient)).pipe(
        Effect.mapError((e) => openError(url, e))
      )
      const watch = Outage.make(probeSql`SELECT 1`, {
        maxOutage: Duration.seconds(opts.maxOutageSecs),
        say: (line) => Console.error(line)
      })
      const logger = Logger.replace(Logger.defaultLogger, Outage.quietLogger(watch, (line) => process.stderr.write(line)))
      const launch = (port: number) =>
        Layer.launch(
          // Said once the worker's layer is built (its runner registered), not beside the build:
          // whoever waits for this line (a test, a script) may submit at once.
          Layer.tap(
            workerLayer({ url, home: opts.home, port, concurrency: opts.concurrency, ...(Option.isSome(opts.host) ? { host: opts.host.value } : {}) }),
            () => Console.error(`assay: worker on port ${port} (pid ${process.pid}), ${opts.concurrency} slots (model calls at once)`)
          )
        )
      const serve = Option.isSome(opts.port) ? launch(opts.port.value).pipe(Effect.mapError(withPort(opts.port.value))) : Effect.gen(function*() {
        // A port found free can be taken before the runner listens on it (by any socket the machine
        // opens meanwhile: another worker's, an outgoing connection's); then another one is tried.
        for (let tries = 1;; tries++) {
          const port = yield* freePort
          const launched = yield* Effect.either(launch(port))
          if (launched._tag === "Right") return
          if (!isAddressInUse(launched.left) || tries >= 5) return yield* Effect.fail(withPort(port)(launched.left))
        }
      })
      // Serving until stopped, or until the database has been gone too long: then the worker
      // stops as on SIGTERM (the line said by the command, or here if stopping hangs).
      const outage = watch.run.pipe(Effect.tapError((e) => Effect.sync(() => stopWithin(1, `assay: ${e.message}\n`))))
      return yield* Effect.raceFirst(serve, outage).pipe(Effect.provide(logger))
    }).pipe(Effect.scoped)
).pipe(Command.withDescription(workerDoc.about))
