/**
 * assay as a library: what a benchmark provider (or a tool built on assay) needs, one namespace
 * per concept. A benchmark is declared with `Benchmark.make` (the kit: its tasks, world setup,
 * protocol with a typed output, grade and gold), which gives the `Provider.Provider` the
 * evaluation path runs; `PinnedData` reads its pinned upstream files. `evaluate` runs one Attempt; running and keeping whole experiments is
 * the experiment API, `assay/experiment` (src/experiment/index.ts).
 * `DataRoot` is where pinned upstream data is read from; `Model`, `ModelEffect` and `Cost` are
 * for a provider that calls a model itself (a judge, a user simulator).
 * providers/ledger is the smallest complete example; examples/counter is one outside the repo.
 *
 * Published as the package's "exports" (compiled to dist/ by `npm pack`'s prepack), so another
 * project writes `import { Capabilities, Provider, World } from "assay"`.
 */
export * as Canonical from "./content/Canonical.ts"
export * as ContentId from "./content/ContentId.ts"

export * as AgentDef from "./schema/AgentDef.ts"
export * as Attempt from "./schema/Attempt.ts"
export * as EnvironmentDef from "./schema/EnvironmentDef.ts"
export * as ExperimentDef from "./schema/ExperimentDef.ts"
export * as Message from "./schema/Message.ts"
export * as Verdict from "./schema/Verdict.ts"

export * as Tool from "./world/Tool.ts"
export * as World from "./world/World.ts"
export * as WorldEffects from "./world/WorldEffects.ts"
export * as FrozenWeb from "./world/FrozenWeb.ts"
export * as Wallet from "./budget/Wallet.ts"

export * as Agent from "./evaluation/Agent.ts"
export * as Capabilities from "./evaluation/Capabilities.ts"
export * as Conversation from "./evaluation/Conversation.ts"
export * as JudgePanel from "./evaluation/JudgePanel.ts"
export * as DataRoot from "./evaluation/DataRoot.ts"
export { evaluate, predictInputs, predictInputsId } from "./evaluation/evaluate.ts"
export * as Provider from "./evaluation/Provider.ts"
export * as Benchmark from "./kit/Benchmark.ts"
export * as PinnedData from "./data/Pinned.ts"
export * as ToolLoop from "./evaluation/toolLoop.ts"

export * as Clients from "./model/Clients.ts"
export * as Cost from "./model/Cost.ts"
export * as Live from "./model/Live.ts"
export * as Model from "./model/Model.ts"
export * as ModelAgent from "./model/ModelAgent.ts"
export * as ModelEffect from "./model/ModelEffect.ts"
// For a benchmark whose results another runner wrote (`assay import`): its reader of those files.
export * as Imported from "./model/Imported.ts"
export * as Registry from "./model/Registry.ts"
