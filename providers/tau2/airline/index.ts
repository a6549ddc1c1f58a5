/**
 * `tau2-airline`: tau2-bench's airline domain as an assay provider. The agent follows the airline
 * policy, talks to a simulated user and changes the DB (an immutable World: flights, users,
 * reservations) through 14 tools; graded by the task's reward basis as upstream grades it (DB +
 * COMMUNICATE for all 50 tasks), see README.md.
 *
 * Environments are the 50 tasks of upstream's `base` split (upstream's default); `train` (30) and
 * `test` (20) are available through `environmentsOf`.
 */
import { Effect } from "effect"
import type { Json } from "../../../src/content/Canonical.ts"
import * as ContentId from "../../../src/content/ContentId.ts"
import type { CapabilityError } from "../../../src/evaluation/Capabilities.ts"
import type { PinnedFile, Provider } from "../../../src/evaluation/Provider.ts"
import type { EnvironmentDef } from "../../../src/schema/EnvironmentDef.ts"
import type { Tool } from "../../../src/world/Tool.ts"
import * as World from "../../../src/world/World.ts"
import { userSystemPrompt } from "../common/conversation.ts"
import { makeTau2Provider, promptDataFiles, providerFiles } from "../common/provider.ts"
import type { Prompts } from "../common/prompts.ts"
import { renderUserScenario } from "../retail/tasks.ts"
import { type AirlineData, loadAirlineData, pinnedFiles } from "./data.ts"
import { runEquivalence } from "./equivalence.ts"
import { dbCheck, decodeTasks, type Split, type Task, tasksOfSplit } from "./tasks.ts"
import { makeAirlineTools } from "./tools.ts"

export { type CapabilityOptions, DEFAULT_USER_MODEL } from "../common/provider.ts"

/** What airline loads once per process. */
interface Airline {
  readonly data: AirlineData
  readonly tasks: ReadonlyArray<Task>
  readonly tools: ReadonlyArray<Tool>
  /** The same for every task: one DB, one tool set. */
  readonly evidence: Json
}

/** The user simulator's system prompt of a task (upstream `UserSimulator.system_prompt`, no user tools). */
export const userPromptOf = (prompts: Prompts, task: Task): string =>
  userSystemPrompt(prompts.userTemplate, prompts.guidelines, renderUserScenario(task.user_scenario))

/** The oracle corpora `assay equivalence` runs by default (outputs of upstream's code, no upstream blob). */
const oracleFiles = [
  { name: "tau2/airline/oracle/gold.jsonl", url: null, sha256: "a6ae0f141936e2c08efc3b4befe54ae39f2d1e5ca7fcea164d3a51a38bde312f" },
  { name: "tau2/airline/oracle/fuzz-dev.jsonl", url: null, sha256: "2dea8ec84c77e04ff30efc6140f0f9404b0770db488fcca32989364b84d79951" },
  { name: "tau2/airline/oracle/initial-db.json", url: null, sha256: "5aa801c2bd664ec87e80273d7a33939f76381a78e0a999efc7812d78977ce357" }
]

/** Every file the provider reads (airline's names are under the data root, the prompts' under tau2/). */
export const data: ReadonlyArray<PinnedFile> = providerFiles([...Object.values(pinnedFiles), ...promptDataFiles, ...oracleFiles])

const airline = makeTau2Provider<Task, Airline>({
  benchmark: "tau2-airline",
  domain: "airline",
  description: "tau2-bench airline: a reservations agent under the airline policy, a simulated user, 14 DB tools; 50 tasks",
  load: Effect.gen(function*() {
    const data = yield* loadAirlineData()
    const tasks = yield* decodeTasks(data.tasksJson)
    return {
      data,
      tasks,
      tools: makeAirlineTools(data.toolSpecs, data.toolTypes),
      evidence: { db: World.digest(data.initialWorld), tools: ContentId.ofUnsafe(data.toolSpecs as unknown as Json) }
    }
  }),
  environmentTasks: (l) => tasksOfSplit(l.tasks, l.data.splits, "base"),
  upstreamTask: (task) => task,
  setup: (l) => Effect.succeed({ world: l.data.initialWorld, evidence: l.evidence, tools: l.tools }),
  userPrompt: (l, task) => userPromptOf(l.prompts, task),
  conversationTools: (l) => ({ agent: l.tools }),
  grading: (_, task, ctx) => Effect.succeed({ db: (final) => dbCheck(ctx.initial, task, final) }),
  // As tasks.json carries them (no gold argument is a float).
  goldActions: (task) =>
    (task.evaluation_criteria?.actions ?? []).map((a) => ({
      requestor: a.requestor,
      name: a.name,
      arguments: a.arguments as { readonly [key: string]: Json }
    })),
  data,
  equivalence: runEquivalence
})

/** The environments of one of upstream's splits, in tasks.json order. */
export const environmentsOf = (split: Split): Effect.Effect<ReadonlyArray<EnvironmentDef>, CapabilityError> =>
  Effect.map(airline.loaded, (l) => tasksOfSplit(l.tasks, l.data.splits, split).map(airline.environment))

/** The splits (train, test, base) a task belongs to. */
export const splitsOf = (taskId: string): Effect.Effect<ReadonlyArray<Split>, CapabilityError> =>
  Effect.map(airline.loaded, (l) => (["train", "test", "base"] as const).filter((s) => l.data.splits[s].includes(taskId)))

export const makeCapabilities = airline.makeCapabilities
export const capabilities = airline.provider.capabilities
export const provider: Provider = airline.provider
