/**
 * The four BFCL v4 multi-turn categories (800 tasks), read from the pinned upstream files under
 * `bfcl/v4/` of the data root as upstream's loader builds a task: the question entry, its possible
 * answer, and the function docs of its `involved_classes` in that order
 * (`populate_test_cases_with_predefined_functions`), a `miss_func` task's `missed_function` docs
 * taken out of that list and kept for the turn that adds them back.
 */
import { Effect } from "effect"
import { type Benchmark, DataRoot, PinnedData, type Provider } from "../../../src/index.ts"
import { LONG_CONTEXT_FILE, UPSTREAM_COMMIT, UPSTREAM_REPOSITORY } from "../data.ts"
import { isDict, parsePyJson, type PyDict as DocDict } from "../pyjson.ts"
import type { MultiTurnEntry } from "./checker.ts"
import { parsePythonJson } from "./canon.ts"
import { type Py, PyDict } from "./py.ts"

export const CATEGORIES = ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"] as const
export type Category = (typeof CATEGORIES)[number]

/** Upstream's `MULTI_TURN_FUNC_DOC_FILE_MAPPING`, for the classes the multi-turn tasks involve. */
export const FUNC_DOC_FILES: Readonly<Record<string, string>> = {
  GorillaFileSystem: "gorilla_file_system.json",
  MathAPI: "math_api.json",
  MessageAPI: "message_api.json",
  TwitterAPI: "posting_api.json",
  TicketAPI: "ticket_api.json",
  TradingBot: "trading_bot.json",
  TravelAPI: "travel_booking.json",
  VehicleControlAPI: "vehicle_control.json"
}

export interface Message {
  readonly role: string
  readonly content: string
}

export interface MultiTurnTask extends MultiTurnEntry {
  readonly category: Category
  /** The user turns as the question file has them (a held-out turn of `miss_func` is empty). */
  readonly question: ReadonlyArray<ReadonlyArray<Message>>
  /** The docs offered from the first turn: every involved class's, less the held-out ones. */
  readonly functions: ReadonlyArray<DocDict>
  /** `miss_func`: turn index → the docs that turn adds (upstream's loader order). */
  readonly heldOut: ReadonlyMap<number, ReadonlyArray<DocDict>>
}

const UPSTREAM_DATA = "berkeley-function-call-leaderboard/bfcl_eval/data"

/** The folder under the data root (shared with single-turn `bfcl`). */
export const FOLDER = "bfcl"

const pin = (file: string, sha256: string): Provider.PinnedFile => ({
  path: `v4/${file}`,
  url: `https://raw.githubusercontent.com/${UPSTREAM_REPOSITORY}/${UPSTREAM_COMMIT}/${UPSTREAM_DATA}/${file}`,
  sha256
})

/** The multi-turn oracle corpora, made by running upstream's code: only a pull `--from DIR` brings them. */
const ORACLE: ReadonlyArray<Provider.PinnedFile> = [
  ["exec-dev.jsonl", "6d09a3053114cded68fd21bfb7893923d21aef7dd6e7f1677510c29202503857"],
  ["fuzz-dev.jsonl", "2e9549c4fba6d33dde555cd8e90b9f23de9922c01a6d80f71cc9c6c6d39d2eec"],
  ["verdicts-dev.jsonl", "53e8b525e2636ee18ca314e48881af4f0e98e3afe84b3dbebb7a396d441c7c1d"],
  ["README.md", "a6523c9e8096c22348d1d305efc1ac1a2fb928d547628b37f9d22efe1e9130ae"]
].map(([file, sha256]) => ({ path: `oracle/multi-turn/${file}`, url: "", sha256: sha256!, oracle: true }))

/**
 * The multi-turn files, as `../shared/data/bfcl/SOURCE.md` ("Multi-turn files") lists them, the
 * oracle corpora `assay equivalence bfcl-multi-turn` reads, and upstream's long_context.py (a pull
 * that cannot fetch it goes on without: only the long-context tasks need it).
 */
