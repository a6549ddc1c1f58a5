/**
 * `tau2-banking`: tau2-bench's banking_knowledge domain, BM25 retrieval variant, as an assay
 * provider. The agent follows Rho-Bank's policy (as `build_policy` renders it for `bm25`) with 15
 * tools, `KB_search` over the 698 documents among them; the simulated user is offered the task's
 * `user_tools` subset. Both sides' discoverable tools stay callable by name, as upstream's
 * `use_tool` finds them. Graded by the task's reward basis as upstream grades it: DB (87 tasks),
 * ACTION (9), DB + NL_ASSERTION (1), see README.md.
 */
import { Effect, Either } from "effect"
import { type Canonical, Capabilities, ContentId, type Provider, type Tool, World } from "../../../src/index.ts"
import { OUT_OF_SCOPE, STOP, TRANSFER, userSystemPrompt } from "../common/conversation.ts"
import { type Loaded, makeTau2Provider, promptDataFiles, providerFiles } from "../common/provider.ts"
import type { Prompts } from "../common/prompts.ts"
import { renderUserScenario } from "../common/task.ts"
import { buildIndex } from "./bm25.ts"
import { filesOf } from "../common/pinned.ts"
import { allPinnedFiles, type BankingData, loadBankingFrom } from "./data.ts"
import { runEquivalence } from "./equivalence.ts"
import { renderings } from "./upstream.ts"
import { type BankingTask, dbCheck, decodeTasks, initialWorld, plain } from "./tasks.ts"
import { bankingTools, type BankingTools, dbWorld, type Environment } from "./tools.ts"

export { type CapabilityOptions, DEFAULT_USER_MODEL } from "../common/provider.ts"

const BENCHMARK = "tau2-banking"

/** What banking loads once per process. */
interface Banking {
  readonly data: BankingData
  readonly env: Environment
  readonly tasks: ReadonlyArray<BankingTask>
  readonly tools: BankingTools
  /** Digest of every tool spec (offered and discoverable, both sides): part of every task's evidence. */
  readonly toolsDigest: string
}

const initials = new Map<string, World.World>()

/** The task's initial world (db.json, its agent data merged, its read-log allowlist), cached per task. */
const initialOf = (l: Loaded<BankingTask, Banking>, task: BankingTask): Effect.Effect<World.World, Capabilities.CapabilityError> => {
  const hit = initials.get(task.id)
  if (hit !== undefined) return Effect.succeed(hit)
  return Either.match(initialWorld(l.data, task), {
    onLeft: (detail) => Effect.fail(new Capabilities.CapabilityError({ capability: BENCHMARK, reason: "setup", detail: `${task.id}: ${detail}` })),
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
export const offeredUserTools = (data: BankingData, task: BankingTask): ReadonlyArray<Tool.ToolSpec> =>
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

/** Every file the provider reads: banking's 808 (under the data root) and the shared prompts (under tau2/). */
export const data: ReadonlyArray<Provider.PinnedFile> = providerFiles([...allPinnedFiles, ...promptDataFiles])

const banking = makeTau2Provider<BankingTask, Banking>({
  benchmark: BENCHMARK,
  domain: "banking",
  description:
    "tau2-bench banking_knowledge (BM25): a Rho-Bank agent with 15 tools (KB_search over 698 documents) and discoverable tools, a simulated user with up to 6 tools; 97 tasks",
  load: (read) => Effect.gen(function*() {
    const data = yield* loadBankingFrom(filesOf(read))
    const tasks = yield* decodeTasks(data)
    // The BM25 index is built once; every Attempt's tools share it (it is read-only).
    const env: Environment = { index: buildIndex(data.documents), discoverable: data.discoverableTools }
    return {
      data,
      env,
      tasks,
      tools: bankingTools(env, data),
      toolsDigest: ContentId.ofUnsafe(
        { agent: data.toolSpecs, user: data.userToolSpecs, discoverable: data.discoverableTools } as unknown as Canonical.Json
      )
    }
  }),
  // The 97 tasks, in upstream order (tasks/task_*.json sorted by file name).
  environmentTasks: (l) => l.tasks,
  upstreamTask: (task) => task.task,
  setup: (l, task) =>
    Effect.gen(function*() {
      const world = yield* initialOf(l, task)
      const t = l.tools
      return {
        world,
        // The DB only: `$session` (the read-log allowlist) is agent-side state upstream keeps outside it.
        evidence: { db: World.digest(dbWorld(world)), tools: l.toolsDigest },
        tools: [...t.agent, ...t.agentHidden, ...t.user, ...t.userHidden]
      }
    }),
  userPrompt: (l, task) => userPromptOf(l.prompts, l.data, task),
  userToolSpecs: (l, task) => offeredUserTools(l.data, task),
  // Offered: the 15 agent tools and the task's user tools. Callable: every tool of each side,
  // discoverable ones included, as upstream's `use_tool` looks a name up in the whole toolkit.
  conversationTools: (l) => ({ agent: [...l.tools.agent, ...l.tools.agentHidden], user: [...l.tools.user, ...l.tools.userHidden] }),
  grading: (l, task) =>
    Effect.map(initialOf(l, task), (initial) => ({
      // The gold world is the gold actions replayed on the task's initial world; `$session` left out.
      db: (final: World.World) => dbCheck(l.env, initial, task, final)
    })),
  // Each by its side (agent tool calls; the scripted user's own tool calls, 102 of them), as a
  // model's parsed arguments carry them (no gold argument is a float).
  goldActions: (task) =>
    task.goldActions.map((a) => ({
      requestor: a.requestor,
      name: a.name,
      arguments: plain(a.arguments) as { readonly [key: string]: Canonical.Json }
    })),
  opening: openingOf,
  data,
  renderings,
  equivalence: runEquivalence
})

/** The 97 tasks, in upstream order (tasks/task_*.json sorted by file name). */
export const environments = banking.provider.environments

export const makeCapabilities = banking.makeCapabilities
export const capabilities = banking.provider.capabilities
export const provider: Provider.Provider = banking.provider
