/**
 * The pinned banking_knowledge files (bm25 variant), read from `$ASSAY_DATA_DIR/tau2/` and
 * checked against the sha256 recorded here (from ../shared/data/tau2/SOURCE.md) or, for the
 * 698 documents and 97 tasks, against the pinned `SHA256SUMS`. db.json becomes the initial World:
 * one World table per DB table (`data` records in file order), the tables' `notes` kept apart
 * (no tool writes them).
 */
import { join } from "node:path"
import { Effect, Either, ParseResult, Schema } from "effect"
import { type Canonical, type PinnedData, type Tool, World } from "../../../src/index.ts"
import { dataRoot, type FileReader, filesAt, type PinnedFile, upstreamUrl } from "../common/pinned.ts"
import { OpenAiTools, toolSpecsOf, ToolTypes } from "../common/toolFiles.ts"
import { isDict, jsonLoads, orderedEntries, type Py } from "./pyvalue.ts"
import { documentAndTaskSums } from "./sums.ts"

const upstreamDataPath = "data/tau2/domains/banking_knowledge"
const rawUrl = (path: string): string => upstreamUrl(path.split("/").map(encodeURIComponent).join("/"))

/** A pinned file; its `name` is a path under `$ASSAY_DATA_DIR/`. */
export type { PinnedFile }

const local = (file: string) => `tau2/banking_knowledge/${file}`

export const pinnedFiles = {
  db: { name: local("db.json"), url: rawUrl(`${upstreamDataPath}/db.json`), sha256: "e692feb797c659f0e21ff7380aa87beb4e95a0694d7bb7945f073102f0293d28" },
  // Generated (see banking_knowledge/oracle/README.md): no upstream blob.
  sums: { name: local("SHA256SUMS"), url: null, sha256: "ddf0d94c3b294eaae7eb5a0305fa69398d2f47b84c8abe9f4a265f79f7a0994e" },
  documentsOrder: { name: local("documents-order.json"), url: null, sha256: "98ba5859f7731c5e58772bb84827b3625c977ba17f07786982ebe8796f25c9aa" },
  tools: { name: local("tools.json"), url: null, sha256: "fef660858f22e481f2a84a36de5c4ad4c03d97531fa01b008cf58baaefe84586" },
  toolTypes: { name: local("tools-types.json"), url: null, sha256: "f2647ef2c6473ca07d113e7ef57a904872b255f1ea6cf8446289c46e1bbf2c48" },
  userTools: { name: local("user-tools.json"), url: null, sha256: "a900d8315ebd7297f200599d1549585aeb2a15a06ac48e3b7ee506cd41badd95" },
  userToolTypes: { name: local("user-tools-types.json"), url: null, sha256: "93614f883ef7ac4299f8c499e6bf3d348b249fde674e2c0b5600ff05f24d9149" },
  discoverableTools: { name: local("discoverable-tools.json"), url: null, sha256: "8ba552830a3fecdf3d0080e4675db2f33b81e05d83277beeae8dc4e930e7315e" },
  policy: { name: local("policy-bm25.md"), url: null, sha256: "430e719f33d876604547a0fb0a9f586fdfc4ae43d206699d62abb30e711b868a" },
  // Verbatim: the bm25 variant's template and its components, which the pull composes into policy-bm25.md.
  policyTemplate: {
    name: local("prompts/classic_rag_bm25_no_grep.md"),
    url: rawUrl(`${upstreamDataPath}/prompts/classic_rag_bm25_no_grep.md`),
    sha256: "84ac1a68e0ca59f4cb870faf124202887e7e4f2e92dbd4d62c78ad2bcbb16d3b"
  },
  policyHeader: {
    name: local("prompts/components/policy_header.md"),
    url: rawUrl(`${upstreamDataPath}/prompts/components/policy_header.md`),
    sha256: "d73a0578670becb80b7c1a57cdbe68a2ea506a884cdf41e2e310dd3c13e63a85"
  },
  additionalInstructions: {
    name: local("prompts/components/additional_instructions.md"),
    url: rawUrl(`${upstreamDataPath}/prompts/components/additional_instructions.md`),
    sha256: "03f6af1b56aa2fa6543ee4883ea9979ac5f5e158b20dd32d91d9736de87bab6a"
  }
} as const satisfies Record<string, PinnedFile>

