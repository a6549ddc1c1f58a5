/**
 * `harbor:DIR`: a folder of Harbor-format tasks (tasks.ts), run in a container engine
 * (src/container/Engine.ts). Tier: calibration through an adapter, not a transcription: the task's
 * own verifier grades, inside the task's own container, and assay reads its reward.
 *
 * Per Attempt: setup builds the task's image from environment/ (once per content, FROM lines
 * substituted as the user asked) and makes the handler that holds the Attempt's container; the
 * protocol gives the candidate the instruction and one `terminal` tool (each call a `process/spawn`
 * effect, output cut as Harbor's terminus agent cuts it) until it answers, its turns run out or the
 * task's agent timeout passes; then the verifier runs in the same container (test.sh, or the
 * provided-pytest mode when test.sh needs the network), and the container is removed on every exit.
 * The grade is the verifier's reward.
 *
 * Candidates: `gold` is Harbor's oracle (solution/ copied to /solution, solve.sh run); the
 * do-nothing candidate runs nothing; a model works through the terminal tool.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Duration, Effect, Option, Schema } from "effect"
import * as Engine from "../../src/container/Engine.ts"
import { Agent, Benchmark, Capabilities, type Conversation, type PinnedData, type Provider, type Tool, ToolLoop, type Wallet, World, WorldEffects as WE } from "../../src/index.ts"
import { Sandbox } from "../../src/sandbox/Sandbox.ts"
import { containerSandbox } from "./agent.ts"
import { attemptContainer, CommandResult, containerHandler, limitOutput, OUTPUT_LIMIT_BYTES, placeOf, register, VerifierResult, withContainers } from "./container.ts"
import { type HarborTask, loadTasks, verifierDependencies, verifierNeedsNetwork } from "./tasks.ts"

export const BENCHMARK = "harbor"
const MAX_TURNS = 100
const DEFAULT_COMMAND_SECONDS = 180

export type VerifierMode = "auto" | "test.sh" | "provided-pytest"

export interface Options {
  /** The folder of task folders. */
  readonly dir: string
  /** podman or docker; the first found by default. */
  readonly engine?: Engine.EngineName
  /** FROM image substitutions (`python:3.13-slim-bookworm` → a local image). */
  readonly images?: Engine.Substitutions
  /** `auto` (default): the provided-pytest mode where test.sh needs the network, test.sh elsewhere. */
  readonly verifier?: VerifierMode
  /** A pinned benchmark over `dir` (terminal-bench-2) rather than any folder. */
  readonly pinned?: PinnedTasks
}

/** A benchmark of pinned Harbor tasks: its identity, its files (`assay data pull`) and its own load of the tasks. */
export interface PinnedTasks {
  readonly name: string
  readonly description: string
  /** The copy pinned (repository@commit:folder), part of the content id. */
  readonly upstream: string
  /** Its folder under the data root, and its files there. */
  readonly folder: string
  readonly files: ReadonlyArray<Provider.PinnedFile>
  /** The tasks, their files checked against their sha256; a task that cannot run says why in `notRunnable`. */
  readonly load: (read: Benchmark.Reader) => Effect.Effect<ReadonlyArray<HarborTask>, PinnedData.DataError | Capabilities.CapabilityError>
  /** Tasks that can never run from the pinned copy (files it lacks): scored apart. */
  readonly impassable?: ReadonlySet<string>
  readonly attribution?: string
}

const system = [
  "You are an agent solving a task in a Linux container, through a terminal.",
  "The terminal tool runs shell commands in one bash session in the container and answers their output; the session stays between calls (the directory you cd to, exported variables, background processes), as in a terminal. Commands get no input: do not start interactive programs.",
  "When the task is done, reply with a short summary and no tool call."
].join("\n")

const terminalSpec: Tool.ToolSpec = {
  name: "terminal",
  description:
    `Run a shell command in the task's container, in a bash session kept between calls, and return its output (stdout and stderr together; output beyond ${OUTPUT_LIMIT_BYTES} bytes is cut in the middle). It is stopped after timeout_seconds (default ${DEFAULT_COMMAND_SECONDS}), the session kept.`,
  parameters: {
    type: "object",
    properties: {
      command: { type: "string", description: "The command, e.g. ls -la && cat README.md" },
      timeout_seconds: { type: "integer", description: "Seconds before the command is killed." }
    },
    required: ["command"]
  }
}

