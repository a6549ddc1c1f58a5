/**
 * The assay command: plan, run, report, data, equivalence. Library errors arrive here typed
 * and leave as one clear line on stderr with a non-zero exit code.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Data, Effect, Layer, Option, Schema } from "effect"
import * as ContentId from "../content/ContentId.ts"
import { decodeJson, encodeJson, renderHtml, renderMarkdown, renderText, type Report } from "../experiment/Report.ts"
import { fromNote, renderEstimate, runPilot } from "../experiment/Preflight.ts"
import { classify, type Lane, makePlan, type Plan, run as runExperiment } from "../experiment/Runner.ts"
import * as Store from "../experiment/Store.ts"
import type { Handler } from "../world/WorldEffects.ts"
import * as Registry from "../model/Registry.ts"
import { type EffectsSpec, FaultReason, withEffects } from "../schema/EnvironmentDef.ts"
import { benchmarkNames, loadBenchmark, UsageError } from "./benchmarks.ts"
import { resolveCandidate } from "./candidates.ts"
import { harnessOptions, harnessRunOptions, isHarnessSelection, planHarness, runHarnesses } from "./harness.ts"
import { stderrProgress } from "./progress.ts"

/** An intended exit with a code (the plan printed without --yes exits 2). */
class ExitWith extends Data.TaggedError("ExitWith")<{ readonly code: number }> {}

// ---------------------------------------------------------------------------------------------
// Options shared by plan and run

const benchmark = Options.text("benchmark").pipe(Options.repeated, Options.withDescription("Benchmark to run (repeatable): " + benchmarkNames().join(", ")))
const candidate = Options.text("candidate").pipe(
  Options.repeated,
  Options.withDescription(
    "Candidate (repeatable): gold, echo, none (as the benchmark offers), PROVIDER:MODEL (tools offered), PROVIDER:MODEL+text (no tools: answers in text, BFCL's prompt mode), or harness:NAME[:MODEL] on the corpus"
  )
)
const model = Options.text("model").pipe(Options.repeated, Options.withDescription("Model candidate PROVIDER:MODEL or PROVIDER:MODEL+text (repeatable; providers: openai, anthropic, google, ollama, or any in the registry); with --harness, HARNESS:MODEL"))
const task = Options.text("task").pipe(Options.repeated, Options.withDescription("Only these task ids (repeatable)"))
const reps = Options.integer("reps").pipe(Options.withDefault(1), Options.withDescription("Repetitions of each cell"))
const judge = Options.text("judge").pipe(Options.optional, Options.withDescription("Judge model PROVIDER:MODEL"))
const noJudge = Options.boolean("no-judge").pipe(Options.withDescription("Grade without a judge: judged checks are reported as not evaluated"))
const home = Options.directory("home").pipe(Options.withDefault(".assay"), Options.withDescription("The experiment home (its SQLite store)"))
const json = Options.boolean("json").pipe(Options.withDescription("Print one JSON document"))

const selection = { benchmark, candidate, model, task, reps, judge, noJudge, home, json, ...harnessOptions }

type Selection = {
  readonly benchmark: ReadonlyArray<string>
  readonly candidate: ReadonlyArray<string>
  readonly model: ReadonlyArray<string>
  readonly task: ReadonlyArray<string>
  readonly reps: number
  readonly judge: Option.Option<string>
  readonly noJudge: boolean
  readonly home: string
  readonly json: boolean
  readonly harness: ReadonlyArray<string>
  readonly family: ReadonlyArray<string>
}

