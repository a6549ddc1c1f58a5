/**
 * `bfcl`: BFCL v4 single-turn Python (3,491 tasks in eleven categories), one question, one
 * response, no world. A candidate with the `tools` action space is offered the task's functions
 * as tools (upstream's function-calling mode); one with the `text` action space gets upstream's
 * prompt-mode system prompt with the function docs and answers with Python call text. The reply
 * is the protocol's typed output; the grade decodes it as upstream does and runs the transcribed
 * checker (see README.md).
 */
import { Effect, Ref, Schema } from "effect"
import { Agent, Benchmark, type Canonical, Capabilities, ContentId, type Conversation, DataRoot, EnvironmentDef, type Provider, type Tool, World } from "../../src/index.ts"
import { CHECK_NAMES, check, type Verdict } from "./checker.ts"
import { type Category, FOLDER, PINNED, readAll, type Task, UNPASSABLE_TASKS, UPSTREAM_COMMIT, UPSTREAM_REPOSITORY } from "./data.ts"
import { decodeFunctionCallingReply, decodePromptOutput, type ToolCall } from "./decode.ts"
import { defaultCorpusPath, runEquivalence } from "./equivalence.ts"
import { goldAnswer } from "./gold.ts"
import { readPlanned, writePlanned } from "./prepared.ts"
import { isDict, type PyDict, pyJsonDumps, type PyValue, toPlainJson } from "./pyjson.ts"
import { functionDocsJson, promptSystemPrompt, toolNameOf, toolSchemas } from "./tools.ts"

const BENCHMARK = "bfcl"

const dataError = (detail: string) => new Capabilities.CapabilityError({ capability: BENCHMARK, reason: "data", detail })

// ---------------------------------------------------------------------------------------------
// The tasks as the benchmark lists them

/**
 * A task as planning reads it, with the whole task (question, function docs, possible answer)
 * for the capabilities that need it. Listed from the prepared form (providers/bfcl/prepared.ts)
 * when the data files are known to be the pinned ones, the whole tasks are read and parsed only
 * when an Attempt first needs one; else from the full load, which stores the form for the next process.
 */
interface Entry {
  readonly id: string
  readonly category: Category
  /** Function-calling mode's inputs, as planning lists them (the same values a full load makes). */
  readonly toolsInputs: Capabilities.ProtocolInputs
  readonly task: Effect.Effect<Task, Capabilities.CapabilityError>
}

// The kit's reader reads the data root (PinnedData.layer: ASSAY_DATA_DIR, else the default), whose notes the form checks.
const entriesOf = (read: Benchmark.Reader) =>
  Effect.gen(function*() {
    const planned = yield* readPlanned(DataRoot.dataRoot(), read)
    if (planned !== undefined) {
      const whole = yield* Effect.cached(
        readAll(read).pipe(
          Effect.map((tasks) => new Map(tasks.map((t) => [t.id, t]))),
          Effect.mapError((e) => dataError(e.message))
        )
      )
      return planned.map((t): Entry => ({
        id: t.id,
        category: t.category,
        toolsInputs: { system: t.system, tools: t.tools },
        task: Effect.flatMap(whole, (byId) => {
          const task = byId.get(t.id)
          return task !== undefined ? Effect.succeed(task) : Effect.fail(dataError(`no bfcl task ${t.id}`))
        })
      }))
    }
    const tasks = yield* readAll(read)
    writePlanned(tasks.map((t) => ({ id: t.id, category: t.category, ...cachedInputs(t, "tools") })))
    return tasks.map((t): Entry => ({ id: t.id, category: t.category, toolsInputs: cachedInputs(t, "tools"), task: Effect.succeed(t) }))
  })

// ---------------------------------------------------------------------------------------------
// What the candidate is shown

type Mode = "tools" | "text"

/** The function docs with upstream's Python hint, as the prompt prints them: 5 and 5.0 stay apart. */
const digests = new WeakMap<Task, string>()
const functionsDigest = (task: Task): string => {
  let digest = digests.get(task)
  if (digest === undefined) {
    digest = ContentId.ofUnsafe(functionDocsJson(task.functions))
    digests.set(task, digest)
  }
  return digest
}