export const PINNED: ReadonlyArray<Provider.PinnedFile> = [
  ...ORACLE,
  { ...LONG_CONTEXT_FILE, optional: "the 200 multi_turn_long_context tasks (and the equivalence's long-context lines)" },
  pin("BFCL_v4_multi_turn_base.json", "1a21a995d06fd6f20ba55de7bced30ef953ec35e998f502ec2ecf4d66ef1c43a"),
  pin("possible_answer/BFCL_v4_multi_turn_base.json", "1fee67823b317571649177dd89d63969feaae4e810cc7448ee55ba797fb7c8fc"),
  pin("BFCL_v4_multi_turn_miss_func.json", "87d28ce10e37d864b72de85d5732eef2a867b241d6c1c99b4ae682c9e3ea921c"),
  pin("possible_answer/BFCL_v4_multi_turn_miss_func.json", "69e679b806d1c871b05393a4b95583bb973248e5b8d96c2d7f4ca05e29fc32e6"),
  pin("BFCL_v4_multi_turn_miss_param.json", "f0c66dda3795f5f53e3e1c0cc8ba0246b6761c8f58bdba8317203bf451ab8838"),
  pin("possible_answer/BFCL_v4_multi_turn_miss_param.json", "59c442901779e2c31c33abcd566d032e03736e5ad8069de2fe05489873046ecf"),
  pin("BFCL_v4_multi_turn_long_context.json", "78c3268c5cc8e97c0f4ec6c811b3b9a2bba14323b1830b7a874b06d822749324"),
  pin("possible_answer/BFCL_v4_multi_turn_long_context.json", "e82aa0e839c39d23c64a05834f7ae024d7c9738ec21738ecee78dc876e3d0d18"),
  pin("multi_turn_func_doc/gorilla_file_system.json", "c4c1b741c71e2a17c97a5dc9c4a91d89978c4eaece56494d14272d5df6c650e9"),
  pin("multi_turn_func_doc/math_api.json", "83fa31708c89442bdcf12ac4dfbe3be8663ec9183a1b1524a9fda98164bc7e0b"),
  pin("multi_turn_func_doc/message_api.json", "4d58ea933a5d2b280d7a52366617fb47fecd333d7b0e08e724db6fa12fb5f847"),
  pin("multi_turn_func_doc/posting_api.json", "87f9fc404a06e4107d7c366f1399c596440e84c16cb119faf374b2f532d86e8b"),
  pin("multi_turn_func_doc/ticket_api.json", "31324e0380782664fe82ba05bd23517808ad55692b45a5fe7c3d4d395fe4f0f8"),
  pin("multi_turn_func_doc/trading_bot.json", "1a7933fd8f0cb8fbec38aeae05cb8c24132747cad4904fe1c13ac3d01fc22c2d"),
  pin("multi_turn_func_doc/travel_booking.json", "f17b950c13adddf41d0848077df58788252e4c2e7cad5cfa71c8c4bf04f57b26"),
  pin("multi_turn_func_doc/vehicle_control.json", "0c8a66292844874ef7b168f343bc394d8615d2d9e1f4387999a9ee23011eac78")
]

export const TASK_COUNTS: Readonly<Record<Category, number>> = {
  multi_turn_base: 200,
  multi_turn_miss_func: 200,
  multi_turn_miss_param: 200,
  multi_turn_long_context: 200
}

const lines = (text: string): ReadonlyArray<string> => text.split("\n").filter((l) => l.trim() !== "")

const field = (d: PyDict, k: string): Py => d.get(k) ?? null
const strings = (v: Py): ReadonlyArray<string> | undefined =>
  Array.isArray(v) && v.every((x): x is string => typeof x === "string") ? v : undefined

const messagesOf = (v: Py): ReadonlyArray<ReadonlyArray<Message>> | undefined => {
  if (!Array.isArray(v)) return undefined
  const turns: Array<ReadonlyArray<Message>> = []
  for (const turn of v) {
    if (!Array.isArray(turn)) return undefined
    const messages: Array<Message> = []
    for (const m of turn) {
      if (!(m instanceof PyDict)) return undefined
      const role = m.get("role")
      const content = m.get("content")
      if (typeof role !== "string" || typeof content !== "string") return undefined
      messages.push({ role, content })
    }
    turns.push(messages)
  }
  return turns
}

/** One func-doc file: a doc per line, as `pyjson` values (the tool conversion and the prompt read those). */
const readDocs = (read: Benchmark.Reader, file: string) =>
  Effect.flatMap(read.text(`v4/multi_turn_func_doc/${file}`), (text) => {
    const docs: Array<DocDict> = []
    for (const [i, line] of lines(text).entries()) {
      const parsed = parsePyJson(line)
      if (!parsed.ok || !isDict(parsed.value)) return Effect.fail(read.invalid(`v4/multi_turn_func_doc/${file}`, `line ${i + 1} is not a function doc`))
      docs.push(parsed.value)
    }
    return Effect.succeed(docs as ReadonlyArray<DocDict>)
  })

const parseLine = (read: Benchmark.Reader, path: string, line: string, i: number): Effect.Effect<PyDict, PinnedData.DataError> => {
  try {
    const v = parsePythonJson(line)
    return v instanceof PyDict ? Effect.succeed(v) : Effect.fail(read.invalid(path, `line ${i + 1} is not an object`))
  } catch (e) {
    return Effect.fail(read.invalid(path, `line ${i + 1}: ${e instanceof Error ? e.message : String(e)}`))
  }
}