/** A document or task file: its sha256 comes from the pinned SHA256SUMS. */
export const sumsFile = (relative: string, sha256: string): PinnedFile => ({
  name: local(relative),
  url: rawUrl(`${upstreamDataPath}/${relative}`),
  sha256
})

/** The oracle files (outputs of upstream's code, see oracle/README.md; no upstream blob). */
export const oracleFiles = {
  gold: { name: local("oracle/gold.jsonl"), url: null, sha256: "e4ed5ae2117cdabb64c6a89a65a0e68b5cd3aea75db65bf803b9c5fff846c9bf" },
  fuzz: { name: local("oracle/fuzz-dev.jsonl"), url: null, sha256: "5970f4319345651a105113035c41f0d95c4d00bc36a3dbd0b7386d8bccea1d83" },
  kbSearch: { name: local("oracle/kb-search-dev.jsonl"), url: null, sha256: "5e796cec40f663aefd8150d006291d310fc54272482f6c8a837f1e1987247608" },
  initialDb: { name: local("oracle/initial-db.json"), url: null, sha256: "9144770b06106086b146da4bf2066473a05e85d8a92f9e6de9c85d40d4c28ea2" }
} as const satisfies Record<string, PinnedFile>

/**
 * Every file the provider reads, for `assay data pull`: the pinned files, the 698 documents and 97
 * tasks (upstream URL and sha256 each), and the oracle corpora.
 */
export const allPinnedFiles: ReadonlyArray<PinnedFile> = [
  ...Object.values(pinnedFiles),
  ...documentAndTaskSums.map(([path, sha256]) => sumsFile(path, sha256)),
  ...Object.values(oracleFiles)
]

export { dataRoot }

export const bankingDir = (dataDir?: string): string => join(dataRoot(dataDir), "tau2", "banking_knowledge")

/** Banking's files (named under the data root) in a data folder, the data root unless given. */
export const filesIn = (dataDir?: string): FileReader => filesAt("tau2-banking", dataDir)

/** One pinned file's text, its hash checked. */
export const readPinned = (file: PinnedFile, dataDir?: string): Effect.Effect<string, PinnedData.DataError> => filesIn(dataDir).text(file)

/** A banking file upstream's loader would refuse (the same error whichever folder it was read from). */
export const invalid: (file: PinnedFile | string, detail: string) => PinnedData.DataError = filesIn().invalid

/** Python-faithful parse (floats kept apart from ints, key order kept). */
export const parsePy = (file: PinnedFile, text: string): Effect.Effect<Py, PinnedData.DataError> =>
  Either.mapLeft(jsonLoads(text), (e) => invalid(file, e))

/** The 23 tables of upstream's `TransactionalDB`, in field order. */
export const tableNames = [
  "users",
  "accounts",
  "debit_cards",
  "referrals",
  "credit_card_applications",
  "user_discoverable_tools",
  "user_discoverable_tool_calls",
  "verification_history",
  "credit_card_transaction_history",
  "cash_back_disputes",
  "bank_account_transaction_history",
  "credit_card_accounts",
  "agent_discoverable_tools",
  "task_config",
  "human_transfer_requests",
  "transaction_disputes",
  "credit_card_orders",
  "debit_card_orders",
  "credit_card_closure_reasons",
  "credit_card_account_flags",
  "credit_limit_increase_requests",
  "payment_history",
  "debit_card_disputes"
] as const
export type TableName = (typeof tableNames)[number]

/** Each table's `notes` (tables missing from db.json have ""). */
export type Notes = Readonly<Record<TableName, string>>

