/**
 * What planning reads of BFCL, kept in the user's cache (DataRoot.readPrepared): each task's id,
 * category and function-calling inputs (its own system message, its tool specs and their
 * canonical texts). `assay plan` then neither parses the 8 MB of question files nor converts and
 * hashes 3,491 tasks' tool schemas, ~1.5 s of a fresh process's CPU; running a task still loads
 * it in full.
 *
 * The form is used only when every pinned file the full load reads is the pinned one: by its note
 * (DataRoot.notedSha256: the file in exactly the state it was hashed in), or, for a file without
 * one (the reader notes only large files: a small one hashes faster than a note is read), read
 * and hashed through the kit's reader. A file changed or missing since sends the provider down
 * the full load, which reports it. The form's key names those hashes, its version and the text of
 * the sources that make it (this provider's conversion and the canonical JSON writer), so a
 * changed conversion never reads a form made by the old one.
 */
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { Effect } from "effect"
import { type Benchmark, Canonical, ContentId, DataRoot, type Provider, type Tool } from "../../src/index.ts"
import { CATEGORIES, type Category, FOLDER, PINNED, RELEVANCE_CATEGORIES, readerAt, upstreamPath } from "./data.ts"

// 2: written as ASCII JSON (DataRoot.writePrepared). 3: each distinct tool spec stored once, with
// its canonical text, and tasks name theirs by index (8,576 tool specs, 3,104 distinct texts).
const FORM_VERSION = 3
const KIND = "bfcl-plan"

/** One task as planning sees it. */
export interface PlannedTask {
  readonly id: string
  readonly category: Category
  /** The task's own system message: the function-calling inputs' system text is this or "". */
  readonly system: string
  readonly tools: ReadonlyArray<Tool.ToolSpec>
  /** Each tool's canonical text, as Canonical.canonicalUnsafe writes it. */
  readonly texts: ReadonlyArray<string>
}

// The files whose text makes the form: a change to any of them makes another key.
const SOURCES = ["./data.ts", "./index.ts", "./pyjson.ts", "./tools.ts", "./prepared.ts", "../../src/content/Canonical.ts"]

let fingerprint: string | null | undefined
/** sha256 of the sources' texts; null when one cannot be read (then no form is read or written). */
const sourcesFingerprint = (): string | null => {
  if (fingerprint !== undefined) return fingerprint
  try {
    fingerprint = ContentId.sha256Hex(SOURCES.map((s) => readFileSync(new URL(s, import.meta.url), "utf8")).join("\u0000"))
  } catch {
    fingerprint = null
  }
  return fingerprint
}

/** The pinned files the full load reads (every category's questions, and answers where it has them). */
const loadedFiles = (): ReadonlyArray<Provider.PinnedFile> => {
  const wanted = new Set(
    CATEGORIES.flatMap((c) => [`BFCL_v4_${c}.json`, ...(RELEVANCE_CATEGORIES.has(c) ? [] : [`possible_answer/BFCL_v4_${c}.json`])]).map(upstreamPath)
  )
  return PINNED.filter((p) => wanted.has(p.path))
}

const keyOf = (sources: string): string => `${KIND}:v${FORM_VERSION}:${sources}:${loadedFiles().map((p) => `${p.path}=${p.sha256}`).join(",")}`

/**
 * Whether every file the full load reads is the pinned one: noted unchanged since it was hashed
 * with its pinned sha256, or else read and hashed now through `read` (`root` is the folder it reads).
 */
const allPinned = (read: Benchmark.Reader, root: string): Effect.Effect<boolean> =>
  Effect.forEach(
    loadedFiles(),
    (p) => (DataRoot.notedSha256(resolve(root, FOLDER, p.path)) === p.sha256 ? Effect.void : read.bytes(p.path)),
    { discard: true }
  ).pipe(Effect.as(true), Effect.orElseSucceed(() => false))

const categories: ReadonlySet<string> = new Set(CATEGORIES)

const isIndexArray = (v: unknown, size: number): v is ReadonlyArray<number> =>
  Array.isArray(v) && v.every((x) => Number.isInteger(x) && x >= 0 && x < size)