/** Upstream's converted tool schemas, as plain JSON-schema tool specs for an API. */
export const toolSpecsOf = (task: Task): ReadonlyArray<Tool.ToolSpec> =>
  toolSchemas(task.functions).map((t) => ({
    name: t.name,
    description: t.description,
    parameters: toPlainJson(t.parameters) as { readonly [key: string]: Canonical.Json }
  }))

const systemOf = (task: Task): string | null => {
  const head = task.question[0]?.[0]
  return head !== undefined && head.role === "system" ? head.content : null
}

/**
 * Function-calling mode: the task's own system message (if any) and the tools. Prompt mode:
 * upstream's system prompt with the docs, merged ahead of the task's system message.
 */
const inputsOf = (task: Task, mode: Mode): Capabilities.ProtocolInputs => {
  const own = systemOf(task)
  if (mode === "tools") return { system: own ?? "", tools: toolSpecsOf(task) }
  const prompt = promptSystemPrompt(task.functions)
  return { system: own === null ? prompt : `${prompt}\n\n${own}`, tools: [] }
}

// Inputs are asked for at planning, at each Attempt and when deciding staleness: built once.
const inputsCache = new Map<string, Capabilities.ProtocolInputs>()
const cachedInputs = (task: Task, mode: Mode): Capabilities.ProtocolInputs => {
  const key = `${mode}\u0000${task.id}`
  let inputs = inputsCache.get(key)
  if (inputs === undefined) {
    inputs = inputsOf(task, mode)
    inputsCache.set(key, inputs)
  }
  return inputs
}

/** The conversation after the system message: user turns (and the few prior assistant turns). */
const conversationOf = (task: Task): ReadonlyArray<Conversation.Message> =>
  (task.question[0] ?? []).flatMap((m): ReadonlyArray<Conversation.Message> => {
    if (m.role === "user") return [{ role: "user", content: m.content }]
    if (m.role === "assistant") return [{ role: "assistant", content: m.content, toolCalls: [] }]
    return []
  })

// ---------------------------------------------------------------------------------------------
// The protocol's output

const isJson = (u: unknown): u is Canonical.Json =>
  u === null || typeof u === "string" || typeof u === "boolean" || (typeof u === "number" && Number.isFinite(u)) ||
  (Array.isArray(u) ? u.every(isJson) : typeof u === "object" && Object.values(u).every(isJson))

/** A tool call's parsed arguments, any JSON value. */
const Json = Schema.declare(isJson, { identifier: "Json" })

/**
 * A tool call may carry its arguments' JSON text as the API returned it (`argumentsText`): then
 * it is decoded as upstream's `json.loads` decodes it, keeping 5 and 5.0 apart. Without it the
 * parsed arguments are all there is, and an integral number reads as an int.
 */
const OutputCall = Schema.Struct({
  name: Schema.String,
  arguments: Json,
  argumentsText: Schema.optionalWith(Schema.String, { exact: true })
})

/** The reply as the grade reads it, and the mode it was given in. */
export const Output = Schema.Struct({
  mode: Schema.Literal("tools", "text"),
  text: Schema.NullOr(Schema.String),
  toolCalls: Schema.Array(OutputCall)
})
export type Output = typeof Output.Type

const outputOf = (mode: Mode, reply: Conversation.AgentReply): Output => ({
  mode,
  text: reply.text,
  toolCalls: reply.toolCalls.map((c) => ({
    name: c.name,
    arguments: c.arguments,
    ...(c.argumentsText !== undefined ? { argumentsText: c.argumentsText } : {})
  }))
})

/** Upstream's decoding of a reply: tool calls in function-calling mode, the Python call text in prompt mode. */
export const decodeOutput = (output: Output) =>
  output.mode === "text"
    ? decodePromptOutput(output.text ?? "")
    : decodeFunctionCallingReply(
      // An API reply without tool calls has `tool_calls: None`; upstream then decodes the text.
      output.toolCalls.length === 0
        ? null
        : output.toolCalls.map((c): ToolCall => ({ name: c.name, arguments: c.argumentsText ?? JSON.stringify(c.arguments) })),
      output.text
    )

/** The checker's verdict as the evaluation path's grade: one check per way to lose, true = passed. */
export const toGrade = (verdict: Verdict): Capabilities.Grade => {
  const checks: Record<string, boolean> = {}
  for (const name of CHECK_NAMES) checks[name] = !verdict.lost[name]
  return { reward: verdict.valid ? 1 : 0, checks, details: { errorType: verdict.errorType, errors: [...verdict.errors] } }
}

