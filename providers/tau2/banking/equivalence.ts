/**
 * Equivalence with upstream: every line of a banking oracle corpus is replayed through the
 * TypeScript tools (gold and fuzz lines: each call's content and error flag, then the final DB's
 * two hashes) or the BM25 index (kb-search lines: the top-10 ids and exact scores). The corpus
 * format is recognised line by line by its fields: `actions` (gold/fuzz) or `query` + `results`.
 */
import { join } from "node:path"
import { Effect, Either } from "effect"
import { type Canonical, type PinnedData, World } from "../../../src/index.ts"
import {
  CorpusError,
  corpusErrorOf,
  runCorpusLines,
  runGivenOrOwn,
  type Disagreement,
  type EquivalenceReport as Report
} from "../common/equivalence.ts"
import { buildIndex, search, type Bm25Index } from "./bm25.ts"
import { applyAgentData, bankingDir, loadBankingData, type BankingData } from "./data.ts"
import { finalDbSha256, upstreamDbHash } from "./hash.ts"
import { floatTag, isDict, jsonLoads, type Py } from "./pyvalue.ts"
import { step, withReadLogAllowlist, type Environment, type Requestor } from "./tools.ts"

export type { Disagreement }

export type EquivalenceReport = Report<"tau2-banking">

export { CorpusError }

const corpusError = corpusErrorOf("a banking oracle line")

/** The provider's own corpora: gold (97), fuzz-dev (300), kb-search-dev (1,000). */
export const defaultCorpora = (dataDir?: string): ReadonlyArray<string> =>
  ["gold.jsonl", "fuzz-dev.jsonl", "kb-search-dev.jsonl"].map((f) => join(bankingDir(dataDir), "oracle", f))

export interface Replayer {
  readonly data: BankingData
  readonly env: Environment
  /** Task id -> world after its initial agent data (db.json when it has none). */
  readonly initialOf: (taskId: string | null) => World.World | undefined
}

/** The environment (BM25 index built once) and each task's initial world, memoised. */
export const makeReplayer = (data: BankingData, index: Bm25Index = buildIndex(data.documents)): Replayer => {
  const env: Environment = { index, discoverable: data.discoverableTools }
  const cache = new Map<string, World.World>()
  const byId = new Map<string, Py>()
  for (const t of data.tasksJson) if (isDict(t) && typeof t["id"] === "string") byId.set(t["id"], t)
  return {
    data,
    env,
    initialOf: (taskId) => {
      if (taskId === null) return data.initialWorld
      const hit = cache.get(taskId)
      if (hit) return hit
      const task = byId.get(taskId)
      if (task === undefined || !isDict(task)) return undefined
      const agentData = initialAgentData(task)
      const w = agentData === undefined ? data.initialWorld : Either.getOrUndefined(applyAgentData(data.initialWorld, agentData))
      if (w !== undefined) cache.set(taskId, w)
      return w
    }
  }
}

/** `task.initial_state.initialization_data.agent_data`, if any. */
export const initialAgentData = (task: { readonly [k: string]: Canonical.Json }): Py | undefined => {
  const st = task["initial_state"]
  if (!isDict(st)) return undefined
  const init = st["initialization_data"]
  if (!isDict(init)) return undefined
  const ad = init["agent_data"]
  return ad === null || ad === undefined ? undefined : ad
}

const str = (v: Py | undefined): string | undefined => (typeof v === "string" ? v : undefined)