/** db.json text to the initial World and the tables' notes. */
export const worldFromDb = (db: Py): Either.Either<{ readonly world: World.World; readonly notes: Notes }, string> => {
  if (!isDict(db)) return Either.left("the DB is not an object")
  let world = World.make({})
  const notes: Record<string, string> = {}
  for (const name of tableNames) {
    notes[name] = ""
    const table = db[name]
    if (table === undefined) continue
    if (!isDict(table)) return Either.left(`${name} is not an object`)
    const data = table["data"] ?? {}
    if (!isDict(data)) return Either.left(`${name}.data is not an object`)
    const n = table["notes"] ?? ""
    if (typeof n !== "string") return Either.left(`${name}.notes is not a string`)
    notes[name] = n
    for (const [id, record] of orderedEntries(data)) {
      if (!isDict(record)) return Either.left(`${name}.data.${id} is not an object`)
      world = World.set(world, name, id, record)
    }
  }
  for (const key of Object.keys(db)) {
    if (!(tableNames as ReadonlyArray<string>).includes(key)) return Either.left(`unknown table ${key}`)
  }
  return Either.right({ world, notes: notes as Notes })
}

// Key order inside records survives because no record key is integer-like; table keys that are
// ("123") are kept in order by World's insertion rank.

export interface KbDocument {
  readonly id: string
  readonly title: string
  readonly content: string
}

export type { ToolTypes }

export const DiscoverableTool = Schema.Struct({
  owner: Schema.Literal("assistant", "user"),
  name: Schema.String,
  type: Schema.Literal("read", "write", "generic", "think"),
  mutates_state: Schema.Boolean,
  tool_info: Schema.Struct({
    name: Schema.String,
    description: Schema.String,
    parameters: Schema.Record({
      key: Schema.String,
      value: Schema.Struct({ type: Schema.String, description: Schema.String, required: Schema.Boolean })
    }),
    success_message: Schema.String
  })
})
export type DiscoverableTool = typeof DiscoverableTool.Type

export interface BankingData {
  /** db.json as loaded: every Attempt forks it (after its task's initial data). */
  readonly initialWorld: World.World
  readonly notes: Notes
  /** The knowledge base in upstream's corpus order (documents-order.json). */
  readonly documents: ReadonlyArray<KbDocument>
  /** tasks/task_*.json sorted by file name, parsed (tasks.ts decodes them). */
  readonly tasksJson: ReadonlyArray<Py>
  readonly policy: string
  /** The 15 agent tools, upstream order. */
  readonly toolSpecs: ReadonlyArray<Tool.ToolSpec>
  readonly toolTypes: ToolTypes
  /** The 6 user tools (a task offers the subset its `user_tools` names). */
  readonly userToolSpecs: ReadonlyArray<Tool.ToolSpec>
  readonly userToolTypes: ToolTypes
  readonly discoverableTools: ReadonlyArray<DiscoverableTool>
}

const decodeFile = <A, I>(file: PinnedFile, schema: Schema.Schema<A, I>, text: string): Effect.Effect<A, PinnedData.DataError> =>
  Effect.gen(function* () {
    const value = yield* Effect.try({ try: () => JSON.parse(text) as unknown, catch: (e) => invalid(file, String(e)) })
    return yield* Effect.mapError(Schema.decodeUnknown(schema)(value), (e) => invalid(file, ParseResult.TreeFormatter.formatErrorSync(e)))
  })


/** `SHA256SUMS` lines: `<hex>  <relative path>`. */
const parseSums = (text: string): ReadonlyMap<string, string> => {
  const out = new Map<string, string>()
  for (const line of text.split("\n")) {
    const m = /^([0-9a-f]{64}) {2}(.+)$/.exec(line)
    if (m) out.set(m[2]!, m[1]!)
  }
  return out
}

/** Every banking file in a data folder (the data root unless given), hash-checked and decoded. */
export const loadBankingData = (dataDir?: string): Effect.Effect<BankingData, PinnedData.DataError> => loadBankingFrom(filesIn(dataDir))

