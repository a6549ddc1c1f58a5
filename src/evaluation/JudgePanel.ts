/**
 * Judges beside the one that grades. The first judge (`models.judge`) decides every judged check,
 * as it always has; a second (`models["second-judge"]`) decides the same inputs too, and each
 * judge may be asked `models["judge-reps"]` times, so a report can say how far the two agree and
 * how far one agrees with itself. Their decisions are kept in the verdict (`details.judges`), and
 * every call's cost is judging cost. With one judge asked once nothing here adds anything: the
 * EnvironmentDef and the verdict are what they were.
 */
import { Array as Arr, Effect, Schema } from "effect"
import type { Judging } from "../schema/Attempt.ts"
import type { EnvironmentDef } from "../schema/EnvironmentDef.ts"

/** The role of the second judge in an EnvironmentDef's models. */
export const SECOND_JUDGE = "second-judge"
/** How many times each judge is asked (a whole number as text; absent: once). */
export const JUDGE_REPS = "judge-reps"

export interface PanelSpec {
  /** The judges' refs; the first decides the grade. */
  readonly judges: Arr.NonEmptyReadonlyArray<string>
  /** How many times each judge is asked the same input. */
  readonly reps: number
}

/** The panel an environment names; null without a judge. */
export const panelOf = (env: EnvironmentDef): PanelSpec | null => {
  const models = env.capabilities.models
  const first = models["judge"]
  if (first === undefined) return null
  const second = models[SECOND_JUDGE]
  const reps = Number(models[JUDGE_REPS] ?? "1")
  return { judges: second === undefined ? [first] : [first, second], reps: Number.isSafeInteger(reps) && reps >= 1 ? reps : 1 }
}

/**
 * The environment with this panel in its models: a second judge and more than one repetition
 * only when there are, so an environment with one judge asked once keeps its content id.
 */
export const withPanel = (env: EnvironmentDef, panel: PanelSpec): EnvironmentDef => {
  const [first, second] = panel.judges
  return {
    ...env,
    capabilities: {
      ...env.capabilities,
      models: {
        ...env.capabilities.models,
        judge: first,
        ...(second !== undefined ? { [SECOND_JUDGE]: second } : {}),
        ...(panel.reps > 1 ? { [JUDGE_REPS]: String(panel.reps) } : {})
      }
    }
  }
}

/** One input's decisions: `decisions[j][r]`, judge j's answer at its r-th asking. */
export const PanelInput = Schema.Struct({ input: Schema.String, decisions: Schema.Array(Schema.Array(Schema.Boolean)) })
export type PanelInput = typeof PanelInput.Type

/** What a verdict keeps of a panel (`details.judges`): the judges, in order, and every decision. */
export const PanelRecord = Schema.Struct({
  judges: Schema.Array(Schema.String),
  reps: Schema.Int,
  inputs: Schema.Array(PanelInput)
}).annotations({ identifier: "PanelRecord" })
export type PanelRecord = typeof PanelRecord.Type

const DetailsWithPanel = Schema.Struct({ judges: PanelRecord })
const decodeDetails = Schema.decodeUnknownOption(DetailsWithPanel)

/** The panel record in a verdict's details, if there is one. */
export const recordOf = (details: unknown): PanelRecord | undefined => {
  const decoded = decodeDetails(details)
  return decoded._tag === "Some" ? decoded.value.judges : undefined
}

/** One asking of one judge: its decision per input (in the order of the inputs) and its cost. */
export interface Asked {
  readonly decisions: ReadonlyArray<boolean>
  readonly judging: Judging
}

export const noJudging: Judging = { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 }

/** Two judgings as one: counts add, and an unknown price makes the sum unknown. */
export const addJudging = (x: Judging, y: Judging): Judging => ({
  calls: x.calls + y.calls,
  inputTokens: x.inputTokens + y.inputTokens,
  outputTokens: x.outputTokens + y.outputTokens,
  costUsd: x.costUsd === null || y.costUsd === null ? null : x.costUsd + y.costUsd
})

export interface Panelled<A> {
  /** The first judge's first answer: the one the grade is made of. */
  readonly first: A
  /** Every call's cost together. */
  readonly judging: Judging
  /** The decisions of every call; undefined when the panel is one judge asked once. */
  readonly record: PanelRecord | undefined
}

/**
 * Asks each judge `reps` times, one call after another (the first judge first), through `ask`.
 * A failing call fails the whole as the first judge's failure always has: a grade is never made
 * of fewer answers than the environment says. `inputs` names the decided inputs (the positions
 * of `decisions` that are not among them are left out of the record).
 */
export const ask = <M, A extends Asked, E, R>(
  panel: { readonly judges: Arr.NonEmptyReadonlyArray<M>; readonly reps: number },
  refOf: (judge: M) => string,
  inputs: ReadonlyArray<{ readonly input: string; readonly index: number }>,
  askOne: (judge: M) => Effect.Effect<A, E, R>
): Effect.Effect<Panelled<A>, E, R> =>
  Effect.gen(function*() {
    const answers: Array<Array<A>> = []
    for (const judge of panel.judges) {
      const mine: Array<A> = []
      for (let r = 0; r < panel.reps; r++) mine.push(yield* askOne(judge))
      answers.push(mine)
    }
    const first = answers[0]![0]!
    const judging = answers.flat().reduce((sum, a) => addJudging(sum, a.judging), noJudging)
    const record: PanelRecord | undefined = panel.judges.length === 1 && panel.reps === 1 ? undefined : {
      judges: panel.judges.map(refOf),
      reps: panel.reps,
      inputs: inputs.map(({ input, index }) => ({ input, decisions: answers.map((mine) => mine.map((a) => a.decisions[index] ?? false)) }))
    }
    return { first, judging, record }
  })
