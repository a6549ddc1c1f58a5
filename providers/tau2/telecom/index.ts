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
import { type Canonical, Capabilities, ContentId, type EnvironmentDef, type Provider, type Tool, World } from "../../../src/index.ts"
import { userSystemPrompt } from "../common/conversation.ts"
import { type Loaded, makeTau2Provider, promptDataFiles, providerFiles } from "../common/provider.ts"
import type { Prompts } from "../common/prompts.ts"
import { renderUserScenario } from "../common/task.ts"
import { filesOf } from "../common/pinned.ts"
import { loadTelecomFrom, pinnedFiles, type TelecomData } from "./data.ts"
import { runEquivalence } from "./equivalence.ts"
import { renderings } from "./upstream.ts"
import { isPyFloat, type PyJson } from "./pyjsonParse.ts"
import { reprFloat } from "../common/pyjson.ts"
import { actionCheck, dbCheck, decodeTasks, envAssertionCheck, type Split, type Task, taskInitialWorldCached, tasksOfSplit } from "./tasks.ts"
import { makeTelecomTools } from "./tools.ts"

export { type CapabilityOptions, DEFAULT_USER_MODEL } from "../common/provider.ts"

const BENCHMARK = "tau2-telecom"

/** What telecom loads once per process. */
interface Telecom {
  readonly data: TelecomData
  readonly tasks: ReadonlyArray<Task>
  readonly agentTools: ReadonlyArray<Tool.Tool>
  readonly userTools: ReadonlyArray<Tool.Tool>
  /** Digest of both sides' tool specs: part of every task's evidence. */
  readonly toolsDigest: string
}

/** The task's initial state (`set_state` with its initialization actions), cached per task. */
const initialOf = (l: Loaded<Task, Telecom>, task: Task): Effect.Effect<World.World, Capabilities.CapabilityError> =>
  Either.match(taskInitialWorldCached(l.data.initialWorld, task), {
    onLeft: (detail) => Effect.fail(new Capabilities.CapabilityError({ capability: BENCHMARK, reason: "setup", detail })),
    onRight: Effect.succeed
  })

/**
 * The user simulator's system prompt of a task: upstream's `UserSimulator.system_prompt` with
 * user tools, so the tools variant of the guidelines.
 */
export const userPromptOf = (prompts: Prompts, task: Task): string =>
  userSystemPrompt(prompts.userTemplate, prompts.guidelinesTools, renderUserScenario(task.user_scenario))

/** Task JSON (floats marked) as a model's parsed arguments carry it: `2.0` becomes the number 2. */
export const plainJson = (v: PyJson): Canonical.Json => {
  if (isPyFloat(v)) return v.value
  if (Array.isArray(v)) return v.map(plainJson)
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v as { readonly [key: string]: PyJson }).map(([k, x]) => [k, plainJson(x)]))
  }
  return v as Canonical.Json
}

/** Task JSON (floats marked) as JSON text, floats written as Python writes them (`2.0`). */
export const pyJsonText = (v: PyJson): string => {
  if (isPyFloat(v)) return reprFloat(v.value)
  if (Array.isArray(v)) return `[${v.map(pyJsonText).join(", ")}]`
  if (v !== null && typeof v === "object") {
    return `{${Object.entries(v as { readonly [key: string]: PyJson }).map(([k, x]) => `${JSON.stringify(k)}: ${pyJsonText(x)}`).join(", ")}}`
  }
  return JSON.stringify(v)
}

/** The oracle corpora `assay equivalence` runs by default (outputs of upstream's code, no upstream blob). */
const oracleFiles = [
  { name: "tau2/telecom/oracle/gold.jsonl", url: null, sha256: "181d5464cc7918b627809296e7b9b25f3991d6b8774d4be00dc65cd4af3c4183" },
  { name: "tau2/telecom/oracle/fuzz-dev.jsonl", url: null, sha256: "dcd74a8051709a2f09e99acbcdeb5e9b4231cf48ca4c7bf53635962186a78516" }
]

/** Every file the provider reads (telecom's names are under the data root, the prompts' under tau2/). */
export const data: ReadonlyArray<Provider.PinnedFile> = providerFiles([...Object.values(pinnedFiles), ...promptDataFiles, ...oracleFiles])

const telecom = makeTau2Provider<Task, Telecom>({
  benchmark: BENCHMARK,
  domain: "telecom",
  description:
    "tau2-bench telecom: a tech-support agent under the telecom policy with 13 DB tools, a simulated user with 30 phone tools; 114 tasks",
  load: (read) => Effect.gen(function*() {
    const data = yield* loadTelecomFrom(filesOf(read))
    const tasks = yield* decodeTasks(data.tasksJson)
    return {
      data,
      tasks,
      agentTools: makeTelecomTools("assistant", data.toolSpecs, data.toolTypes),
      userTools: makeTelecomTools("user", data.userToolSpecs, data.userToolTypes),
      toolsDigest: ContentId.ofUnsafe({ agent: data.toolSpecs, user: data.userToolSpecs } as unknown as Canonical.Json)
    }
  }),
  environmentTasks: (l) => tasksOfSplit(l.tasks, l.data.splits, "base"),
  upstreamTask: (task) => task,
  setup: (l, task) =>
    Effect.gen(function*() {
      const world = yield* initialOf(l, task)
      // Both sides' tools: the handler runs the user's phone tools in the same fork.
      return { world, evidence: { db: World.digest(world), tools: l.toolsDigest }, tools: [...l.agentTools, ...l.userTools] }
    }),
  userPrompt: (l, task) => userPromptOf(l.prompts, task),
  userToolSpecs: (l) => l.data.userToolSpecs,
  conversationTools: (l) => ({ agent: l.agentTools, user: l.userTools }),
  grading: (l, task) =>
    Effect.succeed({
      // The DB check starts from the fresh environment, as upstream's reference does.
      db: (final) => dbCheck(l.data.initialWorld, task, final),
      envAssertions: (final) => envAssertionCheck(task, final).checks.map((c) => c.met),
      actions: (calls) => actionCheck(task, calls).checks.map((c) => c.matched)
    }),
  // Each by its side: agent tool calls, the scripted user's phone tool calls.
  goldActions: (task) =>
    (task.evaluation_criteria?.actions ?? []).map((a) => ({
      requestor: a.requestor,
      name: a.name,
      arguments: plainJson(a.arguments as PyJson) as { readonly [key: string]: Canonical.Json },
      argumentsText: pyJsonText(a.arguments as PyJson)
    })),
  data,
  renderings,
  equivalence: runEquivalence
})

/** The environments of one of upstream's splits, in tasks.json order. */
export const environmentsOf = (split: Split): Effect.Effect<ReadonlyArray<EnvironmentDef.EnvironmentDef>, Capabilities.CapabilityError> =>
  Effect.map(telecom.loaded, (l) => tasksOfSplit(l.tasks, l.data.splits, split).map(telecom.environment))

export const makeCapabilities = telecom.makeCapabilities
export const capabilities = telecom.provider.capabilities
export const provider: Provider.Provider = telecom.provider
