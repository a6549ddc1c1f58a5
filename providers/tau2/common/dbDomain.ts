/**
 * What the DB domains (retail, airline) share beyond the common provider: the same six pinned
 * files (db.json, tasks.json, policy.md, split_tasks.json, tools.json, tools-types.json) read and
 * decoded the same way, and the same wiring: one initial world and one tool set for every task,
 * the user without tools of its own, graded by the DB check. Each domain gives its world parser,
 * task decoder, tools and DB check.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { type Benchmark, type Canonical, type Capabilities, ContentId, type EnvironmentDef, type PinnedData, type Provider, type Tool, World } from "../../../src/index.ts"
import { userSystemPrompt } from "./conversation.ts"
import type { Rendering } from "./fromSource.ts"
import { bufferOf, type FileReader, type PinnedFile, upstreamUrl } from "./pinned.ts"
import { type PreparedDomain, preparedWorld } from "./prepared.ts"
import type { Prompts } from "./prompts.ts"
import { makeTau2Provider, type Tau2Provider } from "./provider.ts"
import { OpenAiTools, toolSpecsOf, ToolTypes } from "./toolFiles.ts"
import { type Split, Splits, type Task, taskContentId, tasksOfSplit } from "./task.ts"

export { type Split, Splits, tasksOfSplit }

/** The six files a DB domain reads. */
export interface DbDomainFiles {
  readonly db: PinnedFile
  readonly tasks: PinnedFile
  readonly policy: PinnedFile
  readonly splits: PinnedFile
  readonly tools: PinnedFile
  readonly toolTypes: PinnedFile
}

/** The sha256 of each of a DB domain's six files. */
export type DbDomainSums = { readonly [K in keyof DbDomainFiles]: string }

/**
 * A DB domain's six files, named `${prefix}FILE` (the domain's folder as its readers name it):
 * upstream's four data files by URL from `data/tau2/domains/${domain}/`, and the tool files
 * rendered from upstream's code (tool.openai_schema, ToolType; no upstream blob).
 */
export const dbDomainFiles = (prefix: string, domain: string, sha256: DbDomainSums): DbDomainFiles => {
  const upstream = (file: string, sum: string): PinnedFile => ({ name: prefix + file, url: upstreamUrl(`data/tau2/domains/${domain}/${file}`), sha256: sum })
  return {
    db: upstream("db.json", sha256.db),
    tasks: upstream("tasks.json", sha256.tasks),
    policy: upstream("policy.md", sha256.policy),
    splits: upstream("split_tasks.json", sha256.splits),
    tools: { name: `${prefix}tools.json`, url: null, sha256: sha256.tools },
    toolTypes: { name: `${prefix}tools-types.json`, url: null, sha256: sha256.toolTypes }
  }
}

export interface DbDomainData {
  /** The DB as loaded: every Attempt forks it. */
  readonly initialWorld: World.World
  /** tasks.json, parsed but not decoded (the domain's tasks.ts decodes it). */
  readonly tasksJson: unknown
  readonly splits: Splits
  readonly policy: string
  /** tools.json in upstream order (what the agent is offered). */
  readonly toolSpecs: ReadonlyArray<Tool.ToolSpec>
  readonly toolTypes: ToolTypes
}

/**
 * Reads the six files (hash-checked by `files`, PinnedData's reader) and decodes them; the DB
 * becomes the initial world through the domain's own full parse, or its prepared form
 * (common/prepared.ts, which decodes only the records read). A file that is not what upstream's
 * loader accepts is an `invalid` DataError.
 */
