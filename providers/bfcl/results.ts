/**
 * BFCL's result files, as upstream's runner writes them (`assay import bfcl DIR`): one file per
 * category, `BFCL_v4_<category>_result.json`, under the model's folder (`non_live/`, `live/`,
 * `multi_turn/`), one JSON line per task, `{"id", "result", "input_token_count", ...}`.
 *
 * `result` is the model's raw output as the handler parsed it, before any decoding:
 * - function-calling handlers (`fc`): a list of `{function_name: "<arguments JSON text>"}`, one per
 *   call (some handlers store the arguments already decoded, as an object), or the reply's text
 *   when the model made no call;
 * - prompting handlers (`prompt`): the reply's text, which upstream decodes as Python call syntax.
 *
 * Each line becomes the reply of the imported model's one call, which the benchmark then decodes
 * and grades as it does any candidate's. An output that is neither shape is kept as text, so it
 * fails to decode and is graded as upstream grades a decoding failure, never dropped.
 */
import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { basename, dirname, join, relative, resolve } from "node:path"
import { Effect } from "effect"
import { Imported, type Model } from "../../src/index.ts"
import { CATEGORIES } from "./data.ts"
import { stepOf } from "./multiturn/protocol.ts"
import { loadTasks, CATEGORIES as MULTI_TURN_CATEGORIES } from "./multiturn/tasks.ts"
import { isDict, parsePyJson, type PyDict, pyJsonDumps, type PyValue, toPlainJson } from "./pyjson.ts"

type ModelResponse = Model.ModelResponse

export const FORMATS = ["fc", "prompt"] as const
export type Format = (typeof FORMATS)[number]

const FILE = /^BFCL_v4_(.+)_result\.json$/
/** The folders upstream's runner groups a model's files in; the model's own folder is above them. */
const GROUPS = new Set(["non_live", "live", "multi_turn", "agentic", "memory", "format_sensitivity"])
const SINGLE_TURN: ReadonlySet<string> = new Set(CATEGORIES)
const MULTI_TURN: ReadonlySet<string> = new Set(MULTI_TURN_CATEGORIES)

/** One line of a result file: the task's id and its output as upstream's runner stored it. */
export interface ResultLine {
  readonly id: string
  readonly result: PyValue
  /** `input_token_count` / `output_token_count`, when they are plain numbers (single-turn). */
  readonly inputTokens: number
  readonly outputTokens: number
  /** The same per turn and step (multi-turn), as the file has them. */
  readonly tokenCounts?: { readonly input: PyValue; readonly output: PyValue }
}

interface ReadFile extends Imported.ImportedFile {
  readonly lines_: ReadonlyArray<ResultLine>
}

/** The result files under `dir` (the model's folder, or one of its group folders), by path. */
const findFiles = (dir: string): Effect.Effect<ReadonlyArray<string>, Imported.ImportError> =>
  Effect.try({
    try: () => {
      const found: Array<string> = []
      const walk = (at: string, depth: number) => {
        for (const entry of readdirSync(at, { withFileTypes: true })) {
          if (entry.name.startsWith(".")) continue
          const path = join(at, entry.name)
          if (entry.isDirectory() && depth < 4) walk(path, depth + 1)
          else if (entry.isFile() && FILE.test(entry.name)) found.push(path)
        }
      }
      walk(dir, 0)
      return found.sort()
    },
    catch: (e) => new Imported.ImportError({ path: dir, reason: "unreadable", detail: e instanceof Error ? e.message : String(e) })
  })

const count = (v: PyValue | undefined): number => (typeof v === "number" && Number.isFinite(v) ? v : 0)

