/**
 * Equivalence of the multi-turn worlds and checker with upstream: every line of an oracle corpus,
 * its kind told by its shape —
 * - `fuzz-dev.jsonl` (seeded random calls) and `exec-dev.jsonl` (ground truth turn by turn): each
 *   call run through assay's executor, its result text and the state sha256 after it compared with
 *   what upstream's Python printed and dumped;
 * - `verdicts-dev.jsonl` (answers through upstream's eval runner): `checkMultiTurn`'s `valid`,
 *   `error_type`, error dict (canonical, states by sha256) and decoded answer compared with upstream's.
 */
import { readFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { Effect, Either, Schema } from "effect"
import { PinnedData } from "../../../src/index.ts"
import type { AnyApi, LongContext } from "./api.ts"
import { canonDump, parsePythonJson, sha256, stateDump } from "./canon.ts"
import { canonicalError, checkMultiTurn, isLongContextTask, type MultiTurnEntry } from "./checker.ts"
import { executeCall, openSession, type Session, sessionState } from "./executor.ts"
import { apis } from "./worlds.ts"
import { type Py, PyDict } from "./py.ts"

export interface MultiTurnDisagreement {
  readonly line: number
  /** Whether the line runs the long-context variants (and so needs upstream's long-context constants). */
  readonly longContext: boolean
  /** `fuzz<seed>` or the task id. */
  readonly name: string
  readonly className: string
  /** Index of the first differing call (-1: the initial state); verdicts: the turn that failed, or -1. */
  readonly call: number
  readonly text: string
  readonly field: "result" | "state_sha256" | "class" | "valid" | "error_type" | "error" | "model_result_decoded"
  readonly expected: string
  readonly actual: string
}

/** The three corpus formats (oracle/multi-turn/README.md), told apart by a line's fields. */
export type MultiTurnCorpusKind = "fuzz" | "exec" | "verdicts"

export interface MultiTurnReport {
  readonly corpus: string
  readonly kind: MultiTurnCorpusKind
  readonly lines: number
  /** Lines on which everything compared agrees (`notChecked` lines are not among them). */
  readonly agree: number
  /** Lines of long-context tasks, not run because upstream's `long_context.py` was not given. */
  readonly notChecked: number
  /** The first lines that disagree (20 unless told). */
  readonly disagree: ReadonlyArray<MultiTurnDisagreement>
  /** Per class (fuzz: the line's class; exec and verdicts: the first involved class): lines and lines agreeing. */
  readonly byClass: Readonly<Record<string, { readonly lines: number; readonly agree: number }>>
  /**
   * Verdicts: lines whose error text depends on Python's string hash order (a printed `set`); their
   * error dicts are compared with each printed set of strings taken in sorted order.
   */
  readonly hashOrderDependent?: number
}

const corpusError = (file: string, detail: string, reason: "missing" | "invalid" = "invalid") =>
  new PinnedData.DataError({ benchmark: "bfcl", file, reason, detail })

const field = (o: PyDict, k: string): Py => o.get(k) ?? null
const str = (v: Py): string => (typeof v === "string" ? v : "")
const dictOf = (v: Py): PyDict => (v instanceof PyDict ? v : PyDict.empty)

// Only the fields compared are decoded: states are compared by their sha256
const Call = Schema.Struct({ call: Schema.String, result: Schema.String, state_sha256: Schema.optional(Schema.String) })
const Line = Schema.Struct({
  seed: Schema.optional(Schema.Number),
  class: Schema.optional(Schema.String),
  source_task: Schema.optional(Schema.String),
  id: Schema.optional(Schema.String),
  involved_classes: Schema.Array(Schema.String),
  long_context: Schema.Boolean,
  initial_state_sha256: Schema.String,
  calls: Schema.optional(Schema.Array(Call)),
  turns: Schema.optional(Schema.Array(Schema.Struct({ calls: Schema.Array(Call), state_sha256: Schema.String })))
})
const decodeLine = Schema.decodeUnknownEither(Schema.parseJson(Line))

const categoryFile = (id: string): string => `BFCL_v4_${id.slice(0, id.lastIndexOf("_"))}.json`

const readText = (file: string, what: string) =>
  Effect.tryPromise({ try: () => readFile(file, "utf8"), catch: () => corpusError(file, `${what} ${file} cannot be read`, "missing") })

/** The task files' entries by task id (question and possible answer), read lazily per category (files as they are, no sha256 check). */
export const taskEntries = (v4Dir: string): ((id: string) => Effect.Effect<MultiTurnEntry, PinnedData.DataError>) => {
  const cache = new Map<string, Map<string, MultiTurnEntry>>()
  return (id: string) =>
    Effect.gen(function*() {
      const file = join(v4Dir, categoryFile(id))
      let byId = cache.get(file)
      if (byId === undefined) {
        const questions = (yield* readText(file, "task file")).split("\n").filter((l) => l.trim() !== "")
        const answerFile = join(v4Dir, "possible_answer", categoryFile(id))
        const answers = (yield* readText(answerFile, "possible-answer file")).split("\n").filter((l) => l.trim() !== "")
        byId = new Map()
        for (let i = 0; i < questions.length; i++) {
          const o = dictOf(parsePythonJson(questions[i] as string))
          const a = dictOf(parsePythonJson(answers[i] ?? "{}"))
          const taskId = str(field(o, "id"))
          if (str(field(a, "id")) !== taskId) return yield* Effect.fail(corpusError(answerFile, `line ${i + 1} does not answer ${taskId}`))
          const involved = field(o, "involved_classes")
          const truth = field(a, "ground_truth")
          byId.set(taskId, {
            id: taskId,
            involvedClasses: Array.isArray(involved) ? involved.map(str) : [],
            initialConfig: dictOf(field(o, "initial_config")),
            groundTruth: Array.isArray(truth) ? truth.map((turn) => (Array.isArray(turn) ? turn.map(str) : [])) : []
          })
        }
        cache.set(file, byId)
      }
      const entry = byId.get(id)
      if (entry === undefined) return yield* Effect.fail(corpusError(file, `task ${id} is not in ${file}`))
      return entry
    })
}

interface Mismatch {
  readonly call: number
  readonly text: string
  readonly field: MultiTurnDisagreement["field"]
  readonly expected: string
  readonly actual: string
}

/** Runs calls in order, checking each result and the state after each (or after each turn). */
const runChecked = (
  session: Session,
  steps: ReadonlyArray<{ readonly call: string; readonly result: string; readonly stateSha?: string }>,
  offset: number
): { readonly session: Session; readonly mismatch?: Mismatch } => {
  let s = session
  for (let j = 0; j < steps.length; j++) {
    const step = steps[j] as (typeof steps)[number]
    const out = executeCall(s, step.call)
    s = out.session
    if (out.result !== step.result) return { session: s, mismatch: { call: offset + j, text: step.call, field: "result", expected: step.result, actual: out.result } }
    if (step.stateSha !== undefined) {
      const st = sessionState(s)
      if (st.sha256 !== step.stateSha) return { session: s, mismatch: { call: offset + j, text: step.call, field: "state_sha256", expected: step.stateSha, actual: st.dump } }
    }
  }
  return { session: s }
}

export interface MultiTurnEquivalenceOptions {
  /** The folder of the task files (default: `../../v4` from the corpus). */
  readonly v4Dir?: string
  /** Upstream's long-context constants (`loadLongContext`); without them long-context lines are counted as not checked. */
  readonly longContext?: LongContext
  /** How many disagreeing lines to keep (20). */
  readonly keep?: number
}

/** The kind of a corpus line, from its fields; undefined when it is none of the three. */
export const corpusKindOf = (line: unknown): MultiTurnCorpusKind | undefined => {
  if (typeof line !== "object" || line === null) return undefined
  if ("seed" in line && "calls" in line) return "fuzz"
  if ("turns" in line && "initial_state_sha256" in line) return "exec"
  if ("variant" in line && "answer" in line && "valid" in line) return "verdicts"
  return undefined
}

// Only what is compared is decoded: the rest of a verdict line (the canonical error) is read with parsePythonJson
const VerdictLine = Schema.Struct({
  id: Schema.String,
  answer: Schema.Unknown,
  valid: Schema.Boolean,
  error_type: Schema.NullOr(Schema.String),
  model_result_decoded: Schema.optional(Schema.Unknown),
  hash_order_dependent: Schema.optional(Schema.Boolean)
})
const decodeVerdictLine = Schema.decodeUnknownEither(Schema.parseJson(VerdictLine))

/** Each printed Python set of str (`{'b', 'a'}`) with its items sorted, for text whose set order follows the string hash. */
const sortPrintedSets = (text: string): string =>
  text.replace(/\{('(?:[^'\\]|\\.)*'(?:, '(?:[^'\\]|\\.)*')+)\}/g, (_, items: string) => `{${items.split(", ").sort().join(", ")}}`)

