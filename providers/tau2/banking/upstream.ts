/**
 * Banking's files made from upstream code (common/fromSource.ts): both sides' tool files, the
 * discoverable tools, the bm25 variant's composed policy, and the SHA256SUMS and corpus order
 * made from the pins in sums.ts.
 */
import { Either } from "effect"
import { type Rendering, source, toolsRendering } from "../common/fromSource.ts"
import { renderDiscoverableTools } from "../common/toolSchema.ts"
import { corpusOrder, documentAndTaskSums } from "./sums.ts"

const banking = "tau2/banking_knowledge"
const prompts = `${banking}/prompts`

const toolkits = source("src/tau2/domains/banking_knowledge/retrieval_toolkits.py", "be37543d4459125e502ba983f5444e923b1d80ab24d57f58057592f331a15f3e")
const mixins = source("src/tau2/domains/banking_knowledge/retrieval_mixins.py", "1eb9051ff164329ab16fb0976ac36f7442346a894061ce657b1fb86c8e1ff86e")
const tools = source("src/tau2/domains/banking_knowledge/tools.py", "e7287dc76ab74f7c172a9b632b6ebdb067a85bbc0cb7c769f7bdf08ec18aa1c0")
const model = source("src/tau2/domains/banking_knowledge/data_model.py", "8451829795c7cf18668b26adc2db06c10426f4e69b553824ea886c40765ee3c4")

/** The bm25 variant's agent policy: its template with each `{{component:NAME}}` replaced by `components/NAME.md` (`build_policy`). */
const policy: Rendering = {
  outputs: [`${banking}/policy-bm25.md`],
  sources: [],
  data: [`${prompts}/classic_rag_bm25_no_grep.md`, `${prompts}/components/policy_header.md`, `${prompts}/components/additional_instructions.md`],
  render: (inputs) => {
    let missing: string | null = null
    const text = inputs.data(`${prompts}/classic_rag_bm25_no_grep.md`).replace(/\{\{component:(\w+)\}\}/g, (_, name: string) => {
      const path = `${prompts}/components/${name}.md`
      if (!policy.data!.includes(path)) missing ??= path
      return missing === null ? inputs.data(path) : ""
    })
    return missing === null ? Either.right([text]) : Either.left(`the bm25 template names ${missing}, which is not pinned`)
  }
}

/** `SHA256SUMS` of the documents and tasks, sorted by path, and the oracle's corpus order (sums.ts). */
const sums: Rendering = {
  outputs: [`${banking}/SHA256SUMS`, `${banking}/documents-order.json`],
  sources: [],
  render: () => {
    const lines = [...documentAndTaskSums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([path, sha]) => `${sha}  ${path}\n`).join("")
    const ids = documentAndTaskSums.filter(([path]) => path.startsWith("documents/")).map(([path]) => path.slice("documents/".length, -".json".length))
    const order = corpusOrder.map((i) => ids[i]!)
    // `json.dumps(ids, indent=1)` and a newline, as the order was written.
    return Either.right([lines, "[\n" + order.map((id) => ` ${JSON.stringify(id)}`).join(",\n") + "\n]\n"])
  }
}

export const renderings: ReadonlyArray<Rendering> = [
  toolsRendering(banking, "KnowledgeToolsWithKBSearch", [toolkits, mixins, tools, model]),
  toolsRendering(banking, "KnowledgeUserTools", [tools, model], "user-tools"),
  {
    outputs: [`${banking}/discoverable-tools.json`],
    sources: [toolkits, mixins, tools],
    render: (inputs) =>
      Either.map(
        renderDiscoverableTools(
          [toolkits, mixins, tools].map((f) => ({ file: f.repoPath, text: inputs.source(f) })),
          [{ className: "KnowledgeToolsWithKBSearch", owner: "assistant" }, { className: "KnowledgeUserTools", owner: "user" }]
        ),
        (text) => [text]
      )
  },
  policy,
  sums
]
