/**
 * An imported model: another runner's recorded outputs (BFCL's result files) answering the model
 * calls of assay's own Attempts. Each call is still a `model/generate` effect, performed through
 * the Attempt's stack and recorded like a live model's, so an imported output becomes an ordinary
 * Attempt: graded by the benchmark's own grader, reported, viewed and replayed with no file.
 *
 * The agent knows the task's recorded output; the effect's handler does not know the task. So the
 * agent puts the reply it means beside its call (a FiberRef, read by `handler` in the same fiber),
 * and the handler answers with it. In a replay the recording answers and the handler is never
 * asked: there the agent needs no output at all.
 */
import { Effect, FiberRef, Schema } from "effect"
import type { Json } from "../content/Canonical.ts"
import { metered, type Wallet } from "../budget/Wallet.ts"
import { type Agent, AgentError, type AgentFailure } from "../evaluation/Agent.ts"
import type { AgentInput, AgentReply } from "../evaluation/Conversation.ts"
import * as WE from "../world/WorldEffects.ts"
import { type ModelRequest, ModelResponse } from "./Model.ts"
import { toModelMessages } from "./ModelAgent.ts"

/** The model provider an imported candidate's requests name. */
export const PROVIDER = "import"

/**
 * A call the recorded output cannot answer (the runner recorded an error instead of output, or
 * fewer turns than the task has): the call fails with `failed`, which the recording keeps, so the
 * Attempt ends failed at the same place in a replay.
 */
export interface RecordedFailure {
  readonly failed: string
}

export type RecordedStep = ModelResponse | RecordedFailure

/**
 * One task's recorded output: the replies of each user turn, in order. A single-turn task has one
 * turn of one reply; a multi-turn task one list of steps per turn.
 */
export type RecordedTurns = ReadonlyArray<ReadonlyArray<RecordedStep>>

const isFailure = (step: RecordedStep): step is RecordedFailure => "failed" in step

/** A file that was read, as the import reports it and names its content. */
export interface ImportedFile {
  /** Its path under the folder imported. */
  readonly path: string
  /** The benchmark's stratum it holds (a BFCL category). */
  readonly category: string
  readonly lines: number
  /** `sha256:` and the hex of its bytes. */
  readonly sha256: string
}

/** What a reader of result files gives the import. */
export interface ImportedResults {
  /** The format the outputs were read in, the action space it stands for, and why that format. */
  readonly format: { readonly name: string; readonly actionSpace: "tools" | "text"; readonly why: string }
  /** The candidate's name when none is given (the folder's model name). */
  readonly name: string
  readonly files: ReadonlyArray<ImportedFile>
  /** Per benchmark, each line's recorded output by task id. */
  readonly outputs: ReadonlyArray<{ readonly benchmark: string; readonly tasks: ReadonlyMap<string, RecordedTurns>; readonly options?: AgentOptions }>
  /** What was read and is not imported, one line each (files of categories assay does not run, ids given twice). */
  readonly notes: ReadonlyArray<string>
}

/** A file, or a folder, that cannot be imported. */
export class ImportError extends Schema.TaggedError<ImportError>()("ImportError", {
  path: Schema.String,
  reason: Schema.Literal("unreadable", "malformed", "no-files", "format"),
  detail: Schema.String
}) {
  override get message() {
    return `${this.path}: ${this.detail}`
  }
}

/** Reads one benchmark's result files (`assay import BENCHMARK DIR`). */
export interface ResultReader {
  /** The formats `--format` may force; detected when not given. */
  readonly formats: ReadonlyArray<string>
  readonly read: (dir: string, options: { readonly format: string | null }) => Effect.Effect<ImportedResults, ImportError>
}

// The reply the imported agent is asking its handler for, set around each of its calls.
const pending = FiberRef.unsafeMake<RecordedStep | null>(null)

/** The `model/generate` handler of an import: the recorded reply the agent put beside its call. */
export const handler: WE.Handler = (effect) =>
  Effect.flatMap(FiberRef.get(pending), (step) =>
    step === null
      ? Effect.fail(new WE.EffectFailed({ kind: effect.kind, key: effect.key, reason: "handler", detail: "no recorded output answers this model call: only an imported candidate's are answered here" }))
      : isFailure(step)
      ? Effect.fail(new WE.EffectFailed({ kind: effect.kind, key: effect.key, reason: "handler", detail: step.failed }))
      : Effect.succeed(step as unknown as Json))

/** A reply with no text and no call: what ends a turn once its recorded steps are played. */
const emptyReply = (model: string): ModelResponse => ({
  text: "",
  toolCalls: [],
  usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
  finishReason: "stop",
  model
})

const requestOf = (model: string, input: AgentInput): ModelRequest => ({
  provider: PROVIDER,
  model,
  system: input.system,
  messages: toModelMessages(input.messages),
  tools: input.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }))
})

export interface AgentOptions {
  /**
   * Whether the protocol goes on with the same turn after this reply (it had calls to run), as the
   * protocol decides it. Absent: always (a single-turn task has one turn).
   */
  readonly continuesTurn?: (reply: ModelResponse) => boolean
}

/**
 * The imported candidate's agent for one Attempt: each call answered by the next recorded step of
 * the current turn, and by an empty reply (which ends a turn) once the turn's recorded steps are
 * played; a reply after which the protocol ends the turn moves it to the next recorded turn. With
 * `turns` null (a replay) it asks for nothing: the recording answers its calls.
 */
export const agent = (name: string, model: string, turns: RecordedTurns | null, options: AgentOptions = {}): Agent => {
  let turn = 0
  let step = 0
  const next = (): RecordedStep => {
    if (turns === null) return emptyReply(model)
    if (turn >= turns.length) return { failed: `the recorded output ends after ${turns.length} turns, and the task has more` }
    const response = turns[turn]?.[step] ?? emptyReply(model)
    if (isFailure(response) || options.continuesTurn === undefined || options.continuesTurn(response)) step++
    else [turn, step] = [turn + 1, 0]
    return response
  }
  return {
    name,
    reply: (input): Effect.Effect<AgentReply, AgentFailure, WE.WorldEffects | Wallet> => {
      const effect: WE.EffectRequest = { kind: "model/generate", key: "agent", request: requestOf(model, input) as unknown as Json }
      const call = metered(
        WE.perform(effect, ModelResponse),
        // The file's token counts, when it has them; its price is not known, so neither is the cost.
        (r) => ({ inputTokens: r.usage.inputTokens, outputTokens: r.usage.outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null, retries: 0 })
      )
      const answered = turns === null ? call : Effect.locally(call, pending, next())
      return answered.pipe(
        Effect.map((r): AgentReply => ({ text: r.text, toolCalls: r.toolCalls as AgentReply["toolCalls"] })),
        Effect.catchTag("EffectFailed", (e): Effect.Effect<never, WE.EffectFailed | AgentError> =>
          e.reason === "handler" ? Effect.fail(new AgentError({ agent: name, reason: "model-failed", detail: e.detail })) : Effect.fail(e))
      )
    }
  }
}
