/**
 * The benchmark kit: one typed declaration of a benchmark, in the spirit of Inspect's
 * `Task(dataset, solver, scorer)`. The author gives the tasks, how a task's world is set up, the
 * protocol (its output typed by a Schema) and the grade (which receives that output decoded);
 * `make` derives everything the evaluation path needs from it:
 *
 * - the capability references of every EnvironmentDef (names and versions, part of the content
 *   id) from the capabilities themselves, so they are declared once and cannot disagree;
 * - the task of an environment, looked up once and handed to each capability;
 * - the built-in candidates: `gold` from the task, and the do-nothing candidate (`echo`, also
 *   called `none`) on every benchmark;
 * - the dataset, loaded once when first needed (not at import) through the PinnedData service.
 *
 * `declare` gives the same Provider with what a family of benchmarks built on the kit also needs:
 * the dataset as loaded, the EnvironmentDef of a task, and the capabilities with some specs
 * replaced (a test scripting a judge's model call), sharing the one load.
 */
import { Effect, Either, Schema } from "effect"
import type { Json } from "../content/Canonical.ts"
import * as Pinned from "../data/Pinned.ts"
import * as Agent from "../evaluation/Agent.ts"
import {
  type Capabilities,
  CapabilityError,
  type EvaluationContext,
  type Grade,
  type ProtocolContext,
  type ProtocolFailure,
  type ProtocolInputs,
  type SetupResult
} from "../evaluation/Capabilities.ts"
import type { AgentReply } from "../evaluation/Conversation.ts"
import { guard } from "../evaluation/ProviderFailure.ts"
import type { DerivedData, EquivalenceResult, PinnedFile, Provider } from "../evaluation/Provider.ts"
import type { AgentDef } from "../schema/AgentDef.ts"
import { defaultEffects, type EnvironmentDef, type Limits, noLimits } from "../schema/EnvironmentDef.ts"
import type { Trust } from "../schema/Verdict.ts"
import type { Wallet } from "../budget/Wallet.ts"
import type { AttemptWorld, WorldEffects } from "../world/WorldEffects.ts"

/** A value, or an Effect of it: the kit's callbacks may answer either way. */
export type Result<A, E = never, R = never> = A | Effect.Effect<A, E, R>

/**
 * The author's callback called now: its Effect, or its value as one; a throw becomes a defect
 * (evaluate turns it into the provider's failure). No Effect step of its own: this runs per cell.
 */
const call = <A, E, R>(f: () => Result<A, E, R>): Effect.Effect<A, E, R> => {
  let value: Result<A, E, R>
  try {
    value = f()
  } catch (e) {
    return Effect.die(e)
  }
  return Effect.isEffect(value) ? value : Effect.succeed(value)
}

/** What every capability may declare; its reference in the content id is derived from it. */
export interface CapabilitySpec {
  /** Defaults to `BENCHMARK/setup`, `BENCHMARK/protocol`, `BENCHMARK/grade`. */
  readonly name?: string
  /** Defaults to the benchmark's version: change it when the capability's behaviour changes. */
  readonly version?: string
  /** Defaults to "deterministic". */
  readonly trust?: Trust
}

/** What a capability is given beside its task. */
export interface TaskContext<Data> {
  readonly env: EnvironmentDef
  readonly data: Data
}

export interface SetupSpec<Task, Data> extends CapabilitySpec {
  readonly run: (task: Task, ctx: TaskContext<Data>) => Result<SetupResult, CapabilityError>
}

export interface ProtocolSpec<Task, Data, Output, Encoded extends Json> extends CapabilitySpec {
  /** The protocol's output as stored (encoded) and as the grade receives it (decoded). */
  readonly output: Schema.Schema<Output, Encoded>
  /** What the candidate is offered. */
  readonly inputs: (task: Task, ctx: TaskContext<Data> & { readonly agent: AgentDef }) => Result<ProtocolInputs, CapabilityError>
  readonly run: (
    task: Task,
    ctx: ProtocolContext & { readonly data: Data }
  ) => Effect.Effect<Output, ProtocolFailure, WorldEffects | Wallet | AttemptWorld>
}

export interface GradeSpec<Task, Data, Output> extends CapabilitySpec {
  readonly run: (task: Task, ctx: Omit<EvaluationContext, "output"> & { readonly output: Output; readonly data: Data }) => Result<Grade, CapabilityError>
}

/** A candidate the benchmark plays itself: a scripted agent for one task. */
export type Scripted<Task, Data> = (task: Task, ctx: TaskContext<Data>) => Result<Agent.Agent, CapabilityError>

