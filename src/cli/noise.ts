/**
 * `assay noise [RUN-ID] [--home DIR] [--json]`: the noise floor of a run made with repetitions
 * (flip rate, spread across repetitions, within-task share of the interval), and the stored cells
 * `plan --detect D --like RUN-ID` plans from. Both read a stored run's report and nothing else.
 */
import { resolve } from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option, Schema } from "effect"
import { completeReport, decodeJson, renderNoise, renderPower, type Report } from "../experiment/Report.ts"
import { type GradedCell, gradedOfResults, noiseOfCells, type PowerPlan, powerOfCells } from "../experiment/Scorecards.ts"
import * as Store from "../experiment/Store.ts"
import { UsageError } from "./benchmarks.ts"
import { checkedLocation, storeExists, storeOption } from "./storeFlag.ts"

/** A run with no task graded twice: nothing wrong with the command line, the run has no noise floor (exit 1). */
class NoNoiseFloor extends Schema.TaggedError<NoNoiseFloor>()("NoNoiseFloor", { runId: Schema.String }) {
  override get message() {
    return `run ${this.runId} has no task with two graded repetitions: the noise floor needs a run made with --reps 2 or more`
  }
}

export const noiseDoc = {
  about: "The noise floor of a run made with --reps 2 or more: per candidate, the share of tasks whose verdict flips between repetitions, " +
    "the spread of the benchmark mean across repetitions, and how much of the interval comes from within-task noise (more repetitions " +
    "shrink it) against task sampling (only more tasks do). Outages are left out.",
  args: { "RUN-ID": "A run id (r-...); the latest run when absent" }
} as const

/** A finished run's report with its cell list, from the store alone (nothing written). */
export const storedReport = (home: string, store: Option.Option<string>, runId: Option.Option<string>) =>
  Effect.gen(function*() {
    const at = yield* checkedLocation(home, store)
    if (!storeExists(at)) return yield* new UsageError({ detail: `no assay home at ${resolve(home)}: run an experiment first or pass --home` })
    return yield* Effect.provide(
      Effect.gen(function*() {
        const s = yield* Store.Store
        const record = yield* Option.match(runId, {
          onNone: () => Effect.flatMap(s.latestRun, (r) => (r ? Effect.succeed(r) : Effect.fail(new UsageError({ detail: "the home has no run yet" })))),
          onSome: (id) => s.getRun(id)
        })
        if (record.summary === null) return yield* new UsageError({ detail: `run ${record.id} has not finished: its cells are not all there` })
        const report = yield* decodeJson(JSON.stringify(record.summary)).pipe(
          Effect.mapError((e) => new UsageError({ detail: `the stored report of ${record.id} cannot be read: ${e.message}` }))
        )
        return yield* completeReport(report, { cells: true })
      }),
      Store.layerAt(at, { readOnly: true })
    )
  })

/** The graded cells of a stored report (outages left out). */
export const gradedOf = (report: Report): ReadonlyArray<GradedCell> => gradedOfResults(report.cellResults ?? [])

export const noiseCommand = Command.make(
  "noise",
  {
    runId: Args.text({ name: "RUN-ID" }).pipe(Args.optional),
    home: Options.text("home").pipe(Options.withDefault(".assay")),
    store: storeOption,
    json: Options.boolean("json")
  },
  (opts) =>
    Effect.gen(function*() {
      const report = yield* storedReport(opts.home, opts.store, opts.runId)
      const rows = noiseOfCells(gradedOf(report))
      if (rows.length === 0) {
        return yield* new NoNoiseFloor({ runId: report.runId })
      }
      if (opts.json) yield* Console.log(JSON.stringify({ runId: report.runId, experimentId: report.experimentId, noise: rows }, null, 2))
      else yield* Console.log(`run ${report.runId}, noise floor per candidate\n\n${renderNoise(rows)}`.trimEnd())
    })
).pipe(Command.withDescription(noiseDoc.about))

/**
 * `plan --detect D`: the power plan from pilot cells (the experiment's own, or a named run's).
 * Text, or the value `--json` puts under `power`.
 */
export const powerSection = (
  detect: number,
  pilot: ReadonlyArray<GradedCell>,
  available: (benchmark: string) => number | null
): { readonly text: string; readonly json: { readonly detect: number; readonly plans: ReadonlyArray<PowerPlan> } } => {
  const plans = powerOfCells(pilot, detect, available)
  return { text: renderPower(detect, plans), json: { detect, plans } }
}
