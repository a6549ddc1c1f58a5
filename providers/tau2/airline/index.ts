/**
 * `tau2-airline`: tau2-bench's airline domain as an assay provider. The agent follows the airline
 * policy, talks to a simulated user and changes the DB (an immutable World: flights, users,
 * reservations) through 14 tools; graded by the task's reward basis as upstream grades it (DB +
 * COMMUNICATE for all 50 tasks), see README.md.
 *
 * Environments are the 50 tasks of upstream's `base` split (upstream's default); `train` (30) and
 * `test` (20) are available through `environmentsOf`.
 */
import type { Effect } from "effect"
import type { Capabilities, EnvironmentDef, Provider } from "../../../src/index.ts"
import { makeDbDomainProvider, type Split, userPromptWithoutTools } from "../common/dbDomain.ts"
import { promptDataFiles, providerFiles } from "../common/provider.ts"
import type { Prompts } from "../common/prompts.ts"
import { renderUserScenario } from "../common/task.ts"
import { filesOf } from "../common/pinned.ts"
import { loadAirlineFrom, pinnedFiles } from "./data.ts"
import { runEquivalence } from "./equivalence.ts"
import { renderings } from "./upstream.ts"
import { dbCheck, decodeTasks, type Task } from "./tasks.ts"
import { makeAirlineTools } from "./tools.ts"

export { type CapabilityOptions, DEFAULT_USER_MODEL } from "../common/provider.ts"

/** The user simulator's system prompt of a task (upstream `UserSimulator.system_prompt`, no user tools). */
export const userPromptOf = (prompts: Prompts, task: Task): string => userPromptWithoutTools(prompts, renderUserScenario(task.user_scenario))

/** The oracle corpora `assay equivalence` runs by default (outputs of upstream's code, no upstream blob). */
const oracleFiles = [
  { name: "tau2/airline/oracle/gold.jsonl", url: null, sha256: "a6ae0f141936e2c08efc3b4befe54ae39f2d1e5ca7fcea164d3a51a38bde312f" },
  { name: "tau2/airline/oracle/fuzz-dev.jsonl", url: null, sha256: "2dea8ec84c77e04ff30efc6140f0f9404b0770db488fcca32989364b84d79951" },
  { name: "tau2/airline/oracle/initial-db.json", url: null, sha256: "5aa801c2bd664ec87e80273d7a33939f76381a78e0a999efc7812d78977ce357" }
]

/** Every file the provider reads (airline's names are under the data root, the prompts' under tau2/). */
export const data: ReadonlyArray<Provider.PinnedFile> = providerFiles([...Object.values(pinnedFiles), ...promptDataFiles, ...oracleFiles])

const airline = makeDbDomainProvider({
  benchmark: "tau2-airline",
  domain: "airline",
  description: "tau2-bench airline: a reservations agent under the airline policy, a simulated user, 14 DB tools; 50 tasks",
  loadData: (read) => loadAirlineFrom(filesOf(read)),
  decodeTasks,
  makeTools: makeAirlineTools,
  dbCheck,
  renderUserScenario: (task) => renderUserScenario(task.user_scenario),
  data,
  renderings,
  equivalence: runEquivalence
})

/** The environments of one of upstream's splits, in tasks.json order. */
export const environmentsOf: (split: Split) => Effect.Effect<ReadonlyArray<EnvironmentDef.EnvironmentDef>, Capabilities.CapabilityError> = airline.environmentsOf

/** The splits (train, test, base) a task belongs to. */
export const splitsOf: (taskId: string) => Effect.Effect<ReadonlyArray<Split>, Capabilities.CapabilityError> = airline.splitsOf

export const makeCapabilities = airline.makeCapabilities
export const capabilities = airline.provider.capabilities
export const provider: Provider.Provider = airline.provider
