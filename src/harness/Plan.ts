/**
 * What a harness benchmark will do before it runs: harnesses with their liveness, discovered
 * candidates, tasks (and those skipped, with why), the judge, and the runs (candidate x task x rep).
 * Pure: detection and python lookup happen before, so a plan can be printed on any machine.
 */
import type { Candidate, CandidateFilter, HarnessModel, RegistryModel } from "./Candidates.ts"
import { defaultJudge, discoverCandidates } from "./Candidates.ts"
import type { CorpusTask } from "./Corpus.ts"
import type { Python } from "./Graders.ts"
import type { Detection } from "./Harness.ts"

export interface SkippedTask {
  readonly task: string
  readonly reason: string
}

export interface PlannedRun {
  readonly candidate: Candidate
  readonly task: CorpusTask
  /** 0-based repetition. */
  readonly rep: number
}

/** `harness`: a candidate-like judge run through an agent CLI; `model`: a registry `PROVIDER:MODEL`. */
export type JudgeChoice =
  | { readonly kind: "none"; readonly reason: string }
  | { readonly kind: "harness"; readonly harness: HarnessModel; readonly alsoCandidate: boolean; readonly cost: Candidate["cost"] }
  | { readonly kind: "model"; readonly ref: string }

export type JudgeRequest = "default" | "none" | { readonly harness: HarnessModel } | { readonly model: string }

export interface HarnessPlan {
  readonly harnesses: ReadonlyArray<Detection>
  readonly candidates: ReadonlyArray<Candidate>
  readonly tasks: ReadonlyArray<CorpusTask>
  readonly skippedTasks: ReadonlyArray<SkippedTask>
  readonly runs: ReadonlyArray<PlannedRun>
  readonly judge: JudgeChoice
  readonly judgeCalls: number
}

/** Why a task cannot be graded here, if it cannot: all of its graders are Python checks and python3 is absent. */
export const taskSkipReason = (task: CorpusTask, python: Python | undefined): string | undefined =>
  python === undefined && task.graders.every((g) => g.kind === "python")
    ? "python3 not found on PATH and every grader of this task is a Python check"
    : undefined

export const planHarnessRuns = (input: {
  readonly detections: ReadonlyArray<Detection>
  readonly registry: ReadonlyArray<RegistryModel>
  readonly filter?: CandidateFilter
  readonly tasks: ReadonlyArray<CorpusTask>
  readonly python: Python | undefined
  readonly reps: number
  readonly judge: JudgeRequest
}): HarnessPlan => {
  const candidates = discoverCandidates(input.detections, input.registry, input.filter)
  const skippedTasks: Array<SkippedTask> = []
  const tasks: Array<CorpusTask> = []
  for (const t of input.tasks) {
    const reason = taskSkipReason(t, input.python)
    if (reason === undefined) tasks.push(t)
    else skippedTasks.push({ task: t.id, reason })
  }
  const runs: Array<PlannedRun> = []
  for (const candidate of candidates) {
    for (const task of tasks) for (let rep = 0; rep < input.reps; rep++) runs.push({ candidate, task, rep })
  }
  const judge = chooseJudge(input.judge, candidates)
  return { harnesses: input.detections, candidates, tasks, skippedTasks, runs, judge, judgeCalls: judge.kind === "none" ? 0 : runs.length }
}

/** The judge as an environment names it in `models.judge` (`PROVIDER:MODEL` or `harness:NAME[:MODEL]`); null without one. */
export const judgeRefOf = (plan: Pick<HarnessPlan, "judge">): string | null =>
  plan.judge.kind === "none"
    ? null
    : plan.judge.kind === "model"
    ? plan.judge.ref
    : plan.judge.harness.model === "default"
    ? `harness:${plan.judge.harness.harness}`
    : `harness:${plan.judge.harness.harness}:${plan.judge.harness.model}`

const chooseJudge = (request: JudgeRequest, candidates: ReadonlyArray<Candidate>): JudgeChoice => {
  if (request === "none") return { kind: "none", reason: "--no-judge" }
  if (request === "default") {
    const c = defaultJudge(candidates)
    return c === undefined
      ? { kind: "none", reason: "no candidate has a known output price" }
      : { kind: "harness", harness: { harness: c.harness, model: c.model ?? "default" }, alsoCandidate: true, cost: c.cost }
  }
  if ("model" in request) return { kind: "model", ref: request.model }
  const same = candidates.find((c) => c.harness === request.harness.harness && c.model === request.harness.model)
  return { kind: "harness", harness: request.harness, alsoCandidate: same !== undefined, cost: same?.cost }
}
