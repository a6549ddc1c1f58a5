/**
 * `assay worker --store postgres://… [--concurrency N] [--port P] [--host H]`: join the cluster
 * whose shards and messages live in that Postgres and run the cells submitted to it (by
 * `assay run … --store URL --cluster`) until stopped.
 */
import { createServer } from "node:net"
import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Option } from "effect"
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

export const workerDoc = {
  about: "Join the cluster whose shards and messages live in the --store Postgres and run the cells that `assay run … --store URL --cluster` submits, until stopped.",
  flags: {
    "--store": { value: "URL", about: "The Postgres store the cluster lives in (or ASSAY_STORE)" },
    "--home": { value: "DIR", fallback: ".assay", about: "The local folder for what is kept beside the store" },
    "--concurrency": { value: "N", fallback: "4", about: "Slots, as run's --parallel: model calls this worker has in flight at once (a model candidate's cell holds one only while a call is out; up to 2N cells open; under a run's --max-usd, and for any other candidate, a cell holds one for its whole run). A whole number 1 or more" },
    "--port": { value: "P", about: "The port other runners reach this one on. Default: a free one" },
    "--host": { value: "H", about: "The host name other runners reach this one by. Default: this machine's host name" }
  }
}

export const workerCommand = Command.make(
  "worker",
  {
    store: storeOption,
    home: Options.text("home").pipe(Options.withDefault(".assay")),
    concurrency: Options.integer("concurrency").pipe(Options.withDefault(4)),
    port: Options.integer("port").pipe(Options.optional),
    host: Options.text("host").pipe(Options.optional)
  },
  (opts) =>
    Effect.gen(function*() {
      const at = yield* checkedLocation(opts.home, opts.store)
      if (at.store === null || at.store === undefined) return yield* new UsageError({ detail: "assay worker needs --store postgres://… (or ASSAY_STORE): the cluster lives there" })
      if (opts.concurrency < 1) return yield* new UsageError({ detail: `--concurrency ${opts.concurrency}: expected a whole number 1 or more` })
      const port = Option.isSome(opts.port) ? opts.port.value : yield* freePort
      const { workerLayer } = yield* Effect.promise(() => import("../cluster/Cluster.ts"))
      const url = at.store
      const layer = workerLayer({ url, home: opts.home, port, concurrency: opts.concurrency, ...(Option.isSome(opts.host) ? { host: opts.host.value } : {}) })
      // Said once the worker's layer is built (its runner registered), not beside the build:
      // whoever waits for this line (a test, a script) may submit at once.
      yield* Layer.launch(
        Layer.tap(layer, () => Console.error(`assay: worker on port ${port} (pid ${process.pid}), ${opts.concurrency} slots (model calls at once)`))
      )
    })
).pipe(Command.withDescription(workerDoc.about))
