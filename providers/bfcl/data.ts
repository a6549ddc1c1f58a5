/**
 * The eleven BFCL v4 single-turn Python categories (3,491 tasks), read from the pinned upstream
 * files under `bfcl/v4/` of the data root through the kit's reader (src/data/Pinned.ts), which
 * checks each against its sha256.
 *
 * The files are JSON Lines despite `.json`; they are parsed with `pyjson` so that `5` and `5.0`
 * stay an int and a float, as upstream's `json.load` keeps them.
 */
import { Effect } from "effect"
import { type Benchmark, DataRoot, PinnedData, type Provider } from "../../src/index.ts"
import { isDict, isList, parsePyJson, type PyDict, type PyList, type PyValue } from "./pyjson.ts"

export const UPSTREAM_REPOSITORY = "ShishirPatil/gorilla"
export const UPSTREAM_COMMIT = "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8"
const UPSTREAM_DATA = "berkeley-function-call-leaderboard/bfcl_eval/data"

export const CATEGORIES = [
  "simple_python",
  "multiple",
  "parallel",
  "parallel_multiple",
  "irrelevance",
  "live_simple",
  "live_multiple",
  "live_parallel",
  "live_parallel_multiple",
  "live_irrelevance",
  "live_relevance"
] as const
export type Category = (typeof CATEGORIES)[number]

/** Categories graded by the relevance rule alone: they have no possible_answer file. */
export const RELEVANCE_CATEGORIES: ReadonlySet<Category> = new Set(["irrelevance", "live_irrelevance", "live_relevance"])

export interface PinnedFile {
  /** Path under `bfcl/v4/` in the data folder. */
  readonly file: string
  readonly url: string
  readonly bytes: number
  readonly sha256: string
}

const pin = (file: string, bytes: number, sha256: string): PinnedFile => ({
  file,
  url: `https://raw.githubusercontent.com/${UPSTREAM_REPOSITORY}/${UPSTREAM_COMMIT}/${UPSTREAM_DATA}/${file}`,
  bytes,
  sha256
})

/** The upstream files, as `../shared/data/bfcl/SOURCE.md` lists them. */
export const PINNED_FILES: ReadonlyArray<PinnedFile> = [
  pin("BFCL_v4_simple_python.json", 283274, "82dd63ba502eb2520c6b5d1d9a5c4b590e03ff261565175561f6228a367d1991"),
  pin("possible_answer/BFCL_v4_simple_python.json", 63627, "90cd5bc653690ee8e459b5b3f3fc9458606f7f3fcbf795bb51b7dc581f8c86dc"),
  pin("BFCL_v4_multiple.json", 316583, "aef168155ebd74b7ac2401198b201343bc7d16d7a3d7e0d4e6d8ee82c6969b2a"),
  pin("possible_answer/BFCL_v4_multiple.json", 32254, "244e00ce9395df948bcafc7bee64e8f9c87ef70887587d83cae45b13699f3047"),
  pin("BFCL_v4_parallel.json", 171896, "19f51a82eff42e5d62541aa500115a056eb78f437c2ba1f10415fd7c8e5dda84"),
  pin("possible_answer/BFCL_v4_parallel.json", 66005, "8a6aa19c1adddc6a5a2f7e40f9dbf30cc7e95815e7b830c90589ab318229e0f0"),
  pin("BFCL_v4_parallel_multiple.json", 347080, "8863ea8433239f55c5f016154cf0830853c89f693c6ea270396a2fa121960579"),
  pin("possible_answer/BFCL_v4_parallel_multiple.json", 74602, "5ebf24f458c1f16300c05505d83d6f0a1b68b79be273a033febd0d4f840507e3"),
  pin("BFCL_v4_irrelevance.json", 159940, "2b6ed4c2e992cdcf5f1678a701851f944bef7550ee026ed1ddb89efed5be01a6"),
  pin("BFCL_v4_live_simple.json", 260140, "1af2ac87dca47556db7b7e37e51e28b459a38b594e3c7b3c792b4903598ca0c4"),
  pin("possible_answer/BFCL_v4_live_simple.json", 46972, "fec9cfa9744a936f9126981e85a2023da1e63e273eafebc81923a1162fad70ce"),
  pin("BFCL_v4_live_multiple.json", 3891277, "fd8ccfad4d911420d0e3341dbe2fff77d1d341da934248b9bb2bda24ab3a10c8"),
  pin("possible_answer/BFCL_v4_live_multiple.json", 199668, "97e90d59c5bd76c55a2920ce93e5566e9046307d3f558578f085f9d3a56c3084"),
  pin("BFCL_v4_live_parallel.json", 15649, "6c26e9fdc3350cf596e6d1ea9c179cbff834761bccf562f4141ed29a839ca421"),
  pin("possible_answer/BFCL_v4_live_parallel.json", 4972, "8a9f189ff0e832ebbbbdade1fd95a7dbcc67406e9177df3f0aad76f59ab00350"),
  pin("BFCL_v4_live_parallel_multiple.json", 82332, "21d4b9319c1faac431e22757b367ea28917fe467364c3a4b17f16ec06d4f6e79"),
  pin("possible_answer/BFCL_v4_live_parallel_multiple.json", 7420, "f5b5f360556c5feb51db46fb9f56ee4b304f4b45b161599bbb14161c98a2873f"),
  pin("BFCL_v4_live_irrelevance.json", 2209534, "6559fda2beaceb609a2cd2e504c65b4a56cb448e1ef88fddfd199e163d163349"),
  pin("BFCL_v4_live_relevance.json", 47327, "e03f9e241657a137cba48a89ee12f47bf3fcb7e4f6274263e9c699a0c974203a"),
  pin("README.md", 20277, "93119d83df28fee0a9f3ea41b0c6a947aad9f7ba4334ae89fef41c74b67b208d")
]

