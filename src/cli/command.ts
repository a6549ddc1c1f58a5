/**
 * The assay command: plan, run, report, data, equivalence. Library errors arrive here typed
 * and leave as one clear line on stderr with a non-zero exit code. Started by main.ts, which
 * answers `--version` without loading this module.
 */
import { accessSync, constants, statSync, writeFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { Args, AutoCorrect, CliConfig, Command, CommandDescriptor, HelpDoc, Options, type Usage, ValidationError } from "@effect/cli"
// By module, not from the package's index: the index re-exports undici, ws and mime, which an
// ES module bundle must then load at every start (esbuild keeps `export *` of an external).
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Array as Arr, Cause, Console, Data, Effect, Either, Exit, Inspectable, Layer, Option, Schema } from "effect"
import * as ContentId from "../content/ContentId.ts"
import { completeReport, decodeJson, encodeJson, renderHtml, renderMarkdown, renderText, type Report } from "../experiment/Report.ts"
import * as Home from "../experiment/Home.ts"
import { endedEarlyLine, outageLine } from "./outages.ts"
import { resumeCommand, stoppedBeforeCells, stoppedLine } from "./stopped.ts"
import { replayCommand } from "./replay.ts"
import { importCommand, importDoc } from "./import.ts"
import { gradedOf, noiseCommand, noiseDoc, powerSection, storedReport } from "./noise.ts"
import { gradedOfSummaries } from "../experiment/Scorecards.ts"
import { checkedLocation, storeDoc, storeExists, storeOption, storeShown } from "./storeFlag.ts"
import { workerCommand, workerDoc } from "./worker.ts"
import { parseRate } from "../cluster/rateSpec.ts"
import { fromNote, renderEstimate, runPilot } from "../experiment/Preflight.ts"
import { capSkipped, classify, countStates, type Lane, makePlan, type Plan, run as runExperiment } from "../experiment/Runner.ts"
import { rebuildUnfinished } from "../experiment/Results.ts"
import * as Store from "../experiment/Store.ts"
import * as Registry from "../model/Registry.ts"
import * as Live from "../model/Live.ts"
import { countedIfAsked } from "../observability/OpCount.ts"
import * as Tracing from "../observability/Tracing.ts"
import { type EffectsSpec, type EnvironmentDef, FaultReason, withFaults } from "../schema/EnvironmentDef.ts"
import { benchmarkNames, benchmarkRef, loadBenchmark, UsageError } from "./benchmarks.ts"
import { pullArchive, pullData } from "./pull.ts"
import { progressLine } from "./pullArchive.ts"
import { dataRoot } from "../evaluation/DataRoot.ts"
import { resolveCandidate } from "./candidates.ts"
import { selectTasks, tasksCommand, tasksDoc, unmatchedDetail } from "./tasks.ts"
import { runsCommand, runsDoc } from "./runs.ts"
import { modelsCommand, modelsDoc, registryBrief, registryLine } from "./models.ts"
import { capLines, type CapCoverage, coverageOf } from "./capCoverage.ts"
import { defaultAllowance } from "../harness/Allowance.ts"
import { harnessNames } from "../harness/Harness.ts"
import { harnessBinDirs } from "./harnessBin.ts"
import { harnessesCommand, harnessesDocs, harnessesSubcommands } from "./harnesses.ts"
import { harnessJudge, judgesOf, withJudges } from "./judges.ts"
import { DEFAULT_MAX_USD, DEFAULT_TIMEOUT_SECS, harnessOptions, harnessRunOptions, isHarnessSelection, planHarness, runHarnesses } from "./harness.ts"
import { stderrProgress } from "./progress.ts"
import * as Sandbox from "../sandbox/Sandbox.ts"
import { VERSION } from "./version.ts"
import { counted } from "./words.ts"

/** An intended exit with a code (the plan printed without --yes exits 2). */
class ExitWith extends Data.TaggedError("ExitWith")<{ readonly code: number }> {}

/** A file the command was asked to write and cannot: exit 1, and nothing is written. */
class OutputError extends Schema.TaggedError<OutputError>()("OutputError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `cannot write ${this.path}: ${this.reason}`
  }
}


/** `report` of a run with no stored report: not a usage error, the run is not done (exit 1). */
class RunUnfinished extends Schema.TaggedError<RunUnfinished>()("RunUnfinished", {
  runId: Schema.String,
  reason: Schema.Literal("running", "stopped"),
  /** For `running`: who holds the home; for `stopped`: the command that resumes it, when the run kept it. */
  detail: Schema.String
}) {
  override get message() {
    return this.reason === "running"
      ? `run ${this.runId} is still running (${this.detail}): report it once it has finished`
      : `run ${this.runId} did not finish (it was stopped): ${this.detail === "" ? "run the same command again to resume it" : `resume it with: ${this.detail}`}, or see assay runs`
  }
}

// ---------------------------------------------------------------------------------------------
// Flag values, checked while the command line is parsed, so a bad one is refused before a home
// is created or a model is probed. A refusal names the flag, the value given and what it takes.

const shown = (value: string): string => (value === "" || /\s/.test(value) ? JSON.stringify(value) : value)

const refused = (flag: string, value: string, expected: string): ValidationError.ValidationError =>
  ValidationError.invalidValue(HelpDoc.p(`--${flag} ${shown(value)}: expected ${expected}`))

// Number("") is 0 and Number("0x10") is 16: only plain decimal text is a number here.
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/
const WHOLE = /^[+-]?\d+$/

const decimalOf = (text: string): number => (DECIMAL.test(text) ? Number(text) : Number.NaN)

/** A flag taking a finite number that `accept` admits; `expected` says which, in words. */
const numberFlag = (name: string, expected: string, accept: (n: number) => boolean) =>
  Options.text(name).pipe(
    Options.mapEffect((text) => {
      const n = decimalOf(text)
      return Number.isFinite(n) && accept(n) ? Effect.succeed(n) : Effect.fail(refused(name, text, expected))
    })
  )

/** A flag taking a whole number of at least `min`. */
const wholeFlag = (name: string, min: number) =>
  Options.text(name).pipe(
    Options.mapEffect((text) => {
      const n = WHOLE.test(text) ? Number(text) : Number.NaN
      return Number.isSafeInteger(n) && n >= min ? Effect.succeed(n) : Effect.fail(refused(name, text, `a whole number, ${min} or more`))
    })
  )

/** A flag taking one of a few words. */
const choiceFlag = <const C extends ReadonlyArray<string>>(name: string, choices: C) =>
  Options.text(name).pipe(
    Options.mapEffect((text) =>
      choices.includes(text)
        ? Effect.succeed(text as C[number])
        : Effect.fail(refused(name, text, `one of ${choices.join(", ")}`))
    )
  )

const codeOf = (e: unknown): string => (e instanceof Error && "code" in e ? String(e.code) : e instanceof Error ? e.message : String(e))

/** Why a path cannot be looked at, in words (the error code alone says little to most people). */
const fsProblem = (e: unknown, path: string): string => {
  const code = codeOf(e)
  if (code === "ENOTDIR") return `a part of ${path} is a file, not a folder`
  if (code === "EACCES" || code === "EPERM") return `${path} cannot be reached (${code})`
  return e instanceof Error ? e.message : String(e)
}

/** A flag taking a path which, where something exists there, is a `kind` (a home need not exist yet). */
const pathFlag = (name: string, kind: "file" | "folder") =>
  Options.text(name).pipe(
    Options.mapEffect((text) =>
      Effect.try({ try: () => statSync(text, { throwIfNoEntry: false }), catch: (e) => refused(name, text, `a ${kind}: ${fsProblem(e, text)}`) }).pipe(
        Effect.flatMap((stat) =>
          stat === undefined || (kind === "folder" ? stat.isDirectory() : stat.isFile())
            ? Effect.succeed(text)
            : Effect.fail(refused(name, text, `a ${kind}, and ${text} is ${stat.isDirectory() ? "a folder" : stat.isFile() ? "a file" : "neither a file nor a folder"}`))
        )
      )
    )
  )

const FAULTS_FORM = `SEED:RATE[:KIND,...] (an integer seed, a rate above 0 and at most 1, kinds among ${FaultReason.literals.join(", ")})`

/** `SEED:RATE[:KIND,...]` as the faults layer takes it, or what is wrong with it. */
const faultsOf = (text: string): Either.Either<EffectsSpec, string> => {
  const parts = text.split(":")
  const [seed = "", rate, kinds] = parts
  if (rate === undefined) return Either.left("it has no rate")
  if (parts.length > 3) return Either.left(`it has ${parts.length} parts, not 2 or 3`)
  if (!WHOLE.test(seed)) return Either.left(`the seed ${shown(seed)} is not an integer`)
  // Past 2^53 a seed is not one number: two seeds typed apart would draw the same faults.
  if (!Number.isSafeInteger(Number(seed))) return Either.left(`the seed ${shown(seed)} is past ${Number.MAX_SAFE_INTEGER}, the largest seed`)
  const rateN = decimalOf(rate)
  if (rate === "") return Either.left("the rate is missing")
  if (!(rateN > 0 && rateN <= 1)) return Either.left(`the rate ${shown(rate)} is not above 0 and at most 1`)
  const named = kinds === undefined ? FaultReason.literals : kinds.split(",")
  const unknown = named.filter((k) => !Schema.is(FaultReason)(k))
  if (unknown.length > 0) return Either.left(`${unknown.map(shown).join(", ")} is not a fault kind`)
  const kindList = Array.from(new Set(named.filter(Schema.is(FaultReason))))
  if (!Arr.isNonEmptyReadonlyArray(kindList)) return Either.left("it names no fault kind")
  return Either.right({ admission: "all", faults: { seed: Number(seed), rate: rateN, only: null, kinds: kindList } })
}

const parseFaults = (text: string): Effect.Effect<EffectsSpec, UsageError> =>
  Either.match(faultsOf(text), {
    onLeft: (why) => Effect.fail(new UsageError({ detail: `--faults ${shown(text)}: expected ${FAULTS_FORM}; ${why}` })),
    onRight: Effect.succeed
  })

