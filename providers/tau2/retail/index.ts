/**
 * `tau2-retail`: tau2-bench's retail domain as an assay provider. The agent follows the retail
 * policy, talks to a simulated user and changes the DB (an immutable World) through 16 tools;
 * graded by the task's reward basis as upstream grades it (see ../README.md).
 *
 * Environments are the 114 tasks of upstream's `base` split, the set its leaderboard scores
 * (upstream's default split); `train` (74) and `test` (40) are available through `environmentsOf`.
 */
import { Effect, Either } from "effect"
import type { Json } from "../../../src/content/Canonical.ts"
import * as ContentId from "../../../src/content/ContentId.ts"
import * as Agent from "../../../src/evaluation/Agent.ts"
import { CapabilityError, makeEvaluator, makeProtocol, makeWorldSetup } from "../../../src/evaluation/Capabilities.ts"
import type { EquivalenceResult, PinnedFile, Provider } from "../../../src/evaluation/Provider.ts"
import * as Registry from "../../../src/model/Registry.ts"
import type { AgentDef } from "../../../src/schema/AgentDef.ts"
import { defaultEffects, type EnvironmentDef, noLimits } from "../../../src/schema/EnvironmentDef.ts"
import type { Tool } from "../../../src/world/Tool.ts"
import * as World from "../../../src/world/World.ts"
import {
  agentSystemPrompt,
  DEFAULT_MAX_STEPS,
  goldAgent,
  openingOnlyUser,
  outputJson,
  runConversation,
  scriptedUserOf,
  simulatedUser,
  userSystemPrompt,
  withScriptedUser
} from "../common/conversation.ts"
import { decodeOutput, grade, type JudgeCall, liveJudge } from "../common/evaluator.ts"
import { loadPrompts, promptFiles, type Prompts } from "../common/prompts.ts"
import { loadRetailData, pinnedFiles, type RetailData, upstreamRepository, upstreamRevision } from "./data.ts"
import { runEquivalence } from "./equivalence.ts"
import { dbCheck, decodeTasks, renderUserScenario, type Split, type Task } from "./tasks.ts"
import { makeRetailTools } from "./tools.ts"

const BENCHMARK = "tau2-retail"
const VERSION = "1"

/** Upstream's default user model (src/tau2/config.py `DEFAULT_LLM_USER`), as the registry names it. */
export const DEFAULT_USER_MODEL = "openai:gpt-4.1-2025-04-14"

// ---------------------------------------------------------------------------------------------
// The data, loaded once per process

interface Loaded {
  readonly data: RetailData
  readonly tasks: ReadonlyArray<Task>
  readonly byId: ReadonlyMap<string, Task>
  readonly prompts: Prompts
  readonly tools: ReadonlyArray<Tool>
  readonly agentSystem: string
  readonly evidence: Json
}

const dataError = (detail: string) => new CapabilityError({ capability: BENCHMARK, reason: "data", detail })

const loaded: Effect.Effect<Loaded, CapabilityError> = Effect.runSync(
  Effect.cached(
    Effect.gen(function*() {
      const data = yield* Effect.mapError(loadRetailData(), (e) => dataError(e.message))
      const tasks = yield* Effect.mapError(decodeTasks(data.tasksJson), (e) => dataError(e.message))
      const prompts = yield* loadPrompts()
      return {
        data,
        tasks,
        byId: new Map(tasks.map((t) => [t.id, t])),
        prompts,
        tools: makeRetailTools(data.toolSpecs, data.toolTypes),
        agentSystem: agentSystemPrompt(prompts.agentTemplate, prompts.agentInstruction, data.policy),
        evidence: { db: World.digest(data.initialWorld), tools: ContentId.ofUnsafe(data.toolSpecs as unknown as Json) }
      }
    })
  )
)

const taskOf = (env: EnvironmentDef): Effect.Effect<readonly [Loaded, Task], CapabilityError> =>
  Effect.flatMap(loaded, (l) => {
    const task = l.byId.get(env.task)
    return task ? Effect.succeed([l, task] as const) : Effect.fail(dataError(`no retail task ${env.task}`))
  })