const parseFaults = (text: string): Effect.Effect<EffectsSpec, UsageError> => {
  const [seed, rate, kinds] = text.split(":")
  const seedN = Number(seed)
  const rateN = Number(rate)
  const kindList = kinds ? kinds.split(",").filter((k) => k.length > 0) : ["rate-limit", "server-error", "timeout"]
  const bad = kindList.filter((k) => !Schema.is(FaultReason)(k))
  if (!Number.isInteger(seedN) || !(rateN >= 0 && rateN <= 1) || bad.length > 0 || kindList.length === 0) {
    return Effect.fail(
      new UsageError({
        detail: `--faults ${text}: expected SEED:RATE[:KIND,...] with an integer seed, a rate in [0, 1] and kinds among rate-limit, server-error, timeout`
      })
    )
  }
  return Effect.succeed({
    admission: "all",
    faults: { seed: seedN, rate: rateN, only: null, kinds: kindList as unknown as readonly [FaultReason, ...Array<FaultReason>] }
  })
}

/** The lanes of a selection: each benchmark with its environments and candidates. */
const lanesOf = (sel: Selection, faults: Option.Option<EffectsSpec>) =>
  Effect.gen(function*() {
    if (sel.benchmark.length === 0) {
      return yield* new UsageError({ detail: `no benchmark: add --benchmark with one of ${benchmarkNames().join(", ")}` })
    }
    if (sel.reps < 1) return yield* new UsageError({ detail: "--reps must be at least 1" })
    const lanes: Array<Lane> = []
    for (const name of sel.benchmark) {
      const provider = yield* loadBenchmark(name)
      let environments = yield* provider.environments.pipe(Effect.mapError((e) => new UsageError({ detail: e.message })))
      if (sel.task.length > 0) {
        const unknown = sel.task.filter((t) => !environments.some((e) => e.task === t))
        if (unknown.length > 0 && sel.benchmark.length === 1) {
          return yield* new UsageError({ detail: `no task ${unknown.join(", ")} in ${name}` })
        }
        environments = environments.filter((e) => sel.task.includes(e.task))
      }
      if (Option.isSome(faults)) environments = environments.map((e) => withEffects(e, faults.value))
      // The judge is part of what a score means: it goes into each EnvironmentDef that uses one.
      const judgeRef = sel.noJudge ? null : Option.getOrNull(sel.judge)
      if (judgeRef !== null && provider.judged === true) {
        const judge = yield* Effect.flatMap(Registry.Registry, (r) => r.resolve(judgeRef)).pipe(
          Effect.mapError((e) => new UsageError({ detail: `--judge ${judgeRef}: ${e.message}` }))
        )
        environments = environments.map((e) => ({ ...e, capabilities: { ...e.capabilities, models: { ...e.capabilities.models, judge: judge.ref } } }))
      }
      const names = [...sel.candidate, ...sel.model]
      const chosen = names.length > 0 ? names : provider.roster
      const candidates = yield* Effect.forEach(chosen, (c) => resolveCandidate(provider, c))
      lanes.push({ provider, environments, candidates })
    }
    return lanes
  })

const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const planSummary = (sel: Selection, lanes: ReadonlyArray<Lane>, states: ReadonlyArray<{ readonly state: string }>, experimentId: string) => ({
  experimentId,
  home: resolve(sel.home),
  benchmarks: lanes.map((l) => ({ name: l.provider.name, version: l.provider.version, tasks: l.environments.length })),
  candidates: Array.from(new Set(lanes.flatMap((l) => l.candidates.map((c) => c.def.name)))),
  repetitions: sel.reps,
  judge: sel.noJudge ? null : Option.getOrNull(sel.judge),
  cells: {
    total: states.length,
    new: states.filter((s) => s.state === "new").length,
    kept: states.filter((s) => s.state === "kept").length,
    stale: states.filter((s) => s.state === "stale").length,
    faulted: states.filter((s) => s.state === "faulted").length
  }
})

