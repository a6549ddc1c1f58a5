/**
 * `plan|run --harness NAME`: agent CLIs as candidates on the corpus benchmark. Harnesses are
 * detected (PATH and tools/harnesses/node_modules/.bin), candidates discovered from the registry
 * (never hard-coded), the judge chosen, and the run goes through the ordinary runner and store,
 * one harness run at a time, under a spend cap and a subscription allowance. The run's report
 * carries the orchestrator/worker recommendation.
 */
import { existsSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Options } from "@effect/cli"
import { Console, Effect, Option, Ref } from "effect"
import * as ContentId from "../content/ContentId.ts"
import { fromNote, renderEstimate, runPilot } from "../experiment/Preflight.ts"
import type { Lane, Progress, RunOutcome, RunSettings } from "../experiment/Runner.ts"
import { classify, makePlan, run as runExperiment } from "../experiment/Runner.ts"
import { encodeJson, type Recommendation, renderText, type Report } from "../experiment/Report.ts"
import * as Store from "../experiment/Store.ts"
import * as Allowance from "../harness/Allowance.ts"
import { type HarnessModel, parseHarnessModel, type RegistryModel, registryModels } from "../harness/Candidates.ts"
import { loadCorpus } from "../harness/Corpus.ts"
import { detectAll } from "../harness/Detect.ts"
import { findPython } from "../harness/Graders.ts"
import { adapters } from "../harness/adapters/index.ts"
import { harnessNames, type HarnessName, isHarnessName } from "../harness/Harness.ts"
import { type HarnessPlan, type JudgeRequest, planHarnessRuns } from "../harness/Plan.ts"
import { recommend, type ResultRow } from "../harness/Recommend.ts"
import * as Registry from "../model/Registry.ts"
import type { Attempt } from "../schema/Attempt.ts"
import type { Handler } from "../world/WorldEffects.ts"
import { loadBenchmark, UsageError } from "./benchmarks.ts"
import { resolveHarnessCandidate } from "./candidates.ts"
import { stderrProgress } from "./progress.ts"

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

export const DEFAULT_MAX_USD = 10
export const DEFAULT_TIMEOUT_SECS = 600

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
  readonly faults: Option.Option<string>
  readonly yes: boolean
}

// ---------------------------------------------------------------------------------------------
// Detection and planning

const toolsBin = fileURLToPath(new URL("../../tools/harnesses/node_modules/.bin", import.meta.url))

/** Folders searched before PATH: `ASSAY_HARNESS_BIN_DIRS` when set (empty = none), else the project's tools. */
const binDirs = (): ReadonlyArray<string> => {
  const set = process.env["ASSAY_HARNESS_BIN_DIRS"]
  return set === undefined ? [toolsBin] : set.split(path.delimiter).filter((d) => d !== "")
}

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

/** The judge as an environment names it in `models.judge`. */
const judgeRefOf = (plan: HarnessPlan): string | null =>
  plan.judge.kind === "none"
    ? null
    : plan.judge.kind === "model"
    ? plan.judge.ref
    : plan.judge.harness.model === "default"
    ? `harness:${plan.judge.harness.harness}`
    : `harness:${plan.judge.harness.harness}:${plan.judge.harness.model}`

const candidateName = (c: { readonly harness: HarnessName; readonly model: string | undefined }) =>
  c.model === undefined ? `harness:${c.harness}` : `harness:${c.harness}:${c.model}`

/** Harness runs: `--harness`, or the corpus benchmark alone (its candidates are `harness:NAME[:MODEL]`). */
export const isHarnessSelection = (sel: Pick<HarnessSelection, "benchmark" | "harness">): boolean =>
  sel.harness.length > 0 || (sel.benchmark.length > 0 && sel.benchmark.every((b) => b === "corpus"))

/**
 * Registry rows for picks named by an alias (`codex:gpt-5`): the harness is asked for the name the
 * user typed, priced as the model the alias stands for.
 */
const aliasRows = (file: Registry.RegistryFile, picks: ReadonlyArray<HarnessModel>): ReadonlyArray<RegistryModel> =>
  picks.flatMap((p) =>
    adapters[p.harness].vendors.flatMap((vendor) => {
      const found = Registry.resolveIn(file, `${vendor}:${p.model}`)
      return found._tag === "Right" && found.right.provider === vendor && found.right.model.id !== p.model
        ? [{ provider: vendor, id: p.model, family: found.right.model.family, retired: found.right.model.status === "retired", cost: found.right.model.cost }]
        : []
    })
  )

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
    const detections = yield* detectAll({ binDirs: binDirs() }, names.map((n) => adapters[n]))
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
    const all = yield* provider.environments.pipe(Effect.mapError((e) => new UsageError({ detail: e.message })))
    const environments = all
      .filter((e) => plan.tasks.some((t) => t.id === e.task))
      .map((e) => (judgeRef === null ? e : { ...e, capabilities: { ...e.capabilities, models: { ...e.capabilities.models, judge: judgeRef } } }))
    const candidates = yield* Effect.forEach(plan.candidates, (c) => resolveHarnessCandidate(provider, candidateName(c)))
    const lane: Lane = { provider, environments, candidates }
    const runnerPlan = yield* makePlan([lane], sel.reps)
    return { plan, python, judgeRef, runnerPlan }
  })