// The flag stays the text given (the run's settings record it as typed); parsing it here refuses it early.
const faultsFlag = Options.text("faults").pipe(
  Options.mapEffect((text) =>
    Either.match(faultsOf(text), {
      onLeft: (why) => Effect.fail(refused("faults", text, `${FAULTS_FORM}; ${why}`)),
      onRight: () => Effect.succeed(text)
    })
  )
)

const faultsDoc = {
  value: "SEED:RATE[:KIND,...]",
  about: `Inject faults into the effects of every cell: an integer seed, a rate above 0 and at most 1, kinds among ${FaultReason.literals.join(", ")} ` +
    "(default: all). A faulty environment is another experiment. Every candidate's cells are faulted (gold and none too: a tool call " +
    "of theirs meets the same draws as a model's)"
}

// ---------------------------------------------------------------------------------------------
// Options shared by plan and run

const DEFAULT_HOME = ".assay"
const DEFAULT_REPS = 1
const DEFAULT_PARALLEL = 4
const REPORT_FORMATS = ["text", "md", "html"] as const
const DEFAULT_VIEW_PORT = 4173
const DEFAULT_VIEW_HOST = "127.0.0.1"

const benchmark = Options.text("benchmark").pipe(Options.repeated)
const candidate = Options.text("candidate").pipe(Options.repeated)
const model = Options.text("model").pipe(Options.repeated)
const task = Options.text("task").pipe(Options.repeated)
const reps = wholeFlag("reps", 1).pipe(Options.withDefault(DEFAULT_REPS))
const judge = Options.text("judge").pipe(Options.repeated)
const judgeReps = wholeFlag("judge-reps", 1).pipe(Options.withDefault(1))
const noJudge = Options.boolean("no-judge")
const home = pathFlag("home", "folder").pipe(Options.withDefault(DEFAULT_HOME))
const json = Options.boolean("json")
const maxOutputTokens = wholeFlag("max-output-tokens", 1).pipe(Options.optional)
// Container benchmarks (harbor:DIR): the engine, and local images used for those Dockerfiles name.
const engine = Options.choice("engine", ["podman", "docker"]).pipe(Options.optional)
const image = Options.text("image").pipe(
  Options.repeated,
  Options.mapEffect((texts) => {
    const bad = texts.find((text) => !/^[^=\s]+=[^=\s]+$/.test(text))
    return bad === undefined ? Effect.succeed(texts) : Effect.fail(refused("image", bad, "FROM=TO, two image names (python:3.13-slim-bookworm=localhost/base:1)"))
  })
)

const selection = { benchmark, candidate, model, task, reps, judge, judgeReps, noJudge, home, store: storeOption, json, maxOutputTokens, engine, image, ...harnessOptions }

type Selection = {
  readonly benchmark: ReadonlyArray<string>
  readonly candidate: ReadonlyArray<string>
  readonly model: ReadonlyArray<string>
  readonly task: ReadonlyArray<string>
  readonly reps: number
  readonly judge: ReadonlyArray<string>
  readonly judgeReps: number
  readonly noJudge: boolean
  readonly home: string
  readonly store: Option.Option<string>
  readonly json: boolean
  readonly harness: ReadonlyArray<string>
  readonly family: ReadonlyArray<string>
  readonly maxOutputTokens: Option.Option<number>
  readonly engine: Option.Option<"podman" | "docker">
  readonly image: ReadonlyArray<string>
}

// ---------------------------------------------------------------------------------------------
// What --help says. Which flags and arguments a command has, which take a value and which repeat
// is read from the parser itself (see `shapeOf`), so help cannot list a flag the command lacks;
// these are the words, and the defaults as the command applies them.

interface FlagDoc {
  /** The value's placeholder (USD, N, DIR); a switch has none. */
  readonly value?: string
  /** The default, when the flag has one. */
  readonly fallback?: string
  readonly about: string
}

interface CommandDoc {
  readonly about: string
  readonly args?: Readonly<Record<string, string>>
  readonly flags?: Readonly<Record<string, FlagDoc>>
}

const selectionFlags = {
  "--benchmark": {
    value: "B",
    about: `A benchmark to run: ${benchmarkNames().join(", ")}, harbor:DIR (a folder of Harbor-format tasks, run in a container engine; terminal-bench-2 is Terminal-Bench 2 so run, once \`assay data pull terminal-bench-2\` has brought it), or the path of a provider module (./bench/index.ts). Needed unless --harness is given`
  },
  "--candidate": {
    value: "C",
    about: "A candidate: gold (the gold answers replayed), none (does nothing; echo is the same candidate, on every benchmark), PROVIDER:MODEL (the built-in agent, tools offered), PROVIDER:MODEL+text " +
      "(no tools: it answers in text, BFCL's prompt mode), or harness:NAME[:MODEL] (an agent CLI; add :subscription[,share=S][,pause-at=P] to run claude or codex " +
      "on your own login, its quota metered: see docs/harnesses.md). Default: the benchmark's own roster"
  },
  "--model": {
    value: "P:M",
    about: "A model candidate PROVIDER:MODEL or PROVIDER:MODEL+text (providers: openai, anthropic, google, ollama, any in the registry: assay models lists them, or " +
      "openai-chat:MODEL for any server speaking OpenAI's chat completions at OPENAI_CHAT_BASE_URL, else OPENAI_BASE_URL, price unknown); with --harness, HARNESS:MODEL"
  },
  "--task": {
    value: "ID",
    about: "Only these tasks: an id, a glob over ids ('*debit*', 'bird/*debit*': BENCHMARK/ applies it to that benchmark only) or a stratum name " +
      "(assay tasks BENCHMARK lists them); one that matches nothing is refused naming the nearest ids. Default: every task of the benchmark"
  },
  "--max-output-tokens": {
    value: "N",
    about: "The most output tokens a model candidate's call asks for, and so the worst case it reserves from --max-usd (default: the model's " +
      "registry limit, at most 8192). Below the default it changes what the candidate is presented with (its inputs id): cells kept without it run again"
  },
  "--reps": { value: "N", fallback: String(DEFAULT_REPS), about: "Repetitions of each cell, a whole number 1 or more" },
  "--judge": {
    value: "P:M",
    about: "The judge model PROVIDER:MODEL of benchmarks graded by a judge (none when absent); with --harness also HARNESS:MODEL, " +
      "and there the default is the candidate with the highest known output price. Given twice (model runs), the first grades and the " +
      "second judges the same inputs too: the report gives their agreement (raw and Cohen's kappa) per benchmark; a new experiment, its judging paid too"
  },
  "--judge-reps": {
    value: "K",
    fallback: "1",
    about: "Ask each judge K times on the same input (model runs; the first answer grades): the report gives each judge's self-consistency. " +
      "Above 1 it is a new experiment, and K times the judging cost"
  },
  "--no-judge": { about: "Grade without a judge: judged checks are reported as not evaluated" },
  "--home": { value: "DIR", fallback: DEFAULT_HOME, about: "The experiment home (its SQLite store)" },
  "--store": storeDoc,
  "--json": { about: "Print one JSON document" },
  "--harness": { value: "NAME", about: `An agent CLI to benchmark on the corpus: ${harnessNames.join(", ")}, or all` },
  "--family": { value: "F", about: "Only registry models of this family (harness runs)" },
  "--engine": { value: "E", about: "The container engine of container benchmarks (harbor:DIR, terminal-bench-2): podman or docker. Default: the first on PATH, podman first" },
  "--image": {
    value: "FROM=TO",
    about: "Container benchmarks: build with the local image TO wherever a task's Dockerfile says FROM, e.g. where no registry is reachable. " +
      "Every cell and the report say which substitutions were made"
  }
} satisfies Readonly<Record<string, FlagDoc>>

