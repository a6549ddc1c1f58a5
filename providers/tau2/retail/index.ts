/**
 * `tau2-retail`: tau2-bench's retail domain as an assay provider. The agent follows the retail
 * policy, talks to a simulated user and changes the DB (an immutable World) through 16 tools;
 * graded by the task's reward basis as upstream grades it (see ../README.md).
 *
 * Environments are the 114 tasks of upstream's `base` split, the set its leaderboard scores
 * (upstream's default split); `train` (74) and `test` (40) are available through `environmentsOf`.
 */
import type { Effect } from "effect"
import type { Capabilities, EnvironmentDef, Provider } from "../../../src/index.ts"
import { makeDbDomainProvider, type Split, userPromptWithoutTools } from "../common/dbDomain.ts"
import { providerFiles, underTau2 } from "../common/provider.ts"
import { promptFiles, type Prompts } from "../common/prompts.ts"
import { filesOf } from "../common/pinned.ts"
import { loadRetailFrom, pinnedFiles } from "./data.ts"
import { runEquivalence } from "./equivalence.ts"
import { renderings } from "./upstream.ts"
import { renderUserScenario, type Task } from "../common/task.ts"
import { dbCheck, decodeTasks } from "./tasks.ts"
import { makeRetailTools } from "./tools.ts"

export { type CapabilityOptions, DEFAULT_USER_MODEL } from "../common/provider.ts"

/** The user simulator's system prompt of a task (upstream `UserSimulator.system_prompt`, no user tools). */
export const userPromptOf = (prompts: Prompts, task: Task): string => userPromptWithoutTools(prompts, renderUserScenario(task.user_scenario))

/** The oracle corpora `assay equivalence` runs by default (outputs of upstream's code, no upstream blob). */
const oracleFiles = [
  { name: "retail/oracle/gold.jsonl", url: null, sha256: "64c2d8e903633403544f446319cdb9eceff62612e61075ad838139bad510bc4e" },
  { name: "retail/oracle/fuzz-dev.jsonl", url: null, sha256: "8876c10b6ee494f3a21da8baab226849ded14e9d250930d7baf5e127c7c25521" }
]

/** Every file the provider reads (retail's names are under tau2/, as the prompts'). */
export const data: ReadonlyArray<Provider.PinnedFile> = providerFiles(
  [...Object.values(pinnedFiles), ...Object.values(promptFiles), ...oracleFiles].map(underTau2)
)

const retail = makeDbDomainProvider({
  benchmark: "tau2-retail",
  domain: "retail",
  description: "tau2-bench retail: a customer-service agent under the retail policy, a simulated user, 16 DB tools; 114 tasks",
  // Retail's files are named under tau2/.
  loadData: (read) => loadRetailFrom(filesOf(read, "tau2/")),
  decodeTasks,
  makeTools: makeRetailTools,
  dbCheck,
  renderUserScenario: (task) => renderUserScenario(task.user_scenario),
  data,
  renderings,
  equivalence: (corpus) => runEquivalence(corpus)
})

/** The environments of one of upstream's splits, in tasks.json order. */
export const environmentsOf: (split: Split) => Effect.Effect<ReadonlyArray<EnvironmentDef.EnvironmentDef>, Capabilities.CapabilityError> = retail.environmentsOf

/** The splits (train, test, base) a task belongs to. */
export const splitsOf: (taskId: string) => Effect.Effect<ReadonlyArray<Split>, Capabilities.CapabilityError> = retail.splitsOf

export const makeCapabilities = retail.makeCapabilities
export const capabilities = retail.provider.capabilities
export const provider: Provider.Provider = retail.provider