/** Check one parsed line; a string says why it is malformed. */
export const checkLine = (r: Replayer, line: Py, lineNumber: number): Either.Either<Disagreement | undefined, string> => {
  if (!isDict(line)) return Either.left("not an object")
  if (Array.isArray(line["results"]) && typeof line["query"] === "string") {
    const taskId = `kb-search-${String(line["seed"] ?? lineNumber)}`
    const got = search(r.env.index, line["query"])
    const expected = (line["results"] as ReadonlyArray<Py>).map((x) => {
      const pair = x as ReadonlyArray<Py>
      return [pair[0], floatTag(pair[1]) ?? pair[1]] as const
    })
    const same = got.length === expected.length && got.every(([id, sc], i) => id === expected[i]![0] && Object.is(sc, expected[i]![1]))
    if (same) return Either.right(undefined)
    return Either.right({ line: lineNumber, taskId, field: "results", expected: JSON.stringify(expected), actual: JSON.stringify(got) })
  }
  const actions = line["actions"]
  const taskId = str(line["task_id"])
  const finalSha = str(line["final_db_sha256"])
  const upstream = str(line["upstream_db_hash"])
  if (!Array.isArray(actions) || taskId === undefined || finalSha === undefined || upstream === undefined) {
    return Either.left("needs task_id, actions, final_db_sha256, upstream_db_hash (gold/fuzz) or query, results (kb-search)")
  }
  const initTask = "init_task_id" in line ? (line["init_task_id"] ?? null) : taskId.startsWith("fuzz-") ? null : taskId
  if (initTask !== null && typeof initTask !== "string") return Either.left("init_task_id is not a string")
  const initial = r.initialOf(initTask)
  if (initial === undefined) return Either.left(`unknown task ${String(initTask)}`)
  const allow = line["read_log_allowlist"]
  let world = withReadLogAllowlist(initial, Array.isArray(allow) ? allow.filter((x): x is string => typeof x === "string") : [])
  const differ = (field: string, expected: string, actual: string): Disagreement => ({ line: lineNumber, taskId, field, expected, actual })
  const initialSha = str(line["initial_db_sha256"])
  if (initialSha !== undefined) {
    const got = finalDbSha256(initial, r.data.notes)
    if (got !== initialSha) return Either.right(differ("initial_db_sha256", initialSha, got))
  }
  for (let i = 0; i < actions.length; i++) {
    const a = actions[i]
    if (!isDict(a) || typeof a["name"] !== "string" || !isDict(a["arguments"]) || typeof a["content"] !== "string") {
      return Either.left(`actions[${i}] needs name, arguments, content`)
    }
    const requestor: Requestor = a["requestor"] === "user" ? "user" : "assistant"
    const [next, outcome] = step(world, r.env, requestor, a["name"], a["arguments"])
    world = next
    if (outcome.output !== a["content"]) return Either.right(differ(`actions[${i}].content`, a["content"], outcome.output))
    if (outcome.error !== (a["error"] === true)) return Either.right(differ(`actions[${i}].error`, String(a["error"]), String(outcome.error)))
  }
  const sha = finalDbSha256(world, r.data.notes)
  if (sha !== finalSha) return Either.right(differ("final_db_sha256", finalSha, sha))
  const up = upstreamDbHash(world, r.data.notes)
  if (up !== upstream) return Either.right(differ("upstream_db_hash", upstream, up))
  // The user tools share the agent's DB: upstream's user-side hash is the same hash.
  const userHash = str(line["upstream_user_db_hash"])
  if (userHash !== undefined && userHash !== up) return Either.right(differ("upstream_user_db_hash", userHash, up))
  return Either.right(undefined)
}

/** Run one corpus file. */
export const runCorpus = (r: Replayer, corpusPath: string): Effect.Effect<EquivalenceReport, CorpusError> =>
  runCorpusLines("tau2-banking", corpusPath, (row, n) => Either.flatMap(jsonLoads(row), (line) => checkLine(r, line, n)), corpusError)

/**
 * `assay equivalence tau2-banking [--corpus FILE]`: the given corpus, or (null/undefined) the
 * three default ones as one report (1,397 lines); line numbers count across files in order.
 */
export const runEquivalence = (
  corpusPath?: string | ReadonlyArray<string> | null,
  dataDir?: string
): Effect.Effect<EquivalenceReport, CorpusError | PinnedData.DataError> =>
  Effect.gen(function* () {
    const data = yield* loadBankingData(dataDir)
    const r = makeReplayer(data)
    return yield* runGivenOrOwn("tau2-banking", corpusPath, defaultCorpora(dataDir), (path) => runCorpus(r, path))
  })
