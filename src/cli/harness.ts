/**
 * `plan|run --harness NAME`: agent CLIs as candidates on the corpus benchmark. This file parses
 * the options, builds the plan (harnesses detected on PATH and in tools/harnesses/node_modules/.bin,
 * candidates discovered from the registry, the judge chosen), calls the runner once per run with
 * the harness policy of src/harness/RunPolicy.ts plugged in (one run at a time, the spend cap, the
 * subscription allowance, the recommendation), and prints. The store is opened once per command.
 */
import { existsSync } from "node:fs"
import * as path from "node:path"
import { Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import * as ContentId from "../content/ContentId.ts"
import { fromNote, renderEstimate, runPilot } from "../experiment/Preflight.ts"
import type { Lane, RunOutcome } from "../experiment/Runner.ts"
import { classify, countStates, makePlan, run as runExperiment } from "../experiment/Runner.ts"
import { encodeJson, renderText, type Report } from "../experiment/Report.ts"
import * as Store from "../experiment/Store.ts"
import * as Allowance from "../harness/Allowance.ts"
import { aliasRows, type HarnessModel, nameOf, parseHarnessModel, registryModels } from "../harness/Candidates.ts"
import { loadCorpus } from "../harness/Corpus.ts"
import { detectAll } from "../harness/Detect.ts"
import { findPython } from "../harness/Graders.ts"
import { adapters } from "../harness/adapters/index.ts"
import { harnessNames, type HarnessName, isHarnessName } from "../harness/Harness.ts"
import { type JudgeRequest, judgeRefOf, planHarnessRuns } from "../harness/Plan.ts"
import * as RunPolicy from "../harness/RunPolicy.ts"
import * as Registry from "../model/Registry.ts"
import type { Handlers } from "../world/WorldEffects.ts"
import { corpusSpawnHandler, loadBenchmark, UsageError } from "./benchmarks.ts"
import { resolveHarnessCandidate } from "./candidates.ts"
import { endedEarlyLine, outageLine } from "./outages.ts"
import { stderrProgress } from "./progress.ts"
import { resumeCommand, stoppedLine } from "./stopped.ts"
import { harnessBinDirs, harnessEndpoint } from "./harnessBin.ts"

// ---------------------------------------------------------------------------------------------
// Options (spread into the command's own)

export const harnessOptions = {
  harness: Options.text("harness").pipe(
    Options.repeated,
    Options.withDescription(`Agent CLI to benchmark on the corpus (repeatable): ${harnessNames.join(", ")}, or all`)
  ),
  family: Options.text("family").pipe(Options.repeated, Options.withDescription("Only registry models of this family (repeatable; harness runs)"))
}

export const harnessRunOptions = {
  preflightShare: Options.float("preflight-share").pipe(
    Options.optional,
    Options.withDescription(
      "Harness runs on a subscription: first a pilot, then stop with exit 3 if the rest would take more than this share of any quota window; during the run no cell starts past it (default 0.10, always applied) or past 80% used"
    )
  )
}

// The harness runs' defaults are the policy's; main.ts names them in its help.
export { DEFAULT_MAX_USD, DEFAULT_TIMEOUT_SECS } from "../harness/RunPolicy.ts"

export interface HarnessSelection {
  readonly benchmark: ReadonlyArray<string>
  readonly harness: ReadonlyArray<string>
  readonly family: ReadonlyArray<string>
  readonly model: ReadonlyArray<string>
  readonly candidate: ReadonlyArray<string>
  readonly task: ReadonlyArray<string>
  readonly reps: number
  readonly judge: Option.Option<string>
  readonly noJudge: boolean
  readonly home: string
  readonly json: boolean
}

export interface HarnessRunSelection extends HarnessSelection {
  readonly maxUsd: Option.Option<number>
  readonly timeoutSecs: Option.Option<number>
  readonly preflightShare: Option.Option<number>
  readonly preflightUsd: Option.Option<number>
  /** Refused for harness runs: only whether it was given matters. */
  readonly faults: Option.Option<unknown>
  readonly yes: boolean
}

// ---------------------------------------------------------------------------------------------
// Detection and planning

const selectedHarnesses = (names: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<HarnessName>, UsageError> => {
  if (names.includes("all")) return Effect.succeed(harnessNames)
  const unknown = names.filter((n) => !isHarnessName(n))
  return unknown.length > 0
    ? Effect.fail(new UsageError({ detail: `unknown harness ${unknown.join(", ")}: choose among ${harnessNames.join(", ")}, or all` }))
    : Effect.succeed([...new Set(names)] as ReadonlyArray<HarnessName>)
}

const judgeRequest = (sel: HarnessSelection, file: Registry.RegistryFile): Effect.Effect<JudgeRequest, UsageError> => {
  if (sel.noJudge) return Effect.succeed("none")
  if (Option.isNone(sel.judge)) return Effect.succeed("default")
  const text = sel.judge.value
  const prefix = text.slice(0, Math.max(0, text.indexOf(":")))
  if (isHarnessName(prefix)) {
    return Effect.mapError(parseHarnessModel(text), (e) => new UsageError({ detail: `--judge ${e.message}` })).pipe(
      Effect.map((harness): JudgeRequest => ({ harness }))
    )
  }
  return Effect.mapError(Registry.resolveIn(file, text), (e) => new UsageError({ detail: `--judge: ${e.message}` })).pipe(
    Effect.map((resolved): JudgeRequest => ({ model: resolved.ref }))
  )
}

/** Harness runs: `--harness`, or the corpus benchmark alone (its candidates are `harness:NAME[:MODEL]`). */
export const isHarnessSelection = (sel: Pick<HarnessSelection, "benchmark" | "harness">): boolean =>
  sel.harness.length > 0 || (sel.benchmark.length > 0 && sel.benchmark.every((b) => b === "corpus"))

const prepare = (sel: HarnessSelection) =>
  Effect.gen(function*() {
    if (sel.reps < 1) return yield* new UsageError({ detail: "--reps must be at least 1" })
    const others = sel.benchmark.filter((b) => b !== "corpus")
    if (others.length > 0) return yield* new UsageError({ detail: `harness runs are on the corpus benchmark only, not ${others.join(", ")}` })
    // `--candidate harness:NAME[:MODEL]` names a harness and, with a model, narrows it to that model.
    const named: Array<string> = [...sel.harness]
    const picks: Array<HarnessModel> = []
    for (const c of sel.candidate) {
      const rest = c.startsWith("harness:") ? c.slice("harness:".length) : ""
      const harness = rest.split(":")[0] ?? ""
      if (!isHarnessName(harness)) {
        return yield* new UsageError({ detail: `--candidate ${c}: the corpus takes harness:NAME[:MODEL] with NAME one of ${harnessNames.join(", ")}` })
      }
      named.push(harness)
      if (rest.includes(":") && !rest.endsWith(":default")) picks.push({ harness, model: rest.slice(harness.length + 1) })
    }
    if (named.length === 0) return yield* new UsageError({ detail: "no harness: add --harness NAME (or all), or --candidate harness:NAME[:MODEL]" })
    const names = yield* selectedHarnesses(named)
    for (const m of sel.model) {
      const parsed = parseHarnessModel(m)
      if (parsed._tag === "Left") return yield* new UsageError({ detail: `--model ${parsed.left.message} (with --harness, models are HARNESS:MODEL)` })
      if (!names.includes(parsed.right.harness)) return yield* new UsageError({ detail: `--model ${m}: add --harness ${parsed.right.harness}` })
      picks.push(parsed.right)
    }
    const file = yield* Registry.fixture
    const judge = yield* judgeRequest(sel, file)
    const detections = yield* detectAll({ binDirs: harnessBinDirs() }, names.map((n) => adapters[n]))
    const python = yield* findPython()
    let tasks = yield* loadCorpus().pipe(Effect.mapError((e) => new UsageError({ detail: e.message })))
    if (sel.task.length > 0) {
      const unknown = sel.task.filter((t) => !tasks.some((x) => x.id === t))
      if (unknown.length > 0) return yield* new UsageError({ detail: `no task ${unknown.join(", ")} in the corpus` })
      tasks = tasks.filter((t) => sel.task.includes(t.id))
    }
    const plan = planHarnessRuns({
      detections,
      registry: [...registryModels(file), ...aliasRows(file, picks)],
      filter: { families: sel.family, models: picks },
      tasks,
      python,
      reps: sel.reps,
      judge
    })
    const provider = yield* loadBenchmark("corpus")
    const judgeRef = judgeRefOf(plan)
    const all = yield* provider.environments
    const environments = all
      .filter((e) => plan.tasks.some((t) => t.id === e.task))
      .map((e) => (judgeRef === null ? e : { ...e, capabilities: { ...e.capabilities, models: { ...e.capabilities.models, judge: judgeRef } } }))
    const candidates = yield* Effect.forEach(plan.candidates, (c) => resolveHarnessCandidate(provider, nameOf(c)))
    const lane: Lane = { provider, environments, candidates }
    const runnerPlan = yield* makePlan([lane], sel.reps)
    return { plan, python, judgeRef, runnerPlan }
  })

type Prepared = Effect.Effect.Success<ReturnType<typeof prepare>>

/**
 * What the home holds of the plan (each cell's state, the last preflight estimate), read in one
 * opening of the store; with no home, every cell is new: plan and run without --yes create none.
 */
const homeStanding = (home: string, p: Prepared) =>
  existsSync(path.join(home, "assay.sqlite"))
    ? Effect.provide(
      Effect.gen(function*() {
        const store = yield* Store.Store
        const states = yield* classify(p.runnerPlan)
        const estimate = fromNote(yield* store.latestNote(p.runnerPlan.experimentId, "estimate"))
        return { states, estimate }
      }),
      // A plan reads: nothing written, nothing migrated.
      Store.layer(home, { readOnly: true })
    )
    : Effect.succeed({ states: p.runnerPlan.cells.map((cell) => ({ cell, state: "new" as const })), estimate: null })

const planDocument = (sel: HarnessSelection, p: Prepared, states: ReadonlyArray<{ readonly state: string }>, maxUsd: number, timeoutSecs: number) => ({
  benchmark: "corpus",
  experimentId: p.runnerPlan.experimentId,
  home: path.resolve(sel.home),
  harnesses: p.plan.harnesses.map((d) => ({
    name: d.harness,
    liveness: d.liveness.status,
    reason: d.liveness.reason,
    version: d.version ?? null,
    binary: d.binary ?? null
  })),
  candidates: p.plan.candidates.map((c) => ({
    name: nameOf(c),
    harness: c.harness,
    model: c.model ?? null,
    provider: c.provider ?? null,
    price: c.cost ?? null
  })),
  tasks: p.plan.tasks.map((t) => ({ id: t.id, role: t.role, title: t.title })),
  skippedTasks: p.plan.skippedTasks,
  python: p.python === undefined ? null : p.python.version,
  judge:
    p.plan.judge.kind === "none"
      ? { ref: null, reason: p.plan.judge.reason, alsoCandidate: false }
      : { ref: p.judgeRef, alsoCandidate: p.plan.judge.kind === "harness" && p.plan.judge.alsoCandidate },
  repetitions: sel.reps,
  agentRuns: p.plan.runs.length,
  judgeCalls: p.plan.judgeCalls,
  spendCapUsd: maxUsd,
  timeoutSecs,
  cells: countStates(states)
})

type PlanDocument = ReturnType<typeof planDocument>

const planText = (doc: PlanDocument): string =>
  [
    `experiment ${ContentId.short(doc.experimentId)} in ${doc.home}: harnesses on the corpus`,
    `harnesses:`,
    ...doc.harnesses.map((h) => `  ${h.name.padEnd(9)} ${h.liveness.padEnd(8)} ${h.version ?? ""} ${h.reason}`),
    `candidates (${doc.candidates.length}): ${doc.candidates.map((c) => c.name).join(", ") || "none"}`,
    `tasks (${doc.tasks.length}): ${doc.tasks.map((t) => `${t.id} (${t.role})`).join(", ")}`,
    ...doc.skippedTasks.map((s) => `  skipped ${s.task}: ${s.reason}`),
    `judge: ${doc.judge.ref === null ? `none (${"reason" in doc.judge ? doc.judge.reason : ""})` : `${doc.judge.ref}${doc.judge.alsoCandidate ? " (also a candidate)" : ""}`}`,
    `agent runs: ${doc.agentRuns}; judge calls: ${doc.judgeCalls}; spend cap $${doc.spendCapUsd}; timeout ${doc.timeoutSecs}s per run`,
    `cells: ${doc.cells.total} (${doc.cells.new} new, ${doc.cells.kept} kept, ${doc.cells.stale} stale${doc.cells.faulted > 0 ? `, ${doc.cells.faulted} faulted to run again` : ""})`
  ].join("\n")

const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

/** `plan --harness ...`: what a harness run would do; exits 0 even when no harness is installed. */
export const planHarness = (sel: HarnessSelection) =>
  Effect.gen(function*() {
    const p = yield* prepare(sel)
    const { estimate, states } = yield* homeStanding(sel.home, p)
    const doc = planDocument(sel, p, states, RunPolicy.DEFAULT_MAX_USD, RunPolicy.DEFAULT_TIMEOUT_SECS)
    yield* sel.json
      ? printJson(estimate === null ? doc : { ...doc, estimate })
      : Console.log(planText(doc) + (estimate === null ? "" : "\n" + renderEstimate(estimate)))
  })


// ---------------------------------------------------------------------------------------------
// Run

/** The options as the policy's limits: the defaults filled in, and each checked. */
const limitsOf = (sel: HarnessRunSelection): Effect.Effect<RunPolicy.Limits, UsageError> => {
  const limits: RunPolicy.Limits = {
    maxUsd: Option.getOrElse(sel.maxUsd, () => RunPolicy.DEFAULT_MAX_USD),
    timeoutSecs: Option.getOrElse(sel.timeoutSecs, () => RunPolicy.DEFAULT_TIMEOUT_SECS),
    allowance: { ...Allowance.defaultAllowance, ...Option.match(sel.preflightShare, { onNone: () => ({}), onSome: (share) => ({ share }) }) }
  }
  if (!(limits.allowance.share > 0 && limits.allowance.share <= 1)) return Effect.fail(new UsageError({ detail: "--preflight-share must be in (0, 1]" }))
  if (!(limits.timeoutSecs > 0)) return Effect.fail(new UsageError({ detail: "--timeout-secs must be positive" }))
  if (Option.isSome(sel.preflightUsd) && !(sel.preflightUsd.value >= 0)) {
    return Effect.fail(new UsageError({ detail: "--preflight-usd must be a number of dollars, 0 or more" }))
  }
  // Said rather than ignored: not wired for harness runs yet.
  if (Option.isSome(sel.faults)) return Effect.fail(new UsageError({ detail: "--faults is not available for harness runs yet" }))
  return Effect.succeed(limits)
}

const printReport = (report: Report, json: boolean) =>
  json ? Effect.flatMap(encodeJson(report).pipe(Effect.orDie), Console.log) : Console.log(renderText(report))

/**
 * The runs of a harness command, in the one store the command opened: the pilot when a preflight
 * option is given, then the rest, each finished once with the policy's report.
 */
const runInStore = (sel: HarnessRunSelection, p: Prepared, limits: RunPolicy.Limits, handlers: Handlers) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const policy = yield* RunPolicy.make({
      limits,
      baseline: yield* store.latestNote(p.runnerPlan.experimentId, "quota-baseline"),
      judge: RunPolicy.judgeOf(p.plan, p.judgeRef)
    })
    // The run is finished once, by the runner, with the policy's report (the recommendation, its
    // Scorecards withheld when stopped), the quota baseline noted beside it.
    const finish = (outcome: Pick<RunOutcome, "report" | "attempts">) =>
      Effect.gen(function*() {
        const baseline = yield* policy.baseline
        if (baseline !== null) yield* store.putNote(outcome.report.runId, "quota-baseline", baseline)
        return yield* policy.finish(outcome)
      })
    // The exit code, said on stderr when the spend cap let none of this command's cells run.
    const ending = Effect.gen(function*() {
      const overBudget = yield* policy.overBudget
      if (overBudget !== null) yield* Console.error(`assay: ${overBudget}`)
      return yield* policy.exitCode
    })
    const progress = stderrProgress()
    const settings = (pilot: boolean) => ({
      ...policy.settings({
        pilot,
        handlers,
        progress,
        record: {
          benchmarks: ["corpus"],
          harnesses: p.plan.harnesses.map((d) => ({ name: d.harness, liveness: d.liveness.status, version: d.version ?? null })),
          candidates: p.plan.candidates.map(nameOf),
          command: resumeCommand(),
          tasks: p.plan.tasks.map((t) => t.id),
          reps: sel.reps,
          judge: p.judgeRef,
          preflightUsd: Option.getOrNull(sel.preflightUsd),
          preflightShare: Option.getOrNull(sel.preflightShare),
          endpoint: harnessEndpoint() === undefined ? "harness login" : "ASSAY_HARNESS_BASE_URL"
        }
      }),
      finish
    })

    if (Option.isSome(sel.preflightUsd) || Option.isSome(sel.preflightShare)) {
      const { estimate: gate, pilotRun } = yield* runPilot(p.runnerPlan, settings(true), policy.gate(Option.getOrNull(sel.preflightUsd)))
      const pilotReport = pilotRun.report
      if ((yield* policy.stopped) !== null) {
        yield* printReport(pilotReport, sel.json)
        return yield* ending
      }
      if (gate.verdict !== "within-budget") {
        const hint = gate.verdict === "over-allowance" ? "a larger --preflight-share" : "a larger --preflight-usd"
        if (sel.json) yield* printJson({ stopped: gate.verdict, runId: gate.runId, estimate: gate })
        else yield* Console.log(renderEstimate(gate) + `\nstopped: ${gate.verdict}; run again with ${hint} to resume after the pilot`)
        return 3
      }
      if (!sel.json) yield* Console.error(renderEstimate(gate))
    }
    const outcome = yield* runExperiment(p.runnerPlan, settings(false))
    yield* printReport(outcome.report, sel.json)
    const outages = outageLine(outcome.attempts)
    if (outages !== null) yield* Console.error(outages)
    const early = endedEarlyLine(outcome.attempts)
    if (early !== null) yield* Console.error(early)
    return yield* ending
  })