const planText = (summary: ReturnType<typeof planSummary>, models: ReadonlyArray<{ provider: string; status: string; reason: string; models: ReadonlyArray<string> }>) =>
  [
    `experiment ${ContentId.short(summary.experimentId)} in ${summary.home}`,
    ...summary.benchmarks.map((b) => `  benchmark ${b.name} (v${b.version}): ${b.tasks} tasks`),
    `  candidates: ${summary.candidates.join(", ")}`,
    `  repetitions: ${summary.repetitions}; judge: ${summary.judge ?? "none"}`,
    `  cells: ${summary.cells.total} (${summary.cells.new} new, ${summary.cells.kept} kept, ${summary.cells.stale} stale${summary.cells.faulted > 0 ? `, ${summary.cells.faulted} faulted to run again` : ""})`,
    `model providers:`,
    ...models.map((m) => `  ${m.provider.padEnd(12)} ${m.status.padEnd(7)} ${m.reason}${m.status === "live" ? ` (${m.models.length} models)` : ""}`)
  ].join("\n")

const withStore = <A, E, R>(homeDir: string, effect: Effect.Effect<A, E, R | Store.Store>) =>
  Effect.provide(effect, Store.layer(homeDir))

/** Cell states for a plan without creating a home: plan and run without --yes change nothing. */
const statesOf = (homeDir: string, plan: Plan) =>
  existsSync(join(homeDir, "assay.sqlite"))
    ? withStore(homeDir, classify(plan))
    : Effect.succeed(plan.cells.map((cell) => ({ cell, state: "new" as const })))

// The model clients load @effect/ai and its providers: seconds of start-up a run of scripted
// candidates does not need, so they are loaded on first use.
const modelCalls: Handler = (effect) =>
  Effect.flatMap(Effect.promise(() => import("../model/ModelAgent.ts")), (m) => m.liveHandler(effect))

const liveness = () => Effect.flatMap(Effect.promise(() => import("../model/Clients.ts")), (m) => m.liveness())

/** A model candidate whose provider is not live would fail every cell: refuse before any runs. */
const requireLiveModels = (lanes: ReadonlyArray<Lane>) =>
  Effect.gen(function*() {
    const providers = new Set(
      lanes.flatMap((l) => l.candidates.filter((c) => c.def.kind === "llm").map((c) => (c.registryEntry as { provider?: string } | null)?.provider ?? ""))
    )
    if (providers.size === 0) return
    const live = yield* liveness()
    const absent = live.filter((p) => providers.has(p.provider) && p.status !== "live")
    if (absent.length > 0) {
      return yield* new UsageError({
        detail: absent.map((p) => `model provider ${p.provider} is not live: ${p.reason}`).join("; ") + " (nothing was run)"
      })
    }
  })

// ---------------------------------------------------------------------------------------------
// plan

const planCommand = Command.make("plan", selection, (sel) =>
  Effect.gen(function*() {
    if (isHarnessSelection(sel)) return yield* planHarness(sel)
    const lanes = yield* lanesOf(sel, Option.none())
    const plan = yield* makePlan(lanes, sel.reps)
    const states = yield* statesOf(sel.home, plan)
    const summary = planSummary(sel, lanes, states, plan.experimentId)
    const models = yield* liveness()
    const previous = existsSync(join(sel.home, "assay.sqlite"))
      ? fromNote(yield* withStore(sel.home, Effect.flatMap(Store.Store, (s) => s.latestNote(plan.experimentId, "estimate"))))
      : null
    if (sel.json) yield* printJson({ ...summary, modelProviders: models, ...(previous ? { estimate: previous } : {}) })
    else yield* Console.log(planText(summary, models) + (previous ? "\n" + renderEstimate(previous) : ""))
  })).pipe(Command.withDescription("Show what a run would do: benchmarks, candidates, cells (new, kept, stale, faulted to run again), live model providers. Makes no model call and changes nothing."))

// ---------------------------------------------------------------------------------------------
// run