const docs = {
  "": { about: "Evaluate LLM agents and agent harnesses on public benchmarks, reproducibly and at known cost." },
  tasks: tasksDoc,
  runs: runsDoc,
  ...harnessesDocs,
  models: modelsDoc,
  plan: {
    about: "Show what a run would do: benchmarks, candidates, cells (new, kept, stale, faulted to run again), live model providers. " +
      "Makes no model call and changes nothing.",
    flags: {
      ...selectionFlags,
      "--detect": {
        value: "D",
        about: "Also estimate the tasks × repetitions needed to tell two candidates apart by D in mean reward (80% power, 95% confidence, " +
          "paired by task), from the experiment's graded cells so far, or --like's; a number above 0 and at most 1"
      },
      "--like": { value: "RUN-ID", about: "With --detect: plan from this stored run's cells instead of the experiment's own" },
      "--faults": faultsDoc,
      "--max-usd": {
        value: "USD",
        about: "The spend cap run would have: how many model calls it covers at their worst case (what each reserves), and a warning when it cannot cover one"
      }
    }
  },
  run: {
    about: "Run an experiment (resuming it if the home has its cells) and print its Scorecards. Without --yes, print the plan and exit 2.",
    flags: {
      ...selectionFlags,
      "--max-usd": {
        value: "USD",
        about: "The experiment's spend cap: what all its runs in this home spend on model calls (candidate, simulated user, judge) at list price " +
          "never passes USD, a number 0 or more. Each call reserves its worst case before it is sent; a cell whose call cannot is skipped, " +
          "to run again with a larger cap. Calls of unknown price are not bounded by it. " +
          `Default: no cap; harness runs: ${DEFAULT_MAX_USD} (the experiment's runs and their judging, earlier runs included; a run's cost is known once it ends, so the run that reaches the cap finishes)`
      },
      "--timeout-secs": { value: "S", about: `Wall-time limit of each Attempt, in seconds, more than 0. Default: none; harness runs: ${DEFAULT_TIMEOUT_SECS}` },
      "--parallel": { value: "N", fallback: String(DEFAULT_PARALLEL), about: "Slots: model calls in flight at once (a model candidate's cell holds one only while a call is out; up to N + min(N, 64) cells conversing and 2N more being graded, N in all under --max-usd); a cell of any other candidate holds one for its whole run. A whole number 1 or more (harness runs run one at a time)" },
      "--faults": faultsDoc,
      "--preflight-usd": {
        value: "USD",
        about: "First run a pilot (one cell per candidate and stratum); stop with exit 3 if the conservative estimate of the rest exceeds USD, a number 0 or more"
      },
      "--yes": { about: "Run; without it the plan is printed and the command exits 2" },
      "--wait": { about: "If another command is running on this home, wait for it instead of exiting 1" },
      "--cluster": { about: "Run the cells on the workers of the --store Postgres (assay worker) instead of here; fails when none is alive" },
      "--rate": { value: "PROVIDER=N/s", about: "With --cluster: at most N model calls a second to PROVIDER across every worker (openai=20/s); calls over it wait" },
      "--unsandboxed": {
        about: "Run candidates' code (coding-repair's commands and tests, harness graders) without the bubblewrap sandbox where it is missing: " +
          "that code can then read your keys and files. Without it such runs are refused until bubblewrap is installed"
      },
      "--preflight-share": {
        value: "SHARE",
        fallback: String(defaultAllowance.share),
        about: "Harness runs on a subscription: first a pilot, then stop with exit 3 if the rest would take more than this share of any quota window; " +
          `during the run no cell starts past it or past ${Math.round(defaultAllowance.pauseAt * 100)}% used`
      }
    }
  },
  report: {
    about: "Re-render a stored run from the store alone: text, Markdown, JSON or one self-contained HTML file.",
    args: { "RUN-ID": "A run id (r-...); the latest run when absent" },
    flags: {
      "--home": selectionFlags["--home"],
      "--store": storeDoc,
      "--json": { about: "Print the report as one JSON document (instead of --format)" },
      "--format": { value: REPORT_FORMATS.join("|"), fallback: REPORT_FORMATS[0], about: "Plain text, Markdown or one self-contained HTML file" },
      "--out": { value: "FILE", about: "Write the report to FILE instead of stdout; its folder must exist" },
      "--cells": { about: "With --json: every cell with its reward, how it ended and its faults (as cellResults)" }
    }
  },
  noise: { ...noiseDoc, flags: { "--home": selectionFlags["--home"], "--store": storeDoc, "--json": selectionFlags["--json"] } },
  replay: {
    about: "Re-evaluate every Attempt a run made from its recording with the current evaluators: no network, no key, $0 " +
      "(cells it kept from earlier runs are replayed with those runs). " +
      "Prints how many verdicts are the same and each that differs; a changed verdict stores the replay as a run of its own.",
    args: { "RUN-ID": "A run id (r-...); the latest run when absent" },
    flags: { "--home": selectionFlags["--home"], "--store": storeDoc, "--json": selectionFlags["--json"] }
  },
  view: {
    about: "A local web viewer of the store: its runs (updating while one writes), each run's Scorecards and plots, candidates compared " +
      "cell by cell, and each Attempt's transcript, effects and checks; a JSON API behind the pages (see docs/viewer.md). Ctrl-C stops it.",
    flags: {
      "--home": selectionFlags["--home"],
      "--store": storeDoc,
      "--port": { value: "P", fallback: String(DEFAULT_VIEW_PORT), about: "The port to listen on, 0 to 65535 (0: any free port; the address is printed)" },
      "--host": {
        value: "H",
        fallback: DEFAULT_VIEW_HOST,
        about: "The address to listen on. Anything but loopback makes the results visible to the network, and a warning says so"
      },
      "--open": { about: "Open the viewer in the desktop's browser" }
    }
  },
  worker: workerDoc,
  import: importDoc,
  data: { about: "Benchmark data." },
  "data pull": {
    about: "Fetch a benchmark's pinned upstream files (checked by sha256) into the data folder: ASSAY_DATA_DIR, " +
      "default $XDG_CACHE_HOME/assay/data (~/.cache/assay/data). All or nothing: a failed pull leaves the folder as it was.",
    args: { BENCHMARK: `A benchmark: ${benchmarkNames().join(", ")}, or the path of a provider module` },
    flags: {
      "--from": { value: "DIR", about: "Copy from a local folder laid out like the data folder instead of downloading" },
      "--mirror": { value: "URL", about: "Download https://HOST/PATH from URL/HOST/PATH instead (a mirror of the upstream hosts)" },
      "--real": {
        about: "bird: download the real Mini-Dev databases (minidev.zip, no published checksum) instead, print its sha256 and unpack " +
          "them where --from DIR puts them. Without --sha256 they are installed unpinned, and the output says so"
      },
      "--sha256": { value: "HEX", about: "With --real: the sha256 minidev.zip must have; another one fails and leaves the data folder as it was" },
      "--url": { value: "URL", about: "With --real: download the archive from URL instead of upstream's" }
    }
  },
  equivalence: {
    about: "Run the transcription over an upstream oracle corpus and print how many lines agree, and each disagreement.",
    args: { BENCHMARK: `A benchmark: ${benchmarkNames().join(", ")}, or the path of a provider module` },
    flags: {
      "--corpus": { value: "FILE", about: "An oracle corpus in the provider's line format. Default: the provider's own" },
      "--json": selectionFlags["--json"]
    }
  }
} satisfies Readonly<Record<string, CommandDoc>>

const docOf = (path: ReadonlyArray<string>): CommandDoc | undefined => (docs as Readonly<Record<string, CommandDoc | undefined>>)[path.join(" ")]

/** The lanes of a selection: each benchmark with its environments and candidates. */
const lanesOf = (sel: Selection, faults: Option.Option<EffectsSpec>) =>
  Effect.gen(function*() {
    if (sel.family.length > 0) {
      return yield* new UsageError({ detail: "--family picks the registry models of agent CLIs (with --harness); a model run names its models with --model" })
    }
    if (sel.benchmark.length === 0) {
      return yield* new UsageError({ detail: `no benchmark: add --benchmark with one of ${benchmarkNames().join(", ")}` })
    }
    const lanes: Array<Lane> = []
    // --task: ids, globs and strata; one that matches nothing in any benchmark is refused.
    const matched = new Set<string>()
    const every: Array<{ readonly name: string; readonly environments: ReadonlyArray<EnvironmentDef> }> = []
    for (const name of sel.benchmark) {
      const provider = yield* loadBenchmark(name, { engine: Option.getOrUndefined(sel.engine), images: sel.image })
      // Its data missing or damaged is no fault of the command line: the CapabilityError stays (exit 1).
      let environments = yield* provider.environments
      if (sel.task.length > 0) {
        every.push({ name, environments })
        const chosen = selectTasks(name, environments, sel.task)
        for (const m of chosen.matched) matched.add(m)
        environments = chosen.selected
      }
      if (Option.isSome(faults)) environments = environments.map((e) => withFaults(e, faults.value.faults))
      // The judge is part of what a score means: it goes into each EnvironmentDef that uses one.
      environments = yield* withJudges(provider, environments, yield* judgesOf(sel), sel.judgeReps, "--judge")
      const names = [...sel.candidate, ...sel.model]
      const chosen = names.length > 0 ? names : provider.roster
      const resolved = yield* Effect.forEach(chosen, (c) => resolveCandidate(provider, c, { maxOutputTokens: Option.getOrNull(sel.maxOutputTokens) }))
      // An alias given beside its name (none and echo) is one candidate.
      const candidates = resolved.filter((c, i) => resolved.findIndex((d) => d.def.name === c.def.name) === i)
      lanes.push({ provider, environments, candidates })
    }
    const unmatched = sel.task.filter((t) => !matched.has(t))
    if (unmatched.length > 0) return yield* new UsageError({ detail: unmatchedDetail(unmatched, every) })
    return lanes
  })

const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const planSummary = (sel: Selection, lanes: ReadonlyArray<Lane>, states: ReadonlyArray<{ readonly state: string }>, experimentId: string) => ({
  experimentId,
  home: resolve(sel.home),
  benchmarks: lanes.map((l) => ({ name: l.provider.name, version: l.provider.version, tasks: l.environments.length })),
  candidates: Array.from(new Set(lanes.flatMap((l) => l.candidates.map((c) => c.def.name)))),
  repetitions: sel.reps,
  judge: sel.noJudge ? null : sel.judge[0] ?? null,
  ...(!sel.noJudge && sel.judge[1] !== undefined ? { secondJudge: sel.judge[1] } : {}),
  ...(sel.judgeReps > 1 ? { judgeReps: sel.judgeReps } : {}),
  cells: countStates(states)
})

type ProviderLiveness = { readonly provider: string; readonly status: string; readonly reason: string; readonly models: ReadonlyArray<string> }

// A refreshed registry has a hundred providers: past a few, only the live ones and those the candidates call are listed.
const shownProviders = (summary: ReturnType<typeof planSummary>, models: ReadonlyArray<ProviderLiveness>) => {
  const called = new Set(summary.candidates.map((c) => c.slice(0, Math.max(0, c.indexOf(":")))))
  return models.length <= 8 ? models : models.filter((m) => m.status === "live" || called.has(m.provider))
}