export interface Definition<Task, Data, Output, Encoded extends Json> {
  readonly name: string
  readonly version: string
  readonly description: string
  /** The dataset, loaded once for the process when first needed, from the pinned files through `read`. */
  readonly data?: (read: Reader) => Effect.Effect<Data, Pinned.DataError | CapabilityError>
  readonly tasks: (data: Data) => ReadonlyArray<Task>
  readonly id: (task: Task) => string
  /** Defaults to "all"; null for a benchmark without strata. */
  readonly stratum?: (task: Task) => string | null
  /** The task's limits (turns, tokens, …); none by default. */
  readonly limits?: (task: Task) => Partial<Limits>
  /** The upstream a transcription follows (repository@revision), part of the content id. */
  readonly upstream?: string
  /** The world spec of every environment; a fork discarded after the Attempt, with the default effects, by default. */
  readonly world?: EnvironmentDef["world"]
  /**
   * The models every environment names by role (part of the content id), e.g. the simulated user's
   * `{ user: "openai:gpt-4.1-2025-04-14" }`; a run may set others. None by default.
   */
  readonly models?: EnvironmentDef["capabilities"]["models"]
  readonly setup: SetupSpec<Task, Data>
  readonly protocol: ProtocolSpec<Task, Data, Output, Encoded>
  readonly grade: GradeSpec<Task, Data, Output>
  /** The gold candidate: the task's reference actions. */
  readonly gold: Scripted<Task, Data>
  /** The do-nothing candidate; `Agent.echo` (never acts) by default. */
  readonly doNothing?: Scripted<Task, Data>
  /** The action space the built-in candidates' AgentDefs name ("tools" by default). */
  readonly actionSpace?: AgentDef["actionSpace"]
  /** Tasks no answer can pass (reported apart), by id. */
  readonly impassable?: ReadonlySet<string>
  /** Whether some grade asks a judge model (a run's judge panel applies to it). */
  readonly judged?: boolean
  readonly untrusted?: boolean
  readonly attribution?: string
  /** The upstream files `assay data pull` fetches, and the folder under the data root they live in. */
  readonly pinned?: { readonly folder?: string; readonly files: ReadonlyArray<PinnedFile>; readonly derived?: DerivedData; readonly pull?: "download" | "local-copy" }
  readonly equivalence?: (corpus: string | null) => Effect.Effect<EquivalenceResult, CapabilityError>
}

/** The benchmark's pinned files, by their path under its folder, each checked against its sha256. */
export interface Reader {
  readonly text: (path: string) => Effect.Effect<string, Pinned.DataError>
  readonly bytes: (path: string) => Effect.Effect<Uint8Array, Pinned.DataError>
  /** The error of a pinned file the loader does not accept. */
  readonly invalid: (path: string, detail: string) => Pinned.DataError
}

/** The references and trust of a capability, derived once from its spec. */
const refOf = (benchmark: { readonly name: string; readonly version: string }, spec: CapabilitySpec, role: string) => ({
  name: spec.name ?? `${benchmark.name}/${role}`,
  version: spec.version ?? benchmark.version,
  trust: spec.trust ?? "deterministic"
})

/** The PinnedFile paths made relative to the data root (what `assay data pull` writes). */
const underRoot = (folder: string | undefined, files: ReadonlyArray<PinnedFile>): ReadonlyArray<PinnedFile> =>
  folder === undefined || folder === "" ? files : files.map((f) => ({ ...f, path: `${folder.replace(/\/$/, "")}/${f.path}` }))

/** A benchmark, as the evaluation path runs it: the Provider of the declaration. */
export const make = <Task, Data = void, Output = Json, Encoded extends Json = Json>(def: Definition<Task, Data, Output, Encoded>): Provider =>
  declare(def).provider

/** The capability specs `Declared.capabilitiesWith` may replace. */
export type Specs<Task, Data, Output, Encoded extends Json> = Partial<Pick<Definition<Task, Data, Output, Encoded>, "setup" | "protocol" | "grade">>

/** A declaration made: its Provider, and what code built on the kit reads beside it. */
export interface Declared<Task, Data, Output, Encoded extends Json> {
  readonly provider: Provider
  /** The dataset, loaded once for the process (the load the provider's capabilities share). */
  readonly data: Effect.Effect<Data, CapabilityError>
  /** The EnvironmentDef of a task. */
  readonly environment: (task: Task) => EnvironmentDef
  /**
   * The capabilities with some specs replaced (e.g. a grade whose judge call a test scripts); their
   * references are derived from the specs given, as the provider's are.
   */
  readonly capabilitiesWith: (specs: Specs<Task, Data, Output, Encoded>) => Capabilities
}