const runOptions = {
  ...selection,
  maxUsd: Options.float("max-usd").pipe(Options.optional, Options.withDescription("No new cell starts once measured spend (the calls and their judging, at list price) reaches this")),
  timeoutSecs: Options.float("timeout-secs").pipe(Options.optional, Options.withDescription("Wall-time limit of each Attempt")),
  parallel: Options.integer("parallel").pipe(Options.withDefault(4), Options.withDescription("Cells run at once")),
  faults: Options.text("faults").pipe(Options.optional, Options.withDescription("Inject faults SEED:RATE[:KIND,...] (kinds: rate-limit, server-error, timeout)")),
  preflightUsd: Options.float("preflight-usd").pipe(
    Options.optional,
    Options.withDescription("First run a pilot (one cell per candidate and stratum); stop with exit 3 if the conservative estimate of the rest exceeds USD")
  ),
  yes: Options.boolean("yes").pipe(Options.withDescription("Run; without it the plan is printed and the command exits 2")),
  ...harnessRunOptions
}

const runCommand = Command.make("run", runOptions, (opts) =>
  Effect.gen(function*() {
    if (isHarnessSelection(opts)) {
      const code = yield* runHarnesses(opts)
      if (code !== 0) return yield* new ExitWith({ code })
      return
    }
    if (Option.isSome(opts.preflightShare)) {
      return yield* new UsageError({ detail: "--preflight-share is for harness runs on a subscription (--harness); model runs are billed per token: use --preflight-usd" })
    }
    const faults = Option.isSome(opts.faults) ? Option.some(yield* parseFaults(opts.faults.value)) : Option.none()
    const lanes = yield* lanesOf(opts, faults)
    const plan = yield* makePlan(lanes, opts.reps)
    if (opts.yes) yield* requireLiveModels(lanes)
    if (!opts.yes) {
      const states = yield* statesOf(opts.home, plan)
      const summary = planSummary(opts, lanes, states, plan.experimentId)
      if (opts.json) yield* printJson({ ...summary, ran: false, hint: "add --yes to run" })
      else yield* Console.log(planText(summary, []) + "\nnot run: add --yes to run it")
      return yield* new ExitWith({ code: 2 })
    }
    const runSettings = (pilot: boolean) => ({
        parallel: opts.parallel,
        maxUsd: Option.getOrNull(opts.maxUsd),
        timeoutSeconds: Option.getOrNull(opts.timeoutSecs),
        handlers: { "model/generate": modelCalls },
        progress: stderrProgress(),
        settings: {
          benchmarks: opts.benchmark,
          candidates: [...opts.candidate, ...opts.model],
          tasks: opts.task,
          reps: opts.reps,
          parallel: opts.parallel,
          maxUsd: Option.getOrNull(opts.maxUsd),
          timeoutSecs: Option.getOrNull(opts.timeoutSecs),
          faults: Option.getOrNull(opts.faults),
          judge: opts.noJudge ? null : Option.getOrNull(opts.judge),
          preflightUsd: Option.getOrNull(opts.preflightUsd),
          pilot
        }
      })
    if (Option.isSome(opts.preflightUsd)) {
      const { estimate: gate } = yield* withStore(opts.home, runPilot(plan, runSettings(true), { budgetUsd: opts.preflightUsd.value, parallel: opts.parallel }))
      if (gate.verdict !== "within-budget") {
        if (opts.json) yield* printJson({ stopped: gate.verdict, runId: gate.runId, estimate: gate })
        else yield* Console.log(renderEstimate(gate) + `\nstopped: ${gate.verdict}; run again with a larger --preflight-usd to resume after the pilot`)
        return yield* new ExitWith({ code: 3 })
      }
      if (!opts.json) yield* Console.error(renderEstimate(gate))
    }
    const outcome = yield* withStore(opts.home, runExperiment(plan, runSettings(false)))
    yield* printReport(outcome.report, opts.json ? "json" : "text")
  })).pipe(Command.withDescription("Run an experiment (resuming it if the home has its cells) and print its Scorecards."))

