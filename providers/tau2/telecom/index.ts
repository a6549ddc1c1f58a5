/**
 * `tau2-telecom`: tau2-bench's telecom domain as an assay provider. The agent follows the
 * telecom policy (main policy + tech support manual) with 13 tools on the carrier's DB; the
 * simulated user holds a phone and acts on it with 30 tools of its own, in the same fork; after
 * every call the phone and the carrier's DB are synced as upstream syncs them. Graded by the
 * task's reward basis as upstream grades it: ENV_ASSERTION (94 tasks) or ENV_ASSERTION + ACTION
 * (20), see README.md.
 *
 * Environments are the 114 tasks of upstream's `base` split (upstream's default); `train` (74)
 * and `test` (40) are available through `environmentsOf`.
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
import { renderUserScenario } from "../retail/tasks.ts"
import { loadTelecomData, pinnedFiles, type TelecomData, upstreamRepository, upstreamRevision } from "./data.ts"
import { runEquivalence } from "./equivalence.ts"
import { isPyFloat, type PyJson } from "./pyjsonParse.ts"
import { actionCheck, dbCheck, decodeTasks, envAssertionCheck, type Split, type Task, taskInitialWorldCached } from "./tasks.ts"
import { makeTelecomTools } from "./tools.ts"

const BENCHMARK = "tau2-telecom"
const VERSION = "1"

/** Upstream's default user model (src/tau2/config.py `DEFAULT_LLM_USER`), as the registry names it. */
export const DEFAULT_USER_MODEL = "openai:gpt-4.1-2025-04-14"

// ---------------------------------------------------------------------------------------------
// The data, loaded once per process

interface Loaded {
  readonly data: TelecomData
  readonly tasks: ReadonlyArray<Task>
  readonly byId: ReadonlyMap<string, Task>
  readonly prompts: Prompts
  readonly agentTools: ReadonlyArray<Tool>
  readonly userTools: ReadonlyArray<Tool>
  readonly agentSystem: string
  /** Digest of both sides' tool specs: part of every task's evidence. */
  readonly toolsDigest: string
}

const dataError = (detail: string) => new CapabilityError({ capability: BENCHMARK, reason: "data", detail })

const loaded: Effect.Effect<Loaded, CapabilityError> = Effect.runSync(
  Effect.cached(
    Effect.gen(function*() {
      const data = yield* Effect.mapError(loadTelecomData(), (e) => dataError(e.message))
      const tasks = yield* Effect.mapError(decodeTasks(data.tasksJson), (e) => dataError(e.message))
      const prompts = yield* loadPrompts()
      return {
        data,
        tasks,
        byId: new Map(tasks.map((t) => [t.id, t])),
        prompts,
        agentTools: makeTelecomTools("assistant", data.toolSpecs, data.toolTypes),
        userTools: makeTelecomTools("user", data.userToolSpecs, data.userToolTypes),
        // Upstream's LLMAgent prompt: the shared template with `get_environment().policy`.
        agentSystem: agentSystemPrompt(prompts.agentTemplate, prompts.agentInstruction, data.policy),
        toolsDigest: ContentId.ofUnsafe({ agent: data.toolSpecs, user: data.userToolSpecs } as unknown as Json)
      }
    })
  )
)

const taskOf = (env: EnvironmentDef): Effect.Effect<readonly [Loaded, Task], CapabilityError> =>
  Effect.flatMap(loaded, (l) => {
    const task = l.byId.get(env.task)
    return task ? Effect.succeed([l, task] as const) : Effect.fail(dataError(`no telecom task ${env.task}`))
  })

/** The task's initial state (`set_state` with its initialization actions), cached per task. */
const initialOf = (l: Loaded, task: Task): Effect.Effect<World.World, CapabilityError> =>
  Either.match(taskInitialWorldCached(l.data.initialWorld, task), {
    onLeft: (detail) => Effect.fail(new CapabilityError({ capability: BENCHMARK, reason: "setup", detail })),
    onRight: Effect.succeed
  })

/**
 * The user simulator's system prompt of a task: upstream's `UserSimulator.system_prompt` with
 * user tools, so the tools variant of the guidelines.
 */
export const userPromptOf = (prompts: Prompts, task: Task): string =>
  userSystemPrompt(prompts.userTemplate, prompts.guidelinesTools, renderUserScenario(task.user_scenario))

/** What the scripted user opens with: the scenario's reason for the call. */
const openingOf = (task: Task): string => {
  const i = task.user_scenario.instructions
  return typeof i === "string" ? i : i.reason_for_call
}

/** Task JSON (floats marked) as a model's parsed arguments carry it: `2.0` becomes the number 2. */
export const plainJson = (v: PyJson): Json => {
  if (isPyFloat(v)) return v.value
  if (Array.isArray(v)) return v.map(plainJson)
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v as { readonly [key: string]: PyJson }).map(([k, x]) => [k, plainJson(x)]))
  }
  return v as Json
}

// ---------------------------------------------------------------------------------------------
// Environments

