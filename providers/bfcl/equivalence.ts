/**
 * Equivalence with upstream: runs the checker over an oracle corpus (the line format of
 * `bfcl/oracle/verdicts-dev.jsonl` of the data folder) and compares each verdict with upstream's;
 * `bfclEquivalence` adds the multi-turn corpora (`bfcl/oracle/multi-turn/`, multiturn/equivalence.ts).
 */
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import { DataRoot, PinnedData } from "../../src/index.ts"
import { check, type DecodeOutcome, type Verdict } from "./checker.ts"
import { type DataOptions, FOLDER, LONG_CONTEXT_FILE, LONG_CONTEXT_PATH, loadAll, rootOf, type Task } from "./data.ts"
import type { LongContext } from "./multiturn/api.ts"
import { corpusKindOf, type MultiTurnCorpusKind, type MultiTurnDisagreement, multiTurnEquivalence } from "./multiturn/equivalence.ts"
import { LONG_CONTEXT_ENV, loadLongContext } from "./multiturn/longContext.ts"
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

// ---------------------------------------------------------------------------------------------
// Every corpus: the single-turn verdicts and the three multi-turn corpora

/** One corpus's figure in the whole report. */
export interface CorpusFigure {
  readonly corpus: string
  /** `single-turn verdicts`, or `multi-turn fuzz` / `exec` / `verdicts`. */
  readonly kind: string
  readonly lines: number
  readonly agree: number
  /** Lines not run (multi-turn long-context lines when upstream's long_context.py is absent). */
  readonly notChecked: number
}

/** What `assay equivalence bfcl` reports: the sums over every corpus run, each corpus's figure, and the disagreements tagged with their corpus. */
export interface BfclEquivalenceResult {
  readonly benchmark: "bfcl"
  readonly corpus: string
  readonly lines: number
  readonly agree: number
  /** Long-context lines not checked (long_context.py absent): in `lines`, not in `agree`. */
  readonly notChecked: number
  readonly disagree: ReadonlyArray<{ readonly corpus: string } & (Disagreement | MultiTurnDisagreement)>
  readonly notes: ReadonlyArray<string>
  readonly corpora: ReadonlyArray<CorpusFigure>
}

/** The multi-turn corpora under `bfcl/oracle/multi-turn/`, run when present. */
export const MULTI_TURN_CORPORA = ["exec-dev.jsonl", "fuzz-dev.jsonl", "verdicts-dev.jsonl"] as const

const multiTurnDir = (options?: DataOptions): string => join(rootOf(options), FOLDER, "oracle", "multi-turn")

/** Upstream's long-context constants, or undefined when the file is not there (any other failure is an error). */
const longContextIfPresent = (options?: DataOptions) =>
  loadLongContext(options).pipe(
    Effect.map((lc): LongContext | undefined => lc),
    Effect.catchIf((e) => e.reason === "missing", () => Effect.succeed(undefined))
  )

/** A corpus file's format, from its first line: the single-turn verdicts or one of the multi-turn kinds. */
const formatOf = (corpus: string): Effect.Effect<"single" | MultiTurnCorpusKind, PinnedData.DataError> =>
  Effect.gen(function*() {
    const text = yield* Effect.tryPromise({
      try: () => readFile(corpus, "utf8"),
      catch: (cause) => corpusError(corpus, 0, cause instanceof Error ? cause.message : String(cause), "missing")
    })
    const first = text.split("\n").find((l) => l.trim() !== "") ?? ""
    const parsed = parsePyJson(first)
    if (!parsed.ok || !isDict(parsed.value)) return yield* Effect.fail(corpusError(corpus, 1, "not a JSON object"))
    const o = parsed.value
    if (o.has("errors") && o.has("answer")) return "single" as const
    const kind = corpusKindOf(Object.fromEntries(Array.from(o.keys(), (k) => [k, true])))
    if (kind === undefined) {
      return yield* Effect.fail(corpusError(corpus, 1, "neither single-turn verdicts (category, id, answer, valid, error_type, errors) nor a multi-turn corpus (seed and calls; turns; variant, answer and valid)"))
    }
    return kind
  })