export const Output = Schema.Struct({
  ...ToolLoop.Outcome.fields,
  /** The task's agent timeout passed before the candidate ended. */
  agentTimedOut: Schema.Boolean,
  verifierMode: Schema.Literal("test.sh", "provided-pytest"),
  verifier: VerifierResult
})
export type Output = typeof Output.Type

const commandMessage = (r: CommandResult, timeoutSeconds: number): string =>
  [r.timedOut ? `[timed out after ${timeoutSeconds} s]` : r.exitCode === null ? "[killed]" : `[exit code ${r.exitCode}]`, r.output].join("\n")

/** One terminal call as a `process/spawn` effect; refusals and faults reach the candidate as tool errors. */
const terminalCall = (task: HarborTask, call: Conversation.ToolCall) =>
  Effect.gen(function*() {
    const command = call.arguments["command"]
    if (typeof command !== "string" || command.trim() === "") return { content: "Error: command must be a non-empty string", error: true }
    const asked = call.arguments["timeout_seconds"]
    const timeoutSeconds = typeof asked === "number" && Number.isFinite(asked)
      ? Math.min(task.agentTimeoutSeconds, Math.max(1, Math.round(asked)))
      : Math.min(task.agentTimeoutSeconds, DEFAULT_COMMAND_SECONDS)
    const result = yield* WE.perform({ kind: "process/spawn", key: "terminal", request: { task: task.id, command, timeoutSeconds } }, CommandResult).pipe(
      Effect.catchTags({
        EffectRefused: (e) => Effect.succeed(`Error: ${e.message}`),
        EffectFault: (e) => Effect.succeed(`Error: ${e.message}`)
      })
    )
    if (typeof result === "string") return { content: result, error: true }
    return { content: commandMessage(result, timeoutSeconds), error: result.timedOut || result.exitCode !== 0 }
  })

const verifierModeOf = (task: HarborTask, mode: VerifierMode): { readonly mode: "test.sh" | "provided-pytest"; readonly why: string | null } => {
  if (mode !== "auto") return { mode, why: mode === "provided-pytest" ? "asked for" : null }
  const why = verifierNeedsNetwork(task.testScript)
  return why === null ? { mode: "test.sh", why: null } : { mode: "provided-pytest", why: `tests/test.sh needs the network (${why})` }
}

/** The candidate's turns (bounded by the task's agent timeout), the verifier, and the container removed however it ends. */
const runProtocol = (
  ctx: Capabilities.ProtocolContext,
  task: HarborTask,
  mode: VerifierMode
): Effect.Effect<Output, Capabilities.ProtocolFailure, WE.WorldEffects | WE.AttemptWorld | Wallet.Wallet> =>
  Effect.gen(function*() {
    const candidate = ToolLoop.runToolLoop(ctx, {
      firstMessage: task.instruction,
      tools: [],
      maxTurns: ctx.env.limits.turns ?? MAX_TURNS,
      own: { terminal: (call) => terminalCall(task, call) }
    })
    // An agent CLI candidate runs inside this Attempt's container (agent.ts); the built-in agent never asks.
    const place = placeOf(ctx.evidence)
    const inPlace = place === undefined ? candidate : Effect.provideService(candidate, Sandbox, containerSandbox(place))
    const ran = yield* inPlace.pipe(Effect.timeoutOption(Duration.seconds(task.agentTimeoutSeconds)))
    const loop = Option.getOrElse(ran, () => ({ ended: "turn-limit" as const, turns: 0, answer: null }))
    const verifierMode = verifierModeOf(task, mode).mode
    const verifier = yield* WE.perform({ kind: "process/spawn", key: "verifier", request: { task: task.id, mode: verifierMode } }, VerifierResult)
    return { ...loop, agentTimedOut: Option.isNone(ran), verifierMode, verifier }
  }).pipe(withContainers)

/** Harbor's oracle agent: solution/ into /solution, `bash /solution/solve.sh`, as one `oracle` effect. */
const oracle = (task: HarborTask): Agent.Agent => {
  let done = false
  return {
    name: "gold",
    reply: () =>
      Effect.gen(function*() {
        if (done) return { text: "Done.", toolCalls: [] }
        done = true
        const r = yield* WE.perform({ kind: "process/spawn", key: "oracle", request: { task: task.id } }, CommandResult)
        return { text: `${commandMessage(r, task.agentTimeoutSeconds)}`, toolCalls: [] }
      })
  }
}

/**
 * What test.sh would install that the provided-pytest mode takes from Debian instead, where the
 * image lacks it (what was installed, and what could not be, is the first line of the verifier's log).
 */
