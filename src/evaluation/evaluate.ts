/**
 * evaluate(env, agent): fork, setup, protocol, evaluator, usage, inputs id, receipt. It never
 * fails: a failed setup, a refused or faulted effect, an exceeded budget or a failed protocol
 * each end in an Attempt whose verdict says why, with the transcript up to that point.
 */
import { Cause, Clock, Context, Duration, Effect, Exit, Option, Ref, Schema } from "effect"
import type { Json } from "../content/Canonical.ts"
import * as Canonical from "../content/Canonical.ts"
import * as ContentId from "../content/ContentId.ts"
import { BudgetExceeded, make as makeWallet, Wallet } from "../budget/Wallet.ts"
import { Model } from "../model/Model.ts"
import { modelHandler } from "../model/ModelEffect.ts"
import * as Tracing from "../observability/Tracing.ts"
import type { AgentDef } from "../schema/AgentDef.ts"
import { type Attempt, type CliUsage, type Judging, type RecordedEffect, noUsage } from "../schema/Attempt.ts"
import { type EnvironmentDef, type FaultReason, type Limits, noLimits } from "../schema/EnvironmentDef.ts"
import * as EnvironmentDefs from "../schema/EnvironmentDef.ts"
import * as AgentDefs from "../schema/AgentDef.ts"
import { Verdict as VerdictSchema, type Verdict } from "../schema/Verdict.ts"
import * as World from "../world/World.ts"
import * as WE from "../world/WorldEffects.ts"
import type { Agent } from "./Agent.ts"
import { type Capabilities, CapabilityError, type ProtocolFailure, type ProtocolInputs } from "./Capabilities.ts"
import { guard } from "./ProviderFailure.ts"
import type { Message } from "./Conversation.ts"

export const LIBRARY_VERSION = "assay/0.1.0"

export interface EvaluateOptions {
  readonly capabilities: Capabilities
  readonly agentDef: AgentDef
  readonly agent: Agent
  readonly repetition: number
  /**
   * Live handlers beside the provider's tools (http/request, ...). `model/generate` is answered by
   * the `Model` service in context when no handler is given for it.
   */
  readonly handlers?: WE.Handlers
  /** Wrapping layers of the caller's own around the Attempt's effects, outermost first. */
  readonly wraps?: ReadonlyArray<WE.Wrap>
  /** Answer every effect from this recording instead: no live handler is used at all. */
  readonly replay?: ReadonlyArray<RecordedEffect>
  /** The resolved model registry entry of an llm candidate; part of its inputs id. */
  readonly registryEntry?: Json | null
  /** A wall-time limit set for the whole run (not part of the environment's identity). */
  readonly timeoutSeconds?: number | null
  /**
   * The Model service this Attempt's calls go to (its protocol's, its judge's); by default the one
   * in context. Given here, it is put in the Attempt's own context with its other services rather
   * than provided around the whole Attempt (a region less on every cell's path).
   */
  readonly model?: Model
  /**
   * What the candidate will be presented with and its inputs id, as predicted when the plan was
   * made (`predictInputs`): carried rather than computed again. The protocol is not asked for its
   * inputs once more, and the Attempt's inputs id is this one unless the protocol presents other
   * inputs than these.
   */
  readonly inputs?: PredictedInputs
}

/** The inputs a candidate is presented with (assembled: the benchmark's and the candidate's prompt), and their inputs id. */
export interface PredictedInputs {
  readonly assembled: ProtocolInputs
  readonly id: ContentId.ContentId
}

/** The candidate's prompt is appended to the benchmark's. */
export const assemble = (inputs: ProtocolInputs, agent: AgentDef): ProtocolInputs => ({
  system: agent.prompt.length === 0 ? inputs.system : inputs.system.length === 0 ? agent.prompt : `${inputs.system}\n\n${agent.prompt}`,
  tools: agent.actionSpace === "tools" ? inputs.tools : []
})

// Canonical texts of the values every Attempt of a run shares (tool specs, registry entries,
// environment and agent definitions), made once per value: they are immutable data, and at
// --parallel 1000 the JS thread spends what each Attempt recomputes. A value given a text with
// Canonical.remember (a tool spec exactly as shown, from a provider's prepared form) is not walked.
const canonicalOf = new WeakMap<object, string>()
const canonicalOnce = (value: object, make: () => unknown): string => {
  let text = canonicalOf.get(value)
  if (text === undefined) text = Canonical.rememberedText(value)
  if (text === undefined) {
    text = Canonical.canonicalUnsafe(make())
    canonicalOf.set(value, text)
  }
  return text
}

