/**
 * What planning reads of BFCL, kept in the user's cache (DataRoot.readPrepared): each task's id,
 * category and function-calling inputs (its own system message, its tool specs and their
 * canonical texts). `assay plan` then neither parses the 8 MB of question files nor converts and
 * hashes 3,491 tasks' tool schemas, ~1.5 s of a fresh process's CPU; running a task still loads
 * it in full.
 *
 * The form is used only when every pinned file the full load reads has, by its note
 * (DataRoot.notedSha256: the file in exactly the state it was hashed in), the pinned sha256: a
 * file changed or missing since sends the provider down the full load, which hashes and reports
 * it. Its key names those hashes, the form's version and the text of the sources that make it
 * (this provider's conversion and the canonical JSON writer), so a changed conversion never reads
 * a form made by the old one.
 */
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import { Canonical, ContentId, DataRoot, type Tool } from "../../src/index.ts"
import { CATEGORIES, type Category, PINNED_FILES, RELEVANCE_CATEGORIES } from "./data.ts"

const FORM_VERSION = 2 // 2: written as ASCII JSON (DataRoot.writePrepared), so a form of version 1 is written anew
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
const loadedFiles = (): ReadonlyArray<{ readonly file: string; readonly sha256: string }> => {
  const wanted = new Set(
    CATEGORIES.flatMap((c) => [`BFCL_v4_${c}.json`, ...(RELEVANCE_CATEGORIES.has(c) ? [] : [`possible_answer/BFCL_v4_${c}.json`])])
  )
  return PINNED_FILES.filter((p) => wanted.has(p.file))
}

const keyOf = (sources: string): string =>
  `${KIND}:v${FORM_VERSION}:${sources}:${loadedFiles().map((p) => `${p.file}=${p.sha256}`).join(",")}`

/** Whether every file the full load reads is, by its note, unchanged since it was hashed with its pinned sha256. */
const allNoted = (root: string): boolean =>
  loadedFiles().every((p) => DataRoot.notedSha256(resolve(root, "bfcl", "v4", p.file)) === p.sha256)

const isStringArray = (v: unknown): v is ReadonlyArray<string> => Array.isArray(v) && v.every((x) => typeof x === "string")

const categories: ReadonlySet<string> = new Set(CATEGORIES)

/** A stored task, if it has the form's shape (it passed the file's checksum; this guards a version mix-up). */
const taskOf = (v: unknown): PlannedTask | undefined => {
  if (!Array.isArray(v) || v.length !== 5) return undefined
  const [id, category, system, tools, texts] = v as ReadonlyArray<unknown>
  if (typeof id !== "string" || typeof category !== "string" || !categories.has(category) || typeof system !== "string") return undefined
  if (!Array.isArray(tools) || !isStringArray(texts) || tools.length !== texts.length) return undefined
  return { id, category: category as Category, system, tools: tools as ReadonlyArray<Tool.ToolSpec>, texts }
}

/**
 * The planned tasks from the stored form, or undefined when there is none for the present data
 * and sources, or a data file is not known to be unchanged. Each tool's canonical text is
 * remembered (Canonical.remember), so inputs ids are made without walking the tool specs again.
 */
export const readPlanned = (root: string): ReadonlyArray<PlannedTask> | undefined => {
  const sources = sourcesFingerprint()
  if (sources === null || !allNoted(root)) return undefined
  const form = DataRoot.readPrepared(KIND, keyOf(sources))
  if (!Array.isArray(form)) return undefined
  const tasks: Array<PlannedTask> = []
  for (const v of form) {
    const task = taskOf(v)
    if (task === undefined) return undefined
    tasks.push(task)
  }
  for (const task of tasks) task.tools.forEach((t, i) => Canonical.remember(t, task.texts[i]!))
  return tasks
}

/**
 * Stores the planned tasks, made from a full load (whose files were hashed or found noted just
 * now), for the next process; their tool texts are remembered here too.
 */
export const writePlanned = (tasks: ReadonlyArray<Omit<PlannedTask, "texts">>): void => {
  const sources = sourcesFingerprint()
  const withTexts = tasks.map((t) => ({ ...t, texts: t.tools.map((tool) => Canonical.canonicalUnsafe(tool)) }))
  for (const task of withTexts) task.tools.forEach((t, i) => Canonical.remember(t, task.texts[i]!))
  if (sources === null) return
  DataRoot.writePrepared(KIND, keyOf(sources), withTexts.map((t) => [t.id, t.category, t.system, t.tools, t.texts]))
}