const readFile = (dir: string, path: string, category: string): Effect.Effect<ReadFile, Imported.ImportError> =>
  Effect.gen(function*() {
    const shown = relative(dir, path)
    const bytes = yield* Effect.try({
      try: () => readFileSync(path),
      catch: (e) => new Imported.ImportError({ path: shown, reason: "unreadable", detail: e instanceof Error ? e.message : String(e) })
    })
    const lines: Array<ResultLine> = []
    const texts = bytes.toString("utf8").split("\n")
    for (let i = 0; i < texts.length; i++) {
      const text = texts[i] as string
      if (text.trim() === "") continue
      const malformed = (detail: string) => new Imported.ImportError({ path: `${shown}:${i + 1}`, reason: "malformed", detail })
      const parsed = parsePyJson(text)
      if (!parsed.ok) return yield* malformed(`not a JSON line (${parsed.error.message} at character ${parsed.error.offset})`)
      const entry = parsed.value
      if (!isDict(entry)) return yield* malformed("not a JSON object")
      const id = entry.get("id")
      if (typeof id !== "string") return yield* malformed("it has no string \"id\"")
      if (!entry.has("result")) return yield* malformed(`${id} has no "result"`)
      lines.push({
        id,
        result: entry.get("result") ?? null,
        inputTokens: count(entry.get("input_token_count")),
        outputTokens: count(entry.get("output_token_count")),
        tokenCounts: { input: entry.get("input_token_count") ?? null, output: entry.get("output_token_count") ?? null }
      })
    }
    return { path: shown, category, lines: lines.length, sha256: `sha256:${createHash("sha256").update(bytes).digest("hex")}`, lines_: lines }
  })

// ---------------------------------------------------------------------------------------------
// The format

/** Which of upstream's shapes each output has: a list (function calling), text, or neither. */
const shapeOf = (v: PyValue): "list" | "text" | "other" => (Array.isArray(v) ? "list" : typeof v === "string" ? "text" : "other")

/**
 * The format of a model's files: function calling when any output is a list (prompting handlers
 * store text only), else prompting, unless the folder is named as upstream names its
 * function-calling models (`...-FC`): their files hold text where the model made no call.
 */
export const detectFormat = (results: ReadonlyArray<PyValue>, folder: string): { readonly format: Format; readonly why: string } => {
  let lists = 0
  let texts = 0
  for (const r of results) {
    const shape = shapeOf(r)
    if (shape === "list") lists++
    else if (shape === "text") texts++
  }
  if (lists > 0) return { format: "fc", why: `detected: ${lists} of ${results.length} outputs are lists of calls, as function-calling handlers store them` }
  if (/FC/.test(folder)) {
    return { format: "fc", why: `detected: no output is a list of calls, but the folder ${folder} is named as upstream names function-calling models` }
  }
  return { format: "prompt", why: `detected: ${texts} of ${results.length} outputs are text and none a list of calls, as prompting handlers store them` }
}

// ---------------------------------------------------------------------------------------------
// Outputs as model replies

const isFiniteJson = (u: unknown): boolean =>
  u === null || typeof u === "string" || typeof u === "boolean" || (typeof u === "number" && Number.isFinite(u)) ||
  (Array.isArray(u) ? u.every(isFiniteJson) : typeof u === "object" && Object.values(u).every(isFiniteJson))

/** The arguments as a transcript shows them; the grade reads their text (`argumentsText`). */
const argumentsOf = (text: string): Readonly<Record<string, unknown>> => {
  const parsed = parsePyJson(text)
  if (!parsed.ok || !isDict(parsed.value)) return {}
  const plain = toPlainJson(parsed.value)
  return isFiniteJson(plain) ? (plain as Readonly<Record<string, unknown>>) : {}
}

const replyOf = (model: string, text: string | null, toolCalls: ModelResponse["toolCalls"], line: ResultLine): ModelResponse => ({
  text,
  toolCalls,
  usage: { inputTokens: line.inputTokens, outputTokens: line.outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0 },
  finishReason: toolCalls.length > 0 ? "tool-calls" : "stop",
  model
})

/**
 * A function-calling output as the API reply it was: each `{name: arguments}` a tool call with the
 * arguments' exact text (decoded arguments are written back as Python's json.dumps would, ints and
 * floats apart), text when it is text. A list the handler could not have decoded (an item that is
 * not a one-call object, arguments neither text nor an object) is kept as its JSON text: it then
 * fails to decode, as upstream's decoder fails on it.
 */
export const fcReply = (model: string, result: PyValue, line: ResultLine): ModelResponse => {
  if (typeof result === "string") return replyOf(model, result, [], line)
  if (result === null) return replyOf(model, null, [], line)
  // No calls: the handler's empty list decodes to none, as the empty text does.
  if (Array.isArray(result) && result.length === 0) return replyOf(model, "", [], line)
  if (!Array.isArray(result)) return replyOf(model, pyJsonDumps(result), [], line)
  const calls: Array<ModelResponse["toolCalls"][number]> = []
  for (const item of result) {
    if (!isDict(item) || item.size === 0) return replyOf(model, pyJsonDumps(result), [], line)
    // Upstream's handlers read the first key of each call object.
    const [name, args] = (item as PyDict).entries().next().value as [string, PyValue]
    const text = typeof args === "string" ? args : isDict(args) ? pyJsonDumps(args) : null
    if (text === null) return replyOf(model, pyJsonDumps(result), [], line)
    calls.push({ id: `call_${calls.length}`, name, arguments: argumentsOf(text), argumentsText: text })
  }
  return replyOf(model, null, calls, line)
}