/** `make`, with the dataset, the EnvironmentDef of a task and capabilities of other specs beside the Provider. */
export const declare = <Task, Data = void, Output = Json, Encoded extends Json = Json>(
  def: Definition<Task, Data, Output, Encoded>
): Declared<Task, Data, Output, Encoded> => {
  // The compiler refuses a declaration missing one of these; loaded by path (types stripped), it is
  // named here, as the provider's defect, rather than met later as "undefined".
  const missing = (["name", "version", "tasks", "id", "setup", "protocol", "grade", "gold"] as const).filter((key) => def[key] === undefined)
  if (missing.length > 0) {
    throw new Error(`Benchmark.make: the declaration${typeof def.name === "string" ? ` of ${def.name}` : ""} has no ${missing.join(", ")} (each is required; \`tsc\` names them too)`)
  }
  const setupRef = refOf(def, def.setup, "setup")
  const protocolRef = refOf(def, def.protocol, "protocol")
  const gradeRef = refOf(def, def.grade, "grade")
  const source: Pinned.Source = { benchmark: def.name, ...(def.pinned?.folder !== undefined ? { folder: def.pinned.folder } : {}), ...(def.pinned?.pull !== undefined ? { pull: def.pinned.pull } : {}) }
  const dataError = (detail: string) => new CapabilityError({ capability: def.name, reason: "data", detail })

  // Loaded once for the process, on first use; a failure is kept too (the same data gives the same error).
  // The derived files (made by the pull from pinned ones) are read like them, each against its pinned sha256.
  const pinnedByPath = new Map([...(def.pinned?.files ?? []), ...(def.pinned?.derived?.files ?? [])].map((f) => [f.path, f]))
  const readerOf = (service: Pinned.PinnedDataService): Reader => {
    const pinnedFile = (path: string) => {
      const file = pinnedByPath.get(path)
      return file === undefined ? Effect.fail(Pinned.invalid(source, path, "it is not among the benchmark's pinned files")) : Effect.succeed(file)
    }
    return {
      text: (path) => Effect.flatMap(pinnedFile(path), (file) => service.text(source, file)),
      bytes: (path) => Effect.flatMap(pinnedFile(path), (file) => service.bytes(source, file)),
      invalid: (path, detail) => Pinned.invalid(source, path, detail)
    }
  }
  const noData: Effect.Effect<Data, never, Pinned.PinnedData> = Effect.sync(() => undefined as Data)
  // Once loaded, the dataset is read without an Effect step: a capability looks its task up per cell.
  let ready: { readonly data: Data; readonly byId: ReadonlyMap<string, Task>; readonly environments: ReadonlyArray<EnvironmentDef> } | undefined
  let loaded: Effect.Effect<{ readonly data: Data; readonly byId: ReadonlyMap<string, Task>; readonly environments: ReadonlyArray<EnvironmentDef> }, CapabilityError> | undefined
  const load = Effect.suspend(() =>
    (loaded ??= Effect.runSync(Effect.cached(
      (def.data === undefined ? noData : Effect.flatMap(Pinned.PinnedData, (service) => def.data!(readerOf(service)))).pipe(
        Effect.provide(Pinned.layer),
        Effect.mapError((e) => (e._tag === "DataError" ? dataError(e.message) : e)),
        // The provider's tasks() and id() run here: a throw, an id that is not a string or one given
        // to two tasks is its failure, named, never a task silently dropped.
        Effect.flatMap((data) =>
          guard(def.name, `${def.name}/tasks`, Effect.suspend(() => {
            const byId = new Map<string, Task>()
            const refuse = (detail: string) => Effect.fail(new CapabilityError({ capability: `${def.name}/tasks`, reason: "provider", detail: `provider ${def.name} failed: ${detail}` }))
            for (const task of def.tasks(data)) {
              const id: unknown = def.id(task)
              if (typeof id !== "string" || id === "") return refuse(`its id() gave ${id === "" ? "an empty string" : String(id)} for a task, not a task id`)
              if (byId.has(id)) return refuse(`two of its tasks have the id ${id}: ids must be unique`)
              byId.set(id, task)
            }
            // Made once: every caller of `environments` gets the same EnvironmentDefs.
            ready = { data, byId, environments: Array.from(byId.values(), environment) }
            return Effect.succeed(ready)
          }))
        )
      )
    )))
  )

  // The task of an environment, looked up once per EnvironmentDef value (one per cell).
  const tasks = new WeakMap<EnvironmentDef, Task>()
  const lookUp = (env: EnvironmentDef, byId: ReadonlyMap<string, Task>, data: Data): Either.Either<{ readonly task: Task; readonly data: Data }, CapabilityError> => {
    const known = tasks.get(env)
    if (known !== undefined) return Either.right({ task: known, data })
    const task = byId.get(env.task)
    if (task === undefined) return Either.left(dataError(`no ${def.name} task ${env.task}`))
    tasks.set(env, task)
    return Either.right({ task, data })
  }
  const taskOf = (env: EnvironmentDef): Effect.Effect<{ readonly task: Task; readonly data: Data }, CapabilityError> =>
    ready !== undefined ? lookUp(env, ready.byId, ready.data) : Effect.flatMap(load, ({ byId, data }) => lookUp(env, byId, data))

  const environment = (task: Task): EnvironmentDef => ({
    benchmark: def.name,
    task: def.id(task),
    stratum: def.stratum === undefined ? "all" : def.stratum(task),
    world: def.world ?? { isolation: "fork", settlement: "discard", effects: defaultEffects },
    capabilities: {
      worldSetup: { name: setupRef.name, version: setupRef.version },
      protocol: { name: protocolRef.name, version: protocolRef.version },
      evaluator: { name: gradeRef.name, version: gradeRef.version },
      upstream: def.upstream ?? null,
      models: def.models ?? {}
    },
    limits: { ...noLimits, ...def.limits?.(task) }
  })

  const capabilitiesWith = (specs: Specs<Task, Data, Output, Encoded>): Capabilities => {
    const setup = specs.setup ?? def.setup
    const protocol = specs.protocol ?? def.protocol
    const grade = specs.grade ?? def.grade
    const setupRef = refOf(def, setup, "setup")
    const protocolRef = refOf(def, protocol, "protocol")
    const gradeRef = refOf(def, grade, "grade")
    // Synchronous (an Either is an Effect): the output is plain data, and this runs once per Attempt.
    const encodeOutput = Schema.encodeEither(protocol.output)
    const decodeOutput = Schema.decodeUnknownEither(protocol.output)
    return {
      worldSetup: {
        ...setupRef,
        setup: (env) => Effect.flatMap(taskOf(env), ({ task, data }) => call(() => setup.run(task, { env, data })))
      },
      protocol: {
        ...protocolRef,
        inputs: (env, agent) => Effect.flatMap(taskOf(env), ({ task, data }) => call(() => protocol.inputs(task, { env, data, agent }))),
        run: (ctx) =>
          Effect.flatMap(taskOf(ctx.env), ({ task, data }) =>
            Effect.flatMap(
              call(() => protocol.run(task, { ...ctx, data })),
              (output) =>
                Either.mapLeft(
                  encodeOutput(output),
                  (e) => new CapabilityError({ capability: protocolRef.name, reason: "protocol", detail: `its output is not what it declares: ${e.message}` })
                )
            ))
      },
      evaluator: {
        ...gradeRef,
        evaluate: (ctx) =>
          Effect.flatMap(taskOf(ctx.env), ({ task, data }) =>
            Effect.flatMap(
              Either.mapLeft(
                decodeOutput(ctx.output),
                (e) => new CapabilityError({ capability: gradeRef.name, reason: "evaluator", detail: `the protocol's output does not decode: ${e.message}` })
              ),
              (output) => call(() => grade.run(task, { ...ctx, output, data }))
            ))
      }
    }
  }
  const roster = ["gold", "echo"] as const

  const provider: Provider = {
    name: def.name,
    version: def.version,
    description: def.description,
    environments: Effect.map(load, ({ environments }) => environments),
    capabilities: capabilitiesWith({}),
    roster,
    rosterDef: (name) => Agent.referenceDef(name, def.actionSpace),
    scripted: (name, env) =>
      Effect.flatMap(taskOf(env), ({ task, data }) =>
        name === "gold"
          ? call(() => def.gold(task, { env, data }))
          : name === "echo"
          ? def.doNothing === undefined ? Effect.succeed(Agent.echo) : call(() => def.doNothing!(task, { env, data }))
          : Effect.fail(dataError(`no scripted candidate ${name}: use ${roster.join(" or ")}`))),
    ...(def.impassable !== undefined ? { impassable: def.impassable } : {}),
    ...(def.judged !== undefined ? { judged: def.judged } : {}),
    ...(def.untrusted !== undefined ? { untrusted: def.untrusted } : {}),
    ...(def.attribution !== undefined ? { attribution: def.attribution } : {}),
    ...(def.pinned !== undefined ? { data: underRoot(def.pinned.folder, def.pinned.files) } : {}),
    ...(def.pinned?.derived !== undefined ? { derived: def.pinned.derived } : {}),
    ...(def.equivalence !== undefined ? { equivalence: def.equivalence } : {})
  }
  return { provider, data: Effect.map(load, ({ data }) => data), environment, capabilitiesWith }
}

/** A scripted agent that plays the given turns of tool calls, then answers `answer`. */
export const plays = (name: string, turns: ReadonlyArray<AgentReply>, answer = "Done."): Agent.Agent => Agent.scripted(name, turns, answer)
