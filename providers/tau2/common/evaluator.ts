/**
 * tau2-bench's reward (upstream src/tau2/evaluator/evaluator.py, `evaluate_simulation` with
 * EvaluationType.ALL): a conversation that did not end by a user or agent stop gets 0; a task
 * without criteria gets 1; otherwise the reward is the product of the components in the task's
 * reward basis: DB (final world equals the gold world), ENV_ASSERTION (the task's env assertions
 * hold on the final world), ACTION (every gold action matched by a
 * tool call of either side), COMMUNICATE (every info said by the agent), NL_ASSERTION (a judge
 * model grades each assertion over the conversation).
 *
 * One check per way to lose: `db`, `env:<n>` (ENV_ASSERTION, where the domain evaluates them),
 * `action:<n>`, `communicate:<n>`, `nl:<n>` (n counts from 0 in the task's list),
 * `termination:<reason>` for a premature end. Without a judge model the NL
 * assertions are listed in `notEvaluated` and left out of the product: never counted as passed.
 */
import { Effect, Schema } from "effect"
import { type Attempt, type Canonical, Capabilities, type Clients, Cost, JudgePanel, Model, type Registry, World } from "../../../src/index.ts"
import { actionCheck, communicateCheck, type Task, type TrajectoryToolCall } from "./task.ts"
import type { ConversationOutput, Tau2Message } from "./conversation.ts"

/** A judge: one model call, made outside the Attempt (its wallet does not pay for it). */
export type JudgeCall = (request: Clients.ModelRequest) => Effect.Effect<Clients.ModelResponse, { readonly message: string }>

/** The judge through the Model service of the run (so the experiment's spend cap covers it). */
export const liveJudge: JudgeCall = Model.generateInContext

export interface Judge {
  /** The judge whose answers grade the NL assertions. */
  readonly model: Registry.ResolvedModel
  readonly call: JudgeCall
  /** A second judge asked the same, for agreement only (src/evaluation/JudgePanel.ts). */
  readonly second?: Registry.ResolvedModel
  /** How many times each judge is asked the same (self-consistency); once when absent. */
  readonly reps?: number
}

/** The domain's side of grading: the task and how its DB is checked. */
export interface Grading {
  readonly task: Task
  /** DB: does the final world equal the gold world (the domain replays the gold actions)? */
  readonly db: (final: World.World) => boolean
  /** null when no judge model is configured. */
  readonly judge: Judge | null
  /**
   * ENV_ASSERTION: whether each of the task's env assertions holds on the final world, in order.
   * Absent for a domain that has none transcribed: its assertions are then listed as not evaluated.
   */
  readonly envAssertions?: (final: World.World) => ReadonlyArray<boolean>
  /** ACTION: whether each gold action is matched by some tool call; the shared matcher when absent. */
  readonly actions?: (toolCalls: ReadonlyArray<TrajectoryToolCall>) => ReadonlyArray<boolean>
}

const Termination = Schema.Literal("user_stop", "agent_stop", "max_steps", "too_many_errors", "agent_error", "user_error")
const Output = Schema.Struct({
  terminationReason: Termination,
  messages: Schema.Array(Schema.Unknown)
})

const evaluatorError = (detail: string) => new Capabilities.CapabilityError({ capability: "tau2/evaluator", reason: "evaluator", detail })

/** The protocol's output, checked to be a conversation's. */
export const decodeOutput = (output: Canonical.Json): Effect.Effect<ConversationOutput, Capabilities.CapabilityError> =>
  Effect.map(
    Effect.mapError(Schema.decodeUnknown(Output)(output), (e) => evaluatorError(`not a conversation output: ${e.message}`)),
    () => output as unknown as ConversationOutput
  )

/** Every tool call of the trajectory, the user's included (upstream's ActionEvaluator). */
export const toolCallsOf = (messages: ReadonlyArray<Tau2Message>): ReadonlyArray<TrajectoryToolCall> =>
  messages.flatMap((m) => (m.role === "tool" ? [] : m.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments }))))