/** A prompting output: its text (anything else as JSON text, which does not decode as calls). */
export const promptReply = (model: string, result: PyValue, line: ResultLine): ModelResponse =>
  replyOf(model, typeof result === "string" ? result : pyJsonDumps(result), [], line)

// ---------------------------------------------------------------------------------------------
// The folder

/** The model's name as upstream's runner names its folder (above `non_live/`, `live/`, ...). */
const modelFolderOf = (dir: string): string => {
  const here = basename(resolve(dir))
  return GROUPS.has(here) ? basename(dirname(resolve(dir))) : here
}

/** A multi-turn step's token counts, from the file's lists per turn and step. */
const stepLine = (line: ResultLine, turn: number, step: number): ResultLine => {
  const at = (v: PyValue | undefined, i: number): PyValue | undefined => (Array.isArray(v) ? (v as ReadonlyArray<PyValue>)[i] : undefined)
  return {
    ...line,
    inputTokens: count(at(at(line.tokenCounts?.input, turn), step)),
    outputTokens: count(at(at(line.tokenCounts?.output, turn), step))
  }
}

const shortText = (v: PyValue): string => {
  const text = typeof v === "string" ? v : pyJsonDumps(v)
  return text.length > 120 ? `${text.slice(0, 120)}...` : text
}

/**
 * A multi-turn line as its turns of steps, each step the model's reply. A result that is not turns
 * of steps (what upstream's runner writes when inference failed: its error text), or has another
 * number of turns than the task (the runner force-quit it), fails the first call instead, and
 * so its Attempt, as upstream fails the line (multi_turn:inference_error, force_terminated).
 */
export const multiTurnOf = (model: string, format: Format, line: ResultLine, taskTurns: number | undefined): Imported.RecordedTurns => {
  const turns = line.result
  if (!Array.isArray(turns) || !turns.every((t) => Array.isArray(t))) {
    return [[{ failed: `the result file records no turns for ${line.id}, but ${shortText(turns)} (upstream: multi_turn:inference_error)` }]]
  }
  // Upstream fails such a line before it looks at any step: the runner force-quit it.
  if (taskTurns !== undefined && turns.length !== taskTurns) {
    return [[{ failed: `the result file records ${turns.length} turns for ${line.id}, which has ${taskTurns} (upstream: multi_turn:force_terminated)` }]]
  }
  const replyFor = format === "fc" ? fcReply : promptReply
  return (turns as ReadonlyArray<ReadonlyArray<PyValue>>).map((steps, t) => steps.map((step, i): Imported.RecordedStep => replyFor(model, step, stepLine(line, t, i))))
}

/** The multi-turn protocol's rule: a reply whose calls decode to some goes on with the turn. */
const continuesTurn = (format: Format) => (r: ModelResponse): boolean =>
  stepOf(format === "fc" ? "tools" : "text", {
    text: r.text,
    toolCalls: r.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: {}, argumentsText: c.argumentsText ?? JSON.stringify(c.arguments) }))
  }).run.length > 0