/** The user simulator's system prompt of a task (upstream `UserSimulator.system_prompt`, no user tools). */
export const userPromptOf = (prompts: Prompts, task: Task): string =>
  userSystemPrompt(prompts.userTemplate, prompts.guidelines, renderUserScenario(task.user_scenario))

/** What the scripted user opens with: the scenario's reason for the call. */
const openingOf = (task: Task): string => {
  const i = task.user_scenario.instructions
  return typeof i === "string" ? i : i.reason_for_call
}

// ---------------------------------------------------------------------------------------------
// Environments

const environment = (task: Task): EnvironmentDef => ({
  benchmark: BENCHMARK,
  task: task.id,
  stratum: "retail",
  world: { isolation: "fork", settlement: "discard", effects: defaultEffects },
  capabilities: {
    worldSetup: { name: "tau2/retail-db", version: VERSION },
    protocol: { name: "tau2/conversation", version: VERSION },
    evaluator: { name: "tau2/reward", version: VERSION },
    upstream: `${upstreamRepository}@${upstreamRevision}`,
    // No judge by default: NL assertions are then reported as not evaluated.
    models: { user: DEFAULT_USER_MODEL }
  },
  limits: { ...noLimits, turns: DEFAULT_MAX_STEPS }
})

/** The environments of one of upstream's splits, in tasks.json order. */
export const environmentsOf = (split: Split): Effect.Effect<ReadonlyArray<EnvironmentDef>, CapabilityError> =>
  Effect.map(loaded, (l) => {
    const ids = new Set(l.data.splits[split])
    return l.tasks.filter((t) => ids.has(t.id)).map(environment)
  })

/** The splits (train, test, base) a task belongs to. */
export const splitsOf = (taskId: string): Effect.Effect<ReadonlyArray<Split>, CapabilityError> =>
  Effect.map(loaded, (l) => (["train", "test", "base"] as const).filter((s) => l.data.splits[s].includes(taskId)))

// ---------------------------------------------------------------------------------------------
// Capabilities

/** A model reference resolved in the shipped registry snapshot (what the command resolves in). */
const resolveModel = (ref: string, reason: "protocol" | "evaluator") =>
  Effect.flatMap(Registry.fixture, (file) =>
    Either.match(Registry.resolveIn(file, ref), {
      onLeft: (e) => Effect.fail(new CapabilityError({ capability: BENCHMARK, reason, detail: e.message })),
      onRight: Effect.succeed
    }))

export interface CapabilityOptions {
  /** How the judge model is called (default: the model clients); tests script it. */
  readonly judge?: JudgeCall
}

export const makeCapabilities = (options: CapabilityOptions = {}) => ({
  worldSetup: makeWorldSetup({
    name: "tau2/retail-db",
    version: VERSION,
    trust: "deterministic",
    setup: () => Effect.map(loaded, (l) => ({ world: l.data.initialWorld, evidence: l.evidence, tools: l.tools }))
  }),
  protocol: makeProtocol({
    name: "tau2/conversation",
    version: VERSION,
    trust: "deterministic",
    inputs: () => Effect.map(loaded, (l) => ({ system: l.agentSystem, tools: l.data.toolSpecs })),
    run: (ctx) =>
      Effect.gen(function*() {
        const [l, task] = yield* taskOf(ctx.env)
        const user = scriptedUserOf(ctx.agent) ??
          simulatedUser(yield* resolveModel(ctx.env.capabilities.models["user"] ?? DEFAULT_USER_MODEL, "protocol"), userPromptOf(l.prompts, task))
        const output = yield* runConversation(ctx, {
          firstAgentMessage: l.prompts.firstAgentMessage,
          user,
          agentTools: l.tools,
          maxSteps: ctx.env.limits.turns ?? DEFAULT_MAX_STEPS
        })
        return outputJson(output)
      })
  }),
  evaluator: makeEvaluator({
    name: "tau2/reward",
    version: VERSION,
    // NL assertions are judged only when a judge model is configured; everything else is deterministic.
    trust: "deterministic",
    evaluate: (ctx) =>
      Effect.gen(function*() {
        const [, task] = yield* taskOf(ctx.env)
        const output = yield* decodeOutput(ctx.output)
        const judgeRef = ctx.env.capabilities.models["judge"]
        const judge = judgeRef === undefined ? null : { model: yield* resolveModel(judgeRef, "evaluator"), call: options.judge ?? liveJudge }
        return yield* grade({ task, db: (final) => dbCheck(ctx.initial, task, final), judge }, output, ctx.final)
      })
  })
})

