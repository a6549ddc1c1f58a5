/**
 * The tau2 files that upstream makes by running its code (tool schemas and types, banking's
 * discoverable tools, prompt texts, composed policies; banking's sums and corpus order, from the
 * pins in banking/sums.ts), made by `assay data pull` from upstream's source files, which are
 * pinned by URL and sha256 like the data: each rendering names the sources it reads and the files
 * it makes, and the pull checks every made file against the sha256 the provider pins, so a
 * rendering that drifts from upstream fails the pull instead of installing other bytes.
 */
import { Either } from "effect"
import type { Provider } from "../../../src/index.ts"
import { parseModule, type Stmt, stringConstant } from "./pythonSource.ts"
import { corpusOrder, documentAndTaskSums } from "../banking/sums.ts"
import { renderDiscoverableTools, renderToolFiles } from "./toolSchema.ts"
import { upstreamRepository, upstreamRevision } from "./pinned.ts"

/** Where a source file lands under the data root: beside the data, under the upstream path. */
const SOURCE_FOLDER = "tau2/upstream"

/** An upstream source file, by its path in the repository at the pinned revision. */
interface SourceFile {
  readonly repoPath: string
  readonly sha256: string
}

const source = (repoPath: string, sha256: string): SourceFile => ({ repoPath, sha256 })

