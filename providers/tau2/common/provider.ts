/**
 * What the tau2 domains' providers share, declared once on the benchmark kit (src/kit/Benchmark.ts):
 * the data loaded on first use through the kit's reader, the EnvironmentDef of a task (its
 * capability references derived from the specs), the three capabilities (world setup, the
 * conversation with a simulated user, the reward), the gold and echo candidates, the pinned-file
 * list and the equivalence run. A domain gives what differs in a `Tau2Domain`: its data and tasks,
 * its initial world, its users' prompt and tools, its checks and its gold actions.
 */
import { Effect, Either, Schema } from "effect"
import { Agent, Benchmark, type Canonical, Capabilities, type EnvironmentDef, JudgePanel, PinnedData, type Provider, Registry, type Tool } from "../../../src/index.ts"
import type { Task } from "./task.ts"
import {
  agentSystemPrompt,
  DEFAULT_MAX_STEPS,
  goldAgent,
  openingOnlyUser,
  outputJson,
  type PlayAction,
  runConversation,
  scriptedUserOf,
  simulatedUser,
  withScriptedUser
} from "./conversation.ts"
import { decodeOutput, grade, type Grading, type JudgeCall, liveJudge } from "./evaluator.ts"
import { filesOf, type PinnedFile as Tau2File, upstreamRepository, upstreamRevision } from "./pinned.ts"
import { type Rendering, withRenderings } from "./fromSource.ts"
import { loadPromptsFrom, promptFiles, type Prompts } from "./prompts.ts"

const VERSION = "1"

/** Upstream's default user model (src/tau2/config.py `DEFAULT_LLM_USER`), as the registry names it. */
export const DEFAULT_USER_MODEL = "openai:gpt-4.1-2025-04-14"

/** What a domain loads once per process: its pinned data (with the agent's policy and tools) and its tasks. */
export interface DomainLoad<T extends { readonly id: string }> {
  readonly data: {
    /** The agent's policy, rendered into upstream's LLMAgent system prompt. */
    readonly policy: string
    /** The tools offered to the agent. */
    readonly toolSpecs: ReadonlyArray<Tool.ToolSpec>
  }
  readonly tasks: ReadonlyArray<T>
}

/** A domain's load with what every domain derives from it. */
export type Loaded<T extends { readonly id: string }, D extends DomainLoad<T>> = D & {
  readonly byId: ReadonlyMap<string, T>
  readonly prompts: Prompts
  /** Upstream's LLMAgent prompt: the shared template with the domain's policy. */
  readonly agentSystem: string
}

/** What differs between the tau2 domains. */
export interface Tau2Domain<T extends { readonly id: string }, D extends DomainLoad<T>> {
  /** The benchmark id, e.g. "tau2-retail". */
  readonly benchmark: string
  /** The domain, e.g. "retail": the stratum, the world setup's name (`tau2/retail-db`), error texts. */
  readonly domain: string
  readonly description: string
  /**
   * Loads the domain's pinned data through the kit's reader (paths under the data root) and
   * decodes its tasks; a failure is the provider's data error.
   */
  readonly load: (read: Benchmark.Reader) => Effect.Effect<D, PinnedData.DataError | Capabilities.CapabilityError>
  /** The tasks `provider.environments` lists, in upstream order. */
  readonly environmentTasks: (loaded: Loaded<T, D>) => ReadonlyArray<T>
  /** The upstream task record of a task: its user scenario and evaluation criteria. */
  readonly upstreamTask: (task: T) => Task
  /** Installs a task's initial world. */
  readonly setup: (loaded: Loaded<T, D>, task: T) => Effect.Effect<Capabilities.SetupResult, Capabilities.CapabilityError>
  /** The user simulator's system prompt for a task. */
  readonly userPrompt: (loaded: Loaded<T, D>, task: T) => string
  /** The tools a task offers the simulated user (none when absent). */
  readonly userToolSpecs?: (loaded: Loaded<T, D>, task: T) => ReadonlyArray<Tool.ToolSpec>
  /** The tools each side can call during the conversation (the user's: none when absent). */
  readonly conversationTools: (loaded: Loaded<T, D>) => {
    readonly agent: ReadonlyArray<Tool.Tool>
    readonly user?: ReadonlyArray<Tool.Tool>
  }
  /** The domain's side of grading (the task and the judge are added here). */
  readonly grading: (
    loaded: Loaded<T, D>,
    task: T,
    ctx: Capabilities.EvaluationContext
  ) => Effect.Effect<Omit<Grading, "task" | "judge">, Capabilities.CapabilityError>
  /** The gold actions as the gold candidate plays them (as a model's parsed arguments carry them). */
  readonly goldActions: (task: T) => ReadonlyArray<PlayAction>
  /** What the scripted user opens with; the scenario's reason for the call when absent. */
  readonly opening?: (task: T) => string
  /** Every file the provider reads. */
  readonly data: ReadonlyArray<Provider.PinnedFile>
  /** How the pull makes the domain's files that upstream makes by running its code (its upstream.ts). */
  readonly renderings: ReadonlyArray<Rendering>
  /** Runs the domain's equivalence over a corpus (the provider's own when null). */
  readonly equivalence: (corpus: string | null) => Effect.Effect<Provider.EquivalenceResult, { readonly message: string }>
}