const planText = (summary: ReturnType<typeof planSummary>, all: ReadonlyArray<ProviderLiveness>, models = shownProviders(summary, all)) =>
  [
    `experiment ${ContentId.short(summary.experimentId)} in ${summary.home}`,
    ...summary.benchmarks.map((b) => `  benchmark ${b.name} (v${b.version}): ${counted(b.tasks, "task")}`),
    `  candidates: ${summary.candidates.join(", ")}`,
    `  repetitions: ${summary.repetitions}; judge: ${summary.judge ?? "none"}${summary.secondJudge === undefined ? "" : `, second judge (agreement): ${summary.secondJudge}`}${
      summary.judgeReps === undefined ? "" : `, each asked ${summary.judgeReps} times`
    }`,
    `  cells: ${summary.cells.total} (${summary.cells.new} new, ${summary.cells.kept} kept, ${summary.cells.stale} stale${summary.cells.faulted > 0 ? `, ${summary.cells.faulted} faulted to run again` : ""})`,
    // A heading with nothing under it reads as "no provider is live": it is shown only with content.
    ...(all.length > 0 ? [`model providers:`] : []),
    ...models.map((m) => `  ${m.provider.padEnd(12)} ${m.status.padEnd(7)} ${m.reason}${m.status === "live" ? ` (${m.models.length} models)` : ""}`),
    ...(all.length > models.length ? [`  and ${all.length - models.length} more not live (no key set): assay models lists every provider`] : [])
  ].join("\n")

/** The store of a home (its SQLite file) or of `--store URL`; migrated only by `run` (under the lock). */
const withStore = <A, E, R>(at: Store.Location, effect: Effect.Effect<A, E, R | Store.Store>, options: Store.LayerOptions = {}) =>
  Effect.provide(effect, Store.layerAt(at, options))

/** How the commands that only read open the store: nothing written, nothing migrated. */
const reading: Store.LayerOptions = { readOnly: true }

/** Cell states for a plan without creating a home: plan and run without --yes change nothing. */
const statesOf = (at: Store.Location, plan: Plan) =>
  storeExists(at)
    ? withStore(at, classify(plan), reading)
    : Effect.succeed(plan.cells.map((cell) => ({ cell, state: "new" as const })))

// The model clients and the HTTP client: start-up a run of scripted
// candidates does not need, so they are loaded on first use.
const liveness = () => Effect.flatMap(Effect.promise(() => import("../model/Clients.ts")), (m) => m.liveness())

/** The model providers whose keys the selection's candidates call with (models, bridged agent CLIs). */
const modelProvidersOf = (lanes: ReadonlyArray<Lane>): ReadonlySet<string> =>
  new Set(lanes.flatMap((l) => l.candidates.flatMap((c) => (c.modelProvider === undefined ? [] : [c.modelProvider]))))

/** Liveness of the providers the selection calls (none probed when it calls none). */
const livenessOf = (lanes: ReadonlyArray<Lane>) => {
  const providers = modelProvidersOf(lanes)
  return providers.size === 0 ? Effect.succeed([]) : Effect.map(liveness(), (all) => all.filter((p) => providers.has(p.provider)))
}

/**
 * `--rate` limits a cluster's calls to providers the run's candidates call: one without --cluster,
 * or naming a provider no candidate calls (a typo), would limit nothing, so it is refused.
 */
const checkRates = (opts: { readonly rate: ReadonlyArray<string>; readonly cluster: boolean }, lanes: ReadonlyArray<Lane>) =>
  Effect.gen(function*() {
    if (opts.rate.length === 0) return
    if (!opts.cluster) {
      return yield* new UsageError({ detail: "--rate limits a cluster's workers together: add --cluster (and --store postgres://…)" })
    }
    const called = modelProvidersOf(lanes)
    const stray = opts.rate.filter((text) => !called.has(parseRate(text)?.provider ?? ""))
    if (stray.length > 0) {
      const calls = called.size === 0 ? "no candidate of this run calls a model provider" : `its candidates call ${[...called].sort().join(", ")}`
      return yield* new UsageError({ detail: `--rate ${stray[0]} names a provider this run does not call (${calls}): it would limit nothing` })
    }
  })

/** A candidate whose model provider is not live would fail every cell: refuse before any runs. */
const requireLiveModels = (lanes: ReadonlyArray<Lane>) =>
  Effect.gen(function*() {
    const absent = (yield* livenessOf(lanes)).filter((p) => p.status !== "live")
    if (absent.length > 0) {
      return yield* new UsageError({
        detail: absent.map((p) => `model provider ${p.provider} is not live: ${p.reason}`).join("; ") + " (nothing was run)"
      })
    }
  })

// ---------------------------------------------------------------------------------------------
// plan

const planOptions = {
  ...selection,
  detect: numberFlag("detect", "a difference in mean reward above 0 and at most 1", (n) => n > 0 && n <= 1).pipe(Options.optional),
  like: Options.text("like").pipe(Options.optional),
  faults: faultsFlag.pipe(Options.optional),
  maxUsd: numberFlag("max-usd", "a number of dollars, 0 or more", (n) => n >= 0).pipe(Options.optional)
}

/** --max-output-tokens bounds the built-in agent's requests; an agent CLI writes its own. */
const refuseOutputBoundForHarness = (sel: { readonly maxOutputTokens: Option.Option<number> }) =>
  Option.isSome(sel.maxOutputTokens)
    ? new UsageError({ detail: "--max-output-tokens bounds the built-in agent's calls (PROVIDER:MODEL); an agent CLI (--harness) sets its own" })
    : Effect.void

/** What --max-usd covers: the lines plan prints and the value its --json has under `cap`. */
const capSection = (lanes: ReadonlyArray<Lane>, maxUsd: Option.Option<number>, spentUsd: number) =>
  Effect.gen(function*() {
    const cap = Option.getOrNull(maxUsd)
    if (cap === null) return { lines: [] as ReadonlyArray<string>, json: null }
    const remainingUsd = cap - spentUsd
    const coverage: ReadonlyArray<CapCoverage> = yield* coverageOf(lanes, remainingUsd)
    return { lines: capLines(cap, remainingUsd, coverage), json: { maxUsd: cap, remainingUsd, coverage } }
  })

const planCommand = Command.make("plan", planOptions, (sel) =>
  Effect.gen(function*() {
    if (isHarnessSelection(sel)) {
      yield* refuseOutputBoundForHarness(sel)
      return yield* planHarness({ ...sel, judge: yield* harnessJudge(sel) })
    }
    // With --faults, the faulty experiment's plan (another experiment than the plain one).
    const faults = Option.isSome(sel.faults) ? Option.some(yield* parseFaults(sel.faults.value)) : Option.none()
    const lanes = yield* lanesOf(sel, faults)
    const plan = yield* makePlan(lanes, sel.reps)
    const at = yield* checkedLocation(sel.home, sel.store)
    const states = yield* statesOf(at, plan)
    const summary = planSummary(sel, lanes, states, plan.experimentId)
    const models = yield* liveness()
    const stored = storeExists(at)
      ? yield* withStore(
        at,
        Effect.flatMap(Store.Store, (s) =>
          Effect.all({
            note: s.latestNote(plan.experimentId, "estimate"),
            spend: s.spendOf({ experimentId: plan.experimentId }),
            unsettled: s.unsettledOf(plan.experimentId)
          })),
        reading
      )
      : null
    const previous = stored === null ? null : fromNote(stored.note)
    // What --max-usd bounds, in numbers: the experiment's spend so far, over all its runs here,
    // and the worst cases dead cluster workers left unsettled, which the cap counts too.
    const unsettledUsd = Array.from(stored?.unsettled.values() ?? []).reduce((sum, usd) => sum + usd, 0)
    const spend = { experimentUsd: stored?.spend.knownUsd ?? 0, calls: stored?.spend.calls ?? 0, unknownCalls: stored?.spend.unknownCalls ?? 0, unsettledUsd }
    const spendLine = `  spent: $${spend.experimentUsd.toFixed(4)} on ${spend.calls} model calls by this experiment so far` +
      (unsettledUsd > 0 ? ` recorded in the ledger, plus up to $${unsettledUsd.toFixed(4)} unsettled (calls in flight when a run or worker was killed)` : "") +
      (spend.unknownCalls > 0 ? ` (and ${spend.unknownCalls} calls of unknown price)` : "") +
      "; run --max-usd caps this total, across runs; calls of unknown price are not counted in it or capped"
    // --detect: power from graded cells so far (the experiment's, or --like's run), outages left out.
    const detect = Option.getOrNull(sel.detect)
    if (detect === null && Option.isSome(sel.like)) return yield* new UsageError({ detail: "--like names the run --detect plans from: add --detect D" })
    const power = detect === null ? null : yield* Effect.gen(function*() {
      // --like's run may hold other benchmarks and candidates: only this plan's pairs are sized.
      const planned = new Set(lanes.flatMap((l) => l.candidates.map((c) => `${l.provider.name}\u0000${c.def.name}`)))
      const pilot = Option.isSome(sel.like)
        ? gradedOf(yield* storedReport(sel.home, sel.store, sel.like)).filter((c) => planned.has(`${c.benchmark}\u0000${c.candidate}`))
        : storeExists(at)
        ? gradedOfSummaries(Array.from((yield* withStore(at, Effect.flatMap(Store.Store, (s) => s.latestCells(plan.cells.map((c) => c.key))), reading)).values(), (c) => c.summary))
        : []
      const available = new Map<string, number>()
      for (const lane of lanes) available.set(lane.provider.name, (yield* lane.provider.environments.pipe(Effect.orElseSucceed(() => lane.environments))).length)
      return powerSection(detect, pilot, (benchmark) => available.get(benchmark) ?? null)
    })
    const cap = yield* capSection(lanes, sel.maxUsd, spend.experimentUsd + spend.unsettledUsd)
    const registry = yield* Registry.Registry
    if (sel.json) {
      yield* printJson({ ...summary, registry: registryBrief(registry), spend, ...(cap.json ? { cap: cap.json } : {}), modelProviders: models, ...(previous ? { estimate: previous } : {}), ...(power ? { power: power.json } : {}) })
    } else {
      yield* Console.log(
        planText(summary, models) + "\n  " + registryLine(registry) + "\n" + spendLine + cap.lines.map((l) => "\n" + l).join("") + (previous ? "\n" + renderEstimate(previous) : "") +
          (power ? "\n" + power.text.trimEnd() : "")
      )
    }
  })).pipe(Command.withDescription(docs["plan"].about))

// ---------------------------------------------------------------------------------------------
// run

