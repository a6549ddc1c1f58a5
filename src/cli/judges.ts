/**
 * `--judge A [--judge B] [--judge-reps K]`: the judges put into each EnvironmentDef of a judged
 * benchmark (src/evaluation/JudgePanel.ts), as `run` and `plan` build them and as `replay` and a
 * cluster worker rebuild them from a run's settings. One judge asked once names only `judge`,
 * as before, so its environments keep their ids.
 */
import { Array as Arr, Effect, Option } from "effect"
import * as JudgePanel from "../evaluation/JudgePanel.ts"
import type { Provider } from "../evaluation/Provider.ts"
import * as Registry from "../model/Registry.ts"
import type { EnvironmentDef } from "../schema/EnvironmentDef.ts"
import { UsageError } from "./benchmarks.ts"

/** At most this many judges: the first grades, the second is for agreement. */
export const MAX_JUDGES = 2

/** `--judge` and `--no-judge` together ask for opposite things: neither is guessed. */
const bothJudgeFlags = (sel: { readonly judge: ReadonlyArray<string>; readonly noJudge: boolean }) =>
  sel.noJudge && sel.judge.length > 0
    ? Effect.fail(new UsageError({ detail: `--judge ${sel.judge.join(" --judge ")} and --no-judge ask for opposite things: give one of them` }))
    : Effect.void

/** A selection's judges as given (`--judge` repeated), checked; none with `--no-judge`. */
export const judgesOf = (sel: { readonly judge: ReadonlyArray<string>; readonly noJudge: boolean; readonly judgeReps: number }) =>
  Effect.gen(function*() {
    yield* bothJudgeFlags(sel)
    if (sel.judge.length > MAX_JUDGES) {
      return yield* new UsageError({ detail: `--judge is given ${sel.judge.length} times: give one judge, or two to measure their agreement (the first grades)` })
    }
    if (sel.judgeReps > 1 && (sel.noJudge || sel.judge.length === 0)) {
      return yield* new UsageError({ detail: `--judge-reps ${sel.judgeReps} asks a judge again, but no --judge is given` })
    }
    return sel.noJudge ? [] : sel.judge
  })

/**
 * The environments of a judged provider with the judges in their models (resolved in the
 * registry, so an alias names its model); others unchanged. `what` says where the refs came from.
 */
export const withJudges = (
  provider: Provider,
  environments: ReadonlyArray<EnvironmentDef>,
  refs: ReadonlyArray<string>,
  reps: number,
  what: string
) =>
  Effect.gen(function*() {
    if (provider.judged !== true || !Arr.isNonEmptyReadonlyArray(refs)) return environments
    const resolved = yield* Effect.forEach(refs, (ref) =>
      Effect.flatMap(Registry.Registry, (r) => r.resolve(ref)).pipe(
        Effect.mapError((e) => new UsageError({ detail: `${what} ${ref}: ${e.message}` }))
      ))
    const judges = Arr.map(refs, (_, i) => resolved[i]!.ref)
    return environments.map((e) => JudgePanel.withPanel(e, { judges, reps }))
  })

/** A harness run's judge (its own: a model or an agent CLI); a second judge and repetitions are for model runs. */
export const harnessJudge = (sel: { readonly judge: ReadonlyArray<string>; readonly judgeReps: number; readonly noJudge: boolean }) =>
  Effect.zipRight(
    bothJudgeFlags(sel),
    sel.judge.length > 1 || sel.judgeReps > 1
      ? Effect.fail(new UsageError({ detail: "a second --judge and --judge-reps measure judges of model runs; a harness run takes one --judge" }))
      : Effect.succeed(Option.fromNullable(sel.judge[0]))
  )
