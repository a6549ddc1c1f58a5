/**
 * `bfcl-multi-turn`: BFCL v4's multi-turn categories (800 tasks), a benchmark of its own beside
 * single-turn `bfcl`: its Attempts have a world (the involved API instances, forked per Attempt)
 * and a many-step protocol, where single-turn's have neither. See multiturn/README.md.
 */
import { Effect, Either } from "effect"
import { Agent, Benchmark, Capabilities, type Provider } from "../../../src/index.ts"
import { UPSTREAM_COMMIT, UPSTREAM_REPOSITORY } from "../data.ts"
import { bfclEquivalence } from "../equivalence.ts"
import type { LongContext } from "./api.ts"
import { checkMultiTurn, isLongContextTask } from "./checker.ts"
import { goldReplies } from "./gold.ts"
import { loadLongContext } from "./longContext.ts"
import { answerOf, inputsOf, type Mode, Output, run } from "./protocol.ts"
import { FOLDER, type MultiTurnTask, PINNED, readAll } from "./tasks.ts"
import { MODEL_NAME, type TaskWorld, taskWorld } from "./world.ts"

const BENCHMARK = "bfcl-multi-turn"

const dataError = (detail: string) => new Capabilities.CapabilityError({ capability: BENCHMARK, reason: "data", detail })

// Upstream's long_context.py constants, read once for the process when a long-context task first needs them.
let longContext: Effect.Effect<LongContext, Capabilities.CapabilityError> | undefined
const longContextFor = (task: MultiTurnTask): Effect.Effect<LongContext | undefined, Capabilities.CapabilityError> => {
  if (!isLongContextTask(task.id)) return Effect.succeed(undefined)
  longContext ??= Effect.runSync(Effect.cached(
    loadLongContext().pipe(Effect.mapError((e) => dataError(`${task.category} needs upstream's long-context constants: ${e.message}`)))
  ))
  return longContext
}

// A task's initial instances are immutable: made once, every Attempt forks them.
const worlds = new WeakMap<MultiTurnTask, TaskWorld>()
const worldOf = (task: MultiTurnTask): Effect.Effect<TaskWorld, Capabilities.CapabilityError> =>
  Effect.flatMap(longContextFor(task), (lc) => {
    let made = worlds.get(task)
    if (made === undefined) {
      made = taskWorld(task, lc)
      worlds.set(task, made)
    }
    return Effect.succeed(made)
  })

/** One check per way upstream's runner and checker fail an entry (true: not failed that way). */
const CHECKS = ["inference_error", "force_terminated", "empty_turn_model_response", "instance_state_mismatch", "execution_response_mismatch"] as const

const modeOf = (actionSpace: string): Mode => (actionSpace === "tools" ? "tools" : "text")

export const provider: Provider.Provider = Benchmark.make({
  name: BENCHMARK,
  version: "1",
  description: "BFCL v4 multi-turn: 800 tasks in four categories, the model working through user turns against upstream's simulated APIs, graded by upstream's multi-turn checker",
  data: readAll,
  tasks: (tasks) => tasks,
  id: (task) => task.id,
  stratum: (task) => task.category,
  upstream: `${UPSTREAM_REPOSITORY}@${UPSTREAM_COMMIT}`,
  setup: {
    name: "bfcl-multi-turn/instances",
    run: (task) => Effect.map(worldOf(task), (w) => ({ world: w.world, evidence: { instances: w.stateSha256 }, tools: w.tools }))
  },
  protocol: {
    name: "bfcl-multi-turn/steps",
    output: Output,
    inputs: (task, { agent }) => inputsOf(task, modeOf(agent.actionSpace)),
    run: (task, ctx) => run(task, ctx)
  },
  grade: {
    name: "bfcl-multi-turn/checker",
    run: (task, { output }) =>
      Effect.flatMap(longContextFor(task), (lc) => {
        const verdict = checkMultiTurn(task, answerOf(output), { modelName: MODEL_NAME, ...(lc !== undefined ? { longContext: lc } : {}) })
        if (Either.isLeft(verdict)) return Effect.fail(dataError(verdict.left.message))
        const v = verdict.right
        const checks: Record<string, boolean> = {}
        for (const name of CHECKS) checks[name] = v.errorType !== `multi_turn:${name}`
        return Effect.succeed({ reward: v.valid ? 1 : 0, checks, details: { errorType: v.errorType, errorMessage: v.errorMessage, turn: v.turn } })
      })
  },
  gold: (task) => Agent.scripted("gold", goldReplies(task, "tools")),
  pinned: { folder: FOLDER, files: PINNED },
  // The three multi-turn corpora (or --corpus FILE, any of their formats), long-context lines counted apart when long_context.py is absent.
  equivalence: (corpus) =>
    bfclEquivalence(corpus, { singleTurn: false }).pipe(
      Effect.map((r) => ({ ...r, benchmark: BENCHMARK })),
      Effect.mapError((e) => dataError(e.message))
    )
})

export const data: ReadonlyArray<Provider.PinnedFile> = provider.data ?? []