const runOptions = {
  ...selection,
  maxUsd: numberFlag("max-usd", "a number of dollars, 0 or more", (n) => n >= 0).pipe(Options.optional),
  timeoutSecs: numberFlag("timeout-secs", "a number of seconds, more than 0", (n) => n > 0).pipe(Options.optional),
  parallel: wholeFlag("parallel", 1).pipe(Options.withDefault(DEFAULT_PARALLEL)),
  faults: faultsFlag.pipe(Options.optional),
  preflightUsd: numberFlag("preflight-usd", "a number of dollars, 0 or more", (n) => n >= 0).pipe(Options.optional),
  yes: Options.boolean("yes"),
  wait: Options.boolean("wait"),
  cluster: Options.boolean("cluster"),
  rate: Options.text("rate").pipe(
    Options.repeated,
    Options.mapEffect((texts) => {
      const bad = texts.find((text) => parseRate(text) === null)
      return bad === undefined ? Effect.succeed(texts) : Effect.fail(refused("rate", bad, "PROVIDER=N/s, N a whole number 1 or more (openai=20/s)"))
    })
  ),
  unsandboxed: Options.boolean("unsandboxed"),
  ...harnessRunOptions
}

/**
 * Before a run that executes candidates' code: the sandbox must work here, or the user accepted
 * the risk (--unsandboxed), which is said on stderr.
 */
const requireSandbox = (unsandboxed: boolean) =>
  unsandboxed
    ? Console.error("assay: --unsandboxed: candidates' commands and the graders that run their code are not isolated; they can read your keys and files")
    : Effect.flatMap(Sandbox.Sandbox, (s) => s.check)

const runCommand = Command.make("run", runOptions, (opts) =>
  Effect.gen(function*() {
    // One writer per home, held until the command ends (pilot and run alike). Taking it creates
    // the home, so a model run takes it only once nothing is left to refuse.
    const lockHome = Home.lock(opts.home, {
      wait: opts.wait,
      command: `assay ${process.argv.slice(2).join(" ")}`,
      onWait: (h) => Console.error(h ? `assay: waiting for pid ${h.pid} on ${h.host} (running since ${h.since})` : "assay: waiting for the home's lock")
    })
    if (isHarnessSelection(opts)) {
      yield* refuseOutputBoundForHarness(opts)
      if (opts.yes) yield* requireSandbox(opts.unsandboxed)
      if (opts.yes) yield* lockHome
      const code = yield* runHarnesses({ ...opts, judge: yield* harnessJudge(opts) })
      if (code !== 0) return yield* new ExitWith({ code })
      return
    }
    if (Option.isSome(opts.preflightShare)) {
      return yield* new UsageError({ detail: "--preflight-share is for harness runs on a subscription (--harness); model runs are billed per token: use --preflight-usd" })
    }
    const faults = Option.isSome(opts.faults) ? Option.some(yield* parseFaults(opts.faults.value)) : Option.none()
    const lanes = yield* lanesOf(opts, faults)
    yield* checkRates(opts, lanes)
    const plan = yield* makePlan(lanes, opts.reps)
    const at = yield* checkedLocation(opts.home, opts.store)
    if (opts.yes) yield* requireLiveModels(lanes)
    if (opts.yes && lanes.some((l) => l.provider.untrusted === true)) yield* requireSandbox(opts.unsandboxed)
    if (!opts.yes) {
      const states = yield* statesOf(at, plan)
      const summary = planSummary(opts, lanes, states, plan.experimentId)
      // What --yes would need: the providers of the model candidates, as plan shows them.
      const models = yield* livenessOf(lanes)
      const spent = storeExists(at) ? yield* withStore(at, Effect.flatMap(Store.Store, (s) => s.spendOf({ experimentId: plan.experimentId })), reading) : null
      const cap = yield* capSection(lanes, opts.maxUsd, spent?.knownUsd ?? 0)
      if (opts.json) yield* printJson({ ...summary, ...(cap.json ? { cap: cap.json } : {}), modelProviders: models, ran: false, hint: "add --yes to run" })
      else yield* Console.log(planText(summary, models) + cap.lines.map((l) => "\n" + l).join("") + "\nnot run: add --yes to run it")
      return yield* new ExitWith({ code: 2 })
    }
    yield* lockHome
    // The agent CLIs' versions: the run's metadata, not the candidates' identity.
    const harnessVersions = opts.candidate.some((c) => c.startsWith("harness:"))
      ? yield* Effect.flatMap(Effect.promise(() => import("../harness/bridge/Candidate.ts")), (m) => m.cliVersions(opts.candidate, harnessBinDirs()))
      : {}
    const runSettings = (pilot: boolean) => ({
        parallel: opts.parallel,
        maxUsd: Option.getOrNull(opts.maxUsd),
        timeoutSeconds: Option.getOrNull(opts.timeoutSecs),
        // Model calls go to the Model service (provided at the edge), under the spend cap.
        handlers: {},
        progress: stderrProgress(),
        harnesses: harnessVersions,
        settings: {
          // A provider given by path is stored absolute, so replay finds it from anywhere.
          benchmarks: opts.benchmark.map(benchmarkRef),
          candidates: [...opts.candidate, ...opts.model],
          // The command that resumes it (`report` of a stopped run says it).
          command: resumeCommand(),
          tasks: opts.task,
          reps: opts.reps,
          parallel: opts.parallel,
          maxUsd: Option.getOrNull(opts.maxUsd),
          timeoutSecs: Option.getOrNull(opts.timeoutSecs),
          faults: Option.getOrNull(opts.faults),
          judge: opts.noJudge ? null : opts.judge[0] ?? null,
          ...(!opts.noJudge && opts.judge.length > 1 ? { judges: opts.judge } : {}),
          ...(opts.judgeReps > 1 ? { judgeReps: opts.judgeReps } : {}),
          ...(Option.isSome(opts.maxOutputTokens) ? { maxOutputTokens: opts.maxOutputTokens.value } : {}),
          preflightUsd: Option.getOrNull(opts.preflightUsd),
          ...(opts.rate.length > 0 ? { rate: opts.rate } : {}),
          // Workers plan a cluster run as soon as it starts (src/cluster/Cluster.ts, warm).
          ...(opts.cluster && !pilot ? { cluster: true } : {}),
          ...(opts.unsandboxed ? { unsandboxed: true } : {}),
          // Container benchmarks: the engine and image substitutions, which replay loads them with again.
          ...(Option.isSome(opts.engine) ? { engine: opts.engine.value } : {}),
          ...(opts.image.length > 0 ? { images: opts.image } : {}),
          ...(Object.keys(harnessVersions).length > 0 ? { harnesses: harnessVersions } : {}),
          pilot
        }
      })
    // Ctrl-C, SIGTERM: what is kept, and the command that resumes (the same one).
    const stopped = stoppedLine(plan, storeShown(at))
    // The store is opened once for the pilot and the run.
    const outcome = yield* withStore(
      at,
      Effect.gen(function*() {
        // Under the lock, so no run of this home is writing: a killed run's results.jsonl is made whole again from the store.
        yield* rebuildUnfinished
        if (Option.isSome(opts.preflightUsd)) {
          const { estimate: gate } = yield* runPilot(plan, runSettings(true), { budgetUsd: opts.preflightUsd.value, parallel: opts.parallel })
          if (gate.verdict !== "within-budget") {
            if (opts.json) yield* printJson({ stopped: gate.verdict, runId: gate.runId, estimate: gate })
            else yield* Console.log(renderEstimate(gate) + `\nstopped: ${gate.verdict}; run again with a larger --preflight-usd to resume after the pilot`)
            return yield* new ExitWith({ code: 3 })
          }
          if (!opts.json) yield* Console.error(renderEstimate(gate))
        }
        if (opts.cluster) {
          if (at.store === null || at.store === undefined) {
            return yield* new UsageError({ detail: "--cluster runs the cells on the workers of a Postgres store: add --store postgres://… (or set ASSAY_STORE)" })
          }
          const cluster = yield* Effect.promise(() => import("../cluster/Cluster.ts"))
          return yield* cluster.onCluster(at.store, plan, (dispatch) => runExperiment(plan, { ...runSettings(false), dispatch }))
        }
        return yield* runExperiment(plan, runSettings(false))
      }).pipe(Effect.onInterrupt(() => stopped))
    )
    yield* printReport(outcome.report, opts.json ? "json" : "text")
    // Nothing ran because the cap could not cover a call: stopped by budget, not done.
    const capped = capSkipped(outcome.report)
    if (outcome.report.cells.ran === 0 && capped > 0) {
      const spend = outcome.report.spend
      yield* Console.error(
        `assay: stopped by budget: the spend cap ($${Option.getOrElse(opts.maxUsd, () => 0)}${spend ? `, $${spend.experimentUsd.toFixed(4)} spent` : ""}) ` +
          `skipped all ${capped} cells to run and none ran; raise --max-usd or lower --max-output-tokens (assay plan --max-usd shows what a call reserves)`
      )
      return yield* new ExitWith({ code: 3 })
    }
    // An outage is not the candidates' failure: say so in one line, and that a rerun retries them.
    const outages = outageLine(outcome.attempts)
    if (outages !== null) yield* Console.error(outages)
    // Cells scored 0 for an ending only the cell says the reason of (a 400 from the endpoint, say).
    const early = endedEarlyLine(outcome.attempts)
    if (early !== null) yield* Console.error(early)
    if (opts.unsandboxed) yield* Console.error("assay: this run was --unsandboxed: candidates' code ran without isolation")
    // The benchmark failed (a throw in its code, its setup or grade failing): its cells are not the candidates' scores, and the run is not a success.
    const broken = outcome.attempts.filter((a) => a.verdict.ended?.provider !== undefined)
    if (broken.length > 0) {
      const data = broken[0]!.verdict.ended!.data === true
      yield* Console.error(
        `assay: ${broken[0]!.verdict.ended!.detail} (in ${broken.length} of ${outcome.attempts.length} cells, not scored; ${data ? "bring the data" : "fix what it names"} and run again)`
      )
      return yield* new ExitWith({ code: 1 })
    }
  }).pipe(
    Effect.scoped,
    Effect.provide(Sandbox.layer({ unsandboxed: opts.unsandboxed })),
    // Stopped before the cells' own line could be said (loading the benchmarks, waiting for the lock).
    Effect.onInterrupt(() => stoppedBeforeCells)
  )).pipe(Command.withDescription(docs["run"].about))