export const loadDbDomainFiles = (
  files: DbDomainFiles,
  read: FileReader,
  world: PreparedDomain
): Effect.Effect<DbDomainData, PinnedData.DataError> =>
  Effect.gen(function*() {
    const invalid = read.invalid
    const parseJson = (file: PinnedFile, text: string): Effect.Effect<unknown, PinnedData.DataError> =>
      Effect.try({ try: () => JSON.parse(text) as unknown, catch: (e) => invalid(file, String(e)) })
    const decodeFile = <A, I>(file: PinnedFile, schema: Schema.Schema<A, I>, text: string): Effect.Effect<A, PinnedData.DataError> =>
      Effect.flatMap(
        parseJson(file, text),
        (value) => Effect.mapError(Schema.decodeUnknown(schema)(value), (e) => invalid(file, ParseResult.TreeFormatter.formatErrorSync(e)))
      )
    const [dbBytes, tasksText, policy, splitsText, toolsText, typesText] = yield* Effect.all(
      [read.bytes(files.db), read.text(files.tasks), read.text(files.policy), read.text(files.splits), read.text(files.tools), read.text(files.toolTypes)],
      { concurrency: "unbounded" }
    )
    // read.bytes() checked their sha256 against the pinned one.
    const { world: initialWorld } = yield* Either.mapLeft(preparedWorld(world, bufferOf(dbBytes), files.db.sha256), (detail) => invalid(files.db, detail))
    const tasksJson = yield* parseJson(files.tasks, tasksText)
    const splits = yield* decodeFile(files.splits, Splits, splitsText)
    const tools = yield* decodeFile(files.tools, OpenAiTools, toolsText)
    const toolTypes = yield* decodeFile(files.toolTypes, ToolTypes, typesText)
    return { initialWorld, tasksJson, splits, policy, toolSpecs: toolSpecsOf(tools), toolTypes }
  })

/** What a DB domain gives for its provider. */
export interface DbDomain {
  readonly benchmark: string
  readonly domain: string
  readonly description: string
  /** Reads the domain's files through the kit's reader (paths under the data root). */
  readonly loadData: (read: Benchmark.Reader) => Effect.Effect<DbDomainData, PinnedData.DataError>
  readonly decodeTasks: (json: unknown) => Effect.Effect<ReadonlyArray<Task>, PinnedData.DataError>
  readonly makeTools: (specs: ReadonlyArray<Tool.ToolSpec>, types: ToolTypes) => ReadonlyArray<Tool.Tool>
  /** The DB check: the final world equals the gold world. */
  readonly dbCheck: (initial: World.World, task: Task, finalWorld: World.World) => boolean
  /** The user scenario as upstream's `str(task.user_scenario)` renders it. */
  readonly renderUserScenario: (task: Task) => string
  /** Every file the provider reads. */
  readonly data: ReadonlyArray<Provider.PinnedFile>
  readonly renderings: ReadonlyArray<Rendering>
  readonly equivalence: (corpus: string | null) => Effect.Effect<Provider.EquivalenceResult, { readonly message: string }>
}

/** What a DB domain loads once per process. */
export interface DbDomainLoad {
  readonly data: DbDomainData
  readonly tasks: ReadonlyArray<Task>
  readonly tools: ReadonlyArray<Tool.Tool>
  /** The same for every task: one DB, one tool set. */
  readonly evidence: Canonical.Json
}

/** The user simulator's system prompt of a task (upstream `UserSimulator.system_prompt`, no user tools). */
export const userPromptWithoutTools = (prompts: Prompts, scenario: string): string => userSystemPrompt(prompts.userTemplate, prompts.guidelines, scenario)