/**
 * The oracle corpus `assay equivalence bfcl` reads, under `bfcl/oracle/`: answers with the verdicts
 * upstream's checker gives them (its README says how it was made). Made by running upstream's code,
 * it has no upstream blob to download: a pull brings it only from a local copy (`--from DIR`).
 */
export const ORACLE_FILES: ReadonlyArray<{ readonly file: string; readonly sha256: string }> = [
  { file: "verdicts-dev.jsonl", sha256: "c7b5aa63b354dcefa224782dfcf7635af141eadaa43853cf180eea2a3397d762" },
  { file: "README.md", sha256: "2df03e2d57d71b1dc93188b364fad9c73bf5baf1f92d21ba50e5f8e53cd856ae" }
]

/**
 * Upstream's long-context constants (`long_context.py`: extension texts, cities, watch lists, extension
 * cards), which the multi-turn worlds load for `multi_turn_long_context`. Upstream's source rather than
 * its data, so kept under `bfcl/func_source_code/` of the data folder and read by
 * `multiturn/longContext.ts`, never copied into the repo.
 */
export const LONG_CONTEXT_PATH = "func_source_code/long_context.py"
export const LONG_CONTEXT_FILE: Provider.PinnedFile = {
  path: LONG_CONTEXT_PATH,
  url: `https://raw.githubusercontent.com/${UPSTREAM_REPOSITORY}/${UPSTREAM_COMMIT}/berkeley-function-call-leaderboard/bfcl_eval/eval_checker/multi_turn_eval/${LONG_CONTEXT_PATH}`,
  sha256: "5c9a5710115609c779e5b2ccb43f6ad58271ed96f2ea7a797edb0d65c385aa38"
}

/** Tasks count per category at the pinned commit. */
export const TASK_COUNTS: Readonly<Record<Category, number>> = {
  simple_python: 400,
  multiple: 200,
  parallel: 200,
  parallel_multiple: 200,
  irrelevance: 240,
  live_simple: 258,
  live_multiple: 1053,
  live_parallel: 16,
  live_parallel_multiple: 24,
  live_irrelevance: 884,
  live_relevance: 16
}

/**
 * Tasks that upstream's checker fails whatever the answer (oracle/README.md, "Tasks that no
 * answer can pass"): report them apart rather than count them against a candidate.
 */
