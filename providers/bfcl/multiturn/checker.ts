/**
 * Upstream's grading of one multi-turn entry (`eval_runner._evaluate_single_multi_turn_entry` and
 * `multi_turn_checker.multi_turn_checker`), as a pure function over the worlds:
 *
 * - the runner: an answer that is not a list is an inference error; a turn count other than the
 *   ground truth's is a forced termination; each step is decoded, and steps that fail to decode or
 *   decode to `[]` / `[""]` are dropped;
 * - per turn, the model's steps run in one executor session (model name `<model>_eval`) and the
 *   turn's ground truth in another (`<model>_ground_truth_eval`); both persist from turn to turn,
 *   and share what upstream's one process shares between them (`shareProcessState`);
 * - a non-empty ground-truth turn with no model step fails (`empty_turn_model_response`); an empty
 *   ground-truth turn is not checked (its model calls still run);
 * - else every involved instance's public attributes are compared with Python `==`
 *   (`instance_state_mismatch`), then every ground-truth result of the turn must be among the model's
 *   results of all turns so far, as a multiset (`execution_response_mismatch`).
 *
 * The error dict is upstream's, with its keys in upstream's order, as Python values; `canonicalError`
 * prints it as the oracle corpus does. Upstream's irrelevance checker is not part of the verdict (the
 * runner does not call it at the pinned commit).
 */
import { Data, Either } from "effect"
import type { AnyApi, LongContext } from "./api.ts"
import { canonDump, sha256 } from "./canon.ts"
import { executeCall, openSession, type Session } from "./executor.ts"
import { type Py, PyDict, pyEq, type PyObject, registerEq } from "./py.ts"
import type { TravelState } from "./travel.ts"
import type { TwitterState } from "./twitter.ts"
import { apis } from "./worlds.ts"

/** The task as the checker needs it (upstream's question entry and its possible answer). */
export interface MultiTurnEntry {
  /** The task id; upstream takes the category, hence the long-context variants, from it. */
  readonly id: string
  readonly involvedClasses: ReadonlyArray<string>
  /** The question entry's `initial_config`, read keeping ints and floats apart (`parsePythonJson`). */
  readonly initialConfig: PyDict
  /** The possible answer's `ground_truth`: turns of call strings. */
  readonly groundTruth: ReadonlyArray<ReadonlyArray<string>>
}

/** A handler's `decode_execute` of one step: its call strings, or undefined when it cannot be decoded. */
export type DecodeStep = (step: unknown) => ReadonlyArray<string> | undefined

export interface MultiTurnOptions {
  /** The model name upstream's runner was given (instance names, which can show in results, contain it). Default `assay`. */
  readonly modelName?: string
  /** Upstream's `long_context.py` constants (`longContext.ts`); needed for long-context tasks. */
  readonly longContext?: LongContext
  /** Default: a list of strings is the step's calls, anything else fails to decode (the oracle's handler). */
  readonly decodeStep?: DecodeStep
}

export type MultiTurnErrorType =
  | "multi_turn:inference_error"
  | "multi_turn:force_terminated"
  | "multi_turn:empty_turn_model_response"
  | "multi_turn:instance_state_mismatch"
  | "multi_turn:execution_response_mismatch"

/** Decoded answer: turns → steps → call strings (upstream's `model_result_decoded`). */
export type DecodedAnswer = ReadonlyArray<ReadonlyArray<ReadonlyArray<string>>>

export interface MultiTurnVerdict {
  readonly valid: boolean
  readonly errorType: MultiTurnErrorType | null
  /** Upstream's `error_message` (the runner's two errors hold it in a one-element list; this is its text). */
  readonly errorMessage: string | null
  /** Upstream's error dict (`error_message`, `error_type`, `details`, `execution_result`), as Python values. */
  readonly error: PyDict | null
  /** The turn that failed (checker errors only). */
  readonly turn: number | null
  /** The answer after decoding and dropping empty steps (null when it did not get past the runner's checks). */
  readonly decoded: DecodedAnswer | null
}

/** The entry cannot be checked here: a class without a world, or long-context constants not given. */
export class MultiTurnCheckError extends Data.TaggedError("MultiTurnCheckError")<{
  readonly reason: "unknown-class" | "long-context-missing"
  readonly detail: string
}> {
  override get message() {
    return `bfcl multi-turn ${this.detail}`
  }
}

/** Upstream: `"long_context" in category or "composite" in category`, the category being `id.rsplit("_", 1)[0]`. */
export const isLongContextTask = (id: string): boolean => {
  const at = id.lastIndexOf("_")
  const category = at < 0 ? id : id.slice(0, at)
  return category.includes("long_context") || category.includes("composite")
}

/** `is_empty_execute_response`: `[]`, or one item of length 0 (`[""]`, `[[]]`). */
export const isEmptyExecuteResponse = (items: ReadonlyArray<unknown>): boolean => {
  if (items.length === 0) return true
  const first = items[0]
  return items.length === 1 && (typeof first === "string" || Array.isArray(first)) && first.length === 0
}