/** A DB domain's provider, with the environments of each split and the splits of each task. */
export const makeDbDomainProvider = (domain: DbDomain): Tau2Provider<Task, DbDomainLoad> & {
  readonly environmentsOf: (split: Split) => Effect.Effect<ReadonlyArray<EnvironmentDef.EnvironmentDef>, Capabilities.CapabilityError>
  readonly splitsOf: (taskId: string) => Effect.Effect<ReadonlyArray<Split>, Capabilities.CapabilityError>
} => {
  const made = makeTau2Provider<Task, DbDomainLoad>({
    benchmark: domain.benchmark,
    domain: domain.domain,
    description: domain.description,
    load: (read) => Effect.gen(function*() {
      const data = yield* domain.loadData(read)
      const tasks = yield* domain.decodeTasks(data.tasksJson)
      return {
        data,
        tasks,
        tools: domain.makeTools(data.toolSpecs, data.toolTypes),
        evidence: { db: World.digest(data.initialWorld), tools: ContentId.ofUnsafe(data.toolSpecs as unknown as Canonical.Json) }
      }
    }),
    environmentTasks: (l) => tasksOfSplit(l.tasks, l.data.splits, "base"),
    upstreamTask: (task) => task,
    setup: (l) => Effect.succeed({ world: l.data.initialWorld, evidence: l.evidence, tools: l.tools }),
    userPrompt: (l, task) => userPromptWithoutTools(l.prompts, domain.renderUserScenario(task)),
    conversationTools: (l) => ({ agent: l.tools }),
    grading: (_, task, ctx) => Effect.succeed({ db: (final) => domain.dbCheck(ctx.initial, task, final) }),
    // As tasks.json carries them.
    goldActions: (task) =>
      (task.evaluation_criteria?.actions ?? []).map((a) => ({
        requestor: a.requestor,
        name: a.name,
        arguments: a.arguments as { readonly [key: string]: Canonical.Json }
      })),
    data: domain.data,
    renderings: domain.renderings,
    equivalence: domain.equivalence
  })
  return {
    ...made,
    environmentsOf: (split) => Effect.map(made.loaded, (l) => tasksOfSplit(l.tasks, l.data.splits, split).map(made.environment)),
    splitsOf: (taskId) => Effect.map(made.loaded, (l) => (["train", "test", "base"] as const).filter((s) => l.data.splits[s].includes(taskId)))
  }
}

/** A DB domain's tool step: one call on a world, the next world and the call's outcome. */
export type DbStep = (world: World.World, name: string, args: { readonly [key: string]: Canonical.Json }) => readonly [World.World, Tool.ToolOutcome]

/**
 * The DB check of a domain whose tools are `step` (upstream's evaluator_env.py): the gold world is
 * the gold actions replayed on a fresh fork of the initial world, a gold action that errors kept
 * as upstream keeps it (its writes, if any, applied); an action requested by the user fails
 * upstream (a DB domain has no user tools) and changes nothing. The gold digest is computed once
 * per (initial world, task content id).
 */
export const dbChecks = (step: DbStep) => {
  const goldWorld = (initial: World.World, task: Task): World.World =>
    World.replay(World.fork(initial), task.evaluation_criteria?.actions ?? [], (world, action) =>
      action.requestor === "user" ? world : step(world, action.name, action.arguments as { readonly [key: string]: Canonical.Json })[0])
  const goldDigests = new Map<string, string>()
  const goldDigest = (initial: World.World, task: Task): string => {
    const key = `${World.digest(initial)}|${taskContentId(task)}`
    let digest = goldDigests.get(key)
    if (digest === undefined) {
      digest = World.digest(goldWorld(initial, task))
      goldDigests.set(key, digest)
    }
    return digest
  }
  /** The final world equals the gold world; passed outright when a task has neither actions nor env assertions. */
  const dbCheck = (initial: World.World, task: Task, finalWorld: World.World): boolean => {
    const criteria = task.evaluation_criteria
    if (criteria === null) return true
    if (criteria.actions === null && criteria.env_assertions === null) return true
    return World.digest(finalWorld) === goldDigest(initial, task)
  }
  /** The same bound to one initial world. */
  const goldOf = (initial: World.World) => ({
    goldWorld: (task: Task): World.World => goldWorld(initial, task),
    goldDigest: (task: Task): string => goldDigest(initial, task),
    dbCheck: (finalWorld: World.World, task: Task): boolean => dbCheck(initial, task, finalWorld)
  })
  return { goldWorld, goldDigest, dbCheck, goldOf }
}