export const UNPASSABLE_TASKS: ReadonlyMap<string, string> = new Map([
  ["live_simple_106-63-0", "required arrays auto_loan_payment_start and bank_hours_start have an empty acceptable list []"],
  ["live_simple_112-68-0", "required arrays acc_routing_start, atm_finder_start, faq_link_accounts_start, get_balance_start, get_transactions_start have an empty acceptable list []"],
  ["live_multiple_862-181-3", "the possible answer requires journey_start_time, which Trains_1_FindTrains does not have"],
  ["live_multiple_964-207-0", "the schema requires statement, which the possible answer does not allow"]
])

export const isPassable = (id: string): boolean => !UNPASSABLE_TASKS.has(id)

export interface Message {
  readonly role: string
  readonly content: string
}

export interface Task {
  readonly id: string
  readonly category: Category
  /** Turns of messages; the single-turn categories have one turn. */
  readonly question: ReadonlyArray<ReadonlyArray<Message>>
  /** The function docs exactly as in the question file (`name`, `description`, `parameters`). */
  readonly functions: ReadonlyArray<PyDict>
  /** The `ground_truth` list (`[{func: {param: [acceptable, ...]}}]`); null in relevance categories. */
  readonly possibleAnswer: PyList | null
}

/** The folder under the data root that BFCL's pinned files live in. */
export const FOLDER = "bfcl"

/** An upstream file's path as the kit's reader names it (under FOLDER). */
export const upstreamPath = (file: string): string => `v4/${file}`

/**
 * The pinned files as `assay data pull` and the kit's reader know them, under FOLDER: upstream's
 * under `v4/`, and the oracle corpus equivalence reads under `oracle/` (no download URL: only a
 * pull `--from DIR` brings it).
 */
export const PINNED: ReadonlyArray<Provider.PinnedFile> = [
  ...PINNED_FILES.map((p) => ({ path: upstreamPath(p.file), url: p.url, sha256: p.sha256 })),
  ...ORACLE_FILES.map((p) => ({ path: `oracle/${p.file}`, url: "", sha256: p.sha256, oracle: true }))
]

export interface DataOptions {
  /** The data folder (the one holding `bfcl/`); defaults to the data root (`ASSAY_DATA_DIR`, else the default). */
  readonly dataDir?: string
}

/** The folder holding `bfcl/`: `options.dataDir`, else the data root (the folder the kit reads). */
export const rootOf = (options: DataOptions | undefined): string => options?.dataDir ?? DataRoot.dataRoot()

const SOURCE: PinnedData.Source = { benchmark: "bfcl", folder: FOLDER }
// The long-context module is read through the same sha256 check; it joins PINNED (what a pull
// brings) once the shared data folder holds it, so that a pull `--from` that folder still succeeds
const pinnedByPath = new Map([...PINNED, LONG_CONTEXT_FILE].map((p) => [p.path, p]))

/**
 * The reader of BFCL's pinned files in one data folder, as the kit gives the benchmark its own
 * (tests, the bench and equivalence name a folder): a file's sha256 is checked before its text is used.
 */
export const readerAt = (options?: DataOptions, benchmark: "bfcl" | "bfcl-multi-turn" = "bfcl"): Benchmark.Reader => {
  const service = PinnedData.make(rootOf(options))
  // The benchmark whose pull brings the files, named in what a missing one says to run.
  const source = benchmark === "bfcl" ? SOURCE : { ...SOURCE, benchmark }
  const pinned = (path: string) => {
    const file = pinnedByPath.get(path)
    return file === undefined ? Effect.fail(PinnedData.invalid(source, path, "it is not among bfcl's pinned files")) : Effect.succeed(file)
  }
  return {
    text: (path) => Effect.flatMap(pinned(path), (file) => service.text(source, file)),
    bytes: (path) => Effect.flatMap(pinned(path), (file) => service.bytes(source, file)),
    invalid: (path, detail) => PinnedData.invalid(source, path, detail)
  }
}

/** One pinned upstream file's text (`file` under `bfcl/v4/`), its sha256 checked. */
export const readPinned = (file: string, options?: DataOptions): Effect.Effect<string, PinnedData.DataError> =>
  readerAt(options).text(upstreamPath(file))

