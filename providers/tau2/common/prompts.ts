/**
 * The prompt texts every tau2 domain shares, read from `tau2/` under the data root and checked by
 * sha256: the agent's instruction and system template, the first agent message, the user
 * simulator's template and guidelines (with and without user tools). They are upstream's text,
 * so they are data, never copied into this repository.
 */
import { Effect } from "effect"
import type { PinnedData } from "../../../src/index.ts"
import { type FileReader, filesAt, upstreamRepository, upstreamRevision } from "./pinned.ts"

export interface PromptFile {
  /** Path under `$ASSAY_DATA_DIR/tau2/`. */
  readonly name: string
  /** Where it comes from: an upstream raw URL for verbatim files, empty for texts rendered from upstream code. */
  readonly url: string
  readonly sha256: string
}

const raw = (path: string) => `https://raw.githubusercontent.com/${upstreamRepository}/${upstreamRevision}/${path}`

export const promptFiles = {
  agentInstruction: { name: "prompts/agent_instruction.txt", url: "", sha256: "e00faa515230c8648931f73ed25c9528418cccc522fe8936917f4c2a047bc5d2" },
  agentTemplate: { name: "prompts/agent_system_prompt_template.txt", url: "", sha256: "71ed98b68d2f1e2a79512f6581b78dc1741efc1ab8fce791764740f8a47702b1" },
  firstAgentMessage: { name: "prompts/first_agent_message.txt", url: "", sha256: "271973d4979a0bdfa021f64bf7cc98f77eeffd101b3d1fbcaaf178c4b061b62f" },
  userTemplate: { name: "prompts/user_system_prompt_template.txt", url: "", sha256: "d541cc344ec96adea3057d5145c341b3d1a8de55da4044e8c8aefcc8e6c0430a" },
  guidelines: {
    name: "user_simulator/simulation_guidelines.md",
    url: raw("data/tau2/user_simulator/simulation_guidelines.md"),
    sha256: "740a29dfa64d7bc08eea3bf7493575b914a63f744acbaf7f199ee07eddaf72d3"
  },
  guidelinesTools: {
    name: "user_simulator/simulation_guidelines_tools.md",
    url: raw("data/tau2/user_simulator/simulation_guidelines_tools.md"),
    sha256: "cbf3d8a4d8642fd04e559862f1afef55d7dd4e6a7e727ca49e239023c599de0c"
  }
} as const satisfies Record<string, PromptFile>

export interface Prompts {
  readonly agentInstruction: string
  readonly agentTemplate: string
  readonly firstAgentMessage: string
  readonly userTemplate: string
  /** Guidelines for a user without tools (retail). */
  readonly guidelines: string
  /** Guidelines for a user with tools of its own. */
  readonly guidelinesTools: string
}

/** The shared prompts through `read` (their names under `tau2/`). */
export const loadPromptsFrom = (read: FileReader): Effect.Effect<Prompts, PinnedData.DataError> =>
  Effect.all(
    {
      agentInstruction: read.text(promptFiles.agentInstruction),
      agentTemplate: read.text(promptFiles.agentTemplate),
      firstAgentMessage: read.text(promptFiles.firstAgentMessage),
      userTemplate: read.text(promptFiles.userTemplate),
      guidelines: read.text(promptFiles.guidelines),
      guidelinesTools: read.text(promptFiles.guidelinesTools)
    },
    { concurrency: "unbounded" }
  )

/** The shared prompts in a data folder (the data root unless given); `benchmark` is the domain a missing file's advice names (`assay data pull BENCHMARK`). */
export const loadPrompts = (dataDir?: string, benchmark = "tau2-retail"): Effect.Effect<Prompts, PinnedData.DataError> =>
  loadPromptsFrom(filesAt(benchmark, dataDir, "tau2/"))