export const capabilities = makeCapabilities()

// ---------------------------------------------------------------------------------------------
// Roster

const roster = ["gold", "echo"] as const

const rosterDef = (name: string): AgentDef => Agent.referenceDef(name)

/**
 * `gold` replays the gold actions as tool calls against a scripted user and closes with the
 * task's communicate_info; `echo` repeats the user's opening. Both play a scripted user, so
 * roster candidates make no model call.
 */
const scripted = (name: string, env: EnvironmentDef): Effect.Effect<Agent.Agent, CapabilityError> =>
  Effect.flatMap(taskOf(env), ([, task]): Effect.Effect<Agent.Agent, CapabilityError> => {
    switch (name) {
      case "gold": {
        const criteria = task.evaluation_criteria
        const actions = (criteria?.actions ?? []).map((a) => ({
          requestor: a.requestor,
          name: a.name,
          arguments: a.arguments as { readonly [key: string]: Json }
        }))
        const infos = criteria?.communicate_info ?? []
        return Effect.succeed(goldAgent(actions, openingOf(task), infos))
      }
      case "echo":
        // A fresh agent per Attempt: the scripted user is attached to the agent object.
        return Effect.succeed(withScriptedUser({ ...Agent.echo }, openingOnlyUser(openingOf(task))))
      default:
        return Effect.fail(dataError(`no scripted candidate ${name}: use ${roster.join(" or ")}`))
    }
  })

// ---------------------------------------------------------------------------------------------

const pinned = (file: { readonly name: string; readonly url: string | null; readonly sha256: string }): PinnedFile => ({
  path: `tau2/${file.name}`,
  // Files rendered from upstream code have no upstream blob: `assay data pull --from DIR` copies them.
  url: file.url ?? "",
  sha256: file.sha256
})

/** The oracle corpora `assay equivalence` runs by default (outputs of upstream's code, no upstream blob). */
const oracleFiles = [
  { name: "retail/oracle/gold.jsonl", url: null, sha256: "64c2d8e903633403544f446319cdb9eceff62612e61075ad838139bad510bc4e" },
  { name: "retail/oracle/fuzz-dev.jsonl", url: null, sha256: "8876c10b6ee494f3a21da8baab226849ded14e9d250930d7baf5e127c7c25521" }
]

/** Every file the provider reads. */
export const data: ReadonlyArray<PinnedFile> = Array.from(
  new Map([...Object.values(pinnedFiles), ...Object.values(promptFiles), ...oracleFiles].map((f) => [f.name, pinned(f)])).values()
)

const equivalence = (corpus: string | null): Effect.Effect<EquivalenceResult, CapabilityError> =>
  runEquivalence(corpus ?? undefined).pipe(
    Effect.map((r): EquivalenceResult => ({ benchmark: r.benchmark, corpus: r.corpus, lines: r.lines, agree: r.agree, disagree: r.disagree })),
    Effect.mapError((e) => dataError(e.message))
  )

export const provider: Provider = {
  name: BENCHMARK,
  version: VERSION,
  description: "tau2-bench retail: a customer-service agent under the retail policy, a simulated user, 16 DB tools; 114 tasks",
  environments: environmentsOf("base"),
  capabilities,
  roster,
  rosterDef,
  scripted,
  data,
  equivalence,
  judged: true
}