type Prepared = Effect.Effect.Success<ReturnType<typeof prepare>>

const cellStates = (home: string, p: Prepared) =>
  existsSync(path.join(home, "assay.sqlite"))
    ? Effect.provide(classify(p.runnerPlan), Store.layer(home))
    : Effect.succeed(p.runnerPlan.cells.map((cell) => ({ cell, state: "new" as const })))

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
    name: candidateName(c),
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
  cells: {
    total: states.length,
    new: states.filter((s) => s.state === "new").length,
    kept: states.filter((s) => s.state === "kept").length,
    stale: states.filter((s) => s.state === "stale").length,
    faulted: states.filter((s) => s.state === "faulted").length
  }
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
    const states = yield* cellStates(sel.home, p)
    const doc = planDocument(sel, p, states, DEFAULT_MAX_USD, DEFAULT_TIMEOUT_SECS)
    const estimate = existsSync(path.join(sel.home, "assay.sqlite"))
      ? fromNote(yield* Effect.flatMap(Store.Store, (s) => s.latestNote(p.runnerPlan.experimentId, "estimate")).pipe(Effect.provide(Store.layer(sel.home))))
      : null
    yield* sel.json
      ? printJson(estimate === null ? doc : { ...doc, estimate })
      : Console.log(planText(doc) + (estimate === null ? "" : "\n" + renderEstimate(estimate)))
  })

// ---------------------------------------------------------------------------------------------
// Run

/** The endpoint harnesses are pointed at, when `ASSAY_HARNESS_BASE_URL` is set; else their own login. */
const endpointFromEnv = () => {
  const baseUrl = process.env["ASSAY_HARNESS_BASE_URL"]
  return baseUrl === undefined || baseUrl === "" ? undefined : { baseUrl, apiKey: process.env["ASSAY_HARNESS_API_KEY"] ?? "sk-assay-local" }
}

const modelCalls: Handler = (effect) =>
  Effect.flatMap(Effect.promise(() => import("../model/ModelAgent.ts")), (m) => m.liveHandler(effect))

interface HarnessResult {
  readonly harness?: {
    readonly models?: ReadonlyArray<string>
    readonly wallMs?: number
  }
}

const resultOf = (a: Attempt): HarnessResult | undefined => {
  const result = (a.output as { readonly result?: unknown } | null)?.result
  return typeof result === "object" && result !== null ? (result as HarnessResult) : undefined
}

/**
 * The quota readings of every harness run an Attempt made (the candidate's and a harness judge's:
 * they draw on the same account), in the order they ran. Read from the recording, so a run that
 * ended in a fault (a quota refusal) still counts.
 */
const quotaOf = (a: Attempt): ReadonlyArray<Allowance.Reading> =>
  a.recording.flatMap((r) => {
    if (r.kind !== "process/spawn" || !("ok" in r.outcome)) return []
    const quota = (r.outcome.ok as { readonly quota?: unknown } | null)?.quota
    return Array.isArray(quota)
      ? quota.filter((q): q is Allowance.Reading => typeof q?.window === "string" && typeof q?.usedPercent === "number")
      : []
  })

/** A stored `quota-baseline` note: window -> percent used at the experiment's first reading. */
const baselineOf = (note: unknown): ReadonlyMap<string, number> =>
  new Map(
    typeof note === "object" && note !== null
      ? Object.entries(note).filter((e): e is [string, number] => typeof e[1] === "number")
      : []
  )

