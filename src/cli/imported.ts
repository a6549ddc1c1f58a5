/**
 * `import:NAME` (`import:NAME+text` for prompt-format outputs): another runner's recorded outputs
 * as a candidate (`assay import`). Its model calls are `model/generate` effects answered from the
 * imported file, and in a replay from the Attempt's recording; it cannot be run live.
 */
import { Effect } from "effect"
import type { Json } from "../content/Canonical.ts"
import { CapabilityError } from "../evaluation/Capabilities.ts"
import type { Candidate } from "../experiment/Runner.ts"
import * as Imported from "../model/Imported.ts"
import type { AgentDef } from "../schema/AgentDef.ts"
import { type EnvironmentDef, noLimits } from "../schema/EnvironmentDef.ts"

export const PREFIX = "import:"
const TEXT_SUFFIX = "+text"

export const isImportedName = (name: string): boolean => name.startsWith(PREFIX)

/** The candidate's name: `import:NAME`, and `+text` when its outputs are text (BFCL's prompt mode). */
export const importedName = (name: string, actionSpace: AgentDef["actionSpace"]): string => `${PREFIX}${name}${actionSpace === "text" ? TEXT_SUFFIX : ""}`

/** The model the requests name: NAME. */
const modelOf = (name: string): string => name.slice(PREFIX.length).replace(/\+text$/, "")

/** The AgentDef follows from the name alone, so a replay rebuilds the same candidate. */
export const importedDef = (name: string): AgentDef => ({
  name,
  kind: "llm",
  model: `${Imported.PROVIDER}:${modelOf(name)}`,
  actionSpace: name.endsWith(TEXT_SUFFIX) ? "text" : "tools",
  prompt: "",
  limits: noLimits
})

/** What the import gives the candidate: the content it was read from and each task's recorded output. */
export interface ImportedSource {
  /** Names the files' content: part of every cell's inputs id, so a changed file makes new cells. */
  readonly registryEntry: Json
  readonly outputs: (env: EnvironmentDef) => Imported.RecordedTurns | undefined
  readonly options?: Imported.AgentOptions
}

/**
 * The imported candidate. Without a source (a replay, where `resolveCandidate` rebuilds it from the
 * name) it answers only from an Attempt's recording; its inputs id then names no file, which only
 * a replayed Attempt whose verdict changed would keep.
 */
export const importedCandidate = (name: string, source?: ImportedSource): Candidate => {
  const model = modelOf(name)
  return {
    def: importedDef(name),
    registryEntry: source?.registryEntry ?? { imported: model },
    agentFor: (env, context) => {
      if (context?.recording !== undefined) return Effect.succeed(Imported.agent(name, model, null))
      const turns = source?.outputs(env)
      return turns === undefined
        ? Effect.fail(
          new CapabilityError({
            capability: name,
            reason: "data",
            detail: source === undefined
              ? `${name} answers only from imported result files (assay import) or from its recordings (assay replay), never live`
              : `the imported files have no output for ${env.benchmark} task ${env.task}`
          })
        )
        : Effect.succeed(Imported.agent(name, model, turns, source?.options))
    }
  }
}