export const sources = {
  llmAgent: source("src/tau2/agent/llm_agent.py", "d13412ff502859f0ef0492af0128f1b2666be32640057ba8e076d2602af084d8"),
  orchestrator: source("src/tau2/orchestrator/orchestrator.py", "ff6c2631a02b68a3341b1ca3d9a6122bb43ab872ee6acc960379c78015eca420"),
  userSimulator: source("src/tau2/user/user_simulator.py", "bfe1defe73bce25450b2be697c249d6cec2f3ba25a70e32e2452ba75a53a630c"),
  retailTools: source("src/tau2/domains/retail/tools.py", "34f4fe9702d36f0dd4697700fbcd63d0cf5386e6eb8e7499aaa336243bad8750"),
  airlineTools: source("src/tau2/domains/airline/tools.py", "3987f21c286314cb48764f97052934ff4fd60e27a0b2e4a43423911adf8eaa26"),
  airlineModel: source("src/tau2/domains/airline/data_model.py", "a8083e2f590e4b9b66a65d7cd50b7a0247e4fa33d6961aaeb02e4d92488b3cff"),
  telecomTools: source("src/tau2/domains/telecom/tools.py", "388552434d1b8225e33e7958bdb6efccfe92b49e11d1838568d9b559514e9d01"),
  telecomModel: source("src/tau2/domains/telecom/data_model.py", "f868cbbd344cadf6c376f21976edfa38b8cfe199922748e31eee666f791a0628"),
  telecomUserTools: source("src/tau2/domains/telecom/user_tools.py", "03fa751eeea3734313a3f5274223d42750fd5c1a28f2624265a678f271ac309d"),
  telecomUserModel: source("src/tau2/domains/telecom/user_data_model.py", "27be0006694e9a740dd378f42099d6d1afecbd445f7906aedcd1f800087377c2"),
  pydanticUtils: source("src/tau2/utils/pydantic_utils.py", "618dfc39b619bb0f623151682962ddc52bf2ea70bc2562dded884f118c84b78a"),
  bankingToolkits: source("src/tau2/domains/banking_knowledge/retrieval_toolkits.py", "be37543d4459125e502ba983f5444e923b1d80ab24d57f58057592f331a15f3e"),
  bankingMixins: source("src/tau2/domains/banking_knowledge/retrieval_mixins.py", "1eb9051ff164329ab16fb0976ac36f7442346a894061ce657b1fb86c8e1ff86e"),
  bankingTools: source("src/tau2/domains/banking_knowledge/tools.py", "e7287dc76ab74f7c172a9b632b6ebdb067a85bbc0cb7c769f7bdf08ec18aa1c0"),
  bankingModel: source("src/tau2/domains/banking_knowledge/data_model.py", "8451829795c7cf18668b26adc2db06c10426f4e69b553824ea886c40765ee3c4")
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

const tools = (folder: string, className: string, files: ReadonlyArray<SourceFile>, prefix = "tools"): Rendering => ({
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

/** Telecom's agent policy as `get_environment()` composes it (policy_type "manual"). */
const telecomPolicy: Rendering = {
  outputs: ["tau2/telecom/policy-manual.md"],
  sources: [],
  data: ["tau2/telecom/main_policy.md", "tau2/telecom/tech_support_manual.md"],
  render: (inputs) =>
    Either.right([
      "<main_policy>\n" + inputs.data("tau2/telecom/main_policy.md") + "\n</main_policy>\n<tech_support_policy>\n" +
      inputs.data("tau2/telecom/tech_support_manual.md") + "\n</tech_support_policy>"
    ])
}

const banking = "tau2/banking_knowledge"
const bankingPrompts = `${banking}/prompts`
const bankingSources = [sources.bankingToolkits, sources.bankingMixins, sources.bankingTools, sources.bankingModel]

/** The bm25 variant's agent policy: its template with each `{{component:NAME}}` replaced by `components/NAME.md` (`build_policy`). */
const bankingPolicy: Rendering = {
  outputs: [`${banking}/policy-bm25.md`],
  sources: [],
  data: [`${bankingPrompts}/classic_rag_bm25_no_grep.md`, `${bankingPrompts}/components/policy_header.md`, `${bankingPrompts}/components/additional_instructions.md`],
  render: (inputs) => {
    let missing: string | null = null
    const policy = inputs.data(`${bankingPrompts}/classic_rag_bm25_no_grep.md`).replace(/\{\{component:(\w+)\}\}/g, (_, name: string) => {
      const path = `${bankingPrompts}/components/${name}.md`
      if (!bankingPolicy.data!.includes(path)) missing ??= path
      return missing === null ? inputs.data(path) : ""
    })
    return missing === null ? Either.right([policy]) : Either.left(`the bm25 template names ${missing}, which is not pinned`)
  }
}

/** `SHA256SUMS` of the documents and tasks, sorted by path, and the oracle's corpus order (banking/sums.ts). */
const bankingSums: Rendering = {
  outputs: [`${banking}/SHA256SUMS`, `${banking}/documents-order.json`],
  sources: [],
  render: () => {
    const sums = [...documentAndTaskSums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([path, sha]) => `${sha}  ${path}\n`).join("")
    const ids = documentAndTaskSums.filter(([path]) => path.startsWith("documents/")).map(([path]) => path.slice("documents/".length, -".json".length))
    const order = corpusOrder.map((i) => ids[i]!)
    // `json.dumps(ids, indent=1)` and a newline, as the order was written.
    return Either.right([sums, "[\n" + order.map((id) => ` ${JSON.stringify(id)}`).join(",\n") + "\n]\n"])
  }
}

const renderings: ReadonlyArray<Rendering> = [
  prompts,
  tools("tau2/retail", "RetailTools", [sources.retailTools]),
  tools("tau2/airline", "AirlineTools", [sources.airlineTools, sources.airlineModel]),
  tools("tau2/telecom", "TelecomTools", [sources.telecomTools, sources.telecomModel]),
  tools("tau2/telecom", "TelecomUserTools", [sources.telecomUserTools, sources.telecomUserModel, sources.pydanticUtils], "user-tools"),
  telecomPolicy,
  tools(banking, "KnowledgeToolsWithKBSearch", bankingSources),
  tools(banking, "KnowledgeUserTools", [sources.bankingTools, sources.bankingModel], "user-tools"),
  {
    outputs: [`${banking}/discoverable-tools.json`],
    sources: [sources.bankingToolkits, sources.bankingMixins, sources.bankingTools],
    render: (inputs) =>
      Either.map(
        renderDiscoverableTools(
          [sources.bankingToolkits, sources.bankingMixins, sources.bankingTools].map((f) => ({ file: f.repoPath, text: inputs.source(f) })),
          [{ className: "KnowledgeToolsWithKBSearch", owner: "assistant" }, { className: "KnowledgeUserTools", owner: "user" }]
        ),
        (text) => [text]
      )
  },
  bankingPolicy,
  bankingSums
]

const byOutput = new Map(renderings.flatMap((r) => r.outputs.map((o) => [o, r] as const)))

/** The rendering that makes a data-root path, if any. */
export const renderingFor = (path: string): Rendering | undefined => byOutput.get(path)

const rawUrl = (repoPath: string): string => `https://raw.githubusercontent.com/${upstreamRepository}/${upstreamRevision}/${repoPath}`

/**
 * A provider's pinned files with the ones made from upstream code turned into derived files:
 * they leave the download list, the sources they are made from join it (needed only to derive),
 * and the pull makes and checks them. When some made file has no rendering here, the list is left
 * as it is (a local copy brings those files).
 */
export const withRenderings = (
  files: ReadonlyArray<Provider.PinnedFile>
): { readonly data: ReadonlyArray<Provider.PinnedFile>; readonly derived?: Provider.DerivedData } => {
  const made = files.filter((f) => f.url === "" && f.oracle !== true)
  if (made.length === 0 || made.some((f) => !byOutput.has(f.path))) return { data: files }
  const used = [...new Set(made.map((f) => byOutput.get(f.path)!))]
  const pinned = new Map(made.map((f) => [f.path, f.sha256]))
  const sourceFiles = [...new Map(used.flatMap((r) => r.sources).map((s) => [s.repoPath, s])).values()]
  const data: Array<Provider.PinnedFile> = [
    ...files.filter((f) => !pinned.has(f.path)),
    ...sourceFiles.map((s) => ({ path: sourcePath(s), url: rawUrl(s.repoPath), sha256: s.sha256, derivationInput: true }))
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