/** Reads the result files under `dir`, in the format given or the one detected. */
export const read = (dir: string, options: { readonly format: string | null }): Effect.Effect<Imported.ImportedResults, Imported.ImportError> =>
  Effect.gen(function*() {
    const paths = yield* findFiles(dir)
    if (paths.length === 0) return yield* new Imported.ImportError({ path: dir, reason: "no-files", detail: "no BFCL_v4_<category>_result.json file under it" })
    const notes: Array<string> = []
    const files: Array<ReadFile> = []
    const byCategory = new Map<string, string>()
    const unsupported: Array<string> = []
    for (const path of paths) {
      const category = FILE.exec(basename(path))?.[1] as string
      if (!SINGLE_TURN.has(category) && !MULTI_TURN.has(category)) {
        unsupported.push(category)
        continue
      }
      const other = byCategory.get(category)
      if (other !== undefined) {
        return yield* new Imported.ImportError({
          path: dir,
          reason: "malformed",
          detail: `two files of ${category} (${other} and ${relative(dir, path)}): import one model's folder at a time`
        })
      }
      byCategory.set(category, relative(dir, path))
      files.push(yield* readFile(dir, path, category))
    }
    if (unsupported.length > 0) notes.push(`not imported: ${unsupported.length} files of categories assay does not run (${unsupported.join(", ")})`)
    if (files.length === 0) {
      return yield* new Imported.ImportError({ path: dir, reason: "no-files", detail: `no result file of a category assay runs (${[...SINGLE_TURN, ...MULTI_TURN].join(", ")})` })
    }
    const single = files.filter((f) => SINGLE_TURN.has(f.category)).flatMap((f) => f.lines_)
    const multi = files.filter((f) => MULTI_TURN.has(f.category)).flatMap((f) => f.lines_)

    const folder = modelFolderOf(dir)
    // Every output a handler stored: a single-turn line's, and each step of a multi-turn line's.
    const outputs = [
      ...single.map((l) => l.result),
      ...multi.flatMap((l) => (Array.isArray(l.result) ? (l.result as ReadonlyArray<PyValue>).flatMap((t) => (Array.isArray(t) ? (t as ReadonlyArray<PyValue>) : [])) : []))
    ]
    let format: { readonly format: Format; readonly why: string }
    if (options.format === null) format = detectFormat(outputs, folder)
    else if (options.format === "fc" || options.format === "prompt") format = { format: options.format, why: `given: --format ${options.format}` }
    else return yield* new Imported.ImportError({ path: dir, reason: "format", detail: `--format ${options.format}: expected one of ${FORMATS.join(", ")}` })

    const byId = <A>(lines: ReadonlyArray<ResultLine>, of: (line: ResultLine) => A): ReadonlyMap<string, A> => {
      const out = new Map<string, A>()
      const twice = new Set<string>()
      for (const line of lines) {
        if (out.has(line.id)) twice.add(line.id)
        out.set(line.id, of(line))
      }
      if (twice.size > 0) notes.push(`${twice.size} ids are given twice, the last line of each is imported: ${[...twice].slice(0, 5).join(", ")}${twice.size > 5 ? ", ..." : ""}`)
      return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    }
    const replyFor = format.format === "fc" ? fcReply : promptReply
    const singleTasks = byId(single, (line): Imported.RecordedTurns => [[replyFor(folder, line.result, line)]])
    // Each task's number of turns, which a line must have (upstream's length check).
    const taskTurns = multi.length === 0 ? new Map<string, number>() : new Map(
      (yield* loadTasks().pipe(Effect.mapError((e) => new Imported.ImportError({ path: dir, reason: "unreadable", detail: `the multi-turn tasks: ${e.message}` }))))
        .map((t) => [t.id, t.groundTruth.length])
    )
    const multiTasks = byId(multi, (line) => multiTurnOf(folder, format.format, line, taskTurns.get(line.id)))
    const failed = [...multiTasks].filter(([, turns]) => turns.some((t) => t.some((s) => "failed" in s))).map(([id]) => id)
    if (failed.length > 0) {
      notes.push(
        `${failed.length} multi-turn lines record an inference error or another number of turns than their task (${failed.slice(0, 5).join(", ")}${
          failed.length > 5 ? ", ..." : ""
        }): graded 0, as upstream grades them`
      )
    }

    for (const [group, names] of [["single-turn", CATEGORIES], ["multi-turn", MULTI_TURN_CATEGORIES]] as const) {
      const present = names.filter((c) => byCategory.has(c))
      const missing = names.filter((c) => !byCategory.has(c))
      if (present.length > 0 && missing.length > 0) notes.push(`no file of ${missing.length} ${group} categories (${missing.join(", ")}): their tasks are not imported`)
    }
    return {
      format: { name: format.format, actionSpace: format.format === "fc" ? "tools" : "text", why: format.why },
      name: folder,
      files: files.map(({ lines_: _, ...file }) => file),
      outputs: [
        ...(singleTasks.size > 0 ? [{ benchmark: "bfcl", tasks: singleTasks }] : []),
        ...(multiTasks.size > 0 ? [{ benchmark: "bfcl-multi-turn", tasks: multiTasks, options: { continuesTurn: continuesTurn(format.format) } }] : [])
      ],
      notes
    } satisfies Imported.ImportedResults
  })

/** The reader `assay import bfcl` uses. */
export const reader: Imported.ResultReader = { formats: FORMATS, read }