const defaultDecode: DecodeStep = (step) =>
  Array.isArray(step) && step.every((c): c is string => typeof c === "string") ? step : undefined

/** What Python's `for step in turn` yields: a list's items, a str's characters, a dict's keys; nothing else is iterable here. */
const stepsOf = (turn: unknown): ReadonlyArray<unknown> => {
  if (Array.isArray(turn)) return turn
  if (typeof turn === "string") return Array.from(turn)
  if (typeof turn === "object" && turn !== null) return Object.keys(turn)
  return []
}

const byName = new Map<string, AnyApi>(apis.map((a) => [a.name, a]))

// File.__eq__ and Directory.__eq__: name and content / contents (parent pointers are not compared)
interface FileLike extends PyObject {
  readonly name: Py
  readonly content: Py
}
interface DirLike extends PyObject {
  readonly name: Py
  readonly contents: Py
}
const isFile = (o: PyObject): o is FileLike => o.pyClass === "File" && "name" in o && "content" in o
const isDir = (o: PyObject): o is DirLike => o.pyClass === "Directory" && "name" in o && "contents" in o
registerEq("File", (a, b) => isFile(a) && isFile(b) && pyEq(a.name, b.name) && pyEq(a.content, b.content))
registerEq("Directory", (a, b) => isDir(a) && isDir(b) && pyEq(a.name, b.name) && pyEq(a.contents, b.contents))

const isTravel = (s: unknown): s is TravelState => typeof s === "object" && s !== null && "sharedCards" in s && "credit_card_list" in s
const isTwitter = (s: unknown): s is TwitterState => typeof s === "object" && s !== null && "sharedMentions" in s

/**
 * What upstream's one process shares between the model's instances and the ground truth's, carried
 * from the session that just ran (`from`) into the other: long-context TravelAPI holds the module's
 * extension cards themselves (a charge by either shows in both), and TwitterAPI's `post_tweet`
 * default `mentions` list is one list for every instance. The sessions alternate only between the
 * model's part of a turn and the ground truth's, so carrying at those points suffices.
 */
const shareProcessState = (from: Session, to: Session): Session => {
  let states: Map<string, unknown> | undefined
  for (const api of to.classes) {
    const mine = from.states.get(api.name)
    const theirs = to.states.get(api.name)
    let shared = theirs
    if (isTravel(mine) && isTravel(theirs) && mine.credit_card_list instanceof PyDict && theirs.credit_card_list instanceof PyDict) {
      let cards = theirs.credit_card_list
      for (const id of theirs.sharedCards) {
        const card = mine.sharedCards.some((x) => pyEq(x, id)) ? mine.credit_card_list.get(id) : undefined
        if (card !== undefined && cards.has(id) && cards.get(id) !== card) cards = cards.set(id, card)
      }
      if (cards !== theirs.credit_card_list) shared = { ...theirs, credit_card_list: cards }
    }
    if (isTwitter(mine) && isTwitter(theirs) && mine.sharedMentions !== theirs.sharedMentions) shared = { ...theirs, sharedMentions: mine.sharedMentions }
    if (shared !== theirs) (states ??= new Map(to.states)).set(api.name, shared)
  }
  return states === undefined ? to : { ...to, states }
}

const runCalls = (session: Session, calls: ReadonlyArray<string>): { readonly session: Session; readonly results: Array<string> } => {
  let s = session
  const results: Array<string> = []
  for (const call of calls) {
    const out = executeCall(s, call)
    s = out.session
    results.push(out.result)
  }
  return { session: s, results }
}

/** `vars(instance)` minus private names, as a dict. */
const publicDict = (session: Session, api: AnyApi): PyDict => PyDict.of(api.publicState(session.states.get(api.name)))

const runnerFailure = (errorType: MultiTurnErrorType, message: string): MultiTurnVerdict => ({
  valid: false,
  errorType,
  errorMessage: message,
  error: PyDict.fromRecord({ error_message: [message], error_type: errorType }),
  turn: null,
  decoded: null
})

/**
 * Grades `answer` (the runner's `model_result_list`: turns → steps → the model's output for the
 * step, which `decodeStep` turns into call strings) against `entry`, as upstream's eval runner does.
 */