/** One category's tasks, built as upstream's loader builds them. */
export const readCategory = (read: Benchmark.Reader, category: Category, docs: ReadonlyMap<string, ReadonlyArray<DocDict>>) =>
  Effect.gen(function*() {
    const questionPath = `v4/BFCL_v4_${category}.json`
    const answerPath = `v4/possible_answer/BFCL_v4_${category}.json`
    const questions = lines(yield* read.text(questionPath))
    const answers = lines(yield* read.text(answerPath))
    if (answers.length !== questions.length) return yield* read.invalid(answerPath, `${answers.length} answers for ${questions.length} questions`)
    const tasks: Array<MultiTurnTask> = []
    for (let i = 0; i < questions.length; i++) {
      const q = yield* parseLine(read, questionPath, questions[i]!, i)
      const a = yield* parseLine(read, answerPath, answers[i]!, i)
      const id = field(q, "id")
      const question = messagesOf(field(q, "question"))
      const involvedClasses = strings(field(q, "involved_classes"))
      const initialConfig = field(q, "initial_config")
      if (typeof id !== "string" || question === undefined || involvedClasses === undefined || !(initialConfig instanceof PyDict))
        return yield* read.invalid(questionPath, `line ${i + 1} lacks id, question, involved_classes or initial_config`)
      const truth = field(a, "ground_truth")
      const groundTruth = Array.isArray(truth) ? truth.map(strings) : undefined
      // Upstream pairs questions and answers by position; the ids agree at this commit.
      if (field(a, "id") !== id || groundTruth === undefined || groundTruth.some((t) => t === undefined))
        return yield* read.invalid(answerPath, `line ${i + 1} does not answer ${id}`)
      const functions: Array<DocDict> = []
      for (const c of involvedClasses) {
        const classDocs = docs.get(c)
        if (classDocs === undefined) return yield* read.invalid(questionPath, `${id} involves ${c}, which has no function docs`)
        functions.push(...classDocs)
      }
      // The loader takes each held-out doc out of the list (the first of that name), turn by turn in key order.
      const heldOut = new Map<number, ReadonlyArray<DocDict>>()
      const missed = field(q, "missed_function")
      if (missed instanceof PyDict) {
        for (const [turn, names] of missed.entries()) {
          const taken: Array<DocDict> = []
          for (const name of strings(names) ?? []) {
            const at = functions.findIndex((f) => f.get("name") === name)
            if (at >= 0) taken.push(...functions.splice(at, 1))
          }
          heldOut.set(Number(turn), taken)
        }
      }
      tasks.push({
        id,
        category,
        question,
        involvedClasses,
        initialConfig,
        groundTruth: groundTruth as ReadonlyArray<ReadonlyArray<string>>,
        functions,
        heldOut
      })
    }
    return tasks as ReadonlyArray<MultiTurnTask>
  })

/** All four categories, in `CATEGORIES` order. */
export const readAll = (read: Benchmark.Reader) =>
  Effect.gen(function*() {
    const docs = new Map<string, ReadonlyArray<DocDict>>()
    for (const [c, file] of Object.entries(FUNC_DOC_FILES)) docs.set(c, yield* readDocs(read, file))
    const all = yield* Effect.forEach(CATEGORIES, (c) => readCategory(read, c, docs))
    return all.flat()
  })


const SOURCE: PinnedData.Source = { benchmark: "bfcl-multi-turn", folder: FOLDER }
const pinnedByPath = new Map(PINNED.map((p) => [p.path, p]))

/** The reader of these pinned files in a data folder (default: the data root), as the kit gives the benchmark its own. */
export const readerAt = (dataDir?: string): Benchmark.Reader => {
  const service = PinnedData.make(dataDir ?? DataRoot.dataRoot())
  const pinned = (path: string) => {
    const file = pinnedByPath.get(path)
    return file === undefined ? Effect.fail(PinnedData.invalid(SOURCE, path, "it is not among bfcl-multi-turn's pinned files")) : Effect.succeed(file)
  }
  return {
    text: (path) => Effect.flatMap(pinned(path), (file) => service.text(SOURCE, file)),
    bytes: (path) => Effect.flatMap(pinned(path), (file) => service.bytes(SOURCE, file)),
    invalid: (path, detail) => PinnedData.invalid(SOURCE, path, detail)
  }
}

/** Every task, from a data folder (default: the data root): for tests, the bench and importers. */
export const loadTasks = (dataDir?: string): Effect.Effect<ReadonlyArray<MultiTurnTask>, PinnedData.DataError> => readAll(readerAt(dataDir))