const NO_CALL = "None of the given functions can be used for this question."

/**
 * The gold reply in function-calling mode: one tool call per gold call, under the offered name,
 * with the arguments' exact JSON text beside them; no call (a text reply) for irrelevance.
 */
export const goldReply = (task: Task): Conversation.AgentReply => {
  const calls = goldAnswer(task)
  if (calls.length === 0) return { text: NO_CALL, toolCalls: [] }
  const toolCalls = calls.flatMap((call, i): ReadonlyArray<Conversation.ToolCall> => {
    if (!isDict(call)) return []
    const [name, args] = (call as PyDict).entries().next().value as [string, PyValue]
    const plain = toPlainJson(args) as { readonly [key: string]: Canonical.Json }
    return [{ id: `call-${i + 1}`, name: toolNameOf(name), arguments: plain, argumentsText: pyJsonDumps(args) }]
  })
  return { text: null, toolCalls }
}

const equivalence = (corpus: string | null) =>
  runEquivalence(corpus ?? defaultCorpusPath()).pipe(
    Effect.map((r) => ({ benchmark: r.benchmark, corpus: r.corpus, lines: r.lines, agree: r.agree, disagree: r.disagree })),
    Effect.mapError((e) => dataError(e.message))
  )

export const provider: Provider.Provider = Benchmark.make({
  name: BENCHMARK,
  version: "1",
  description: "BFCL v4 single-turn Python: 3,491 questions in eleven categories, graded by a transcription of upstream's AST checker",
  data: entriesOf,
  tasks: (entries) => entries,
  id: (entry) => entry.id,
  stratum: (entry) => entry.category,
  limits: () => ({ turns: 1 }),
  upstream: `${UPSTREAM_REPOSITORY}@${UPSTREAM_COMMIT}`,
  // The function docs are read-only input: there is no world to fork.
  world: { isolation: "none", settlement: "discard", effects: EnvironmentDef.defaultEffects },
  setup: {
    name: "bfcl/function-docs",
    run: (entry) => Effect.map(entry.task, (task) => ({ world: World.empty, evidence: { functions: functionsDigest(task) }, tools: [] }))
  },
  protocol: {
    name: "bfcl/one-step",
    output: Output,
    // Function-calling inputs as planning lists them; prompt mode's are made from the task.
    inputs: (entry, { agent }) => (agent.actionSpace === "tools" ? entry.toolsInputs : Effect.map(entry.task, (task) => cachedInputs(task, "text"))),
    run: (entry, ctx) =>
      Effect.gen(function*() {
        const task = yield* entry.task
        // Every task offers at least one function, so only prompt mode is offered no tools.
        const mode: Mode = ctx.inputs.tools.length > 0 ? "tools" : "text"
        yield* Ref.set(ctx.transcript, conversationOf(task))
        const messages = yield* Ref.get(ctx.transcript)
        const reply = yield* ctx.agent.reply({ system: ctx.inputs.system, messages, tools: ctx.inputs.tools })
        const answer: Conversation.Message = { role: "assistant", content: reply.text, toolCalls: reply.toolCalls }
        yield* Ref.set(ctx.transcript, [...messages, answer])
        return outputOf(mode, reply)
      })
  },
  grade: {
    name: "bfcl/ast-checker",
    // Function-calling names had `.` replaced by `_`; upstream grades them with underscore_to_dot.
    run: (entry, { output }) => Effect.map(entry.task, (task) => toGrade(check(task, decodeOutput(output), { underscoreToDot: output.mode === "tools" })))
  },
  gold: (entry) => Effect.map(entry.task, (task) => Agent.scripted("gold", [goldReply(task)])),
  impassable: new Set(UNPASSABLE_TASKS.keys()),
  pinned: { folder: FOLDER, files: PINNED },
  equivalence
})

/**
 * The pinned upstream files, under `bfcl/v4/` of the data root, and the oracle corpus equivalence
 * reads, under `bfcl/oracle/` (no download URL: only a pull `--from DIR` brings it).
 */
export const data: ReadonlyArray<Provider.PinnedFile> = provider.data ?? []
