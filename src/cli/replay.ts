/**
 * `assay replay [RUN-ID] [--home DIR] [--json]`: re-evaluates every Attempt of a run from its
 * recording with the current evaluators. No network, no key, $0. The environments are rebuilt
 * from the run's settings as `run` built them (benchmarks, tasks, faults, judge), the candidates
 * from the experiment's definitions; Attempts are matched to them by environment id.
 */
import { resolve } from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { Array as Arr, Console, Effect, Option, Schema } from "effect"
import { type ReplayResult, replayRun } from "../experiment/Replay.ts"
import type { Candidate, Lane } from "../experiment/Runner.ts"
import * as Store from "../experiment/Store.ts"
import { checkedLocation, storeExists, storeOption } from "./storeFlag.ts"
import type { ExperimentDef } from "../schema/ExperimentDef.ts"
import { type EffectsSpec, FaultReason, withFaults } from "../schema/EnvironmentDef.ts"
import { loadBenchmark, UsageError } from "./benchmarks.ts"
import { resolveCandidate } from "./candidates.ts"
import { withJudges } from "./judges.ts"
import { selectTasks } from "./tasks.ts"

/** A replay that could not re-evaluate every Attempt: printed, then exit 1. */
export class ReplayIncomplete extends Schema.TaggedError<ReplayIncomplete>()("ReplayIncomplete", {
  missing: Schema.Int,
  notReplayable: Schema.Int,
  benchmarkFailed: Schema.Int
}) {
  override get message() {
    const parts = [
      ...(this.missing > 0 ? [`${this.missing} recorded effects are missing`] : []),
      ...(this.notReplayable > 0 ? [`${this.notReplayable} Attempts cannot be replayed`] : []),
      ...(this.benchmarkFailed > 0 ? [`the benchmark failed in ${this.benchmarkFailed} Attempts (its code or data as it is now)`] : [])
    ]
    return `replay incomplete: ${parts.join("; ")} (each is named above)`
  }
}

/** What `run` records of a selection; other fields (parallel, maxUsd, ...) do not change an environment. */
const RunSettings = Schema.Struct({
  benchmarks: Schema.Array(Schema.String),
  tasks: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  faults: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  judge: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  // Two judges (the first is `judge`) and repetitions, when the run had them (src/cli/judges.ts).
  judges: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  judgeReps: Schema.optionalWith(Schema.Int, { default: () => 1 }),
  // --max-output-tokens: part of a model candidate where it lowers what its calls ask for.
  maxOutputTokens: Schema.optionalWith(Schema.NullOr(Schema.Number), { default: () => null }),
  // Container benchmarks (harbor:DIR): --engine and --image FROM=TO as the run had them.
  engine: Schema.optional(Schema.Literal("podman", "docker")),
  images: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
})

/**
 * `SEED:RATE[:KIND,...]` as `run --faults` reads it (the settings keep the text as typed). The
 * same spec must come out, in the same kind order, or the environment ids would not match.
 */
export const faultsOfSetting = (text: string): Effect.Effect<EffectsSpec, UsageError> => {
  const [seed = "", rate = "", kinds, ...extra] = text.split(":")
  const named = kinds === undefined ? FaultReason.literals : kinds.split(",")
  const kindList = Array.from(new Set(named.filter(Schema.is(FaultReason))))
  const seedN = Number(seed)
  const rateN = Number(rate)
  if (extra.length > 0 || !Number.isSafeInteger(seedN) || !(rateN >= 0 && rateN <= 1) || !named.every(Schema.is(FaultReason)) || !Arr.isNonEmptyReadonlyArray(kindList)) {
    return Effect.fail(new UsageError({ detail: `the run's faults setting ${JSON.stringify(text)} is not SEED:RATE[:KIND,...]` }))
  }
  return Effect.succeed({ admission: "all", faults: { seed: seedN, rate: rateN, only: null, kinds: kindList } })
}

/**
 * The run's lanes as `run` built them: each benchmark's environments (its tasks, faults and
 * judge applied) and the experiment's candidates. A candidate that cannot be rebuilt is kept
 * apart with why, so that its Attempts are named rather than the whole replay refused.
 */
export const lanesOfRun = (settings: unknown, experiment: ExperimentDef) =>
  Effect.gen(function*() {
    const sel = yield* Schema.decodeUnknown(RunSettings)(settings).pipe(
      Effect.mapError((e) => new UsageError({ detail: `the run's settings do not say which benchmarks it ran: ${e.message}` }))
    )
    const faults = sel.faults === null ? null : yield* faultsOfSetting(sel.faults)
    const lanes: Array<Lane> = []
    const unavailable = new Map<string, string>()
    for (const name of sel.benchmarks) {
      const provider = yield* loadBenchmark(name, { engine: sel.engine, images: sel.images })
      let environments = yield* provider.environments
      if (sel.tasks.length > 0) environments = selectTasks(name, environments, sel.tasks).selected
      if (faults !== null) environments = environments.map((e) => withFaults(e, faults.faults))
      // The judge is named in each EnvironmentDef that uses one, as `run` does; it is never called here.
      const judges = sel.judges.length > 0 ? sel.judges : sel.judge === null ? [] : [sel.judge]
      environments = yield* withJudges(provider, environments, judges, sel.judgeReps, "the run's judge")
      const candidates: Array<Candidate> = []
      for (const def of experiment.candidates) {
        const resolved = yield* Effect.either(resolveCandidate(provider, def.name, { maxOutputTokens: sel.maxOutputTokens, imported: true }))
        if (resolved._tag === "Right") candidates.push(resolved.right)
        else unavailable.set(def.name, resolved.left.message)
      }
      lanes.push({ provider, environments, candidates })
    }
    return { lanes, unavailable }
  })