const parseLines = (read: Benchmark.Reader, path: string, text: string): Effect.Effect<ReadonlyArray<PyDict>, PinnedData.DataError> => {
  const out: Array<PyDict> = []
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    if (line.trim() === "") continue
    const parsed = parsePyJson(line)
    if (!parsed.ok) return Effect.fail(read.invalid(path, `line ${i + 1}: ${parsed.error.message} at ${parsed.error.offset}`))
    if (!isDict(parsed.value)) return Effect.fail(read.invalid(path, `line ${i + 1} is not an object`))
    out.push(parsed.value)
  }
  return Effect.succeed(out)
}

const toMessages = (v: PyValue | undefined): ReadonlyArray<ReadonlyArray<Message>> | undefined => {
  if (v === undefined || !isList(v)) return undefined
  const turns: Array<ReadonlyArray<Message>> = []
  for (const turn of v) {
    if (!isList(turn)) return undefined
    const msgs: Array<Message> = []
    for (const m of turn) {
      if (!isDict(m)) return undefined
      const role = m.get("role")
      const content = m.get("content")
      if (typeof role !== "string" || typeof content !== "string") return undefined
      msgs.push({ role, content })
    }
    turns.push(msgs)
  }
  return turns
}

/** Loads one category's tasks through `read`, with their possible answers where the category has them. */
export const readCategory = (read: Benchmark.Reader, category: Category): Effect.Effect<ReadonlyArray<Task>, PinnedData.DataError> =>
  Effect.gen(function* () {
    const questionFile = upstreamPath(`BFCL_v4_${category}.json`)
    const questions = yield* parseLines(read, questionFile, yield* read.text(questionFile))
    let answers: ReadonlyArray<PyDict> | null = null
    const answerFile = upstreamPath(`possible_answer/BFCL_v4_${category}.json`)
    if (!RELEVANCE_CATEGORIES.has(category)) {
      answers = yield* parseLines(read, answerFile, yield* read.text(answerFile))
      if (answers.length !== questions.length) return yield* read.invalid(answerFile, `${answers.length} answers for ${questions.length} questions`)
    }
    const tasks: Array<Task> = []
    for (let i = 0; i < questions.length; i++) {
      const q = questions[i] as PyDict
      const id = q.get("id")
      const question = toMessages(q.get("question"))
      const functions = q.get("function")
      if (typeof id !== "string" || question === undefined || functions === undefined || !isList(functions) || !functions.every(isDict))
        return yield* read.invalid(questionFile, `line ${i + 1} lacks id, question or function`)
      let possibleAnswer: PyList | null = null
      if (answers !== null) {
        const a = answers[i] as PyDict
        const gt = a.get("ground_truth")
        // Upstream pairs questions and answers by position; the ids agree at this commit.
        if (a.get("id") !== id || gt === undefined || !isList(gt)) return yield* read.invalid(answerFile, `line ${i + 1} does not answer ${id}`)
        possibleAnswer = gt
      }
      tasks.push({ id, category, question, functions: functions as ReadonlyArray<PyDict>, possibleAnswer })
    }
    return tasks
  })

/** Loads all eleven categories through `read`, in `CATEGORIES` order. */
export const readAll = (read: Benchmark.Reader): Effect.Effect<ReadonlyArray<Task>, PinnedData.DataError> =>
  Effect.map(
    Effect.forEach(CATEGORIES, (c) => readCategory(read, c), { concurrency: 4 }),
    (xs) => xs.flat()
  )

/** Loads one category from a data folder (the data root unless `options.dataDir`). */
export const loadCategory = (category: Category, options?: DataOptions): Effect.Effect<ReadonlyArray<Task>, PinnedData.DataError> =>
  readCategory(readerAt(options), category)

/** Loads all eleven categories from a data folder (the data root unless `options.dataDir`). */
export const loadAll = (options?: DataOptions): Effect.Effect<ReadonlyArray<Task>, PinnedData.DataError> => readAll(readerAt(options))