export interface CapabilityOptions {
  /** How the judge model is called (default: the model clients); tests script it. */
  readonly judge?: JudgeCall
}

/** A domain's provider and what its module exports beside it. */
export interface Tau2Provider<T extends { readonly id: string }, D extends DomainLoad<T>> {
  readonly provider: Provider.Provider
  readonly makeCapabilities: (options?: CapabilityOptions) => Capabilities.Capabilities
  /** The domain's data, loaded once per process. */
  readonly loaded: Effect.Effect<Loaded<T, D>, Capabilities.CapabilityError>
  /** The EnvironmentDef of a task (the default world spec). */
  readonly environment: (task: T) => EnvironmentDef.EnvironmentDef
}

/** What the scripted user opens with by default: the scenario's reason for the call. */
export const reasonForCall = (task: Task): string => {
  const i = task.user_scenario.instructions
  return typeof i === "string" ? i : i.reason_for_call
}

/** A tau2 file named under the data root (the shared prompts and retail's files are under tau2/). */
export const underTau2 = (file: Tau2File): Tau2File => ({ ...file, name: `tau2/${file.name}` })

/** The shared prompt files, named under the data root. */
export const promptDataFiles: ReadonlyArray<Tau2File> = Object.values(promptFiles).map(underTau2)

/**
 * The provider's file list from files named under the data root: each name once, where it first
 * stands. Files rendered from upstream code have no upstream blob: the provider's pull makes them
 * from upstream's sources (fromSource.ts) where it can, else `assay data pull --from DIR` copies
 * them. Files under an `oracle/` folder are read only by `assay equivalence`.
 */
export const providerFiles = (files: ReadonlyArray<Tau2File>): ReadonlyArray<Provider.PinnedFile> =>
  Array.from(
    new Map(files.map((f) => [f.name, { path: f.name, url: f.url ?? "", sha256: f.sha256, oracle: f.name.includes("/oracle/") }])).values()
  )

/**
 * The conversation's output as stored: plain data whose shape the grade checks (evaluator.ts
 * `decodeOutput`), as it did before the kit; the kit passes it through unchanged.
 */
const StoredOutput = Schema.declare((u: unknown): u is Canonical.Json => u !== null && typeof u === "object" && !Array.isArray(u), {
  identifier: "Tau2ConversationOutput"
})

