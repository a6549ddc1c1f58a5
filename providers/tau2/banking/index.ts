/**
 * `tau2-banking`: tau2-bench's banking_knowledge domain, BM25 retrieval variant, as an assay
 * provider. The agent follows Rho-Bank's policy (as `build_policy` renders it for `bm25`) with 15
 * tools, `KB_search` over the 698 documents among them; the simulated user is offered the task's
 * `user_tools` subset. Both sides' discoverable tools stay callable by name, as upstream's
 * `use_tool` finds them. Graded by the task's reward basis as upstream grades it: DB (87 tasks),
 * ACTION (9), DB + NL_ASSERTION (1), see README.md.
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
import type { ToolSpec } from "../../../src/world/Tool.ts"
import * as World from "../../../src/world/World.ts"
import {
  agentSystemPrompt,
  DEFAULT_MAX_STEPS,
  goldAgent,
  openingOnlyUser,
  OUT_OF_SCOPE,
  outputJson,
  runConversation,
  scriptedUserOf,
  simulatedUser,
  STOP,
  TRANSFER,
  userSystemPrompt,
  withScriptedUser
} from "../common/conversation.ts"
import { decodeOutput, grade, type JudgeCall, liveJudge } from "../common/evaluator.ts"
import { loadPrompts, promptFiles, type Prompts } from "../common/prompts.ts"
import { renderUserScenario } from "../retail/tasks.ts"
import { buildIndex } from "./bm25.ts"
import { allPinnedFiles, type BankingData, loadBankingData, upstreamRepository, upstreamRevision } from "./data.ts"
import { runEquivalence } from "./equivalence.ts"
import { type BankingTask, dbCheck, decodeTasks, initialWorld, plain } from "./tasks.ts"
import { bankingTools, type BankingTools, dbWorld, type Environment } from "./tools.ts"

const BENCHMARK = "tau2-banking"
const VERSION = "1"

/** Upstream's default user model (src/tau2/config.py `DEFAULT_LLM_USER`), as the registry names it. */
export const DEFAULT_USER_MODEL = "openai:gpt-4.1-2025-04-14"

// ---------------------------------------------------------------------------------------------
// The data, loaded once per process

interface Loaded {
  readonly data: BankingData
  readonly env: Environment
  readonly tasks: ReadonlyArray<BankingTask>
  readonly byId: ReadonlyMap<string, BankingTask>
  readonly prompts: Prompts
  readonly tools: BankingTools
  readonly agentSystem: string
  /** Digest of every tool spec (offered and discoverable, both sides): part of every task's evidence. */
  readonly toolsDigest: string
}

const dataError = (detail: string) => new CapabilityError({ capability: BENCHMARK, reason: "data", detail })

const loaded: Effect.Effect<Loaded, CapabilityError> = Effect.runSync(
  Effect.cached(
    Effect.gen(function*() {
      const data = yield* Effect.mapError(loadBankingData(), (e) => dataError(e.message))
      const tasks = yield* Effect.mapError(decodeTasks(data), (e) => dataError(e.message))
      const prompts = yield* loadPrompts()
      // The BM25 index is built once; every Attempt's tools share it (it is read-only).
      const env: Environment = { index: buildIndex(data.documents), discoverable: data.discoverableTools }
      return {
        data,
        env,
        tasks,
        byId: new Map(tasks.map((t) => [t.id, t])),
        prompts,
        tools: bankingTools(env, data),
        // Upstream's LLMAgent prompt: the shared template with `get_environment().policy`, which for
        // the bm25 variant is policy-bm25.md (build_policy's rendering).
        agentSystem: agentSystemPrompt(prompts.agentTemplate, prompts.agentInstruction, data.policy),
        toolsDigest: ContentId.ofUnsafe(
          { agent: data.toolSpecs, user: data.userToolSpecs, discoverable: data.discoverableTools } as unknown as Json
        )
      }
    })
  )
)

const taskOf = (env: EnvironmentDef): Effect.Effect<readonly [Loaded, BankingTask], CapabilityError> =>
  Effect.flatMap(loaded, (l) => {
    const task = l.byId.get(env.task)
    return task ? Effect.succeed([l, task] as const) : Effect.fail(dataError(`no banking task ${env.task}`))
  })