const figureNote = (f: CorpusFigure): string =>
  `  ${f.kind} (${f.corpus}): ${f.agree} of ${f.lines} lines agree${f.notChecked === 0 ? "" : `, ${f.notChecked} long-context lines not checked`}`

const longContextNote = (file: string): string =>
  `  long-context lines need upstream's long_context.py at ${file} (${LONG_CONTEXT_FILE.url}, sha256 ${LONG_CONTEXT_FILE.sha256}), or ${LONG_CONTEXT_ENV} naming a copy; \`assay data pull bfcl-multi-turn\` fetches it`

/**
 * `assay equivalence bfcl`: with no corpus, the single-turn verdicts (required; `singleTurn: false`
 * leaves them out, for the multi-turn benchmark) and each multi-turn corpus present in the data
 * folder; with `corpus`, that file, whichever of the formats it is.
 */
export const bfclEquivalence = (
  corpus: string | null,
  options?: DataOptions & { readonly singleTurn?: boolean }
): Effect.Effect<BfclEquivalenceResult, PinnedData.DataError> =>
  Effect.gen(function*() {
    const runs: Array<{ readonly corpus: string; readonly format: "single" | MultiTurnCorpusKind }> = []
    if (corpus === null) {
      if (options?.singleTurn !== false) runs.push({ corpus: defaultCorpusPath(options), format: "single" })
      for (const f of MULTI_TURN_CORPORA) {
        const path = join(multiTurnDir(options), f)
        if (existsSync(path)) runs.push({ corpus: path, format: f.startsWith("exec") ? "exec" : f.startsWith("fuzz") ? "fuzz" : "verdicts" })
      }
      if (runs.length === 0) {
        return yield* Effect.fail(corpusError(multiTurnDir(options), 0, `none of ${MULTI_TURN_CORPORA.join(", ")} is in ${multiTurnDir(options)} (they are made by running upstream's code and have no download URL: copy them there, or pass --corpus FILE)`, "missing"))
      }
    } else runs.push({ corpus, format: yield* formatOf(corpus) })

    const needsLongContext = runs.some((r) => r.format !== "single")
    const longContext = needsLongContext ? yield* longContextIfPresent(options) : undefined
    const v4Dir = join(rootOf(options), FOLDER, "v4")
    const figures: Array<CorpusFigure> = []
    const disagree: Array<{ readonly corpus: string } & (Disagreement | MultiTurnDisagreement)> = []
    for (const run of runs) {
      if (run.format === "single") {
        const r = yield* runEquivalence(run.corpus, options)
        figures.push({ corpus: run.corpus, kind: "single-turn verdicts", lines: r.lines, agree: r.agree, notChecked: 0 })
        disagree.push(...r.disagree.map((d) => ({ corpus: run.corpus, ...d })))
      } else {
        const r = yield* multiTurnEquivalence(run.corpus, { v4Dir, ...(longContext !== undefined ? { longContext } : {}) })
        figures.push({ corpus: run.corpus, kind: `multi-turn ${r.kind}`, lines: r.lines, agree: r.agree, notChecked: r.notChecked })
        disagree.push(...r.disagree.map((d) => ({ corpus: run.corpus, ...d })))
      }
    }
    const longContextFile = process.env[LONG_CONTEXT_ENV] ?? join(rootOf(options), FOLDER, LONG_CONTEXT_PATH)
    return {
      benchmark: "bfcl" as const,
      corpus: corpus ?? join(rootOf(options), FOLDER, "oracle"),
      lines: figures.reduce((n, f) => n + f.lines, 0),
      agree: figures.reduce((n, f) => n + f.agree, 0),
      notChecked: figures.reduce((n, f) => n + f.notChecked, 0),
      disagree,
      notes: [
        ...(figures.length > 1 || figures.some((f) => f.notChecked > 0) ? figures.map(figureNote) : []),
        ...(figures.some((f) => f.notChecked > 0) ? [longContextNote(longContextFile)] : [])
      ],
      corpora: figures
    }
  })
