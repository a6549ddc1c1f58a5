/**
 * `assay runs [--home DIR] [--json]`: a home's runs, newest first, as the viewer lists them (id,
 * state, benchmarks, candidates, cells) with what each spent and when it started. Reads the store
 * only, opened read-only, as `report` does.
 */
import { resolve } from "node:path"
import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import * as Store from "../experiment/Store.ts"
import { listRuns } from "../view/Data.ts"
import { UsageError } from "./benchmarks.ts"
import { checkedLocation, storeDoc, storeExists, storeOption } from "./storeFlag.ts"

export const runsDoc = {
  about: "List the home's runs, newest first: id, state (finished, running, stopped, pilot), benchmarks, candidates, cells written of the " +
    "experiment's, spend at list price, and when each started. `assay report RUN-ID` shows one.",
  flags: {
    "--home": { value: "DIR", fallback: ".assay", about: "The experiment home (its SQLite store)" },
    "--store": storeDoc,
    "--json": { about: "Print one JSON document: { home, runs: [{ runId, experimentId, state, benchmarks, candidates, cells, spend, startedAt, finishedAt }] }" }
  }
} as const

const money = (usd: number, unknownCalls: number) => `$${usd.toFixed(4)}${unknownCalls > 0 ? ` +${unknownCalls} unpriced` : ""}`

/** A table of plain columns, the last one free. */
const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? []
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ").trimEnd()).join("\n")
}

export const runsCommand = Command.make(
  "runs",
  {
    home: Options.text("home").pipe(Options.withDefault(".assay")),
    store: storeOption,
    json: Options.boolean("json")
  },
  (opts) =>
    Effect.gen(function*() {
      const at = yield* checkedLocation(opts.home, opts.store)
      if (!storeExists(at)) return yield* new UsageError({ detail: `no assay home at ${resolve(opts.home)}: run an experiment first or pass --home` })
      const runs = yield* Effect.provide(
        Effect.gen(function*() {
          const store = yield* Store.Store
          const briefs = yield* listRuns
          return yield* Effect.forEach(briefs, (b) =>
            Effect.map(store.spendOf({ runId: b.runId }), (s) => ({
              ...b,
              spend: { usd: s.knownUsd, calls: s.calls, unknownCalls: s.unknownCalls }
            })))
        }),
        Store.layerAt(at, { readOnly: true })
      )
      if (opts.json) return yield* Console.log(JSON.stringify({ home: resolve(opts.home), runs }, null, 2))
      if (runs.length === 0) return yield* Console.log(`no runs in ${resolve(opts.home)}`)
      yield* Console.log(table([
        ["run", "state", "started", "cells", "spend", "benchmarks", "candidates"],
        ...runs.map((r) => [
          r.runId,
          r.state,
          r.startedAt.replace("T", " ").replace(/\.\d+Z$/, "Z"),
          `${r.cells.written}${r.cells.kept !== null && r.cells.kept > 0 ? `+${r.cells.kept} kept` : ""}/${r.cells.total}${r.cells.skipped > 0 ? ` (${r.cells.skipped} skipped)` : ""}`,
          money(r.spend.usd, r.spend.unknownCalls),
          r.benchmarks.join(","),
          r.candidates.join(",")
        ])
      ]))
    })
).pipe(Command.withDescription(runsDoc.about))