const initials = new Map<string, World.World>()

/** The task's initial world (db.json, its agent data merged, its read-log allowlist), cached per task. */
const initialOf = (l: Loaded, task: BankingTask): Effect.Effect<World.World, CapabilityError> => {
  const hit = initials.get(task.id)
  if (hit !== undefined) return Effect.succeed(hit)
  return Either.match(initialWorld(l.data, task), {
    onLeft: (detail) => Effect.fail(new CapabilityError({ capability: BENCHMARK, reason: "setup", detail: `${task.id}: ${detail}` })),
    onRight: (world) => {
      initials.set(task.id, world)
      return Effect.succeed(world)
    }
  })
}

/**
 * The user tools a task offers the simulated user: its `user_tools` subset (null: all 6).
 * Upstream passes `get_user_tools(include=...) or None`, so an empty subset means no tools.
 */
export const offeredUserTools = (data: BankingData, task: BankingTask): ReadonlyArray<ToolSpec> =>
  task.userTools === null ? data.userToolSpecs : data.userToolSpecs.filter((s) => task.userTools!.includes(s.name))

/**
 * The user simulator's system prompt: upstream's `UserSimulator.system_prompt`, the tools variant
 * of the guidelines when the task offers the user any tool.
 */
export const userPromptOf = (prompts: Prompts, data: BankingData, task: BankingTask): string =>
  userSystemPrompt(
    prompts.userTemplate,
    offeredUserTools(data, task).length > 0 ? prompts.guidelinesTools : prompts.guidelines,
    renderUserScenario(task.task.user_scenario)
  )

/**
 * What the scripted user opens with: the first paragraph of the scenario's instructions (a string
 * in every banking task). Never a stop token: the instructions tell the simulated user when to say
 * ###STOP###, and an opening holding one would end the conversation at once.
 */
export const openingOf = (task: BankingTask): string => {
  const i = task.task.user_scenario.instructions
  const text = typeof i === "string" ? i : i.reason_for_call
  const first = text.split(/\n\s*\n/).map((p) => p.trim()).find((p) => p.length > 0) ?? ""
  const clean = [STOP, TRANSFER, OUT_OF_SCOPE].reduce((t, token) => t.split(token).join(""), first).trim()
  return clean.length > 0 ? clean : "Hello, I need help with my account."
}

// ---------------------------------------------------------------------------------------------
// Environments

const environment = (task: BankingTask): EnvironmentDef => ({
  benchmark: BENCHMARK,
  task: task.id,
  stratum: "banking",
  world: { isolation: "fork", settlement: "discard", effects: defaultEffects },
  capabilities: {
    worldSetup: { name: "tau2/banking-db", version: VERSION },
    protocol: { name: "tau2/conversation", version: VERSION },
    evaluator: { name: "tau2/reward", version: VERSION },
    upstream: `${upstreamRepository}@${upstreamRevision}`,
    models: { user: DEFAULT_USER_MODEL }
  },
  limits: { ...noLimits, turns: DEFAULT_MAX_STEPS }
})