/**
 * A file can be written where its folder exists and is writable. The folder is never created: a
 * mistyped path should fail, not leave a new tree behind.
 */
const requireWritable = (file: string): Effect.Effect<void, OutputError> => {
  const path = resolve(file)
  const folder = dirname(path)
  const refuse = (reason: string) => new OutputError({ path: file, reason })
  return Effect.gen(function*() {
    const stat = yield* Effect.try({ try: () => statSync(folder, { throwIfNoEntry: false }), catch: (e) => refuse(fsProblem(e, folder)) })
    if (stat === undefined) return yield* refuse(`the folder ${folder} does not exist`)
    if (!stat.isDirectory()) return yield* refuse(`${folder} is not a folder`)
    const target = yield* Effect.try({ try: () => statSync(path, { throwIfNoEntry: false }), catch: (e) => refuse(fsProblem(e, path)) })
    if (target?.isDirectory() === true) return yield* refuse(`${path} is a folder`)
    yield* Effect.try({ try: () => accessSync(folder, constants.W_OK), catch: (e) => refuse(`the folder ${folder} is not writable (${codeOf(e)})`) })
  })
}

const printReport = (report: Report, format: "json" | "text" | "md" | "html") =>
  format === "json"
    ? Effect.flatMap(encodeJson(report).pipe(Effect.orDie), Console.log)
    : Console.log(format === "md" ? renderMarkdown(report) : format === "html" ? renderHtml(report) : renderText(report))

// ---------------------------------------------------------------------------------------------
// report

const reportCommand = Command.make(
  "report",
  {
    runId: Args.text({ name: "RUN-ID" }).pipe(Args.optional),
    home,
    store: storeOption,
    json,
    format: choiceFlag("format", REPORT_FORMATS).pipe(Options.optional),
    // Checked by requireWritable when the command runs: a report that cannot be written exits 1.
    out: Options.text("out").pipe(Options.optional),
    cells: Options.boolean("cells")
  },
  (opts) =>
    Effect.gen(function*() {
      if (opts.json && Option.isSome(opts.format)) {
        return yield* new UsageError({ detail: `--json prints the report as JSON; --format ${opts.format.value} renders it otherwise: give one of them` })
      }
      // Checked first: a report that cannot be written is refused before the store is opened.
      if (Option.isSome(opts.out)) yield* requireWritable(opts.out.value)
      const at = yield* checkedLocation(opts.home, opts.store)
      if (!storeExists(at)) {
        return yield* new UsageError({ detail: `no assay home at ${resolve(opts.home)}: run an experiment first or pass --home` })
      }
      const runRecord = yield* withStore(
        at,
        Effect.flatMap(Store.Store, (store) =>
          Option.match(opts.runId, {
            onNone: () => Effect.flatMap(store.latestRun, (r) => (r ? Effect.succeed(r) : Effect.fail(new UsageError({ detail: "the home has no run yet" })))),
            onSome: (id) => store.getRun(id)
          })),
        reading
      )
      if (runRecord.summary === null) {
        // A run still going is told as such, so the advice does not send the user round in circles.
        const holder = yield* Home.holderOf(opts.home)
        if (holder !== null && "pid" in holder) {
          return yield* new RunUnfinished({
            runId: runRecord.id,
            reason: "running",
            detail: `pid ${holder.pid} on ${holder.host}, since ${holder.since}`
          })
        }
        const settings = runRecord.settings as { readonly command?: unknown } | null
        return yield* new RunUnfinished({ runId: runRecord.id, reason: "stopped", detail: typeof settings?.command === "string" ? settings.command : "" })
      }
      const stored = yield* decodeJson(JSON.stringify(runRecord.summary)).pipe(
        Effect.mapError((e) => new UsageError({ detail: `the stored report of ${runRecord.id} cannot be read: ${e.message}` }))
      )
      const format = opts.json ? "json" : Option.getOrElse(opts.format, () => REPORT_FORMATS[0])
      if (opts.cells && format !== "json") return yield* new UsageError({ detail: "--cells lists the cells in the JSON report: add --json" })
      const completed = yield* withStore(at, completeReport(stored, { cells: opts.cells }), reading)
      // A report stored before runs recorded their wall time: from the run's start and finish.
      const full = completed.wallSeconds !== undefined || runRecord.finishedAt === null
        ? completed
        : { ...completed, wallSeconds: Math.max(0, (Date.parse(runRecord.finishedAt) - Date.parse(runRecord.startedAt)) / 1000) }
      if (Option.isSome(opts.out)) {
        const text = format === "json" ? yield* encodeJson(full, { cells: opts.cells }).pipe(Effect.orDie) : format === "md" ? renderMarkdown(full) : format === "html" ? renderHtml(full) : renderText(full)
        const out = opts.out.value
        yield* Effect.try({ try: () => writeFileSync(out, text), catch: (e) => new OutputError({ path: out, reason: e instanceof Error ? e.message : String(e) }) })
        yield* Console.error(`assay: wrote ${opts.out.value}`)
      } else {
        yield* (format === "json" ? Effect.flatMap(encodeJson(full, { cells: opts.cells }).pipe(Effect.orDie), Console.log) : printReport(full, format))
      }
    })
).pipe(Command.withDescription(docs["report"].about))

// ---------------------------------------------------------------------------------------------
// view

const viewCommand = Command.make(
  "view",
  {
    home,
    store: storeOption,
    port: wholeFlag("port", 0).pipe(Options.withDefault(DEFAULT_VIEW_PORT)),
    host: Options.text("host").pipe(Options.withDefault(DEFAULT_VIEW_HOST)),
    open: Options.boolean("open")
  },
  (opts) =>
    Effect.gen(function*() {
      if (opts.port > 65535) return yield* new UsageError({ detail: `--port ${opts.port}: expected a whole number from 0 to 65535` })
      const at = yield* checkedLocation(opts.home, opts.store)
      if (!storeExists(at)) return yield* new UsageError({ detail: `no assay home at ${resolve(opts.home)}: run an experiment first or pass --home` })
      // Loaded when asked for: the HTTP server is no part of the other commands' start-up.
      const { isLoopback, openInBrowser, view } = yield* Effect.promise(() => import("../view/Server.ts"))
      if (!isLoopback(opts.host)) {
        yield* Console.error(
          `assay: warning: --host ${opts.host}: the results, transcripts included, are visible to anyone who can reach this machine on the network and has the token printed below`
        )
      }
      yield* view({
        at,
        host: opts.host,
        port: opts.port,
        // Off loopback the address carries the token, printed this once: the page asks for it otherwise.
        onListening: (url, token) =>
          Effect.gen(function*() {
            const entry = token === null ? `${url}/` : `${url}/?token=${token}`
            yield* Console.log(`assay view: ${entry} (store ${storeShown(at)}); Ctrl-C stops it`)
            if (opts.open && !(yield* openInBrowser(entry))) yield* Console.error(`assay: --open: no browser opener (xdg-open) was found; open ${entry} yourself`)
          })
      })
    })
).pipe(Command.withDescription(docs["view"].about))

// ---------------------------------------------------------------------------------------------
// data

const pull = Command.make(
  "pull",
  {
    benchmark: Args.text({ name: "BENCHMARK" }),
    from: pathFlag("from", "folder").pipe(Options.optional),
    mirror: Options.text("mirror").pipe(
      Options.mapEffect((text) => {
        // A mirror prefixes upstream's URLs: it must itself be an http(s) URL.
        let url: URL | null = null
        try {
          url = new URL(text)
        } catch {
          url = null
        }
        return url !== null && (url.protocol === "https:" || url.protocol === "http:")
          ? Effect.succeed(text)
          : Effect.fail(refused("mirror", text, "an http(s) URL whose paths mirror the upstream hosts (URL/HOST/PATH)"))
      }),
      Options.optional
    ),
    real: Options.boolean("real"),
    sha256: Options.text("sha256").pipe(Options.optional),
    url: Options.text("url").pipe(Options.optional)
  },
  (opts) =>
    Effect.gen(function*() {
      const provider = yield* loadBenchmark(opts.benchmark)
      // The one data folder: where `run`, `plan` and `equivalence` read (src/evaluation/DataRoot.ts).
      if (opts.real) {
        if (Option.isSome(opts.from)) return yield* new UsageError({ detail: "data pull: --real downloads; --from copies a local folder: give one of them" })
        const progress = progressLine(process.stderr, "downloaded")
        return yield* pullArchive(provider, {
          target: dataRoot(),
          url: Option.getOrNull(opts.url),
          mirror: Option.getOrNull(opts.mirror),
          sha256: Option.getOrNull(opts.sha256),
          log: Console.log,
          progress
        })
      }
      if (Option.isSome(opts.sha256) || Option.isSome(opts.url)) return yield* new UsageError({ detail: "data pull: --sha256 and --url go with --real" })
      yield* pullData(provider, { target: dataRoot(), from: Option.getOrNull(opts.from), mirror: Option.getOrNull(opts.mirror), log: Console.log })
    })
).pipe(Command.withDescription(docs["data pull"].about))

const dataCommands = [pull] as const

const dataCommand = Command.make("data").pipe(Command.withSubcommands(dataCommands), Command.withDescription(docs["data"].about))

// ---------------------------------------------------------------------------------------------
// equivalence