const printReport = (report: Report, format: "json" | "text" | "md" | "html") =>
  format === "json"
    ? Effect.flatMap(encodeJson(report).pipe(Effect.orDie), Console.log)
    : Console.log(format === "md" ? renderMarkdown(report) : format === "html" ? renderHtml(report) : renderText(report))

// ---------------------------------------------------------------------------------------------
// report

const reportCommand = Command.make(
  "report",
  {
    runId: Args.text({ name: "RUN-ID" }).pipe(Args.optional, Args.withDescription("A run id (r-...); the latest run when absent")),
    home,
    json,
    format: Options.choice("format", ["text", "md", "html"]).pipe(Options.withDefault("text" as const)),
    out: Options.file("out").pipe(Options.optional, Options.withDescription("Write the report to this file"))
  },
  (opts) =>
    Effect.gen(function*() {
      if (!existsSync(join(opts.home, "assay.sqlite"))) {
        return yield* new UsageError({ detail: `no assay home at ${resolve(opts.home)}: run an experiment first or pass --home` })
      }
      const runRecord = yield* withStore(
        opts.home,
        Effect.flatMap(Store.Store, (store) =>
          Option.match(opts.runId, {
            onNone: () => Effect.flatMap(store.latestRun, (r) => (r ? Effect.succeed(r) : Effect.fail(new UsageError({ detail: "the home has no run yet" })))),
            onSome: (id) => store.getRun(id)
          }))
      )
      if (runRecord.summary === null) {
        return yield* new UsageError({ detail: `run ${runRecord.id} did not finish: run the same command again to resume it` })
      }
      const report = yield* decodeJson(JSON.stringify(runRecord.summary)).pipe(
        Effect.mapError((e) => new UsageError({ detail: `the stored report of ${runRecord.id} cannot be read: ${e.message}` }))
      )
      const format = opts.json ? "json" : opts.format
      if (Option.isSome(opts.out)) {
        const text = format === "json" ? yield* encodeJson(report).pipe(Effect.orDie) : format === "md" ? renderMarkdown(report) : format === "html" ? renderHtml(report) : renderText(report)
        mkdirSync(dirname(resolve(opts.out.value)), { recursive: true })
        writeFileSync(opts.out.value, text)
        yield* Console.error(`assay: wrote ${opts.out.value}`)
      } else {
        yield* printReport(report, format)
      }
    })
).pipe(Command.withDescription("Re-render a stored run from the store alone: text, Markdown, JSON or one self-contained HTML file."))

// ---------------------------------------------------------------------------------------------
// data

const dataRoot = (): string => resolve(process.env["ASSAY_DATA_DIR"] ?? join(".assay", "data"))

const pull = Command.make(
  "pull",
  {
    benchmark: Args.text({ name: "BENCHMARK" }),
    from: Options.directory("from").pipe(Options.optional, Options.withDescription("Copy from a local folder laid out like the data root instead of downloading"))
  },
  (opts) =>
    Effect.gen(function*() {
      const provider = yield* loadBenchmark(opts.benchmark)
      const files = provider.data ?? []
      if (files.length === 0) {
        yield* Console.log(`${provider.name} needs no upstream data`)
        return
      }
      const target = dataRoot()
      const from = Option.getOrNull(opts.from)
      for (const file of files) {
        const dest = join(target, file.path)
        const bytes = from !== null
          ? yield* Effect.try({
            try: () => readFileSync(join(from, file.path)),
            catch: () => new UsageError({ detail: `${join(from, file.path)} is missing` })
          })
          : yield* Effect.tryPromise({
            try: async () => {
              const response = await fetch(file.url)
              if (!response.ok) throw new Error(`HTTP ${response.status}`)
              return Buffer.from(await response.arrayBuffer())
            },
            catch: (e) => new UsageError({ detail: `cannot download ${file.url}: ${e instanceof Error ? e.message : String(e)} (use --from DIR with a local copy)` })
          })
        const actual = ContentId.sha256Hex(bytes)
        if (actual !== file.sha256) {
          return yield* new UsageError({ detail: `${file.path}: sha256 ${actual} differs from the pinned ${file.sha256}` })
        }
        if (from === null || resolve(from) !== target) {
          mkdirSync(dirname(dest), { recursive: true })
          if (from !== null) copyFileSync(join(from, file.path), dest)
          else writeFileSync(dest, bytes)
        }
        yield* Console.log(`ok ${file.path}`)
      }
      yield* Console.log(`${files.length} files of ${provider.name} in ${target}`)
    })
).pipe(Command.withDescription("Fetch a benchmark's pinned upstream files (checked by sha256) into ASSAY_DATA_DIR (default .assay/data)."))