// ---------------------------------------------------------------------------------------------
// NL assertions

/** The conversation as the judge reads it: one `role: text` line per message. */
export const conversationText = (messages: ReadonlyArray<Tau2Message>): string =>
  messages
    .map((m) => {
      if (m.role === "tool") return `tool: ${m.content}`
      const calls = m.toolCalls.map((c) => `${c.name}(${JSON.stringify(c.arguments)})`).join(", ")
      return `${m.role}: ${m.content ?? ""}${calls.length > 0 ? (m.content ? " " : "") + `[tool calls: ${calls}]` : ""}`
    })
    .join("\n")

const judgeSystem = [
  "You grade a recorded customer-service conversation between an agent and a customer against a list of expected outcomes.",
  "Decide for each expected outcome, on its own, whether the agent's behaviour in the conversation satisfies it.",
  "Answer with one JSON object and nothing else, of the form",
  '{"results": [{"expectedOutcome": "<the outcome, copied from the list>", "reasoning": "<one or two sentences>", "metExpectation": true}]}',
  "with one entry per expected outcome, in the order given; metExpectation is false when the conversation does not show the outcome."
].join("\n")

/** The judge's request for a conversation and its assertions. */
export const judgeRequest = (model: Registry.ResolvedModel, messages: ReadonlyArray<Tau2Message>, assertions: ReadonlyArray<string>): Clients.ModelRequest =>
  // Bounded as every request is (Model.boundedRequest): the spend cap reserves what is sent.
  Model.boundedRequest({
    provider: model.provider,
    model: model.model.id,
    system: judgeSystem,
    messages: [
      {
        role: "user",
        content: `<conversation>\n${conversationText(messages)}\n</conversation>\n\n<expected_outcomes>\n${
          assertions.map((a, i) => `${i + 1}. ${a}`).join("\n")
        }\n</expected_outcomes>`
      }
    ],
    tools: []
  }, model.model)

const JudgeReply = Schema.Struct({
  results: Schema.Array(Schema.Struct({ expectedOutcome: Schema.optional(Schema.String), reasoning: Schema.optional(Schema.String), metExpectation: Schema.Boolean }))
})

export interface NlCheck {
  readonly assertion: string
  readonly met: boolean
  readonly justification: string | null
}

/**
 * The judge's verdict per assertion: matched by the outcome text it repeats, else by position.
 * An assertion the reply does not grade is not met (upstream would silently drop it).
 */
