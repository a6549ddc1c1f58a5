/**
 * The tau2 files that upstream makes by running its code, made by `assay data pull` from
 * upstream's source files, which are pinned by URL and sha256 like the data: each rendering names
 * the sources it reads and the files it makes, and the pull checks every made file against the
 * sha256 the provider pins, so a rendering that drifts from upstream fails the pull instead of
 * installing other bytes. Here: the shared prompt texts and the tool files' rendering; each
 * domain's own renderings are in its upstream.ts (tool schemas and types, composed policies,
 * banking's discoverable tools, sums and corpus order).
 */
import { Either } from "effect"
import type { Provider } from "../../../src/index.ts"
import { parseModule, type Stmt, stringConstant } from "./pythonSource.ts"
import { renderToolFiles } from "./toolSchema.ts"
import { upstreamUrl } from "./pinned.ts"

/** Where a source file lands under the data root: beside the data, under the upstream path. */
const SOURCE_FOLDER = "tau2/upstream"

/** An upstream source file, by its path in the repository at the pinned revision. */
export interface SourceFile {
  readonly repoPath: string
  readonly sha256: string
}

export const source = (repoPath: string, sha256: string): SourceFile => ({ repoPath, sha256 })

/** The sources of the prompt texts every domain reads. */
export const sources = {
  llmAgent: source("src/tau2/agent/llm_agent.py", "d13412ff502859f0ef0492af0128f1b2666be32640057ba8e076d2602af084d8"),
  orchestrator: source("src/tau2/orchestrator/orchestrator.py", "ff6c2631a02b68a3341b1ca3d9a6122bb43ab872ee6acc960379c78015eca420"),
  userSimulator: source("src/tau2/user/user_simulator.py", "bfe1defe73bce25450b2be697c249d6cec2f3ba25a70e32e2452ba75a53a630c")
} as const

/** The data-root path of a source file. */
export const sourcePath = (s: SourceFile): string => `${SOURCE_FOLDER}/${s.repoPath}`

/** What a rendering reads: a source file's text, or (for `data`) a pinned data file's text by its data-root path. */
export interface Inputs {
  readonly source: (s: SourceFile) => string
  readonly data: (path: string) => string
}

/** Files made from upstream code: what they are made from, and how. */
export interface Rendering {
  /** The data-root paths it makes. */
  readonly outputs: ReadonlyArray<string>
  readonly sources: ReadonlyArray<SourceFile>
  /** Pinned data files it also reads (data-root paths), e.g. the policies telecom composes. */
  readonly data?: ReadonlyArray<string>
  readonly render: (inputs: Inputs) => Either.Either<ReadonlyArray<string>, string>
}

const parsed = (file: SourceFile, text: string): Either.Either<ReadonlyArray<Stmt>, string> =>
  Either.mapLeft(parseModule(file.repoPath, text), (e) => e.message)

/** Module-level string constants of a source, as upstream uses them, in the order named. */
const constants = (file: SourceFile, text: string, names: ReadonlyArray<string>): Either.Either<ReadonlyArray<string>, string> =>
  Either.flatMap(parsed(file, text), (body) =>
    Either.all(names.map((name) => {
      const c = stringConstant(body, name)
      return c === null ? Either.left(`${file.repoPath}: no string constant ${name}`) : Either.right(c.value)
    }))
  )

/** The `content=` string of a module-level `NAME = Message(..., content="...")`. */
const messageContent = (file: SourceFile, text: string, name: string): Either.Either<string, string> =>
  Either.flatMap(parsed(file, text), (body) => {
    for (const s of body) {
      if (s.kind === "assign" && s.target === name && s.value?.kind === "call") {
        const content = s.value.keywords.find((k) => k.name === "content")?.value
        if (content?.kind === "str") return Either.right(content.value)
      }
    }
    return Either.left(`${file.repoPath}: no ${name} with a literal content`)
  })