const dataCommand = Command.make("data").pipe(Command.withSubcommands([pull]), Command.withDescription("Benchmark data."))

// ---------------------------------------------------------------------------------------------
// equivalence

const equivalenceCommand = Command.make(
  "equivalence",
  {
    benchmark: Args.text({ name: "BENCHMARK" }),
    corpus: Options.file("corpus").pipe(Options.optional, Options.withDescription("An oracle corpus in the provider's line format")),
    json
  },
  (opts) =>
    Effect.gen(function*() {
      const provider = yield* loadBenchmark(opts.benchmark)
      if (!provider.equivalence) return yield* new UsageError({ detail: `${provider.name} has no upstream to be equivalent to` })
      const result = yield* provider.equivalence(Option.getOrNull(opts.corpus)).pipe(Effect.mapError((e) => new UsageError({ detail: e.message })))
      if (opts.json) yield* printJson(result)
      else {
        yield* Console.log(`${result.benchmark}: ${result.agree} of ${result.lines} lines agree with upstream (${result.corpus})`)
        for (const d of result.disagree) yield* Console.log(`  disagree: ${JSON.stringify(d)}`)
      }
      if (result.agree !== result.lines) return yield* new ExitWith({ code: 1 })
    })
).pipe(Command.withDescription("Run the transcription over an upstream oracle corpus and print how many lines agree, and each disagreement."))

// ---------------------------------------------------------------------------------------------

const assay = Command.make("assay").pipe(
  Command.withSubcommands([planCommand, runCommand, reportCommand, dataCommand, equivalenceCommand]),
  Command.withDescription("Evaluate LLM agents and agent harnesses on public benchmarks, reproducibly and at known cost.")
)

const cli = Command.run(assay, { name: "assay", version: "0.1.0" })

const program = Effect.suspend(() => cli(process.argv)).pipe(
  Effect.provide(Layer.mergeAll(NodeContext.layer, Registry.layer)),
  Effect.catchAllCause((cause) =>
    Effect.sync(() => {
      if (Cause.isInterruptedOnly(cause)) {
        process.exitCode = 130
        return
      }
      const failure = Cause.failureOption(cause)
      if (Option.isNone(failure)) {
        // A defect: a bug in assay or a dependency, still one line, with the cause for a report.
        const defect = Cause.squash(cause)
        process.stderr.write(`assay: internal error: ${defect instanceof Error ? defect.message : String(defect)}\n`)
        if (process.env["ASSAY_DEBUG"]) process.stderr.write(Cause.pretty(cause) + "\n")
        process.exitCode = 1
        return
      }
      const error = failure.value
      if (error instanceof ExitWith) {
        process.exitCode = error.code
        return
      }
      // @effect/cli has already printed its own message for a bad command line.
      if (typeof error === "object" && error !== null && "_tag" in error && String(error._tag).startsWith("ValidationError")) {
        process.exitCode = 2
        return
      }
      const message = error instanceof Error ? error.message : String(error)
      process.stderr.write(`assay: ${message}\n`)
      process.exitCode = error instanceof UsageError ? 2 : 1
    })
  )
)

NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