/** The recommendation over a run's current Attempts (kept and fresh). */
export const recommendationOf = (attempts: ReadonlyArray<Attempt>, judge: Recommendation["judge"]): Recommendation => {
  const rows: Array<ResultRow> = attempts.map((a) => ({
    candidate: a.candidate,
    task: a.task,
    role: a.stratum === "orchestrator" || a.stratum === "worker" ? a.stratum : "both",
    status: "done",
    score: a.verdict.reward,
    costUsd: a.usage.costUsd ?? undefined,
    wallMs: resultOf(a)?.harness?.wallMs ?? a.usage.wallSeconds * 1000
  }))
  const rec = recommend(rows)
  const models: Record<string, Array<string>> = {}
  for (const a of attempts) {
    const seen = (models[a.candidate] ??= [])
    for (const m of resultOf(a)?.harness?.models ?? []) if (!seen.includes(m)) seen.push(m)
  }
  const pick = (p: typeof rec.orchestrator) => (p === undefined ? null : { ...p, medianCostUsd: p.medianCostUsd ?? null })
  return {
    orchestrator: pick(rec.orchestrator),
    worker: pick(rec.worker),
    standings: {
      orchestrator: rec.standings.orchestrator.map((s) => ({ ...s, medianCostUsd: s.medianCostUsd ?? null })),
      worker: rec.standings.worker.map((s) => ({ ...s, medianCostUsd: s.medianCostUsd ?? null }))
    },
    smallestSample: rec.smallestSample ?? null,
    warnings: rec.warnings,
    models,
    judge
  }
}