/** Every banking file through `read`, hash-checked and decoded. */
export const loadBankingFrom = (read: FileReader): Effect.Effect<BankingData, PinnedData.DataError> =>
  Effect.gen(function* () {
    const p = pinnedFiles
    const [dbText, sumsText, orderText, toolsText, typesText, userToolsText, userTypesText, discText, policy] = yield* Effect.all(
      [p.db, p.sums, p.documentsOrder, p.tools, p.toolTypes, p.userTools, p.userToolTypes, p.discoverableTools, p.policy].map((f) =>
        read.text(f)
      ),
      { concurrency: "unbounded" }
    )
    const sums = parseSums(sumsText!)
    const order = yield* decodeFile(p.documentsOrder, Schema.Array(Schema.String), orderText!)
    const Doc = Schema.Struct({ id: Schema.String, title: Schema.String, content: Schema.String })
    const documents = yield* Effect.forEach(
      order,
      (id) =>
        Effect.gen(function* () {
          const rel = `documents/${id}.json`
          const sha = sums.get(rel)
          if (sha === undefined) return yield* invalid(p.sums, `no sha256 for ${rel}`)
          const file = sumsFile(rel, sha)
          const doc = yield* decodeFile(file, Doc, yield* read.text(file))
          if (doc.id !== id) return yield* invalid(file, `id ${doc.id} differs from the file name`)
          return doc
        }),
      { concurrency: 32 }
    )
    const taskFiles = [...sums.keys()].filter((k) => /^tasks\/task_[^/]*\.json$/.test(k)).sort()
    const tasksJson = yield* Effect.forEach(
      taskFiles,
      (rel) =>
        Effect.gen(function* () {
          const file = sumsFile(rel, sums.get(rel)!)
          return yield* parsePy(file, yield* read.text(file))
        }),
      { concurrency: 32 }
    )
    const db = yield* parsePy(p.db, dbText!)
    const { world, notes } = yield* Either.mapLeft(worldFromDb(db), (d) => invalid(p.db, d))
    return {
      initialWorld: world,
      notes,
      documents,
      tasksJson,
      policy: policy!,
      toolSpecs: toolSpecsOf(yield* decodeFile(p.tools, OpenAiTools, toolsText!)),
      toolTypes: yield* decodeFile(p.toolTypes, ToolTypes, typesText!),
      userToolSpecs: toolSpecsOf(yield* decodeFile(p.userTools, OpenAiTools, userToolsText!)),
      userToolTypes: yield* decodeFile(p.userToolTypes, ToolTypes, userTypesText!),
      discoverableTools: yield* decodeFile(p.discoverableTools, Schema.Array(DiscoverableTool), discText!)
    }
  })

/**
 * A task's `initial_state.initialization_data.agent_data` applied as upstream does: the DB's
 * `model_dump()` updated with addict `Dict.update` (nested dicts merge key by key, existing keys
 * keep their place, new keys go last; lists and scalars are replaced), then re-validated.
 */
export const applyAgentData = (world: World.World, agentData: Py): Either.Either<World.World, string> => {
  if (!isDict(agentData)) return Either.left("agent_data is not an object")
  let w = world
  for (const [table, patch] of Object.entries(agentData)) {
    if (!(tableNames as ReadonlyArray<string>).includes(table)) return Either.left(`agent_data names unknown table ${table}`)
    if (!isDict(patch)) return Either.left(`agent_data.${table} is not an object`)
    for (const [field, value] of Object.entries(patch)) {
      // notes are never patched by a task; data is.
      if (field !== "data") return Either.left(`agent_data.${table}.${field} is not supported`)
      if (!isDict(value)) return Either.left(`agent_data.${table}.data is not an object`)
      for (const [id, record] of orderedEntries(value)) {
        const old = World.get(w, table, id)
        const merged = old !== undefined && isDict(old) && isDict(record) ? deepMerge(old, record) : record
        if (!isDict(merged)) return Either.left(`agent_data.${table}.data.${id} is not an object`)
        w = World.set(w, table, id, merged)
      }
    }
  }
  return Either.right(w)
}

/** addict's `update`: dict into dict recursively, anything else replaced. */
export const deepMerge = (base: { readonly [k: string]: Canonical.Json }, patch: { readonly [k: string]: Canonical.Json }): { readonly [k: string]: Canonical.Json } => {
  const out: Record<string, Canonical.Json> = { ...base }
  for (const [k, v] of Object.entries(patch)) {
    const old = out[k]
    out[k] = old !== undefined && isDict(old) && isDict(v) ? deepMerge(old, v) : v
  }
  return out
}
