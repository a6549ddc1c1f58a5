/**
 * Equivalence of the multi-turn worlds with upstream's executor: every call of an oracle line
 * (`fuzz-dev.jsonl`: seeded random calls; `exec-dev.jsonl`: ground truth turn by turn) is run
 * through assay's executor, and its result text and the state sha256 after it are compared with
 * what upstream's Python printed and dumped.
 */
import { readFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { Effect, Either, Schema } from "effect"
import { PinnedData } from "../../../src/index.ts"
import type { AnyApi } from "./api.ts"
import { parsePythonJson, readLongContext, sha256, stateDump } from "./canon.ts"
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
  /** Index of the first differing call (-1: the initial state). */
  readonly call: number
  readonly text: string
  readonly field: "result" | "state_sha256" | "class"
  readonly expected: string
  readonly actual: string
}

export interface MultiTurnReport {
  readonly corpus: string
  readonly lines: number
  readonly agree: number
  /** The first lines that disagree (20 unless told). */
  readonly disagree: ReadonlyArray<MultiTurnDisagreement>
  /** Per class (fuzz: the line's class; exec: the first involved class): lines and lines agreeing. */
  readonly byClass: Readonly<Record<string, { readonly lines: number; readonly agree: number }>>
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

/** The task files' initial configs by task id, read lazily per category file. */
const taskConfigs = (v4Dir: string) => {
  const cache = new Map<string, Map<string, PyDict>>()
  return (id: string) =>
    Effect.gen(function*() {
      const file = join(v4Dir, categoryFile(id))
      let byId = cache.get(file)
      if (byId === undefined) {
        const text = yield* Effect.tryPromise({ try: () => readFile(file, "utf8"), catch: () => corpusError(file, `task file ${file} cannot be read`, "missing") })
        byId = new Map()
        for (const raw of text.split("\n")) {
          if (raw.trim() === "") continue
          // Only the id and the initial config are needed: parse the line, keep those two
          const o = dictOf(parsePythonJson(raw))
          byId.set(str(field(o, "id")), dictOf(field(o, "initial_config")))
        }
        cache.set(file, byId)
      }
      const config = byId.get(id)
      if (config === undefined) return yield* Effect.fail(corpusError(file, `task ${id} is not in ${file}`))
      return config
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

/** Runs a fuzz or exec corpus and compares every call with upstream's. */
export const multiTurnEquivalence = (
  corpusPath: string,
  options: {
    /** The folder of the task files (default: `../../v4` from the corpus). */
    readonly v4Dir?: string
    /** Upstream's `long_context.py` constants as JSON (default: `../../long_context.json` from the corpus). */
    readonly longContextFile?: string
    /** How many disagreeing lines to keep (20). */
    readonly keep?: number
  } = {}
): Effect.Effect<MultiTurnReport, PinnedData.DataError> =>
  Effect.gen(function*() {
    const text = yield* Effect.tryPromise({ try: () => readFile(corpusPath, "utf8"), catch: () => corpusError(corpusPath, `oracle corpus ${corpusPath} cannot be read`, "missing") })
    const configOf = taskConfigs(options.v4Dir ?? join(dirname(corpusPath), "..", "..", "v4"))
    const longContextFile = options.longContextFile ?? join(dirname(corpusPath), "..", "..", "long_context.json")
    // Upstream's long-context objects as the generator's process has left them so far
    let longContext = yield* Effect.tryPromise(() => readFile(longContextFile, "utf8")).pipe(
      Effect.map((t) => readLongContext(t)),
      Effect.orElseSucceed(() => undefined)
    )
    const byName = new Map<string, AnyApi>(apis.map((a) => [a.name, a]))
    const disagree: Array<MultiTurnDisagreement> = []
    const byClass: Record<string, { lines: number; agree: number }> = {}
    let lines = 0
    let agree = 0
    const rows = text.split("\n")
    for (let i = 0; i < rows.length; i++) {
      const raw = rows[i] as string
      if (raw.trim() === "") continue
      lines++
      const decoded = decodeLine(raw)
      if (Either.isLeft(decoded)) return yield* Effect.fail(corpusError(corpusPath, `oracle corpus ${corpusPath} line ${i + 1}: ${decoded.left.message}`))
      const o = decoded.right
      const isFuzz = o.seed !== undefined
      const involved = o.involved_classes
      const className = isFuzz ? (o.class ?? "") : (involved[0] ?? "")
      const name = isFuzz ? `fuzz${o.seed}` : (o.id ?? "")
      const tally = (byClass[className] ??= { lines: 0, agree: 0 })
      tally.lines++
      const fail = (m: Mismatch) => {
        if (disagree.length < (options.keep ?? 20)) disagree.push({ line: i + 1, longContext: o.long_context, name, className, ...m })
      }
      const classes = involved.map((c) => byName.get(c))
      const missing = involved.find((_, k) => classes[k] === undefined)
      if (missing !== undefined) {
        fail({ call: -1, text: "", field: "class", expected: missing, actual: "not implemented" })
        continue
      }
      if (o.long_context && longContext === undefined) {
        fail({ call: -1, text: "", field: "class", expected: longContextFile, actual: "long-context constants not found" })
        continue
      }
      const config = yield* configOf((isFuzz ? o.source_task : o.id) ?? "")
      let session = openSession(classes as ReadonlyArray<AnyApi>, config, {
        modelName: isFuzz ? name : `gtexec${lines - 1}`,
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
        agree++
        tally.agree++
      } else fail(mismatch)
    }
    return { corpus: corpusPath, lines, agree, disagree, byClass }
  })

/** The sha256 of a canonical state dump, for tests that build states by hand. */
export const stateSha256 = (classes: Parameters<typeof stateDump>[0]): string => sha256(stateDump(classes))