/** A stored distinct tool spec and its canonical text, if it has the form's shape. */
const toolOf = (v: unknown): readonly [Tool.ToolSpec, string] | undefined =>
  Array.isArray(v) && v.length === 2 && typeof v[0] === "object" && v[0] !== null && !Array.isArray(v[0]) && typeof v[1] === "string"
    ? [v[0] as Tool.ToolSpec, v[1]]
    : undefined

/**
 * A stored task, if it has the form's shape (it passed the file's checksum; this guards a version
 * mix-up): its tools are entries of the form's table of distinct tool specs.
 */
const taskOf = (v: unknown, table: ReadonlyArray<readonly [Tool.ToolSpec, string]>): PlannedTask | undefined => {
  if (!Array.isArray(v) || v.length !== 4) return undefined
  const [id, category, system, tools] = v as ReadonlyArray<unknown>
  if (typeof id !== "string" || typeof category !== "string" || !categories.has(category) || typeof system !== "string") return undefined
  if (!isIndexArray(tools, table.length)) return undefined
  return { id, category: category as Category, system, tools: tools.map((i) => table[i]![0]), texts: tools.map((i) => table[i]![1]) }
}

/**
 * The planned tasks from the stored form, or undefined when there is none for the present data
 * and sources, or a data file in `root` is not the pinned one (`read` reads that folder: the
 * data root, as the kit's reader, by default). Each tool's canonical text is remembered
 * (Canonical.remember), so inputs ids are made without walking the tool specs again. Tasks that
 * offer the same tool spec share one object of it (immutable data, as a full load's).
 */
export const readPlanned = (
  root: string = DataRoot.dataRoot(),
  read: Benchmark.Reader = readerAt({ dataDir: root })
): Effect.Effect<ReadonlyArray<PlannedTask> | undefined> =>
  Effect.suspend(() => {
    const sources = sourcesFingerprint()
    if (sources === null) return Effect.succeed(undefined)
    return Effect.map(allPinned(read, root), (pinned) => (pinned ? formOf(sources) : undefined))
  })

const formOf = (sources: string): ReadonlyArray<PlannedTask> | undefined => {
  const form = DataRoot.readPrepared(KIND, keyOf(sources))
  if (typeof form !== "object" || form === null) return undefined
  const { tools: storedTools, tasks: storedTasks } = form as { readonly tools?: unknown; readonly tasks?: unknown }
  if (!Array.isArray(storedTools) || !Array.isArray(storedTasks)) return undefined
  const table: Array<readonly [Tool.ToolSpec, string]> = []
  for (const v of storedTools) {
    const tool = toolOf(v)
    if (tool === undefined) return undefined
    table.push(tool)
  }
  const tasks: Array<PlannedTask> = []
  for (const v of storedTasks) {
    const task = taskOf(v, table)
    if (task === undefined) return undefined
    tasks.push(task)
  }
  for (const [tool, text] of table) Canonical.remember(tool, text)
  return tasks
}

/**
 * Stores the planned tasks, made from a full load (whose files were hashed or found noted just
 * now), for the next process; their tool texts are remembered here too. A tool spec is stored
 * once per distinct JSON text (its keys in their own order) and canonical text.
 */
export const writePlanned = (tasks: ReadonlyArray<Omit<PlannedTask, "texts">>): void => {
  const sources = sourcesFingerprint()
  const table: Array<readonly [Tool.ToolSpec, string]> = []
  const indexOf = new Map<string, number>()
  const stored = tasks.map((t) => [
    t.id,
    t.category,
    t.system,
    t.tools.map((tool) => {
      const text = Canonical.canonicalUnsafe(tool)
      Canonical.remember(tool, text)
      const json = `${JSON.stringify(tool)}\u0000${text}`
      let i = indexOf.get(json)
      if (i === undefined) {
        i = table.push([tool, text]) - 1
        indexOf.set(json, i)
      }
      return i
    })
  ])
  if (sources === null) return
  DataRoot.writePrepared(KIND, keyOf(sources), { tools: table, tasks: stored })
}