export const makeTau2Provider = <T extends { readonly id: string }, D extends DomainLoad<T>>(
  domain: Tau2Domain<T, D>
): Tau2Provider<T, D> => {
  const dataError = (detail: string) => new Capabilities.CapabilityError({ capability: domain.benchmark, reason: "data", detail })

  /** A model reference resolved in the shipped registry snapshot (what the command resolves in). */
  const resolveModel = (ref: string, reason: "protocol" | "evaluator") =>
    Effect.flatMap(Registry.fixture, (file) =>
      Either.match(Registry.resolveIn(file, ref), {
        onLeft: (e) => Effect.fail(new Capabilities.CapabilityError({ capability: domain.benchmark, reason, detail: e.message })),
        onRight: Effect.succeed
      }))

  /** The reward, its judge model called through `judge` (the model clients by default). */
  const gradeSpec = (judge: JudgeCall): Benchmark.GradeSpec<T, Loaded<T, D>, Canonical.Json> => ({
    name: "tau2/reward",
    version: VERSION,
    // NL assertions are judged only when a judge model is configured; everything else is deterministic.
    trust: "deterministic",
    run: (task, ctx) =>
      Effect.gen(function*() {
        const output = yield* decodeOutput(ctx.output)
        const checks = yield* domain.grading(ctx.data, task, ctx)
        const panel = JudgePanel.panelOf(ctx.env)
        const second = panel?.judges[1]
        const judgeOf = panel === null ? null : {
          model: yield* resolveModel(panel.judges[0], "evaluator"),
          call: judge,
          ...(second === undefined ? {} : { second: yield* resolveModel(second, "evaluator") }),
          reps: panel.reps
        }
        return yield* grade({ ...checks, task: domain.upstreamTask(task), judge: judgeOf }, output, ctx.final)
      })
  })

  const openingOf = (task: T): string => domain.opening?.(task) ?? reasonForCall(domain.upstreamTask(task))
  // Files made from upstream code become files the pull derives from upstream's pinned sources.
  const files = withRenderings(domain.data, domain.renderings)

  const declared = Benchmark.declare<T, Loaded<T, D>, Canonical.Json, Canonical.Json>({
    name: domain.benchmark,
    version: VERSION,
    description: domain.description,
    // Every tau2 file is named under the data root (the shared prompts and retail's under tau2/).
    data: (read) =>
      Effect.gen(function*() {
        const d = yield* domain.load(read)
        const prompts = yield* loadPromptsFrom(filesOf(read, "tau2/"))
        const derived = {
          byId: new Map(d.tasks.map((t) => [t.id, t])),
          prompts,
          agentSystem: agentSystemPrompt(prompts.agentTemplate, prompts.agentInstruction, d.data.policy)
        }
        return { ...d, ...derived }
      }),
    tasks: (l) => domain.environmentTasks(l),
    id: (task) => task.id,
    stratum: () => domain.domain,
    limits: () => ({ turns: DEFAULT_MAX_STEPS }),
    upstream: `${upstreamRepository}@${upstreamRevision}`,
    // No judge by default: NL assertions are then reported as not evaluated.
    models: { user: DEFAULT_USER_MODEL },
    setup: {
      name: `tau2/${domain.domain}-db`,
      version: VERSION,
      run: (task, ctx) => domain.setup(ctx.data, task)
    },
    protocol: {
      name: "tau2/conversation",
      version: VERSION,
      output: StoredOutput,
      inputs: (_, ctx) => ({ system: ctx.data.agentSystem, tools: ctx.data.data.toolSpecs }),
      run: (task, ctx) =>
        Effect.gen(function*() {
          const l = ctx.data
          const user = scriptedUserOf(ctx.agent) ??
            simulatedUser(
              yield* resolveModel(ctx.env.capabilities.models["user"] ?? DEFAULT_USER_MODEL, "protocol"),
              domain.userPrompt(l, task),
              domain.userToolSpecs?.(l, task) ?? []
            )
          const tools = domain.conversationTools(l)
          const output = yield* runConversation(ctx, {
            firstAgentMessage: l.prompts.firstAgentMessage,
            user,
            agentTools: tools.agent,
            ...(tools.user === undefined ? {} : { userTools: tools.user }),
            maxSteps: ctx.env.limits.turns ?? DEFAULT_MAX_STEPS
          })
          return outputJson(output)
        })
    },
    grade: gradeSpec(liveJudge),
    /**
     * `gold` plays the gold actions in order, each by its side, then closes with the task's
     * communicate_info; `echo` repeats the user's opening. Both play a scripted user, so roster
     * candidates make no model call.
     */
    gold: (task) => {
      const infos = domain.upstreamTask(task).evaluation_criteria?.communicate_info ?? []
      return goldAgent(domain.goldActions(task), openingOf(task), infos)
    },
    // A fresh agent per Attempt: the scripted user is attached to the agent object.
    doNothing: (task) => withScriptedUser({ ...Agent.echo }, openingOnlyUser(openingOf(task))),
    judged: true,
    pinned: { files: files.data, ...(files.derived === undefined ? {} : { derived: files.derived }) },
    equivalence: (corpus) =>
      domain.equivalence(corpus).pipe(
        Effect.map((r): Provider.EquivalenceResult => ({ benchmark: r.benchmark, corpus: r.corpus, lines: r.lines, agree: r.agree, disagree: r.disagree })),
        Effect.mapError((e) => dataError(e.message))
      )
  })

  const makeCapabilities = (options: CapabilityOptions = {}): Capabilities.Capabilities =>
    options.judge === undefined ? declared.provider.capabilities : declared.capabilitiesWith({ grade: gradeSpec(options.judge) })

  return { provider: declared.provider, makeCapabilities, loaded: declared.data, environment: declared.environment }
}