/** `${folder}/${prefix}.json` and `-types.json`: the schemas and ToolTypes of `className`'s tools, as upstream renders them. */
export const toolsRendering = (folder: string, className: string, files: ReadonlyArray<SourceFile>, prefix = "tools"): Rendering => ({
  outputs: [`${folder}/${prefix}.json`, `${folder}/${prefix}-types.json`],
  sources: files,
  render: (inputs) =>
    Either.map(
      renderToolFiles(files.map((f) => ({ file: f.repoPath, text: inputs.source(f) })), className),
      (r) => [r.tools, r.types]
    )
})

/** The prompt texts every domain reads (prompts/README.md of the data: constants, `.strip()` applied where upstream applies it). */
const prompts: Rendering = {
  outputs: [
    "tau2/prompts/agent_instruction.txt",
    "tau2/prompts/agent_system_prompt_template.txt",
    "tau2/prompts/first_agent_message.txt",
    "tau2/prompts/user_system_prompt_template.txt"
  ],
  sources: [sources.llmAgent, sources.orchestrator, sources.userSimulator],
  render: (inputs) =>
    Either.map(
      Either.all([
        constants(sources.llmAgent, inputs.source(sources.llmAgent), ["AGENT_INSTRUCTION", "SYSTEM_PROMPT"]),
        messageContent(sources.orchestrator, inputs.source(sources.orchestrator), "DEFAULT_FIRST_AGENT_MESSAGE"),
        constants(sources.userSimulator, inputs.source(sources.userSimulator), ["SYSTEM_PROMPT"])
      ]),
      ([agent, first, user]) => [...agent, first, ...user]
    )
}

/** The rendering among `renderings` that makes a data-root path, if any. */
export const renderingFor = (renderings: ReadonlyArray<Rendering>, path: string): Rendering | undefined =>
  renderings.find((r) => r.outputs.includes(path))

/**
 * A provider's pinned files with the ones made from upstream code (by the shared prompts' rendering
 * or the domain's) turned into derived files:
 * they leave the download list, the sources they are made from join it (needed only to derive),
 * and the pull makes and checks them. When some made file has no rendering here, the list is left
 * as it is (a local copy brings those files).
 */
export const withRenderings = (
  files: ReadonlyArray<Provider.PinnedFile>,
  domainRenderings: ReadonlyArray<Rendering>
): { readonly data: ReadonlyArray<Provider.PinnedFile>; readonly derived?: Provider.DerivedData } => {
  const byOutput = new Map([prompts, ...domainRenderings].flatMap((r) => r.outputs.map((o) => [o, r] as const)))
  const made = files.filter((f) => f.url === "" && f.oracle !== true)
  if (made.length === 0 || made.some((f) => !byOutput.has(f.path))) return { data: files }
  const used = [...new Set(made.map((f) => byOutput.get(f.path)!))]
  const pinned = new Map(made.map((f) => [f.path, f.sha256]))
  const sourceFiles = [...new Map(used.flatMap((r) => r.sources).map((s) => [s.repoPath, s])).values()]
  const data: Array<Provider.PinnedFile> = [
    ...files.filter((f) => !pinned.has(f.path)),
    ...sourceFiles.map((s) => ({ path: sourcePath(s), url: upstreamUrl(s.repoPath), sha256: s.sha256, derivationInput: true }))
  ]
  const outputs = used.flatMap((r) => r.outputs).filter((path) => pinned.has(path))
  return {
    data,
    derived: {
      files: outputs.map((path) => ({ path, sha256: pinned.get(path)! })),
      derive: (read) => {
        const text = (path: string) => new TextDecoder().decode(read(path))
        const inputs: Inputs = { source: (s) => text(sourcePath(s)), data: text }
        const out = new Map<string, Uint8Array>()
        for (const r of used) {
          const rendered = r.render(inputs)
          if (Either.isLeft(rendered)) return Either.left(rendered.left)
          r.outputs.forEach((path, i) => out.set(path, new TextEncoder().encode(rendered.right[i]!)))
        }
        return Either.right(out)
      }
    }
  }
}