/** `run --harness ...`: returns the exit code (2: plan printed without --yes; 3: stopped by the allowance). */
export const runHarnesses = (sel: HarnessRunSelection) =>
  Effect.gen(function*() {
    const maxUsd = Option.getOrElse(sel.maxUsd, () => DEFAULT_MAX_USD)
    const timeoutSecs = Option.getOrElse(sel.timeoutSecs, () => DEFAULT_TIMEOUT_SECS)
    const allowance: Allowance.Allowance = { ...Allowance.defaultAllowance, ...Option.match(sel.preflightShare, { onNone: () => ({}), onSome: (share) => ({ share }) }) }
    if (!(allowance.share > 0 && allowance.share <= 1)) return yield* new UsageError({ detail: "--preflight-share must be in (0, 1]" })
    if (!(timeoutSecs > 0)) return yield* new UsageError({ detail: "--timeout-secs must be positive" })
    // Said rather than ignored: these are not wired for harness runs yet.
    if (Option.isSome(sel.preflightUsd) && !(sel.preflightUsd.value >= 0)) return yield* new UsageError({ detail: "--preflight-usd must be a number of dollars, 0 or more" })
    if (Option.isSome(sel.faults)) return yield* new UsageError({ detail: "--faults is not available for harness runs yet" })
    const p = yield* prepare(sel)
    if (!sel.yes) {
      const doc = planDocument(sel, p, yield* cellStates(sel.home, p), maxUsd, timeoutSecs)
      yield* sel.json ? printJson({ ...doc, ran: false, hint: "add --yes to run" }) : Console.log(planText(doc) + "\nnot run: add --yes to run it")
      return 2
    }
    if (p.plan.candidates.length === 0) {
      const why = p.plan.harnesses.map((d) => `${d.harness}: ${d.liveness.status} (${d.liveness.reason})`).join("; ")
      return yield* new UsageError({ detail: `no harness candidate to run: ${why}` })
    }
    const binaries: Partial<Record<HarnessName, string>> = {}
    for (const d of p.plan.harnesses) if (d.liveness.status === "live" && d.binary !== undefined) binaries[d.harness] = d.binary
    const { spawnHandler } = yield* Effect.promise(() => import("../../providers/corpus/index.ts"))
    // "Since the experiment started": each window's first reading is kept in the store, so a
    // resumed run counts from it too (its newest reading is taken afresh: windows reset).
    const priorBaseline = existsSync(path.join(sel.home, "assay.sqlite"))
      ? yield* Effect.flatMap(Store.Store, (s) => s.latestNote(p.runnerPlan.experimentId, "quota-baseline")).pipe(Effect.provide(Store.layer(sel.home)))
      : null
    const meter = yield* Ref.make<Allowance.Meter>({ ...Allowance.emptyMeter, baseline: baselineOf(priorBaseline) })
    // Known dollars spent by this run: the runs' and their judging (the judge is paid too).
    const spent = yield* Ref.make(0)
    const base = stderrProgress()
    const progress: Progress = {
      ...base,
      cell: (info) =>
        Effect.all([
          Ref.update(meter, (m) => Allowance.observe(m, quotaOf(info.last))),
          Ref.update(spent, (usd) => usd + (info.last.usage.costUsd ?? 0) + (info.last.judging?.costUsd ?? 0)),
          base.cell(info)
        ], { discard: true })
    }
    const refused = yield* Ref.make<string | null>(null)
    const settings = (pilot: boolean): RunSettings => ({
      // One at a time: harness runs share the machine, their wall time is measured, and each
      // cell's quota readings follow the previous cell's.
      parallel: 1,
      // The spend cap is checked in `admit`, with the judge's spending counted.
      maxUsd: null,
      // A backstop: the harness and judge runs are killed at their own limit first.
      timeoutSeconds: timeoutSecs * 2 + 120,
      handlers: {
        "process/spawn": spawnHandler({ binaries, endpoint: endpointFromEnv(), python: p.python, timeoutMs: timeoutSecs * 1000 }),
        "model/generate": modelCalls
      },
      progress,
      admit: () =>
        Effect.gen(function*() {
          const usd = yield* Ref.get(spent)
          if (usd >= maxUsd) return `spend cap: $${usd.toFixed(4)} of $${maxUsd} spent (runs and their judging)`
          const why = Allowance.refusal(yield* Ref.get(meter), allowance)
          if (why !== null) yield* Ref.update(refused, (r) => r ?? why)
          return why
        }),
      settings: {
        benchmarks: ["corpus"],
        harnesses: p.plan.harnesses.map((d) => ({ name: d.harness, liveness: d.liveness.status, version: d.version ?? null })),
        candidates: p.plan.candidates.map(candidateName),
        tasks: p.plan.tasks.map((t) => t.id),
        reps: sel.reps,
        parallel: 1,
        maxUsd,
        timeoutSecs,
        judge: p.judgeRef,
        allowance: { share: allowance.share, pauseAt: allowance.pauseAt },
        preflightUsd: Option.getOrNull(sel.preflightUsd),
        preflightShare: Option.getOrNull(sel.preflightShare),
        pilot,
        endpoint: endpointFromEnv() === undefined ? "harness login" : "ASSAY_HARNESS_BASE_URL"
      }
    })
    const inStore = <A, E>(effect: Effect.Effect<A, E, Store.Store>) => Effect.provide(effect, Store.layer(sel.home))
    // Each window's first reading, kept with the run so that a resumed run counts from it.
    const keepBaseline = (runId: string) =>
      Effect.flatMap(Ref.get(meter), ({ baseline }) =>
        baseline.size > 0 ? inStore(Effect.flatMap(Store.Store, (s) => s.putNote(runId, "quota-baseline", Object.fromEntries(baseline)))) : Effect.void)

    // The run's report with the recommendation; refused by the allowance, the run is incomplete
    // and no Scorecard is kept for it (running again resumes from the cells already done).
    const finish = (outcome: RunOutcome) =>
      Effect.gen(function*() {
        const stopped = yield* Ref.get(refused)
        const judge = p.judgeRef === null ? null : { ref: p.judgeRef, alsoCandidate: p.plan.judge.kind === "harness" && p.plan.judge.alsoCandidate }
        const recommendation = recommendationOf(outcome.attempts, judge)
        // A candidate on the harness's default model is named by the models its transcripts show.
        const shown = Object.entries(recommendation.models)
          .filter(([c, ms]) => ms.length > 0 && !ms.every((m) => c.endsWith(`:${m}`)))
          .map(([c, ms]) => `${c} ran ${ms.join(", ")} (as its transcripts show)`)
        const notes = [...(outcome.report.notes ?? []), ...shown]
        const withRecommendation: Report = { ...outcome.report, ...(notes.length > 0 ? { notes } : {}), recommendation }
        const report: Report = stopped === null
          ? withRecommendation
          : {
            ...withRecommendation,
            scorecards: [],
            comparisons: [],
            frontier: [],
            warnings: [...(withRecommendation.warnings ?? []), `stopped by the subscription allowance: ${stopped}; run again to resume`]
          }
        yield* inStore(Effect.flatMap(Store.Store, (store) => store.finishRun(report.runId, report)))
        yield* sel.json ? Effect.flatMap(encodeJson(report).pipe(Effect.orDie), Console.log) : Console.log(renderText(report))
        return stopped === null ? 0 : 3
      })

    if (Option.isSome(sel.preflightUsd) || Option.isSome(sel.preflightShare)) {
      const { estimate: gate, pilotRun } = yield* inStore(runPilot(p.runnerPlan, settings(true), {
        budgetUsd: Option.getOrNull(sel.preflightUsd),
        parallel: 1,
        readings: quotaOf,
        allowance: Effect.map(Ref.get(meter), (m) => Allowance.standing(m, allowance))
      }))
      yield* keepBaseline(pilotRun.report.runId)
      if ((yield* Ref.get(refused)) !== null) return yield* finish(pilotRun)
      if (gate.verdict !== "within-budget") {
        const hint = gate.verdict === "over-allowance" ? "a larger --preflight-share" : "a larger --preflight-usd"
        if (sel.json) yield* printJson({ stopped: gate.verdict, runId: gate.runId, estimate: gate })
        else yield* Console.log(renderEstimate(gate) + `\nstopped: ${gate.verdict}; run again with ${hint} to resume after the pilot`)
        return 3
      }
      if (!sel.json) yield* Console.error(renderEstimate(gate))
    }
    const outcome = yield* inStore(runExperiment(p.runnerPlan, settings(false)))
    yield* keepBaseline(outcome.report.runId)
    return yield* finish(outcome)
  })