export const checkMultiTurn = (
  entry: MultiTurnEntry,
  answer: unknown,
  options: MultiTurnOptions = {}
): Either.Either<MultiTurnVerdict, MultiTurnCheckError> => {
  const classes: Array<AnyApi> = []
  for (const name of entry.involvedClasses) {
    const api = byName.get(name)
    if (api === undefined) return Either.left(new MultiTurnCheckError({ reason: "unknown-class", detail: `task ${entry.id}: no world for class ${name}` }))
    classes.push(api)
  }
  const longContext = isLongContextTask(entry.id)
  if (longContext && options.longContext === undefined) {
    return Either.left(new MultiTurnCheckError({ reason: "long-context-missing", detail: `task ${entry.id}: upstream's long_context.py constants are needed and were not given` }))
  }
  const groundTruth = entry.groundTruth
  if (!Array.isArray(answer)) {
    return Either.right(runnerFailure("multi_turn:inference_error", "Error during inference phase. Model did not output a list of model responses."))
  }
  if (answer.length !== groundTruth.length) {
    return Either.right(runnerFailure(
      "multi_turn:force_terminated",
      `Model was force-terminated during inference phase. The length of the model result turns (${answer.length}) does not match the length of the ground truth turns (${groundTruth.length}).`
    ))
  }
  const decode = options.decodeStep ?? defaultDecode
  const decoded: DecodedAnswer = answer.map((turn) =>
    stepsOf(turn).flatMap((step) => {
      const calls = decode(step)
      return calls === undefined || isEmptyExecuteResponse(calls) ? [] : [calls]
    })
  )

  const modelName = options.modelName ?? "assay"
  const sessionOptions = { testEntryId: entry.id, longContext: longContext ? options.longContext : undefined }
  let model = openSession(classes, entry.initialConfig, { ...sessionOptions, modelName: `${modelName}_eval` })
  let truth = openSession(classes, entry.initialConfig, { ...sessionOptions, modelName: `${modelName}_ground_truth_eval` })
  const executionResults: Array<PyDict> = []
  const allModelResults: Array<string> = []
  const fail = (turn: number, errorType: MultiTurnErrorType, message: string, rest: ReadonlyArray<readonly [string, Py]>): MultiTurnVerdict => ({
    valid: false,
    errorType,
    errorMessage: message,
    error: PyDict.of([["error_message", message], ["error_type", errorType], ...rest]),
    turn,
    decoded
  })

  for (let turn = 0; turn < groundTruth.length; turn++) {
    const steps = decoded[turn] ?? []
    const perStep: Array<Array<string>> = []
    for (const step of steps) {
      const ran = runCalls(model, step)
      model = ran.session
      perStep.push(ran.results)
      allModelResults.push(...ran.results)
    }
    truth = shareProcessState(model, truth)
    const truthCalls = groundTruth[turn] ?? []
    const ranTruth = runCalls(truth, truthCalls)
    truth = ranTruth.session
    model = shareProcessState(truth, model)
    executionResults.push(PyDict.fromRecord({ model: perStep, ground_truth: ranTruth.results }))

    if (truthCalls.length === 0) continue
    if (steps.length === 0 || isEmptyExecuteResponse(steps)) {
      return Either.right(fail(turn, "multi_turn:empty_turn_model_response", `Model response list is empty for turn ${turn}`, [
        ["details", PyDict.fromRecord({ execution_result: [...executionResults] })]
      ]))
    }

    for (const api of classes) {
      const truthState = api.publicState(truth.states.get(api.name))
      const modelState = new Map(api.publicState(model.states.get(api.name)))
      const differences: Array<readonly [string, Py]> = []
      for (const [attr, value] of truthState) {
        const mine = modelState.get(attr) ?? null
        if (!pyEq(mine, value)) differences.push([attr, PyDict.fromRecord({ model: mine, ground_truth: value })])
      }
      if (differences.length > 0) {
        return Either.right(fail(turn, "multi_turn:instance_state_mismatch", `Model instance for ${api.name} does not match the state with ground truth instance.`, [
          ["details", PyDict.fromRecord({
            differences: PyDict.of(differences),
            model_instance_state: publicDict(model, api),
            ground_truth_instance_state: publicDict(truth, api)
          })],
          ["execution_result", [...executionResults]]
        ]))
      }
    }

    const remaining = [...allModelResults]
    const missing: Array<string> = []
    for (const expected of ranTruth.results) {
      const at = remaining.indexOf(expected)
      if (at < 0) missing.push(expected)
      else remaining.splice(at, 1)
    }
    if (missing.length > 0) {
      return Either.right(fail(
        turn,
        "multi_turn:execution_response_mismatch",
        `Model response execution results so far does not contain all the ground truth response execution results for turn ${turn}.`,
        [["details", PyDict.of([
          ["missing_items", missing],
          ["model_response (including all previous turns)", [...allModelResults]],
          ["ground_truth_response (only the current turn)", ranTruth.results]
        ])]]
      ))
    }
  }
  return Either.right({ valid: true, errorType: null, errorMessage: null, error: null, turn: null, decoded })
}

/**
 * The error dict as the oracle corpus prints it: `canon` of every value, and (`digestStates`) the
 * two full instance states replaced by `{"sha256": <sha256 of their canonical dump>}`.
 */
export const canonicalError = (error: PyDict, options: { readonly digestStates?: boolean } = {}): string => {
  if (options.digestStates !== true) return canonDump(error)
  const details = error.get("details")
  if (!(details instanceof PyDict)) return canonDump(error)
  let d = details
  for (const key of ["model_instance_state", "ground_truth_instance_state"]) {
    const state = d.get(key)
    if (state !== undefined) d = d.set(key, PyDict.fromRecord({ sha256: sha256(canonDump(state)) }))
  }
  return canonDump(error.set("details", d))
}