const equivalenceCommand = Command.make(
  "equivalence",
  {
    benchmark: Args.text({ name: "BENCHMARK" }),
    corpus: pathFlag("corpus", "file").pipe(Options.optional),
    json
  },
  (opts) =>
    Effect.gen(function*() {
      const provider = yield* loadBenchmark(opts.benchmark)
      if (!provider.equivalence) return yield* new UsageError({ detail: `${provider.name} has no upstream to be equivalent to` })
      // A corpus missing or damaged is no fault of the command line: the CapabilityError stays (exit 1).
      const result = yield* provider.equivalence(Option.getOrNull(opts.corpus))
      if (opts.json) yield* printJson(result)
      else {
        const unchecked = result.notChecked ?? 0
        yield* Console.log(
          unchecked === 0
            ? `${result.benchmark}: ${result.agree} of ${result.lines} lines agree with upstream (${result.corpus})`
            : `${result.benchmark}: ${result.agree} of ${result.lines - unchecked} checked lines agree with upstream, ${unchecked} not checked here (${result.corpus})`
        )
        for (const note of result.notes ?? []) yield* Console.log(note)
        for (const d of result.disagree) yield* Console.log(`  disagree: ${JSON.stringify(d)}`)
      }
      if (result.agree !== result.lines) return yield* new ExitWith({ code: 1 })
    })
).pipe(Command.withDescription(docs["equivalence"].about))

// ---------------------------------------------------------------------------------------------

const commands = [planCommand, runCommand, reportCommand, runsCommand, tasksCommand, modelsCommand, noiseCommand, replayCommand, importCommand, workerCommand, viewCommand, dataCommand, equivalenceCommand, harnessesCommand] as const

const assay = Command.make("assay").pipe(
  Command.withSubcommands(commands),
  Command.withDescription(docs[""].about)
)

// ---------------------------------------------------------------------------------------------
// Help and usage errors. @effect/cli's parser decides what a command line means; what it says is
// ours: help that names `assay run`, shows defaults and has no escape codes off a terminal, and
// every refused command line as one line on stderr, exit 2.

interface FlagShape {
  readonly name: string
  readonly takesValue: boolean
  readonly accepted: Option.Option<string>
  readonly many: boolean
}

interface ArgShape {
  readonly name: string
  readonly many: boolean
  readonly optional: boolean
}

/** The flags and arguments a command's parser accepts, in the order they were defined. */
const shapeOf = (usage: Usage.Usage): { readonly flags: ReadonlyArray<FlagShape>; readonly args: ReadonlyArray<ArgShape> } => {
  const flags: Array<FlagShape> = []
  const args: Array<ArgShape> = []
  const walk = (u: Usage.Usage, many: boolean, optional: boolean): void => {
    switch (u._tag) {
      case "Named": {
        const name = u.names[0] ?? ""
        if (name.startsWith("-")) flags.push({ name, takesValue: Option.isSome(u.acceptedValues), accepted: u.acceptedValues, many })
        else if (name.startsWith("<")) args.push({ name: name.slice(1, -1), many, optional })
        return
      }
      case "Optional":
        return walk(u.usage, many, true)
      case "Repeated":
        return walk(u.usage, true, optional)
      case "Alternation":
      case "Concat":
        walk(u.left, many, optional)
        return walk(u.right, many, optional)
      case "Empty":
      case "Mixed":
        return
    }
  }
  walk(usage, false, false)
  return { flags, args }
}

/** A command and its subcommands, in the order they are defined (the parser keeps no such tree). */
interface CommandNode {
  readonly name: string
  readonly descriptor: CommandDescriptor.Command<unknown>
  readonly children: ReadonlyArray<CommandNode>
}

const nodeOf = (command: { readonly descriptor: CommandDescriptor.Command<unknown> }, children: ReadonlyArray<CommandNode> = []): CommandNode => ({
  name: Array.from(CommandDescriptor.getNames(command.descriptor))[0] ?? "",
  descriptor: command.descriptor,
  children
})

const childrenOf = (c: (typeof commands)[number]): ReadonlyArray<CommandNode> =>
  c === dataCommand ? dataCommands.map((d) => nodeOf(d)) : c === harnessesCommand ? harnessesSubcommands.map((d) => nodeOf(d)) : []

const commandTree: CommandNode = nodeOf(assay, commands.map((c) => nodeOf(c, childrenOf(c))))

/** The command named by the leading words of `args` (`data pull`). */
const commandAt = (args: ReadonlyArray<string>): { readonly path: ReadonlyArray<string>; readonly node: CommandNode } => {
  let node = commandTree
  const path: Array<string> = []
  for (const word of args) {
    if (word.startsWith("-")) continue
    const next = node.children.find((c) => c.name === word)
    if (next === undefined) break
    path.push(word)
    node = next
  }
  return { path, node }
}

// Bold headings on a terminal only, and never under NO_COLOR (https://no-color.org).
const styled = (): boolean => process.stdout.isTTY === true && (process.env["NO_COLOR"] ?? "") === ""
const heading = (text: string) => (styled() ? `\x1b[1m${text}\x1b[0m` : text)

const WIDTH = 100

/** `text` in lines of at most WIDTH columns, each after `indent` spaces (the first after `first`). */
const wrap = (text: string, indent: number, first = " ".repeat(indent)): string => {
  const lines: Array<string> = []
  let line = first
  let fresh = true
  for (const word of text.split(/\s+/).filter((w) => w.length > 0)) {
    if (!fresh && line.length + 1 + word.length > WIDTH) {
      lines.push(line)
      line = " ".repeat(indent) + word
    } else line = fresh ? line + word : `${line} ${word}`
    fresh = false
  }
  lines.push(line.trimEnd())
  return lines.join("\n")
}

const argForm = (a: ArgShape) => (a.optional ? `[${a.name}]` : a.name) + (a.many ? "..." : "")

const flagValue = (f: FlagShape, doc: FlagDoc | undefined) => doc?.value ?? Option.getOrElse(f.accepted, () => "VALUE")

// Every flag of assay's commands is optional: a bracket each, `...` after those that repeat.
const flagForm = (f: FlagShape, doc: FlagDoc | undefined) => `[${f.name}${f.takesValue ? ` ${flagValue(f, doc)}` : ""}]${f.many ? "..." : ""}`

const leavesOf = (path: ReadonlyArray<string>, node: CommandNode): ReadonlyArray<string> =>
  node.children.length === 0 ? [path.join(" ")] : node.children.flatMap((c) => leavesOf([...path, c.name], c))

const helpText = (path: ReadonlyArray<string>): string => {
  const { node } = commandAt(path)
  const doc = docOf(path)
  const command = ["assay", ...path].join(" ")
  const about = doc?.about ?? ""
  if (node.children.length > 0) {
    const leaves = leavesOf([], node)
    const width = Math.max(...leaves.map((l) => l.length))
    return [
      wrap(`${command}${path.length === 0 ? ` ${VERSION}` : ""}: ${about}`, 2, ""),
      "",
      heading("Usage"),
      `  ${command} COMMAND [FLAG]...`,
      "",
      heading("Commands"),
      ...leaves.map((leaf) => wrap(docOf([...path, leaf])?.about ?? "", width + 4, `  ${leaf.padEnd(width)}  `)),
      "",
      wrap(`${command} COMMAND --help shows a command's flags${path.length === 0 ? "; assay --version prints the version" : ""}.`, 0),
      ...(path.length === 0
        ? [
          "Exit codes: 0 done, 1 failed (one line on stderr says why), 2 usage error or the plan shown without --yes, 3 stopped by budget " +
          "(every cell skipped by --max-usd), preflight or a quota allowance, 130 stopped by Ctrl-C or SIGTERM (what was kept stays; the same command resumes)."
        ]
            .map((l) => wrap(l, 0))
        : [])
    ].join("\n")
  }
  const shape = shapeOf(CommandDescriptor.getUsage(node.descriptor))
  const flagDoc = (name: string) => doc?.flags?.[name]
  const forms = [...shape.args.map(argForm), ...shape.flags.map((f) => flagForm(f, flagDoc(f.name)))]
  const rows: Array<readonly [string, string]> = [
    ...shape.args.map((a) => [argForm(a), doc?.args?.[a.name] ?? "(not described)"] as const),
    ...shape.flags.map((f) => {
      const d = flagDoc(f.name)
      const extras = [f.many ? "Repeatable" : "", d?.fallback !== undefined ? `Default: ${d.fallback}` : ""].filter((x) => x.length > 0)
      const about = [d?.about ?? "(not described)", ...extras].join(". ")
      return [f.takesValue ? `${f.name} ${flagValue(f, d)}` : f.name, about] as const
    }),
    ["-h, --help", "Show this help"]
  ]
  const column = 28
  return [
    wrap(`${command}: ${about}`, 2, ""),
    "",
    heading("Usage"),
    wrap(forms.join(" "), command.length + 3, `  ${command} `),
    "",
    heading("Flags and arguments"),
    ...rows.map(([left, right]) =>
      left.length + 2 <= column - 2 ? wrap(right, column, `  ${left.padEnd(column - 2)}`) : `  ${left}\n${wrap(right, column)}`
    )
  ].join("\n")
}

/** A HelpDoc as plain text on one line (its ANSI styling removed). */
const plainText = (doc: HelpDoc.HelpDoc): string => oneLine(HelpDoc.toAnsiText(doc).replace(/\x1b\[[0-9;]*[A-Za-z]/g, ""))

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, " ").trim()

/** The closest of `names` to `given`, when close enough to be what was meant. */
const nearest = (given: string, names: ReadonlyArray<string>): string | null => {
  const bare = given.replace(/^-+/, "")
  const prefixed = names.filter((n) => bare.length >= 3 && n.replace(/^-+/, "").startsWith(bare))
  if (prefixed.length === 1) return prefixed[0]!
  const scored = names.map((n) => [n, AutoCorrect.levensteinDistance(given, n, CliConfig.defaultConfig)] as const).sort((x, y) => x[1] - y[1])
  const best = scored[0]
  return best !== undefined && best[1] <= Math.max(1, Math.min(2, Math.floor(given.length / 3))) ? best[0] : null
}