/** Runs a corpus of any of the three kinds (told by its first line) and compares every line with upstream's. */
export const multiTurnEquivalence = (
  corpusPath: string,
  options: MultiTurnEquivalenceOptions = {}
): Effect.Effect<MultiTurnReport, PinnedData.DataError> =>
  Effect.gen(function*() {
    const text = yield* readText(corpusPath, "oracle corpus")
    const rows = text.split("\n")
    const first = rows.find((r) => r.trim() !== "")
    let kind: MultiTurnCorpusKind | undefined
    try {
      kind = first === undefined ? undefined : corpusKindOf(JSON.parse(first))
    } catch {
      kind = undefined
    }
    if (kind === undefined) {
      return yield* Effect.fail(corpusError(corpusPath, `${corpusPath} is not a multi-turn oracle corpus (lines with seed and calls, turns, or variant, answer and valid)`))
    }
    return kind === "verdicts" ? yield* runVerdicts(corpusPath, rows, options) : yield* runCalls(corpusPath, kind, rows, options)
  })

interface Tally {
  readonly disagree: Array<MultiTurnDisagreement>
  readonly byClass: Record<string, { lines: number; agree: number }>
  lines: number
  agree: number
  notChecked: number
}
const newTally = (): Tally => ({ disagree: [], byClass: {}, lines: 0, agree: 0, notChecked: 0 })