const verdictText = (v: ReplayResult["differ"][number]["was"]): string => {
  const failed = Object.entries(v.checks).filter(([, ok]) => !ok).map(([check]) => check)
  const passed = Object.entries(v.checks).filter(([, ok]) => ok).map(([check]) => check)
  return `${v.reward}${v.ended === null ? "" : ` (ended: ${v.ended})`} [${[...passed.map((c) => `${c} ✓`), ...failed.map((c) => `${c} ✗`)].join(", ")}]`
}

/** The replay as people read it: the counts, then each difference and each gap named. */
export const replayText = (result: ReplayResult): string => {
  const costs = result.recordedCostUsd === null ? "unknown" : `$${result.recordedCostUsd.toFixed(4)}`
  const lines = [
    `replay of ${result.replayedFrom}: ${result.replayed} Attempts re-evaluated from their recordings, ${result.same} verdicts the same, ${result.differ.length} differ`,
    `spent $0 (the recorded Attempts cost ${costs} when they ran)`,
    ...result.differ.map((d) => `  differs: ${d.benchmark} ${d.task} · ${d.candidate} · rep ${d.repetition}: ${verdictText(d.was)} → ${verdictText(d.now)}`),
    ...result.missing.map((m) =>
      `  missing: ${m.benchmark} ${m.task} · ${m.candidate} · rep ${m.repetition}: the recording ${m.reason === "replay-missing" ? "lacks" : "has another request for"} ${m.effect} #${m.occurrence}`
    ),
    ...result.notReplayable.map((n) => `  not replayable: ${n.benchmark} ${n.task} · ${n.candidate} · rep ${n.repetition}: ${n.reason}`),
    ...(result.benchmarkFailed ?? []).map((b) => `  benchmark failed: ${b.benchmark} ${b.task} · ${b.candidate} · rep ${b.repetition}: ${b.detail}`),
    ...(result.kept !== undefined
      ? [`${result.kept} cells of its report were kept from earlier runs: their Attempts are replayed with those runs (\`assay runs\` lists them)`]
      : []),
    result.notStored !== undefined
      ? `not stored: ${result.notStored}`
      : result.runId === null
      ? "nothing stored: the verdicts are the ones the run has"
      : `stored as run ${result.runId} (assay report ${result.runId})`
  ]
  return lines.join("\n")
}

export const replayCommand = Command.make(
  "replay",
  {
    runId: Args.text({ name: "RUN-ID" }).pipe(Args.optional, Args.withDescription("A run id (r-...); the latest run when absent")),
    home: Options.text("home").pipe(Options.withDefault(".assay"), Options.withDescription("The experiment home (its SQLite store)")),
    store: storeOption,
    json: Options.boolean("json").pipe(Options.withDescription("Print one JSON document"))
  },
  (opts) =>
    Effect.gen(function*() {
      const at = yield* checkedLocation(opts.home, opts.store)
      if (!storeExists(at)) {
        return yield* new UsageError({ detail: `no assay home at ${resolve(opts.home)}: run an experiment first or pass --home` })
      }
      const result = yield* Effect.gen(function*() {
        const store = yield* Store.Store
        const record = Option.isSome(opts.runId) ? yield* store.getRun(opts.runId.value) : yield* store.latestRun
        if (record === null) return yield* new UsageError({ detail: "the home has no run yet" })
        const experiment = yield* store.getExperiment(record.experimentId)
        const source = yield* lanesOfRun(record.settings, experiment)
        return yield* replayRun(record.id, source)
        // Never migrated here (`run` upgrades an older store); read-only where the home cannot be written.
      }).pipe(Effect.provide(Store.layerAt(at, { migrate: false })))
      yield* opts.json ? Console.log(JSON.stringify(result, null, 2)) : Console.log(replayText(result))
      const benchmarkFailed = result.benchmarkFailed?.length ?? 0
      if (result.missing.length > 0 || result.notReplayable.length > 0 || benchmarkFailed > 0) {
        return yield* new ReplayIncomplete({ missing: result.missing.length, notReplayable: result.notReplayable.length, benchmarkFailed })
      }
    })
).pipe(
  Command.withDescription(
    "Re-evaluate every Attempt a run made from its recording with the current evaluators: no network, no key, $0 (cells it kept from earlier runs are replayed with those runs). Prints how many verdicts are the same and each that differs; a changed verdict stores the replay as a run of its own."
  )
)
