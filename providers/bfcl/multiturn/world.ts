/**
 * A multi-turn task's world: the involved classes' instances (the executor's session, immutable
 * values) as the Attempt's world, and the one tool that runs a call string on them.
 *
 * The World value holds the calls executed so far and their result texts (table `calls`, in
 * order). The session they lead to is a function of the task's initial session and those calls;
 * it is kept beside each call record (by the record's identity), so a live Attempt executes each
 * call once, and a world whose records came from elsewhere (a recording) is brought up to date by
 * running its calls again. Forking is free: neither the World nor the session is ever changed.
 */
import { type Canonical, type Tool, World } from "../../../src/index.ts"
import type { LongContext } from "./api.ts"
import { executeCall, openSession, type Session, sessionState } from "./executor.ts"
import type { MultiTurnTask } from "./tasks.ts"
import { apis } from "./worlds.ts"

/** The tool every model call runs through (never offered to the model: the function docs are). */
export const EXECUTE_TOOL = "bfcl-multi-turn/execute"

/** Upstream's runner names instances after the model; the checker's default is the same name. */
export const MODEL_NAME = "assay"

const CALLS = "calls"

interface CallRecord {
  readonly call: string
  readonly result: string
}

const byName = new Map(apis.map((a) => [a.name, a]))

/** The classes of a task with a world each, or the first one without. */
export const classesOf = (task: Pick<MultiTurnTask, "involvedClasses">) => {
  const found = task.involvedClasses.map((c) => byName.get(c))
  const missing = task.involvedClasses.find((_, i) => found[i] === undefined)
  return missing === undefined ? { ok: true as const, classes: found.filter((a) => a !== undefined) } : { ok: false as const, missing }
}

/** The instances as upstream's inference creates them (`execute_multi_turn_func_call([], …)`). */
export const initialSession = (task: MultiTurnTask, longContext: LongContext | undefined): Session => {
  const found = classesOf(task)
  if (!found.ok) throw new Error(`bfcl-multi-turn: no world for class ${found.missing}`)
  return openSession(found.classes, task.initialConfig, { modelName: MODEL_NAME, testEntryId: task.id, longContext })
}

// The session after a call record (the last of a World's `calls`), for records this process made or replayed.
const sessions = new WeakMap<object, Session>()

const recordOf = (v: Canonical.Json): CallRecord | undefined => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined
  const { call, result } = v as { readonly [key: string]: Canonical.Json }
  return typeof call === "string" && typeof result === "string" ? { call, result } : undefined
}

const sessionIn = (initial: Session, world: World.World): Session => {
  const records = World.entries(world, CALLS)
  const last = records[records.length - 1]
  if (last === undefined) return initial
  const known = sessions.get(last[1] as object)
  if (known !== undefined) return known
  let session = initial
  for (const [, value] of records) {
    const record = recordOf(value)
    if (record !== undefined) session = executeCall(session, record.call).session
  }
  sessions.set(last[1] as object, session)
  return session
}

export interface TaskWorld {
  /** The World the Attempt forks: no call yet. */
  readonly world: World.World
  readonly tools: ReadonlyArray<Tool.Tool>
  /** The initial session (the instances before any call). */
  readonly session: Session
  /** sha256 of the instances' canonical state dump (the oracle corpora's `initial_state_sha256`). */
  readonly stateSha256: string
}

/** The empty call log every task starts from. */
const EMPTY = World.make({ [CALLS]: {} })

/** A task's world: its instances loaded from the initial config, and the tool that runs calls on them. */
export const taskWorld = (task: MultiTurnTask, longContext: LongContext | undefined): TaskWorld => {
  const session = initialSession(task, longContext)
  const execute: Tool.Tool = {
    spec: {
      name: EXECUTE_TOOL,
      description: "Runs one Python call string on the task's instances, as upstream's execute_multi_turn_func_call does.",
      parameters: { type: "object", properties: { call: { type: "string" } }, required: ["call"] }
    },
    access: "write",
    run: (world, args) => {
      const call = typeof args["call"] === "string" ? args["call"] : ""
      const before = sessionIn(session, world)
      const { result, session: after } = executeCall(before, call)
      const record: CallRecord = { call, result }
      sessions.set(record, after)
      const key = String(World.size(world, CALLS)).padStart(4, "0")
      return { output: result, error: false, writes: [{ table: CALLS, key, value: record as unknown as Canonical.Json }] }
    }
  }
  return { world: EMPTY, tools: [execute], session, stateSha256: sessionState(session).sha256 }
}

/** The calls a World holds, in the order they ran. */
export const callsIn = (world: World.World): ReadonlyArray<CallRecord> =>
  World.entries(world, CALLS).flatMap(([, v]) => {
    const r = recordOf(v)
    return r === undefined ? [] : [r]
  })