/**
 * The content id of what a candidate is presented with at run start: that of
 * `{ kind, system, tools: [{ name, description, parameters }], model }`, its canonical text put
 * together from the canonical texts of its parts (keys in canonical order: kind, model, system, tools).
 */
export const inputsIdOf = (assembled: ProtocolInputs, agent: AgentDef, registryEntry: Json | null): ContentId.ContentId => {
  const tools = assembled.tools.map((t) => canonicalOnce(t, () => ({ name: t.name, description: t.description, parameters: t.parameters })))
  const model = registryEntry !== null && typeof registryEntry === "object" ? canonicalOnce(registryEntry, () => registryEntry) : Canonical.canonicalUnsafe(registryEntry)
  return ContentId.ofText(`{"kind":${JSON.stringify(agent.kind)},"model":${model},"system":${JSON.stringify(assembled.system)},"tools":[${tools.join(",")}]}`)
}

const environmentIds = new WeakMap<EnvironmentDef, string>()
export const environmentIdOf = (env: EnvironmentDef): string => {
  let id = environmentIds.get(env)
  if (id === undefined) environmentIds.set(env, id = EnvironmentDefs.idOf(env))
  return id
}
const agentIds = new WeakMap<AgentDef, string>()
const agentIdOf = (agent: AgentDef): string => {
  let id = agentIds.get(agent)
  if (id === undefined) agentIds.set(agent, id = AgentDefs.idOf(agent))
  return id
}

/** The inputs a candidate would be presented with now and their inputs id, with no model call. */
export const predictInputs = (capabilities: Capabilities, env: EnvironmentDef, agent: AgentDef, registryEntry: Json | null) =>
  Effect.map(capabilities.protocol.inputs(env, agent), (inputs): PredictedInputs => {
    const assembled = assemble(inputs, agent)
    return { assembled, id: inputsIdOf(assembled, agent, registryEntry) }
  })

/** The inputs id a candidate would get now, with no model call. */
export const predictInputsId = (capabilities: Capabilities, env: EnvironmentDef, agent: AgentDef, registryEntry: Json | null) =>
  Effect.map(predictInputs(capabilities, env, agent, registryEntry), (predicted) => predicted.id)

/** Whether the inputs presented are the assembled ones, the very same values (so their id is known). */
const sameInputs = (presented: ProtocolInputs, assembled: ProtocolInputs): boolean =>
  presented.system === assembled.system && presented.tools.length === assembled.tools.length &&
  presented.tools.every((tool, i) => tool === assembled.tools[i])

const minLimit = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.min(a, b))

const mergeLimits = (a: Limits, b: Limits): Limits => ({
  turns: minLimit(a.turns, b.turns),
  tokens: minLimit(a.tokens, b.tokens),
  calls: minLimit(a.calls, b.calls),
  dollars: minLimit(a.dollars, b.dollars),
  wallSeconds: minLimit(a.wallSeconds, b.wallSeconds)
})

type Ended = NonNullable<Verdict["ended"]>

const endedOf = (failure: ProtocolFailure | BudgetExceeded): Ended => {
  switch (failure._tag) {
    case "BudgetExceeded":
      // A deadline (--timeout-secs, a wall-time limit) is a timeout, not money or tokens spent.
      return { reason: failure.limit === "wall-seconds" ? "timeout" : "budget-exceeded", detail: failure.message }
    case "EffectFault":
      return { reason: "fault", fault: failure.reason, detail: failure.message, injected: failure.injected }
    case "EffectRefused":
      // A call the experiment's spend cap did not send ends the Attempt unfinished, not refused by its world.
      return failure.reason === "spend-cap" ? { reason: "spend-cap", detail: failure.message } : { reason: "refused", detail: failure.message }
    case "CapabilityError":
      return { reason: "protocol-failed", detail: failure.message, ...providerOf(failure) }
    default:
      return { reason: "protocol-failed", detail: failure.message }
  }
}

