/**
 * `bfcl`: BFCL v4 single-turn Python (3,491 tasks in eleven categories), one question, one
 * response, no world. A candidate with the `tools` action space is offered the task's functions
 * as tools (upstream's function-calling mode); one with the `text` action space gets upstream's
 * prompt-mode system prompt with the function docs and answers with Python call text. The reply
 * is the portable output; the evaluator decodes it as upstream does and runs the transcribed
 * checker (see README.md).
 */
import { Effect, Ref } from "effect"
import { Agent, type AgentDef, type Canonical, Capabilities, ContentId, type Conversation, EnvironmentDef, type Provider, type Tool, World } from "../../src/index.ts"
import { CHECK_NAMES, check, type Verdict } from "./checker.ts"
import {
  loadAll,
  ORACLE_FILES,
  rootOf,
  PINNED_FILES,
  type Task,
  UNPASSABLE_TASKS,
  UPSTREAM_COMMIT,
  UPSTREAM_REPOSITORY
} from "./data.ts"
import { decodeFunctionCallingReply, decodePromptOutput, type ToolCall } from "./decode.ts"
import { defaultCorpusPath, runEquivalence } from "./equivalence.ts"
import { goldAnswer } from "./gold.ts"
import { readPlanned, writePlanned } from "./prepared.ts"
import { isDict, type PyDict, pyJsonDumps, type PyValue, toPlainJson } from "./pyjson.ts"
import { functionDocsJson, promptSystemPrompt, toolNameOf, toolSchemas } from "./tools.ts"

const VERSION = "1"
const BENCHMARK = "bfcl"

const dataError = (detail: string) => new Capabilities.CapabilityError({ capability: BENCHMARK, reason: "data", detail })

// ---------------------------------------------------------------------------------------------
// The tasks, loaded once per process

interface Loaded {
  readonly environments: ReadonlyArray<EnvironmentDef.EnvironmentDef>
  readonly byId: ReadonlyMap<string, Task>
}

/** Read and hash-checked on first use; the data does not change within a run, so a failure is kept too. */
const loaded: Effect.Effect<Loaded, Capabilities.CapabilityError> = Effect.runSync(
  Effect.cached(
    Effect.suspend(() => loadAll()).pipe(
      Effect.map((tasks): Loaded => ({ environments: tasks.map(environment), byId: new Map(tasks.map((t) => [t.id, t])) })),
      Effect.mapError((e) => dataError(e.message))
    )
  )
)

/** What planning needs: the environments and each task's function-calling inputs. */
interface Listed {
  readonly environments: ReadonlyArray<EnvironmentDef.EnvironmentDef>
  readonly toolsInputs: ReadonlyMap<string, Capabilities.ProtocolInputs>
}

/**
 * From the prepared form when the data files are known unchanged (providers/bfcl/prepared.ts),
 * else from the full load, which then stores the form for the next process.
 */
const listed: Effect.Effect<Listed, Capabilities.CapabilityError> = Effect.runSync(
  Effect.cached(
    Effect.suspend(() => {
      const planned = readPlanned(rootOf(undefined))
      if (planned !== undefined) {
        return Effect.succeed<Listed>({
          environments: planned.map(environment),
          toolsInputs: new Map(planned.map((t) => [t.id, { system: t.system, tools: t.tools }]))
        })
      }
      return Effect.map(loaded, ({ byId, environments }): Listed => {
        const tasks = environments.map((e) => byId.get(e.task)!)
        writePlanned(tasks.map((t) => ({ id: t.id, category: t.category, ...cachedInputs(t, "tools") })))
        return { environments, toolsInputs: new Map(tasks.map((t) => [t.id, cachedInputs(t, "tools")])) }
      })
    })
  )
)

const taskOf = (env: EnvironmentDef.EnvironmentDef): Effect.Effect<Task, Capabilities.CapabilityError> =>
  Effect.flatMap(loaded, ({ byId }) => {
    const task = byId.get(env.task)
    return task ? Effect.succeed(task) : Effect.fail(dataError(`no bfcl task ${env.task}`))
  })

// ---------------------------------------------------------------------------------------------
// Environments

