/**
 * Equivalence with upstream: runs the checker over an oracle corpus (the line format of
 * `bfcl/oracle/verdicts-dev.jsonl` of the data folder) and compares each verdict with upstream's.
 */
import { readFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import { DataRoot, PinnedData } from "../../src/index.ts"
import { check, type DecodeOutcome, type Verdict } from "./checker.ts"
import { type DataOptions, FOLDER, loadAll, rootOf, type Task } from "./data.ts"
import { isDict, parsePyJson, pyEq, type PyValue } from "./pyjson.ts"

export interface Disagreement {
  readonly line: number
  readonly id: string
  readonly expected: { readonly valid: boolean; readonly error_type: string | null }
  readonly actual: { readonly valid: boolean; readonly error_type: string | null }
  /** The first field that differs: `valid`, then `error_type`. */
  readonly field: "valid" | "error_type"
}

export interface EquivalenceReport {
  readonly benchmark: "bfcl"
  readonly corpus: string
  readonly lines: number
  /** Lines whose `valid` and `error_type` both agree. */
  readonly agree: number
  readonly disagree: ReadonlyArray<Disagreement>
  /** Extra figure: lines whose `errors` list also equals upstream's exactly. */
  readonly errorsAgree: number
}

/** A corpus that cannot be used (`line` 0: the whole file), as the one data error. */
const corpusError = (corpus: string, line: number, detail: string, reason: "missing" | "invalid" = "invalid"): PinnedData.DataError =>
  new PinnedData.DataError({ benchmark: "bfcl", file: corpus, reason, detail: `oracle corpus ${corpus}${line > 0 ? ` line ${line}` : ""}: ${detail}` })

/** One corpus line, parsed: the task it answers, what decoding gave, and upstream's verdict. */
export interface CorpusEntry {
  readonly line: number
  readonly category: string
  readonly id: string
  readonly outcome: DecodeOutcome
  readonly valid: boolean
  readonly errorType: string | null
  readonly errors: ReadonlyArray<PyValue>
}

/** Parses a corpus text; relevance categories record `{"decoded": V}` or `{"decode_error": msg}`. */
export const parseCorpus = (corpus: string, text: string): Effect.Effect<ReadonlyArray<CorpusEntry>, PinnedData.DataError> =>
  Effect.suspend(() => {
    const entries: Array<CorpusEntry> = []
    const lines = text.split("\n")
    for (let i = 0; i < lines.length; i++) {
      const raw = lines[i] as string
      if (raw.trim() === "") continue
      const line = i + 1
      const parsed = parsePyJson(raw)
      if (!parsed.ok) return Effect.fail(corpusError(corpus, line, `${parsed.error.message} at ${parsed.error.offset}`))
      const o = parsed.value
      if (!isDict(o)) return Effect.fail(corpusError(corpus, line, "not an object"))
      const category = o.get("category")
      const id = o.get("id")
      const answer = o.get("answer")
      const valid = o.get("valid")
      const errorType = o.get("error_type")
      const errors = o.get("errors")
      if (
        typeof category !== "string" || typeof id !== "string" || answer === undefined || typeof valid !== "boolean" ||
        (errorType !== null && typeof errorType !== "string") || !Array.isArray(errors)
      ) return Effect.fail(corpusError(corpus, line, "expected category, id, answer, valid, error_type, errors"))
      let outcome: DecodeOutcome = { _tag: "Decoded", value: answer }
      if (category === "irrelevance" || category === "live_irrelevance" || category === "live_relevance") {
        const decoded = isDict(answer) && answer.size === 1 ? answer.get("decoded") : undefined
        const decodeError = isDict(answer) && answer.size === 1 ? answer.get("decode_error") : undefined
        if (decoded !== undefined) outcome = { _tag: "Decoded", value: decoded }
        else if (typeof decodeError === "string") outcome = { _tag: "DecodeError", message: decodeError }
        else return Effect.fail(corpusError(corpus, line, "a relevance answer must be {decoded} or {decode_error}"))
      }
      entries.push({ line, category, id, outcome, valid, errorType: errorType ?? null, errors: errors as ReadonlyArray<PyValue> })
    }
    return Effect.succeed(entries)
  })

/** Compares the checker's verdicts with upstream's over parsed entries. */
export const compare = (
  corpus: string,
  entries: ReadonlyArray<CorpusEntry>,
  tasks: ReadonlyMap<string, Task>
): Effect.Effect<EquivalenceReport, PinnedData.DataError> =>
  Effect.suspend(() => {
    let agree = 0
    let errorsAgree = 0
    const disagree: Array<Disagreement> = []
    for (const e of entries) {
      const task = tasks.get(e.id)
      if (task === undefined || task.category !== e.category)
        return Effect.fail(corpusError(corpus, e.line, `no ${e.category} task ${e.id}`))
      const v: Verdict = check(task, e.outcome)
      const field = v.valid !== e.valid ? "valid" : v.errorType !== e.errorType ? "error_type" : null
      if (field === null) agree++
      else
        disagree.push({
          line: e.line,
          id: e.id,
          expected: { valid: e.valid, error_type: e.errorType },
          actual: { valid: v.valid, error_type: v.errorType },
          field
        })
      if (pyEq(v.upstreamErrors, e.errors)) errorsAgree++
    }
    return Effect.succeed({ benchmark: "bfcl" as const, corpus, lines: entries.length, agree, disagree, errorsAgree })
  })

/** Indexes tasks by id. */
export const tasksById = (tasks: ReadonlyArray<Task>): ReadonlyMap<string, Task> => new Map(tasks.map((t) => [t.id, t]))

/** The provider's own corpus: `bfcl/oracle/verdicts-dev.jsonl` under the data root. */
export const defaultCorpusPath = (options?: DataOptions): string => join(rootOf(options), FOLDER, "oracle", "verdicts-dev.jsonl")

/** Where the oracle lives and how to get it, when the default corpus is not in the data folder. */
const missingOracle = (options?: DataOptions): string =>
  `the oracle corpus is not in the data folder ${DataRoot.describeDataRoot(rootOf(options))}. It has no download URL (its verdicts were made by ` +
  "running upstream's checker), so a download pull leaves it out: run " +
  "`assay data pull bfcl --from DIR` with DIR a local copy holding bfcl/oracle/verdicts-dev.jsonl, or pass --corpus FILE"

/** Runs the checker over the corpus file, loading the tasks from the data folder. */
export const runEquivalence = (corpusPath: string, options?: DataOptions): Effect.Effect<EquivalenceReport, PinnedData.DataError> =>
  Effect.gen(function* () {
    const text = yield* Effect.tryPromise({
      try: () => readFile(corpusPath, "utf8"),
      catch: (cause) =>
        corpusError(
          corpusPath,
          0,
          resolve(corpusPath) === resolve(defaultCorpusPath(options)) && (cause as { code?: unknown })?.code === "ENOENT"
            ? missingOracle(options)
            : cause instanceof Error ? cause.message : String(cause),
          "missing"
        )
    })
    const entries = yield* parseCorpus(corpusPath, text)
    const tasks = tasksById(yield* loadAll(options))
    return yield* compare(corpusPath, entries, tasks)
  })