export const parseJudgeReply = (text: string, assertions: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<NlCheck>, Capabilities.CapabilityError> =>
  Effect.gen(function*() {
    // Models often fence JSON; the object is what matters.
    const start = text.indexOf("{")
    const end = text.lastIndexOf("}")
    const body = start >= 0 && end > start ? text.slice(start, end + 1) : text
    const reply = yield* Schema.decodeUnknown(Schema.parseJson(JudgeReply))(body).pipe(
      Effect.mapError((e) => evaluatorError(`the judge's reply is not the expected JSON: ${e.message}`))
    )
    const named = (r: (typeof reply.results)[number]) => assertions.some((a) => a.trim() === r.expectedOutcome?.trim())
    return assertions.map((assertion, i) => {
      const byText = reply.results.find((r) => r.expectedOutcome?.trim() === assertion.trim())
      // By position only a result that names no assertion: one naming another belongs to that one.
      const byPosition = reply.results[i] !== undefined && !named(reply.results[i]!) ? reply.results[i] : undefined
      const result = byText ?? byPosition
      return { assertion, met: result?.metExpectation ?? false, justification: result?.reasoning ?? null }
    })
  })

// ---------------------------------------------------------------------------------------------

const ENDED_NORMALLY = new Set(["user_stop", "agent_stop"])

/** The grade of a finished conversation. */
export const grade = (grading: Grading, output: ConversationOutput, final: World.World): Effect.Effect<Capabilities.Grade, Capabilities.CapabilityError> =>
  Effect.gen(function*() {
    if (!ENDED_NORMALLY.has(output.terminationReason)) {
      return {
        reward: 0,
        checks: { [`termination:${output.terminationReason}`]: false },
        details: { terminationReason: output.terminationReason, note: "the conversation ended prematurely" }
      }
    }
    const criteria = grading.task.evaluation_criteria
    if (criteria === null) return { reward: 1, checks: {}, details: { terminationReason: output.terminationReason, note: "no evaluation criteria" } }
    const basis = new Set(criteria.reward_basis)
    const checks: Record<string, boolean> = {}
    const notEvaluated: Array<string> = []
    const details: Record<string, Canonical.Json> = { terminationReason: output.terminationReason, rewardBasis: [...criteria.reward_basis] }
    let judging: Attempt.Judging | undefined
    let reward = 1

    if (basis.has("DB") || basis.has("ENV_ASSERTION")) {
      if (basis.has("DB")) {
        checks["db"] = grading.db(final)
        if (!checks["db"]) reward = 0
      }
      if (basis.has("ENV_ASSERTION")) {
        if (grading.envAssertions === undefined) {
          (criteria.env_assertions ?? []).forEach((_, n) => notEvaluated.push(`env:${n}`))
        } else {
          const met = grading.envAssertions(final)
          met.forEach((m, n) => (checks[`env:${n}`] = m))
          if (!met.every((m) => m)) reward = 0
        }
      }
    }
    if (basis.has("ACTION")) {
      const matched = grading.actions !== undefined
        ? grading.actions(toolCallsOf(output.messages))
        : actionCheck(grading.task, toolCallsOf(output.messages)).checks.map((c) => c.matched)
      matched.forEach((m, n) => (checks[`action:${n}`] = m))
      if (!matched.every((m) => m)) reward = 0
    }
    if (basis.has("COMMUNICATE")) {
      const contents = output.messages.flatMap((m) => (m.role === "assistant" ? [m.content] : []))
      const result = communicateCheck(grading.task, contents)
      result.checks.forEach((c, n) => (checks[`communicate:${n}`] = c.met))
      reward *= result.reward
    }
    const assertions = criteria.nl_assertions ?? []
    if (basis.has("NL_ASSERTION") && assertions.length > 0) {
      if (grading.judge === null) {
        assertions.forEach((_, n) => notEvaluated.push(`nl:${n}`))
      } else {
        const judge = grading.judge
        const askOne = (model: Registry.ResolvedModel) =>
          Effect.gen(function*() {
            const response = yield* judge.call(judgeRequest(model, output.messages, assertions)).pipe(
              Effect.mapError((e) => evaluatorError(`judge ${model.ref} failed: ${e.message}`))
            )
            const nl = yield* parseJudgeReply(response.text ?? "", assertions)
            const judging: Attempt.Judging = {
              calls: 1,
              inputTokens: response.usage.inputTokens,
              outputTokens: response.usage.outputTokens,
              costUsd: Cost.costOf(model.model, response.usage)
            }
            return { response, nl, decisions: nl.map((c) => c.met), judging }
          })
        // The first judge's first answer grades; a second judge and repetitions are recorded beside it.
        const asked = yield* JudgePanel.ask(
          { judges: judge.second === undefined ? [judge.model] : [judge.model, judge.second], reps: judge.reps ?? 1 },
          (m) => m.ref,
          assertions.map((_, index) => ({ input: `nl:${index}`, index })),
          askOne
        )
        const { response, nl } = asked.first
        nl.forEach((c, n) => (checks[`nl:${n}`] = c.met))
        if (!nl.every((c) => c.met)) reward = 0
        judging = asked.judging
        details["judge"] = {
          model: judge.model.ref,
          usage: { input: response.usage.inputTokens, output: response.usage.outputTokens },
          assertions: nl.map((c) => ({ met: c.met, justification: c.justification }))
        }
        if (asked.record !== undefined) details["judges"] = asked.record
      }
    }
    // A judge decided some checks: the reward is only as trustworthy as the judge.
    return { reward, checks, notEvaluated, details, ...(judging !== undefined ? { trust: "judge" as const, judging } : {}) }
  })