/**
 * `run --harness ...`: returns the exit code (2: plan printed without --yes; 3: stopped by the
 * allowance or the preflight, or by budget: the spend cap let none of its cells run).
 */
export const runHarnesses = (sel: HarnessRunSelection) =>
  Effect.gen(function*() {
    const limits = yield* limitsOf(sel)
    const p = yield* prepare(sel)
    if (!sel.yes) {
      const { states } = yield* homeStanding(sel.home, p)
      const doc = planDocument(sel, p, states, limits.maxUsd, limits.timeoutSecs)
      yield* sel.json ? printJson({ ...doc, ran: false, hint: "add --yes to run" }) : Console.log(planText(doc) + "\nnot run: add --yes to run it")
      return 2
    }
    if (p.plan.candidates.length === 0) {
      const why = p.plan.harnesses.map((d) => `${d.harness}: ${d.liveness.status} (${d.liveness.reason})`).join("; ")
      return yield* new UsageError({ detail: `no harness candidate to run: ${why}` })
    }
    const binaries: Partial<Record<HarnessName, string>> = {}
    for (const d of p.plan.harnesses) if (d.liveness.status === "live" && d.binary !== undefined) binaries[d.harness] = d.binary
    const spawnHandler = yield* Effect.promise(corpusSpawnHandler)
    const handlers: Handlers = {
      // A model judge's calls go to the Model service (provided at the edge), metered per call.
      "process/spawn": spawnHandler({ binaries, endpoint: harnessEndpoint(), python: p.python, timeoutMs: limits.timeoutSecs * 1000 })
    }
    // Ctrl-C or SIGTERM: the line every run prints, the cells kept and the command that resumes.
    const stopped = stoppedLine(p.runnerPlan, path.resolve(sel.home))
    return yield* Effect.provide(runInStore(sel, p, limits, handlers).pipe(Effect.onInterrupt(() => stopped)), Store.layer(sel.home))
  })