const environment = (task: Pick<Task, "id" | "category">): EnvironmentDef.EnvironmentDef => ({
  benchmark: BENCHMARK,
  task: task.id,
  stratum: task.category,
  // The function docs are read-only input: there is no world to fork.
  world: { isolation: "none", settlement: "discard", effects: EnvironmentDef.defaultEffects },
  capabilities: {
    worldSetup: { name: "bfcl/function-docs", version: VERSION },
    protocol: { name: "bfcl/one-step", version: VERSION },
    evaluator: { name: "bfcl/ast-checker", version: VERSION },
    upstream: `${UPSTREAM_REPOSITORY}@${UPSTREAM_COMMIT}`,
    models: {}
  },
  limits: { ...EnvironmentDef.noLimits, turns: 1 }
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
// The portable output and its decoding

/**
 * A tool call may carry its arguments' JSON text as the API returned it (`argumentsText`): then
 * it is decoded as upstream's `json.loads` decodes it, keeping 5 and 5.0 apart. Without it the
 * parsed arguments are all there is, and an integral number reads as an int.
 */
interface OutputCall {
  readonly name: string
  readonly arguments: Canonical.Json
  readonly argumentsText?: string
}

interface Output {
  readonly mode: Mode
  readonly text: string | null
  readonly toolCalls: ReadonlyArray<OutputCall>
}

const outputOf = (mode: Mode, reply: Conversation.AgentReply): Output => ({
  mode,
  text: reply.text,
  toolCalls: reply.toolCalls.map((c) => ({
    name: c.name,
    arguments: c.arguments,
    ...(c.argumentsText !== undefined ? { argumentsText: c.argumentsText } : {})
  }))
})

const isRecord = (v: Canonical.Json | undefined): v is { readonly [key: string]: Canonical.Json } =>
  typeof v === "object" && v !== null && !Array.isArray(v)

const parseOutput = (output: Canonical.Json): Output | null => {
  if (!isRecord(output)) return null
  const mode = output["mode"]
  const text = output["text"]
  const calls = output["toolCalls"]
  if ((mode !== "tools" && mode !== "text") || (typeof text !== "string" && text !== null) || !Array.isArray(calls)) return null
  const toolCalls: Array<OutputCall> = []
  for (const c of calls) {
    if (!isRecord(c) || typeof c["name"] !== "string" || c["arguments"] === undefined) return null
    const argumentsText = c["argumentsText"]
    toolCalls.push({ name: c["name"], arguments: c["arguments"], ...(typeof argumentsText === "string" ? { argumentsText } : {}) })
  }
  return { mode, text, toolCalls }
}

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

// ---------------------------------------------------------------------------------------------
// Capabilities

const modeOf = (agent: AgentDef.AgentDef): Mode => agent.actionSpace

export const capabilities = {
  worldSetup: Capabilities.makeWorldSetup({
    name: "bfcl/function-docs",
    version: VERSION,
    trust: "deterministic",
    setup: (env) => Effect.map(taskOf(env), (task) => ({ world: World.empty, evidence: { functions: functionsDigest(task) }, tools: [] }))
  }),
  protocol: Capabilities.makeProtocol({
    name: "bfcl/one-step",
    version: VERSION,
    trust: "deterministic",
    // Function-calling inputs as planning lists them (the same values a full load makes); prompt
    // mode's are made from the task.
    inputs: (env, agent) =>
      modeOf(agent) === "tools"
        ? Effect.flatMap(listed, ({ toolsInputs }) => {
          const inputs = toolsInputs.get(env.task)
          return inputs !== undefined ? Effect.succeed(inputs) : Effect.fail(dataError(`no bfcl task ${env.task}`))
        })
        : Effect.map(taskOf(env), (task) => cachedInputs(task, "text")),
    run: (ctx) =>
      Effect.gen(function*() {
        const task = yield* taskOf(ctx.env)
        // Every task offers at least one function, so only prompt mode is offered no tools.
        const mode: Mode = ctx.inputs.tools.length > 0 ? "tools" : "text"
        yield* Ref.set(ctx.transcript, conversationOf(task))
        const messages = yield* Ref.get(ctx.transcript)
        const reply = yield* ctx.agent.reply({ system: ctx.inputs.system, messages, tools: ctx.inputs.tools })
        const answer: Conversation.Message = { role: "assistant", content: reply.text, toolCalls: reply.toolCalls }
        yield* Ref.set(ctx.transcript, [...messages, answer])
        return outputOf(mode, reply) as unknown as Canonical.Json
      })
  }),
  evaluator: Capabilities.makeEvaluator({
    name: "bfcl/ast-checker",
    version: VERSION,
    trust: "deterministic",
    evaluate: (ctx) =>
      Effect.flatMap(taskOf(ctx.env), (task) => {
        const output = parseOutput(ctx.output)
        if (output === null) {
          return Effect.fail(new Capabilities.CapabilityError({ capability: BENCHMARK, reason: "evaluator", detail: "the output is not a bfcl reply" }))
        }
        // Function-calling names had `.` replaced by `_`; upstream grades them with underscore_to_dot.
        return Effect.succeed(toGrade(check(task, decodeOutput(output), { underscoreToDot: output.mode === "tools" })))
      })
  })
}

// ---------------------------------------------------------------------------------------------
// Roster

const roster = ["gold", "echo"] as const

const rosterDef = (name: string): AgentDef.AgentDef => Agent.referenceDef(name)

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

const scripted = (name: string, env: EnvironmentDef.EnvironmentDef): Effect.Effect<Agent.Agent, Capabilities.CapabilityError> => {
  switch (name) {
    case "gold":
      return Effect.map(taskOf(env), (task) => Agent.scripted("gold", [goldReply(task)]))
    case "echo":
      return Effect.succeed(Agent.echo)
    default:
      return Effect.fail(dataError(`no scripted candidate ${name}: use ${roster.join(" or ")}`))
  }
}

// ---------------------------------------------------------------------------------------------

/**
 * The pinned upstream files, under `bfcl/v4/` of the data root, and the oracle corpus equivalence
 * reads, under `bfcl/oracle/` (no download URL: only a pull `--from DIR` brings it).
 */
export const data: ReadonlyArray<Provider.PinnedFile> = [
  ...PINNED_FILES.map((p) => ({ path: `bfcl/v4/${p.file}`, url: p.url, sha256: p.sha256 })),
  ...ORACLE_FILES.map((p) => ({ path: `bfcl/oracle/${p.file}`, url: "", sha256: p.sha256, oracle: true }))
]

const equivalence = (corpus: string | null) =>
  runEquivalence(corpus ?? defaultCorpusPath()).pipe(
    Effect.map((r) => ({ benchmark: r.benchmark, corpus: r.corpus, lines: r.lines, agree: r.agree, disagree: r.disagree })),
    Effect.mapError((e) => dataError(e.message))
  )

export const provider: Provider.Provider = {
  name: BENCHMARK,
  version: VERSION,
  description: "BFCL v4 single-turn Python: 3,491 questions in eleven categories, graded by a transcription of upstream's AST checker",
  environments: Effect.map(listed, ({ environments }) => environments),
  capabilities,
  roster,
  rosterDef,
  scripted,
  impassable: new Set(UNPASSABLE_TASKS.keys()),
  data,
  equivalence
}