const didYouMean = (given: string, names: ReadonlyArray<string>) => {
  const n = nearest(given, names)
  return n === null ? "" : ` (did you mean ${n}?)`
}

const seeHelp = (path: ReadonlyArray<string>) => `see ${["assay", ...path, "--help"].join(" ")}`

const namedAs = (path: ReadonlyArray<string>) => (path.length === 0 ? "assay" : path.join(" "))

/** A word or flag of the command line the command has no place for. */
const unexpected = (word: string, args: ReadonlyArray<string>): UsageError => {
  const { path, node } = commandAt(args)
  const subs = node.children.map((c) => c.name)
  const shape = shapeOf(CommandDescriptor.getUsage(node.descriptor))
  const name = word.split("=")[0] ?? word
  const say = (what: string) => new UsageError({ detail: `${what}; ${seeHelp(path)}` })
  if (!word.startsWith("-")) {
    if (subs.length > 0) {
      return say(`unknown command ${[...path, word].join(" ")}${didYouMean(word, subs)}: ${namedAs(path)} takes ${subs.join(", ")}`)
    }
    const takes = shape.args.length === 0 ? "it takes no arguments" : `it takes ${shape.args.map(argForm).join(" ")}`
    return say(`unexpected argument ${shown(word)} for ${namedAs(path)} (${takes})`)
  }
  const known = shape.flags.find((f) => f.name === name)
  if (known === undefined) {
    const names = [...shape.flags.map((f) => f.name), "--help"]
    return say(`unknown flag ${name} for ${namedAs(path)}${didYouMean(name, names)}`)
  }
  const given = args.filter((a) => a === name || a.startsWith(`${name}=`)).length
  if (given > 1 && !known.many) return say(`${name} is given ${given} times; it takes one`)
  if (known.takesValue) return say(`${name} needs a value (${flagValue(known, docOf(path)?.flags?.[name])})`)
  return say(`${name} takes no value`)
}

/** A command line @effect/cli refused, as one line saying what was wrong and what is accepted. */
const usageErrorOf = (error: ValidationError.ValidationError, args: ReadonlyArray<string>): UsageError => {
  const { path } = commandAt(args)
  const text = plainText(error.error)
  switch (error._tag) {
    case "CommandMismatch":
    case "MissingSubcommand": {
      // The first word after the command found, or its first flag, is what did not match.
      const rest = args.filter((a) => !path.includes(a))
      const word = rest.find((a) => !a.startsWith("-")) ?? rest[0]
      if (word !== undefined) return unexpected(word, args)
      break
    }
    case "MissingValue": {
      const missing = /<([^>]+)>/.exec(text)?.[1]
      if (missing !== undefined) {
        const about = docOf(path)?.args?.[missing]
        const what = about === undefined ? "" : ` (${about.charAt(0).toLowerCase()}${about.slice(1)})`
        return new UsageError({ detail: `${namedAs(path)} needs ${missing}${what}; ${seeHelp(path)}` })
      }
      break
    }
    case "InvalidValue": {
      // Our own flags name themselves; a primitive's message ('x' is not a float) is given its flag.
      const primitive = /^'(.*)' is not an? (\w+)/.exec(text)
      if (primitive !== null) {
        const [, value = "", kind = ""] = primitive
        const at = args.findIndex((a, i) => (a === value && args[i - 1]?.startsWith("--") === true) || a.endsWith(`=${value}`))
        const flag = at < 0 ? null : args[at] === value ? args[at - 1] : args[at]?.split("=")[0]
        const expected = kind === "float" ? "a number" : kind === "integer" ? "a whole number" : `a ${kind}`
        if (flag !== undefined && flag !== null) return new UsageError({ detail: `${flag} ${shown(value)}: expected ${expected}; ${seeHelp(path)}` })
      }
      break
    }
  }
  return new UsageError({ detail: `${text.replace(/\.$/, "")}; ${seeHelp(path)}` })
}

/**
 * The first word that looks like a flag and is none of the command's, or a flag that lacks its
 * value. The parser can take either for a positional argument (`data pull --bogus` reads as the
 * benchmark "--bogus", `report --out` as the run id "--out"): they are refused here.
 */
const strayFlag = (args: ReadonlyArray<string>): string | undefined => {
  const { node } = commandAt(args)
  const flags = new Map(shapeOf(CommandDescriptor.getUsage(node.descriptor)).flags.map((f) => [f.name, f]))
  for (let i = 0; i < args.length; i++) {
    const word = args[i] ?? ""
    if (!/^--?[^-\d]/.test(word)) continue
    const flag = flags.get(word.split("=")[0] ?? word)
    if (flag === undefined) return word
    if (flag.takesValue && !word.includes("=")) {
      if (i + 1 >= args.length) return word
      i++ // its value, whatever it looks like
    }
  }
  return undefined
}

const isHelpRequested = (e: unknown): e is ValidationError.HelpRequested => ValidationError.isValidationError(e) && ValidationError.isHelpRequested(e)

/**
 * A command without a handler of its own (assay, assay data) fails with HelpRequested, which
 * @effect/cli leaves out of the handler's error type: widened here so that it can be caught.
 */
const mayAskForHelp = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | ValidationError.ValidationError, R> => effect

/**
 * The command line as the parser takes it: `--flag=value` as `--flag value` for every flag that
 * takes a value (@effect/cli reads the `=` form of single flags only, and took a repeatable
 * flag's as missing its value); and a flag followed by another flag instead of its value refused
 * here, as @effect/cli would take that flag for the value.
 */
const normalized = (raw: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string>, UsageError> => {
  const { path, node } = commandAt(raw)
  const flags = new Map(shapeOf(CommandDescriptor.getUsage(node.descriptor)).flags.map((f) => [f.name, f]))
  const args: Array<string> = []
  for (const word of raw) {
    const eq = word.startsWith("--") ? word.indexOf("=") : -1
    const flag = eq > 0 ? flags.get(word.slice(0, eq)) : undefined
    if (flag !== undefined && flag.takesValue) args.push(word.slice(0, eq), word.slice(eq + 1))
    else args.push(word)
  }
  for (let i = 0; i < args.length; i++) {
    const flag = flags.get(args[i] ?? "")
    const next = args[i + 1]
    if (flag === undefined || !flag.takesValue) continue
    if (next !== undefined && (flags.has(next) || next === "--help" || next === "-h")) {
      return Effect.fail(new UsageError({ detail: `${flag.name} needs a value (${flagValue(flag, docOf(path)?.flags?.[flag.name])}), not the flag ${next}; ${seeHelp(path)}` }))
    }
    i++
  }
  return Effect.succeed(args)
}

const cli = (argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const args = yield* normalized(argv.slice(2))
    // Parsed here rather than by Command.run, which prints its own multi-line messages first.
    const directive = yield* CommandDescriptor.parse(assay.descriptor, ["assay", ...args], CliConfig.defaultConfig).pipe(
      Effect.mapError((e) => usageErrorOf(e, args))
    )
    if (directive._tag === "BuiltIn") {
      if (directive.option._tag === "ShowHelp") return yield* Console.log(helpText(commandAt(args).path))
      if (directive.option._tag === "ShowVersion") return yield* Console.log(VERSION)
      // Completions, the wizard and --log-level are @effect/cli's own: it runs them.
      return yield* Command.run(assay, { name: "assay", version: VERSION })(argv)
    }
    const [extra] = directive.leftover
    const stray = strayFlag(args)
    if (stray !== undefined) return yield* unexpected(stray, args)
    if (extra !== undefined) return yield* unexpected(extra, args)
    // `assay` or `assay data` without its command: the help, and exit 2 (a script missing a word fails).
    yield* mayAskForHelp(assay.handler(directive.value)).pipe(
      Effect.catchIf(isHelpRequested, () => Effect.zipRight(Console.log(helpText(commandAt(args).path)), new ExitWith({ code: 2 })))
    )
  })

/** Any failure as one line: an Error's message, a refused command line's text, or the value shown. */
const describeFailure = (error: unknown): string =>
  oneLine(
    ValidationError.isValidationError(error)
      ? plainText(error.error)
      : error instanceof Error
      ? error.message
      : typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
      ? error.message
      : Inspectable.toStringUnknown(error, 0)
  )

// The yield first: runMain adds its SIGINT/SIGTERM listeners only once runFork returns, at the
// program's first async step, and whatever ran synchronously before it (a home lock taken, say)
// would meet a signal with no listener, so Node's default action ends the process, no finalizer run.
const program = Effect.zipRight(Effect.yieldNow(), Effect.suspend(() => cli(process.argv))).pipe(
  countedIfAsked,
  // One Model service for the run, its HTTP client closed with the program; the Registry it is
  // built over gives its endpoints.
  Effect.provide(Layer.mergeAll(NodeContext.layer, Live.layerNode.pipe(Layer.provideMerge(Registry.layerCurrent)))),
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
        process.stderr.write(`assay: internal error: ${describeFailure(defect)}\n`)
        if (process.env["ASSAY_DEBUG"]) process.stderr.write(Cause.pretty(cause) + "\n")
        process.exitCode = 1
        return
      }
      const error: unknown = failure.value
      if (error instanceof ExitWith) {
        process.exitCode = error.code
        return
      }
      process.stderr.write(`assay: ${describeFailure(error)}\n`)
      process.exitCode = error instanceof UsageError || ValidationError.isValidationError(error) ? 2 : 1
    })
  ),
  // Outermost, so every span has ended when its scope closes and flushes them, before the exit.
  Effect.provide(Tracing.layerFromEnv())
)

// A run stopped by a signal (Ctrl-C, SIGTERM) ends interrupted: exit 130, never 0 (runMain's own
// teardown exits 0 then, which would tell a script the run finished). Otherwise the exit code set above.
NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit, onExit) =>
    onExit(Exit.isFailure(exit) ? (Cause.isInterruptedOnly(exit.cause) ? 130 : 1) : typeof process.exitCode === "number" ? process.exitCode : 0)
})