const environment = (task: Task): EnvironmentDef => ({
  benchmark: BENCHMARK,
  task: task.id,
  stratum: "telecom",
  world: { isolation: "fork", settlement: "discard", effects: defaultEffects },
  capabilities: {
    worldSetup: { name: "tau2/telecom-db", version: VERSION },
    protocol: { name: "tau2/conversation", version: VERSION },
    evaluator: { name: "tau2/reward", version: VERSION },
    upstream: `${upstreamRepository}@${upstreamRevision}`,
    models: { user: DEFAULT_USER_MODEL }
  },
  limits: { ...noLimits, turns: DEFAULT_MAX_STEPS }
})

/** The environments of one of upstream's splits, in tasks.json order. */
export const environmentsOf = (split: Split): Effect.Effect<ReadonlyArray<EnvironmentDef>, CapabilityError> =>
  Effect.map(loaded, (l) => {
    const ids = new Set(l.data.splits[split] ?? [])
    return l.tasks.filter((t) => ids.has(t.id)).map(environment)
  })

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
    name: "tau2/telecom-db",
    version: VERSION,
    trust: "deterministic",
    setup: (env) =>
      Effect.gen(function*() {
        const [l, task] = yield* taskOf(env)
        const world = yield* initialOf(l, task)
        // Both sides' tools: the handler runs the user's phone tools in the same fork.
        return { world, evidence: { db: World.digest(world), tools: l.toolsDigest }, tools: [...l.agentTools, ...l.userTools] }
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
            userPromptOf(l.prompts, task),
            l.data.userToolSpecs
          )
        const output = yield* runConversation(ctx, {
          firstAgentMessage: l.prompts.firstAgentMessage,
          user,
          agentTools: l.agentTools,
          userTools: l.userTools,
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
        const judgeRef = ctx.env.capabilities.models["judge"]
        const judge = judgeRef === undefined ? null : { model: yield* resolveModel(judgeRef, "evaluator"), call: options.judge ?? liveJudge }
        return yield* grade(
          {
            task,
            // The DB check starts from the fresh environment, as upstream's reference does.
            db: (final) => dbCheck(l.data.initialWorld, task, final),
            judge,
            envAssertions: (final) => envAssertionCheck(task, final).checks.map((c) => c.met),
            actions: (calls) => actionCheck(task, calls).checks.map((c) => c.matched)
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
 * `gold` plays the gold actions in order, each by its side (agent tool calls, the scripted
 * user's phone tool calls), then closes; `echo` repeats the user's opening. Both play a scripted
 * user, so roster candidates make no model call.
 */
const scripted = (name: string, env: EnvironmentDef): Effect.Effect<Agent.Agent, CapabilityError> =>
  Effect.flatMap(taskOf(env), ([, task]): Effect.Effect<Agent.Agent, CapabilityError> => {
    switch (name) {
      case "gold": {
        const criteria = task.evaluation_criteria
        const actions = (criteria?.actions ?? []).map((a) => ({
          requestor: a.requestor,
          name: a.name,
          arguments: plainJson(a.arguments as PyJson) as { readonly [key: string]: Json }
        }))
        const infos = criteria?.communicate_info ?? []
        return Effect.succeed(goldAgent(actions, openingOf(task), infos))
      }
      case "echo":
        return Effect.succeed(withScriptedUser({ ...Agent.echo }, openingOnlyUser(openingOf(task))))
      default:
        return Effect.fail(dataError(`no scripted candidate ${name}: use ${roster.join(" or ")}`))
    }
  })

// ---------------------------------------------------------------------------------------------

/** The oracle corpora `assay equivalence` runs by default (outputs of upstream's code, no upstream blob). */
const oracleFiles = [
  { name: "tau2/telecom/oracle/gold.jsonl", url: null, sha256: "181d5464cc7918b627809296e7b9b25f3991d6b8774d4be00dc65cd4af3c4183" },
  { name: "tau2/telecom/oracle/fuzz-dev.jsonl", url: null, sha256: "dcd74a8051709a2f09e99acbcdeb5e9b4231cf48ca4c7bf53635962186a78516" }
]

const pinned = (file: { readonly name: string; readonly url: string | null; readonly sha256: string }): PinnedFile => ({
  path: file.name,
  // Files rendered from upstream code have no upstream blob: `assay data pull --from DIR` copies them.
  url: file.url ?? "",
  sha256: file.sha256
})

/** Every file the provider reads (telecom's names are under the data root, the prompts' under tau2/). */
export const data: ReadonlyArray<PinnedFile> = Array.from(
  new Map(
    [...Object.values(pinnedFiles), ...Object.values(promptFiles).map((f) => ({ ...f, name: `tau2/${f.name}` })), ...oracleFiles].map((f) => [
      f.name,
      pinned(f)
    ])
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
    "tau2-bench telecom: a tech-support agent under the telecom policy with 13 DB tools, a simulated user with 30 phone tools; 114 tasks",
  environments: environmentsOf("base"),
  capabilities,
  roster,
  rosterDef,
  scripted,
  data,
  equivalence,
  judged: true
}
