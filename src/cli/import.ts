/**
 * `assay import BENCHMARK DIR`: another runner's result files (BFCL's) stored as a run of an
 * imported candidate, `import:NAME`. Each line's recorded output answers the model calls of an
 * ordinary Attempt (a `model/generate` effect each, recorded), which the benchmark's own protocol
 * and grader run as they do any candidate's: so `report`, `view`, `replay` and paired comparisons
 * work on it, and a line that does not decode is graded as a decoding failure, never dropped.
 */
import { statSync } from "node:fs"
import { resolve } from "node:path"
import { Args, Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { Console, Effect, Option, Schema } from "effect"
import type { Json } from "../content/Canonical.ts"
import * as Home from "../experiment/Home.ts"
import { encodeJson, renderText } from "../experiment/Report.ts"
import { rebuildUnfinished } from "../experiment/Results.ts"
import { type Candidate, type Lane, makePlan, run as runExperiment } from "../experiment/Runner.ts"
import * as Store from "../experiment/Store.ts"
import * as Imported from "../model/Imported.ts"
import type { EnvironmentDef } from "../schema/EnvironmentDef.ts"
import { importableNames, loadBenchmark, loadResultReader, UsageError } from "./benchmarks.ts"
import { rosterName, resolveCandidate } from "./candidates.ts"
import { importedCandidate, importedName } from "./imported.ts"
import { stderrProgress } from "./progress.ts"
import { checkedLocation, storeDoc, storeOption } from "./storeFlag.ts"
import { counted } from "./words.ts"

/** Attempts of an import that ended before their grade: printed after the report, exit 1. */
export class ImportIncomplete extends Schema.TaggedError<ImportIncomplete>()("ImportIncomplete", {
  cells: Schema.Int,
  of: Schema.Int,
  detail: Schema.String
}) {
  override get message() {
    return `${this.cells} of ${this.of} imported cells were not graded: ${this.detail}`
  }
}

const DEFAULT_HOME = ".assay"
const PARALLEL = 4
const NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]*$/

/** What `assay import --help` says. */
export const importDoc = {
  about: "Store another runner's result files as a run of an imported candidate, import:NAME (import:NAME+text for prompt-format outputs): " +
    "each line's recorded output answers an Attempt's model call and is graded by assay's own grader, so report, view, replay and " +
    "comparisons work on it. BFCL: the BFCL_v4_<category>_result.json files under DIR, single- and multi-turn (a multi-turn line is replayed step " +
    "by step through bfcl-multi-turn's protocol); see the README for the handler formats read.",
  args: {
    BENCHMARK: `The benchmark whose result files DIR holds: ${importableNames().join(", ")}`,
    DIR: "The model's result folder (BFCL: result/MODEL, or one of its non_live/, live/ and multi_turn/ folders); searched a few folders deep"
  },
  flags: {
    "--as": { value: "NAME", about: "The candidate's name, import:NAME (letters, digits, . _ @ -). Default: the model's folder name" },
    "--format": {
      value: "fc|prompt",
      about: "How the outputs were stored: fc (function calling: lists of {name: arguments JSON}), prompt (the reply's text, decoded as Python calls). " +
        "Default: detected (fc when any output is a list of calls, or the folder's name says FC), and said in the output"
    },
    "--candidate": {
      value: "C",
      about: "Also grade one of the benchmark's own scripted candidates (gold, none) on the same tasks, in the same run, so the report pairs them"
    },
    "--home": { value: "DIR", fallback: DEFAULT_HOME, about: "The experiment home (its SQLite store)" },
    "--store": storeDoc,
    "--json": { about: "Print one JSON document: the run's report, with what was imported under import" }
  }
}