/**
 * The `provider` mark of an ending caused by the benchmark's own code, or by its data missing or
 * damaged (`data`): neither is the candidate's failure, so neither is scored.
 */
const providerOf = (e: CapabilityError): { readonly provider?: string; readonly data?: boolean } =>
  e.reason === "provider" ? { provider: e.at ?? e.capability } : e.reason === "data" ? { provider: e.capability, data: true } : {}

/**
 * The mark of a failure in the benchmark's setup or grade, typed or thrown: the candidate either
 * never acted or was never graded, so the cell says nothing of it (not scored, run again).
 */
const benchmarksOwn = (e: CapabilityError): { readonly provider: string; readonly data?: boolean } => ({ provider: e.capability, ...providerOf(e) })

/** The ending of a failed setup: a CapabilityError's own message, anything else in full; the benchmark's either way. */
const setupEnded = (benchmark: string, cause: Cause.Cause<unknown>): Ended => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some" && failure.value instanceof CapabilityError) {
    return { reason: "setup-failed", detail: failure.value.message, ...benchmarksOwn(failure.value) }
  }
  return { reason: "setup-failed", detail: Cause.pretty(cause), provider: benchmark }
}

const endedVerdict = (ended: Ended): Verdict => ({
  reward: 0,
  checks: { [`ended:${ended.reason}`]: false },
  notEvaluated: [],
  trust: "deterministic",
  ended
})

const idOfJson = (value: unknown): string => ContentId.ofUnsafe(value)

/**
 * The content id of a part of the Attempt whose canonical text the Attempt's own id takes again
 * (the store names the Attempt by its canonical text): the text is recorded for the value, so it
 * is written once. Only for values nothing changes afterwards (an Attempt's parts are not).
 */
const idOfPart = (value: unknown): string => {
  const text = Canonical.canonicalUnsafe(value)
  if (typeof value === "object" && value !== null) Canonical.remember(value, text)
  return ContentId.ofText(text)
}