const standIns = (task: HarborTask): { readonly verifierStandIns?: ReadonlyArray<string> } => {
  const deps = verifierDependencies(task.testScript)
  const lines = [...deps.apt.map((p) => `${p} (apt)`), ...deps.python.map((d) => `${d.spec} -> Debian ${d.debian}`)]
  return lines.length === 0 ? {} : { verifierStandIns: lines }
}

/** The substitutions as the report and each cell carry them: `FROM=TO` lines, sorted. */
const substitutionList = (images: Engine.Substitutions): ReadonlyArray<string> => Object.entries(images).map(([from, to]) => `${from}=${to}`).sort()

/** A Harbor-format benchmark over a folder of tasks. */
export const make = (options: Options): Provider.Provider => {
  const dir = path.resolve(options.dir)
  const images = options.images ?? {}
  const mode = options.verifier ?? "auto"
  // The engine, found once for the process when first needed; its sweep removes what a killed run left.
  const engine = Effect.runSync(Effect.cached(Effect.tap(Engine.make(options.engine !== undefined ? { engine: options.engine } : {}), (e) => e.sweep)))
  const setupError = (detail: string) => new Capabilities.CapabilityError({ capability: "harbor/container", reason: "setup", detail })
  const substitutions = substitutionList(images)
  const pinned = options.pinned

  return Benchmark.make({
    name: pinned?.name ?? BENCHMARK,
    // 2: the terminal keeps one shell session between calls.
    version: "2",
    description: `${pinned?.description ?? `Harbor-format tasks from ${dir}`}, run in a container (tier: calibration, not a transcription)${
      substitutions.length > 0 ? `; images substituted: ${substitutions.join(", ")}` : ""
    }`,
    data: pinned !== undefined ? pinned.load : () => loadTasks(dir),
    tasks: (tasks) => tasks,
    id: (task) => task.id,
    stratum: (task) => task.difficulty ?? "all",
    limits: () => ({ turns: MAX_TURNS }),
    upstream: pinned?.upstream ?? `harbor-format:${path.basename(dir)}@${fs.existsSync(dir) ? Engine.folderDigest(dir) : "missing"}`,
    ...(pinned !== undefined ? { pinned: { folder: pinned.folder, files: pinned.files } } : {}),
    ...(pinned?.attribution !== undefined ? { attribution: pinned.attribution } : {}),
    ...(pinned?.impassable !== undefined ? { impassable: pinned.impassable } : {}),
    setup: {
      name: "harbor/container",
      run: (task) =>
        Effect.gen(function*() {
          if (task.notRunnable !== undefined) return yield* setupError(task.notRunnable)
          const e = yield* engine.pipe(Effect.mapError((err) => setupError(err.message)))
          const built = yield* e.build({ context: path.join(task.dir, "environment"), name: `assay-harbor-${task.id}`, substitutions: images, timeoutSeconds: task.buildTimeoutSeconds }).pipe(
            Effect.mapError((err) => setupError(`the environment was not built, so the task is not run: ${err.detail}`))
          )
          const verifier = verifierModeOf(task, mode)
          const place = attemptContainer(e, { task, image: built.image })
          const evidence = {
              task: task.id,
              tier: "calibration",
              engine: e.name,
              image: built.image,
              substituted: substitutionList(built.substituted),
              verifier: verifier.mode,
              ...(verifier.why !== null ? { verifierWhy: verifier.why } : {}),
              ...(verifier.mode === "provided-pytest" ? standIns(task) : {})
          }
          register(evidence, place)
          return {
            world: World.make({}),
            evidence,
            tools: [],
            handlers: { "process/spawn": containerHandler(place) }
          }
        })
    },
    protocol: {
      name: "harbor/terminal",
      output: Output,
      inputs: () => ({ system, tools: [terminalSpec] }),
      run: (task, ctx) => runProtocol(ctx, task, mode)
    },
    grade: {
      name: "harbor/verifier",
      run: (_task, ctx) => {
        const v = ctx.output.verifier
        const reward = v.reward === null ? 0 : Math.min(1, Math.max(0, v.reward))
        return {
          reward,
          checks: { "reward-written": v.reward !== null, "verifier-passed": reward === 1 },
          details: {
            verifierMode: ctx.output.verifierMode,
            agentTimedOut: ctx.output.agentTimedOut,
            verifierTimedOut: v.timedOut,
            log: limitOutput(v.log, 4000)
          }
        }
      }
    },
    gold: oracle,
    doNothing: () => Agent.echo,
    untrusted: true
  })
}