const runVerdicts = (corpusPath: string, rows: ReadonlyArray<string>, options: MultiTurnEquivalenceOptions) =>
  Effect.gen(function*() {
    const entryOf = taskEntries(options.v4Dir ?? join(dirname(corpusPath), "..", "..", "v4"))
    const t = newTally()
    let hashOrderDependent = 0
    for (let i = 0; i < rows.length; i++) {
      const raw = rows[i] as string
      if (raw.trim() === "") continue
      // The eval runner's model name: `v<n>`, n the 0-based line number (oracle/multi-turn/README.md)
      const modelName = `v${t.lines}`
      t.lines++
      const decoded = decodeVerdictLine(raw)
      if (Either.isLeft(decoded)) return yield* Effect.fail(corpusError(corpusPath, `oracle corpus ${corpusPath} line ${i + 1}: ${decoded.left.message}`))
      const o = decoded.right
      const entry = yield* entryOf(o.id)
      const className = entry.involvedClasses[0] ?? ""
      const tally = (t.byClass[className] ??= { lines: 0, agree: 0 })
      tally.lines++
      const longContext = isLongContextTask(o.id)
      if (longContext && options.longContext === undefined) {
        t.notChecked++
        continue
      }
      const fail = (m: Mismatch) => {
        if (t.disagree.length < (options.keep ?? 20)) t.disagree.push({ line: i + 1, longContext, name: o.id, className, ...m })
      }
      const checked = checkMultiTurn(entry, o.answer, { modelName, ...(options.longContext !== undefined ? { longContext: options.longContext } : {}) })
      if (Either.isLeft(checked)) {
        fail({ call: -1, text: "", field: "class", expected: "checkable", actual: checked.left.message })
        continue
      }
      const v = checked.right
      const turn = v.turn ?? -1
      if (v.valid !== o.valid) {
        fail({ call: turn, text: "", field: "valid", expected: String(o.valid), actual: String(v.valid) })
        continue
      }
      if (v.errorType !== o.error_type) {
        fail({ call: turn, text: "", field: "error_type", expected: String(o.error_type), actual: String(v.errorType) })
        continue
      }
      const expectedError = dictOf(parsePythonJson(raw)).get("error")
      let expected = expectedError === undefined ? "null" : canonDump(expectedError)
      let actual = v.error === null ? "null" : canonicalError(v.error, { digestStates: true })
      if (o.hash_order_dependent === true) {
        hashOrderDependent++
        expected = sortPrintedSets(expected)
        actual = sortPrintedSets(actual)
      }
      if (expected !== actual) {
        fail({ call: turn, text: "", field: "error", expected, actual })
        continue
      }
      if (o.model_result_decoded !== undefined) {
        const want = JSON.stringify(o.model_result_decoded)
        const got = JSON.stringify(v.decoded)
        if (want !== got) {
          fail({ call: turn, text: "", field: "model_result_decoded", expected: want, actual: got })
          continue
        }
      }
      t.agree++
      tally.agree++
    }
    return { corpus: corpusPath, kind: "verdicts" as const, lines: t.lines, agree: t.agree, notChecked: t.notChecked, disagree: t.disagree, byClass: t.byClass, hashOrderDependent }
  })