/** What is wrong with a value a provider hands back as JSON (not JSON: a bigint, a function), or null. */
const notJson = (value: unknown): string | null => {
  try {
    idOfPart(value)
    return null
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
}

/** What is wrong with a grade's result (a reward outside [0, 1], a check not true or false, details not JSON), or null. */
const gradeProblem = (graded: { readonly reward: number; readonly checks: Readonly<Record<string, unknown>>; readonly details?: unknown }): string | null => {
  if (!(graded.reward >= 0 && graded.reward <= 1)) return `a reward of ${graded.reward}, not a number from 0 to 1`
  const check = Object.entries(graded.checks).find(([, passed]) => typeof passed !== "boolean")
  if (check !== undefined) return `the check ${check[0]} as ${String(check[1])}, not true or false`
  const why = graded.details === undefined ? null : notJson(graded.details)
  return why === null ? null : `details that are not JSON: ${why}`
}

const isVerdict = Schema.is(VerdictSchema)
/** The verdict as Schema.encodeSync would give it (the same value), failing as it would on one out of shape. */
const validVerdict = (verdict: Verdict): Verdict => (isVerdict(verdict) ? verdict : Schema.encodeSync(VerdictSchema)(verdict))

export const evaluate = (env: EnvironmentDef, options: EvaluateOptions): Effect.Effect<Attempt> =>
  Effect.gen(function*() {
    const { capabilities, agentDef } = options
    const t0 = yield* Clock.currentTimeMillis
    const startedAt = new Date(t0).toISOString()
    const registryEntry = options.registryEntry ?? null
    const base = {
      environmentId: environmentIdOf(env),
      agentId: agentIdOf(agentDef),
      benchmark: env.benchmark,
      task: env.task,
      stratum: env.stratum,
      candidate: agentDef.name,
      repetition: options.repetition,
      startedAt
    }
    const finish = (parts: {
      inputsId: string
      evidence: Json
      output: Json
      verdict: Verdict
      usage: Attempt["usage"]
      faults: Attempt["faults"]
      finalWorld: string | null
      recording: ReadonlyArray<RecordedEffect>
      judging?: Judging
      cliUsage?: CliUsage
    }): Attempt => ({
      ...base,
      ...parts,
      receipt: {
        evidenceId: idOfPart(parts.evidence),
        outputId: idOfPart(parts.output),
        // A Verdict's encoded form is itself (no transformations); the check is its reward's range.
        verdictId: idOfJson(validVerdict(parts.verdict)),
        recordingId: idOfPart(parts.recording),
        library: LIBRARY_VERSION
      }
    })
    const elapsed = Effect.map(Clock.currentTimeMillis, (t) => (t - t0) / 1000)

    const setupExit = yield* Effect.exit(guard(env.benchmark, capabilities.worldSetup.name, capabilities.worldSetup.setup(env)))
    const carried = options.inputs
    const inputsExit = carried !== undefined
      ? Exit.succeed(carried.assembled)
      : Exit.map(yield* Effect.exit(guard(env.benchmark, capabilities.protocol.name, capabilities.protocol.inputs(env, agentDef))), (inputs) => assemble(inputs, agentDef))
    if (Exit.isFailure(setupExit) || Exit.isFailure(inputsExit)) {
      const cause = Exit.isFailure(setupExit) ? setupExit.cause : (inputsExit as Exit.Failure<ProtocolInputs, unknown>).cause
      return finish({
        inputsId: "",
        evidence: null,
        output: { transcript: [], result: null },
        verdict: endedVerdict(setupEnded(env.benchmark, cause)),
        usage: { ...noUsage, wallSeconds: yield* elapsed },
        faults: [],
        finalWorld: null,
        recording: []
      })
    }
    const setup = setupExit.value
    const assembled = inputsExit.value
    // Evidence that is not JSON cannot be stored: the benchmark's failure, this cell's alone.
    const badEvidence = notJson(setup.evidence)
    if (badEvidence !== null) {
      return finish({
        inputsId: "",
        evidence: null,
        output: { transcript: [], result: null },
        verdict: endedVerdict({
          reason: "setup-failed",
          detail: `provider ${env.benchmark} failed: ${capabilities.worldSetup.name} gave evidence that is not JSON: ${badEvidence}`,
          provider: capabilities.worldSetup.name
        }),
        usage: { ...noUsage, wallSeconds: yield* elapsed },
        faults: [],
        finalWorld: null,
        recording: []
      })
    }
    const limits = mergeLimits(mergeLimits(env.limits, agentDef.limits), { ...noLimits, wallSeconds: options.timeoutSeconds ?? null })

    const transcript = yield* Ref.make<ReadonlyArray<Message>>([])
    const world: WE.AttemptWorld = { ref: yield* Ref.make(World.fork(setup.world)) }
    const recorder: WE.Recorder = { entries: yield* Ref.make<ReadonlyArray<RecordedEffect>>([]) }
    const faultLog: WE.FaultLog = { entries: yield* Ref.make<ReadonlyArray<{ key: string; occurrence: number; reason: FaultReason }>>([]) }
    const model = options.model !== undefined ? Option.some(options.model) : yield* Effect.serviceOption(Model)
    const modelHandlers: WE.Handlers = Option.isSome(model) ? { "model/generate": modelHandler(model.value) } : {}
    const wallet = yield* makeWallet(limits)
    const attemptServices = Context.make(WE.AttemptWorld, world).pipe(
      Context.add(WE.Recorder, recorder),
      Context.add(WE.FaultLog, faultLog),
      Context.add(Wallet, wallet)
    )
    const withModel = Option.isSome(model) ? Context.add(attemptServices, Model, model.value) : attemptServices
    const task = `${env.benchmark}/${env.task}`
    // The one composition (WE.attemptEffects), whatever the caller passes: its handler holds the
    // Attempt's fork; a caller's own wraps go outermost.
    const stack = WE.attemptEffects(
      env.world.effects,
      task,
      options.replay
        ? WE.makeReplay(options.replay, world)
        : WE.makeLive({ ...modelHandlers, ...setup.handlers, ...options.handlers, ...WE.toolHandlers(setup.tools, world) }, world),
      recorder,
      faultLog
    )
    const effects = options.wraps === undefined || options.wraps.length === 0 ? stack : yield* WE.withWraps(stack, options.wraps)
    const context = Context.add(withModel, WE.WorldEffects, effects)
    // The inputs id is of what the candidate is actually presented with: the system prompt and
    // tools of the first request the protocol makes of it (the declared ones when it is never
    // asked, as a harness run by the protocol itself is). A protocol presenting other inputs than
    // it declared shows as "unpredicted" in the runner.
    let presented: ProtocolInputs | null = null
    const agent: Agent = {
      ...options.agent,
      reply: (input) =>
        Effect.suspend(() => {
          presented ??= { system: input.system, tools: input.tools }
          return options.agent.reply(input)
        })
    }
    const protocol = guard(env.benchmark, capabilities.protocol.name, capabilities.protocol.run({
      env,
      agent,
      inputs: assembled,
      evidence: setup.evidence,
      transcript
    }))
    const bounded = limits.wallSeconds === null
      ? protocol
      : protocol.pipe(
        Effect.timeoutFail({
          duration: Duration.seconds(limits.wallSeconds),
          onTimeout: () => new BudgetExceeded({ limit: "wall-seconds", allowed: limits.wallSeconds ?? 0, spent: limits.wallSeconds ?? 0 })
        })
      )
    // The conversation, the grading and what lies between in the Attempt's context, provided once.
    return yield* Effect.provide(
      Effect.gen(function*() {
        // The agent's own resources (a harness CLI and its servers) end with the conversation.
        const outcome = yield* Effect.either(options.agent.close === undefined ? bounded : Effect.ensuring(bounded, options.agent.close))
        const cliUsage = options.agent.cliUsage === undefined ? undefined : yield* options.agent.cliUsage
        const ran = {
          outcome,
          final: yield* Ref.get(world.ref),
          recording: yield* Ref.get(recorder.entries),
          faults: yield* Ref.get(faultLog.entries),
          usage: yield* wallet.usage
        }
        // Typed again: the compiler does not see the assignment made in the agent's callback.
        const shown: ProtocolInputs | null = presented
        const inputsId = carried !== undefined && (shown === null || sameInputs(shown, assembled))
          ? carried.id
          : inputsIdOf(shown ?? assembled, agentDef, registryEntry)
        const messages = yield* Ref.get(transcript)
        const output: Json = {
          transcript: messages as unknown as Json,
          result: ran.outcome._tag === "Right" ? ran.outcome.right : null
        }

        let verdict: Verdict
        let judging: Judging | undefined
        if (ran.outcome._tag === "Left") {
          verdict = endedVerdict(endedOf(ran.outcome.left))
        } else {
          const graded = yield* Effect.either(guard(
            env.benchmark,
            capabilities.evaluator.name,
            capabilities.evaluator.evaluate({
              env,
              evidence: setup.evidence,
              transcript: messages,
              output: ran.outcome.right,
              initial: setup.world,
              final: ran.final
            })
          ))
          judging = graded._tag === "Right" ? graded.right.judging : undefined
          // A reward out of range or details that cannot be stored: the grader's bug, this cell's alone.
          const problem = graded._tag === "Right" ? gradeProblem(graded.right) : null
          verdict = graded._tag === "Left"
            ? endedVerdict({ reason: "evaluator-failed", detail: graded.left.message, ...benchmarksOwn(graded.left) })
            : problem !== null
            ? endedVerdict({
              reason: "evaluator-failed",
              detail: `provider ${env.benchmark} failed: ${capabilities.evaluator.name} returned ${problem}`,
              provider: capabilities.evaluator.name
            })
            : {
              reward: graded.right.reward,
              checks: graded.right.checks,
              notEvaluated: graded.right.notEvaluated ?? [],
              trust: graded.right.trust ?? capabilities.evaluator.trust,
              ended: null,
              ...(graded.right.details !== undefined ? { details: graded.right.details } : {})
            }
        }
        return finish({
          inputsId,
          evidence: setup.evidence,
          output,
          verdict,
          usage: { ...ran.usage, wallSeconds: yield* elapsed },
          faults: ran.faults,
          finalWorld: World.digest(ran.final),
          recording: ran.recording,
          ...(judging !== undefined ? { judging } : {}),
          ...(cliUsage !== undefined ? { cliUsage } : {})
        })
      }),
      context
    )
  }).pipe(
    Tracing.attemptSpan({
      benchmark: env.benchmark,
      task: env.task,
      stratum: env.stratum,
      candidate: options.agentDef.name,
      repetition: options.repetition
    })
  )