/** The 97 tasks, in upstream order (tasks/task_*.json sorted by file name). */
export const environments: Effect.Effect<ReadonlyArray<EnvironmentDef>, CapabilityError> = Effect.map(loaded, (l) => l.tasks.map(environment))

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
    name: "tau2/banking-db",
    version: VERSION,
    trust: "deterministic",
    setup: (env) =>
      Effect.gen(function*() {
        const [l, task] = yield* taskOf(env)
        const world = yield* initialOf(l, task)
        const t = l.tools
        return {
          world,
          // The DB only: `$session` (the read-log allowlist) is agent-side state upstream keeps outside it.
          evidence: { db: World.digest(dbWorld(world)), tools: l.toolsDigest },
          tools: [...t.agent, ...t.agentHidden, ...t.user, ...t.userHidden]
        }
      })
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
          simulatedUser(
            yield* resolveModel(ctx.env.capabilities.models["user"] ?? DEFAULT_USER_MODEL, "protocol"),
            userPromptOf(l.prompts, l.data, task),
            offeredUserTools(l.data, task)
          )
        // Offered: the 15 agent tools and the task's user tools. Callable: every tool of each side,
        // discoverable ones included, as upstream's `use_tool` looks a name up in the whole toolkit.
        const output = yield* runConversation(ctx, {
          firstAgentMessage: l.prompts.firstAgentMessage,
          user,
          agentTools: [...l.tools.agent, ...l.tools.agentHidden],
          userTools: [...l.tools.user, ...l.tools.userHidden],
          maxSteps: ctx.env.limits.turns ?? DEFAULT_MAX_STEPS
        })
        return outputJson(output)
      })
  }),
  evaluator: makeEvaluator({
    name: "tau2/reward",
    version: VERSION,
    trust: "deterministic",
    evaluate: (ctx) =>
      Effect.gen(function*() {
        const [l, task] = yield* taskOf(ctx.env)
        const output = yield* decodeOutput(ctx.output)
        const initial = yield* initialOf(l, task)
        const judgeRef = ctx.env.capabilities.models["judge"]
        const judge = judgeRef === undefined ? null : { model: yield* resolveModel(judgeRef, "evaluator"), call: options.judge ?? liveJudge }
        return yield* grade(
          {
            task: task.task,
            // The gold world is the gold actions replayed on the task's initial world; `$session` left out.
            db: (final) => dbCheck(l.env, initial, task, final),
            judge
          },
          output,
          ctx.final
        )
      })
  })
})

export const capabilities = makeCapabilities()

// ---------------------------------------------------------------------------------------------
// Roster

const roster = ["gold", "echo"] as const

const rosterDef = (name: string): AgentDef => Agent.referenceDef(name)

/**
 * `gold` plays the gold actions in order, each by its side (agent tool calls; the scripted user's
 * own tool calls, 102 of them), then closes; `echo` repeats the user's opening. Both play a
 * scripted user, so roster candidates make no model call.
 */
const scripted = (name: string, env: EnvironmentDef): Effect.Effect<Agent.Agent, CapabilityError> =>
  Effect.flatMap(taskOf(env), ([, task]): Effect.Effect<Agent.Agent, CapabilityError> => {
    switch (name) {
      case "gold": {
        // As a model's parsed arguments carry them (no gold argument is a float).
        const actions = task.goldActions.map((a) => ({
          requestor: a.requestor,
          name: a.name,
          arguments: plain(a.arguments) as { readonly [key: string]: Json }
        }))
        const infos = task.task.evaluation_criteria?.communicate_info ?? []
        return Effect.succeed(goldAgent(actions, openingOf(task), infos))
      }
      case "echo":
        return Effect.succeed(withScriptedUser({ ...Agent.echo }, openingOnlyUser(openingOf(task))))
      default:
        return Effect.fail(dataError(`no scripted candidate ${name}: use ${roster.join(" or ")}`))
    }
  })

// ---------------------------------------------------------------------------------------------

const pinned = (file: { readonly name: string; readonly url: string | null; readonly sha256: string }): PinnedFile => ({
  path: file.name,
  // Files rendered from upstream code have no upstream blob: `assay data pull --from DIR` copies them.
  url: file.url ?? "",
  sha256: file.sha256
})

/** Every file the provider reads: banking's 808 (under the data root) and the shared prompts (under tau2/). */
export const data: ReadonlyArray<PinnedFile> = Array.from(
  new Map(
    [...allPinnedFiles, ...Object.values(promptFiles).map((f) => ({ ...f, name: `tau2/${f.name}` }))].map((f) => [f.name, pinned(f)])
  ).values()
)

const equivalence = (corpus: string | null): Effect.Effect<EquivalenceResult, CapabilityError> =>
  runEquivalence(corpus).pipe(
    Effect.map((r): EquivalenceResult => ({ benchmark: r.benchmark, corpus: r.corpus, lines: r.lines, agree: r.agree, disagree: r.disagree })),
    Effect.mapError((e) => dataError(e.message))
  )

export const provider: Provider = {
  name: BENCHMARK,
  version: VERSION,
  description:
    "tau2-bench banking_knowledge (BM25): a Rho-Bank agent with 15 tools (KB_search over 698 documents) and discoverable tools, a simulated user with up to 6 tools; 97 tasks",
  environments,
  capabilities,
  roster,
  rosterDef,
  scripted,
  data,
  equivalence,
  judged: true
}