const runCalls = (corpusPath: string, kind: "fuzz" | "exec", rows: ReadonlyArray<string>, options: MultiTurnEquivalenceOptions) =>
  Effect.gen(function*() {
    const entryOf = taskEntries(options.v4Dir ?? join(dirname(corpusPath), "..", "..", "v4"))
    // Upstream's long-context objects as the generator's process has left them so far
    let longContext = options.longContext
    const byName = new Map<string, AnyApi>(apis.map((a) => [a.name, a]))
    const t = newTally()
    for (let i = 0; i < rows.length; i++) {
      const raw = rows[i] as string
      if (raw.trim() === "") continue
      t.lines++
      const decoded = decodeLine(raw)
      if (Either.isLeft(decoded)) return yield* Effect.fail(corpusError(corpusPath, `oracle corpus ${corpusPath} line ${i + 1}: ${decoded.left.message}`))
      const o = decoded.right
      const isFuzz = kind === "fuzz"
      const involved = o.involved_classes
      const className = isFuzz ? (o.class ?? "") : (involved[0] ?? "")
      const name = isFuzz ? `fuzz${o.seed}` : (o.id ?? "")
      const tally = (t.byClass[className] ??= { lines: 0, agree: 0 })
      tally.lines++
      const fail = (m: Mismatch) => {
        if (t.disagree.length < (options.keep ?? 20)) t.disagree.push({ line: i + 1, longContext: o.long_context, name, className, ...m })
      }
      const classes = involved.map((c) => byName.get(c))
      const missing = involved.find((_, k) => classes[k] === undefined)
      if (missing !== undefined) {
        fail({ call: -1, text: "", field: "class", expected: missing, actual: "not implemented" })
        continue
      }
      if (o.long_context && longContext === undefined) {
        t.notChecked++
        continue
      }
      const { initialConfig } = yield* entryOf((isFuzz ? o.source_task : o.id) ?? "")
      let session = openSession(classes as ReadonlyArray<AnyApi>, initialConfig, {
        modelName: isFuzz ? name : `gtexec${t.lines - 1}`,
        testEntryId: isFuzz ? "fuzz" : name,
        longContext: o.long_context ? longContext : undefined
      })
      const initial = sessionState(session)
      const expectedInitial = o.initial_state_sha256
      if (initial.sha256 !== expectedInitial) {
        fail({ call: -1, text: "", field: "state_sha256", expected: expectedInitial, actual: initial.dump })
        continue
      }
      let mismatch: Mismatch | undefined
      if (isFuzz) {
        const run = runChecked(session, (o.calls ?? []).map((c) => ({ call: c.call, result: c.result, stateSha: c.state_sha256 ?? "" })), 0)
        mismatch = run.mismatch
        session = run.session
      } else {
        let offset = 0
        for (const turn of o.turns ?? []) {
          const steps = turn.calls.map((c) => ({ call: c.call, result: c.result }))
          const r = runChecked(session, steps, offset)
          session = r.session
          offset += steps.length
          if (r.mismatch !== undefined) {
            mismatch = r.mismatch
            break
          }
          const st = sessionState(session)
          const expected = turn.state_sha256
          if (st.sha256 !== expected) {
            mismatch = { call: offset - 1, text: "(end of turn)", field: "state_sha256", expected, actual: st.dump }
            break
          }
        }
      }
      if (o.long_context && longContext !== undefined) {
        for (const api of session.classes) {
          if (api.shareBack !== undefined) longContext = api.shareBack(session.states.get(api.name), longContext)
        }
      }
      if (mismatch === undefined) {
        t.agree++
        tally.agree++
      } else fail(mismatch)
    }
    return { corpus: corpusPath, kind, lines: t.lines, agree: t.agree, notChecked: t.notChecked, disagree: t.disagree, byClass: t.byClass }
  })

/** The sha256 of a canonical state dump, for tests that build states by hand. */
export const stateSha256 = (classes: Parameters<typeof stateDump>[0]): string => sha256(stateDump(classes))