const formatFlag = Options.text("format").pipe(
  Options.mapEffect((text) =>
    text === "fc" || text === "prompt"
      ? Effect.succeed(text)
      : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--format ${text}: expected one of fc, prompt`)))
  ),
  Options.optional
)

/** The run's `tasks` setting, which replay selects again: a whole stratum by name, else each id. */
const taskSelectors = (benchmark: string, all: ReadonlyArray<EnvironmentDef>, chosen: ReadonlyArray<EnvironmentDef>): ReadonlyArray<string> => {
  const taken = new Set(chosen.map((e) => e.task))
  const strata = [...new Set(chosen.map((e) => e.stratum))]
  return strata.flatMap((stratum) => {
    const members = all.filter((e) => e.stratum === stratum)
    return members.every((e) => taken.has(e.task))
      ? [`${benchmark}/${stratum}`]
      : members.filter((e) => taken.has(e.task)).map((e) => `${benchmark}/${e.task}`)
  })
}

const listed = (ids: ReadonlyArray<string>): string => `${ids.slice(0, 5).join(", ")}${ids.length > 5 ? `, and ${ids.length - 5} more` : ""}`

export const importCommand = Command.make(
  "import",
  {
    benchmark: Args.text({ name: "BENCHMARK" }),
    dir: Args.text({ name: "DIR" }),
    as: Options.text("as").pipe(Options.optional),
    format: formatFlag,
    candidate: Options.text("candidate").pipe(Options.repeated),
    home: Options.text("home").pipe(Options.withDefault(DEFAULT_HOME)),
    store: storeOption,
    json: Options.boolean("json")
  },
  (opts) =>
    Effect.gen(function*() {
      const reader = yield* loadResultReader(opts.benchmark)
      const badName = (given: string) => new UsageError({ detail: `--as ${JSON.stringify(given)}: expected a name of letters, digits, . _ @ - (the candidate is import:NAME)` })
      if (Option.isSome(opts.as) && !NAME.test(opts.as.value)) return yield* badName(opts.as.value)
      const stat = yield* Effect.try({
        try: () => statSync(opts.dir, { throwIfNoEntry: false }),
        catch: (e) => new UsageError({ detail: `${opts.dir}: ${e instanceof Error ? e.message : String(e)}` })
      })
      if (stat === undefined || !stat.isDirectory()) {
        return yield* new UsageError({ detail: `${opts.dir}: ${stat === undefined ? "no such folder" : "not a folder"} (import takes the folder holding the result files)` })
      }
      const results = yield* reader.read(opts.dir, { format: Option.getOrNull(opts.format) }).pipe(
        Effect.mapError((e) => (e.reason === "format" || e.reason === "no-files" ? new UsageError({ detail: e.message }) : e))
      )
      const given = Option.getOrElse(opts.as, () => results.name.replace(/[^A-Za-z0-9._@-]+/g, "-").replace(/^[^A-Za-z0-9]+/, ""))
      if (!NAME.test(given)) return yield* badName(given)
      const name = importedName(given, results.format.actionSpace)
      const registryEntry: Json = {
        imported: opts.benchmark,
        format: results.format.name,
        files: Object.fromEntries(results.files.map((f) => [f.path, f.sha256]))
      }

      const lanes: Array<Lane> = []
      const notes = [...results.notes]
      const tasks: Array<string> = []
      for (const { benchmark, options, tasks: outputs } of results.outputs) {
        const provider = yield* loadBenchmark(benchmark)
        const all = yield* provider.environments
        const chosen = all.filter((e) => outputs.has(e.task))
        const known = new Set(all.map((e) => e.task))
        const strangers = [...outputs.keys()].filter((id) => !known.has(id))
        if (strangers.length > 0) notes.push(`not imported: ${counted(strangers.length, "id")} in the files ${strangers.length === 1 ? "names" : "name"} no ${benchmark} task (${listed(strangers)})`)
        if (chosen.length === 0) continue
        const candidates: Array<Candidate> = [importedCandidate(name, { registryEntry, outputs: (env) => outputs.get(env.task), ...(options !== undefined ? { options } : {}) })]
        for (const c of opts.candidate) {
          if (rosterName(provider, c) === null) {
            return yield* new UsageError({ detail: `--candidate ${c}: an import grades only ${benchmark}'s own scripted candidates beside it (${provider.roster.join(", ")}, none)` })
          }
          candidates.push(yield* resolveCandidate(provider, c))
        }
        lanes.push({ provider, environments: chosen, candidates: candidates.filter((c, i) => candidates.findIndex((d) => d.def.name === c.def.name) === i) })
        tasks.push(...taskSelectors(benchmark, all, chosen))
      }
      if (lanes.length === 0) return yield* new UsageError({ detail: `nothing to import from ${opts.dir}: ${notes.join("; ")}` })

      const imported = {
        from: resolve(opts.dir),
        candidate: name,
        format: results.format.name,
        why: results.format.why,
        files: results.files,
        notes
      }
      const header = [
        `import of ${imported.from} as ${name}: format ${imported.format} (${imported.why})`,
        `  ${counted(results.files.length, "file")}, ${counted(results.files.reduce((n, f) => n + f.lines, 0), "line")}: ${results.files.map((f) => `${f.category} ${f.lines}`).join(", ")}`,
        ...notes.map((n) => `  ${n}`)
      ].join("\n")
      if (!opts.json) yield* Console.log(header)

      const plan = yield* makePlan(lanes, 1)
      const at = yield* checkedLocation(opts.home, opts.store)
      yield* Home.lock(opts.home, { command: `assay ${process.argv.slice(2).join(" ")}` })
      const outcome = yield* Effect.gen(function*() {
        yield* rebuildUnfinished
        return yield* runExperiment(plan, {
          parallel: PARALLEL,
          maxUsd: null,
          // The imported candidate's model calls are answered by its recorded outputs, never sent.
          handlers: { "model/generate": Imported.handler },
          progress: stderrProgress(),
          settings: {
            benchmarks: lanes.map((l) => l.provider.name),
            candidates: lanes[0]!.candidates.map((c) => c.def.name),
            tasks,
            reps: 1,
            parallel: PARALLEL,
            imported: { from: imported.from, format: imported.format, files: Object.fromEntries(results.files.map((f) => [f.path, f.sha256])) }
          }
        })
      }).pipe(Effect.provide(Store.layerAt(at)))

      if (opts.json) {
        const report = JSON.parse(yield* encodeJson(outcome.report).pipe(Effect.orDie)) as Record<string, unknown>
        yield* Console.log(JSON.stringify({ ...report, import: imported }, null, 2))
      } else yield* Console.log(renderText(outcome.report))
      // A recorded output that could not be played to its end (the runner recorded an error, or fewer
      // turns than the task has) ends its Attempt failed, graded 0 as upstream grades it; any other
      // early end is the import's failure (or the benchmark's), not the model's.
      const unplayed = outcome.attempts.filter((a) => a.verdict.ended?.reason === "protocol-failed" && a.verdict.ended.provider === undefined && a.candidate === name)
      if (unplayed.length > 0) {
        yield* Console.error(`assay: ${unplayed.length} imported lines could not be played to their end and are graded 0 (${unplayed[0]!.task}: ${unplayed[0]!.verdict.ended!.detail})`)
      }
      const broken = outcome.attempts.filter((a) => a.verdict.ended !== null && !unplayed.includes(a))
      if (broken.length > 0) {
        return yield* new ImportIncomplete({ cells: broken.length, of: outcome.attempts.length, detail: broken[0]!.verdict.ended!.detail })
      }
    }).pipe(Effect.scoped)
).pipe(Command.withDescription(importDoc.about))
