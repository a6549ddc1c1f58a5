/**
 * Every effect of an Attempt goes through one service. Its behaviour is chosen by layers, from
 * outermost: admission, faults, recording, and the handler (live or replay). Each wrapping layer
 * takes the inner service and returns a new one, so their order is visible where they are
 * composed (`fromSpec`).
 */
import { createHash } from "node:crypto"
import { Context, Effect, Either, Layer, type ParseResult, Ref, Schema } from "effect"
import { canonicalUnsafe, type Json } from "../content/Canonical.ts"
import type { RecordedEffect } from "../schema/Attempt.ts"
import type { Admission, EffectKind, EffectsSpec, FaultReason, FaultSpec } from "../schema/EnvironmentDef.ts"
import type { Tool, ToolOutcome } from "./Tool.ts"
import * as World from "./World.ts"

/** One effect as data: its kind, a stable key (tool name, `role:model`, URL) and its request. */
export interface EffectRequest {
  readonly kind: EffectKind
  readonly key: string
  readonly request: Json
}

export class EffectRefused extends Schema.TaggedError<EffectRefused>()("EffectRefused", {
  kind: Schema.String,
  key: Schema.String,
  /** `spend-cap`: the experiment's spend cap could not cover the call's worst case, so it was not sent. */
  reason: Schema.Literal("read-only", "not-admitted", "spend-cap")
}) {
  override get message() {
    return `${this.kind} ${this.key} refused (${this.reason})`
  }
}

export class EffectFault extends Schema.TaggedError<EffectFault>()("EffectFault", {
  kind: Schema.String,
  key: Schema.String,
  occurrence: Schema.Int,
  /** `unreachable`: the endpoint could not be reached (connection refused, DNS, TLS); never injected. */
  reason: Schema.Literal("rate-limit", "server-error", "timeout", "unreachable"),
  injected: Schema.Boolean,
  /** What was met, in the words of whoever met it (an agent CLI's own message), when known. */
  detail: Schema.optional(Schema.String),
  /** Trying again cannot help (a key the endpoint refuses): not retried. */
  permanent: Schema.optional(Schema.Boolean)
}) {
  override get message() {
    // A fault met live is built where its occurrence is not known (0): no number is shown for it.
    const which = this.injected || this.occurrence > 0 ? ` #${this.occurrence}` : ""
    return `${this.reason} ${this.injected ? "injected" : "met"} on ${this.kind} ${this.key}${which}${this.detail === undefined ? "" : `: ${this.detail}`}`
  }
}

export class EffectFailed extends Schema.TaggedError<EffectFailed>()("EffectFailed", {
  kind: Schema.String,
  key: Schema.String,
  reason: Schema.Literal("no-handler", "replay-missing", "replay-mismatch", "handler"),
  detail: Schema.String
}) {
  override get message() {
    return `${this.kind} ${this.key}: ${this.reason}: ${this.detail}`
  }
}

export type EffectError = EffectRefused | EffectFault | EffectFailed

export interface WorldEffects {
  readonly perform: (effect: EffectRequest) => Effect.Effect<Json, EffectError>
}
export const WorldEffects = Context.GenericTag<WorldEffects>("assay/WorldEffects")

/** The Attempt's fork: the world as it stands, advanced by every tool write. */
export interface AttemptWorld {
  readonly ref: Ref.Ref<World.World>
}
export const AttemptWorld = Context.GenericTag<AttemptWorld>("assay/AttemptWorld")

/** The Attempt's world as it is now (what a protocol reads to report on it). */
export const currentWorld: Effect.Effect<World.World, never, AttemptWorld> = Effect.flatMap(AttemptWorld, (w) => Ref.get(w.ref))

export const layerAttemptWorld = (initial: World.World): Layer.Layer<AttemptWorld> =>
  Layer.effect(AttemptWorld, Effect.map(Ref.make(World.fork(initial)), (ref) => ({ ref })))

const decoders = new WeakMap<Schema.Schema.Any, (u: unknown) => Either.Either<unknown, ParseResult.ParseError>>()

/** Perform an effect through the current service, decoding its result (synchronously: no fiber steps of its own). */
export const perform = <A, I>(effect: EffectRequest, result: Schema.Schema<A, I>): Effect.Effect<A, EffectError, WorldEffects> => {
  let decode = decoders.get(result)
  if (decode === undefined) decoders.set(result, decode = Schema.decodeUnknownEither(result))
  const decoder = decode
  return Effect.flatMap(WorldEffects, (w) => w.perform(effect)).pipe(
    Effect.flatMap((json) =>
      Either.match(decoder(json), {
        onLeft: (e) => Effect.fail(new EffectFailed({ kind: effect.kind, key: effect.key, reason: "handler", detail: e.message })),
        onRight: (a) => Effect.succeed(a as A)
      })
    )
  )
}

// ---------------------------------------------------------------------------------------------
// The handler: live or replay

export type Handler = (effect: EffectRequest) => Effect.Effect<Json, EffectError>
export type Handlers = Partial<Record<EffectKind, Handler>>

const ToolRequest = Schema.Struct({
  tool: Schema.String,
  args: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  argumentsText: Schema.optional(Schema.String)
})

/** Tool outcomes that write advance the Attempt's world, live or replayed alike. */
const settle = (world: AttemptWorld, effect: EffectRequest, result: Json): Effect.Effect<void> => {
  if (effect.kind !== "tool/write" || result === null || typeof result !== "object" || Array.isArray(result)) return Effect.void
  const writes = (result as { readonly writes?: ReadonlyArray<World.Write> }).writes
  return writes && writes.length > 0 ? Ref.update(world.ref, (w) => World.apply(w, writes)) : Effect.void
}

/** Handlers for a provider's tools: each runs as a pure function of the Attempt's world. */
export const toolHandlers = (tools: ReadonlyArray<Tool>, world: AttemptWorld): Handlers => {
    const byName = new Map(tools.map((t) => [t.spec.name, t]))
    const handler: Handler = (effect) =>
      Effect.gen(function*() {
        const request = yield* Schema.decodeUnknown(ToolRequest)(effect.request).pipe(
          Effect.mapError((e) => new EffectFailed({ kind: effect.kind, key: effect.key, reason: "handler", detail: e.message }))
        )
        const tool = byName.get(request.tool)
        const current = yield* Ref.get(world.ref)
        const outcome: ToolOutcome = tool
          ? tool.run(current, request.args as { readonly [key: string]: Json }, request.argumentsText)
          : { output: `Error: Tool '${request.tool}' not found.`, error: true, writes: [] }
        return { output: outcome.output, error: outcome.error, writes: outcome.writes } as unknown as Json
      })
    return { "tool/read": handler, "tool/write": handler }
}

/** The live handler: provider tools, real model calls, real HTTP, as given. */
export const makeLive = (handlers: Handlers, world: AttemptWorld): WorldEffects => ({
  perform: (effect) => {
    const handler = handlers[effect.kind]
    if (!handler) {
      return Effect.fail(
        new EffectFailed({ kind: effect.kind, key: effect.key, reason: "no-handler", detail: "no live handler for this kind of effect" })
      )
    }
    return Effect.tap(handler(effect), (result) => settle(world, effect, result))
  }
})

export const layerLive = (handlers: Handlers): Layer.Layer<WorldEffects, never, AttemptWorld> =>
  Layer.effect(WorldEffects, Effect.map(AttemptWorld, (world) => makeLive(handlers, world)))

const requestDigest = (request: unknown): string => createHash("sha256").update(canonicalUnsafe(request)).digest("hex")

/**
 * Replay answers every effect from a recording, matched by kind, key and occurrence, and fails
 * loudly on an effect the recording lacks or whose request differs.
 */
export const makeReplay = (recording: ReadonlyArray<RecordedEffect>, world: AttemptWorld): WorldEffects => {
  const counters = new Map<string, number>()
  const index = new Map<string, RecordedEffect>()
  for (const r of recording) index.set(`${r.kind}\u0000${r.key}\u0000${r.occurrence}`, r)
  return {
    perform: (effect) =>
      Effect.suspend((): Effect.Effect<Json, EffectError> => {
        const id = `${effect.kind}\u0000${effect.key}`
        const occurrence = (counters.get(id) ?? 0) + 1
        counters.set(id, occurrence)
        const recorded = index.get(`${id}\u0000${occurrence}`)
        if (!recorded) {
          return Effect.fail(
            new EffectFailed({
              kind: effect.kind,
              key: effect.key,
              reason: "replay-missing",
              detail: `the recording has no occurrence #${occurrence} of ${effect.kind} ${effect.key}`
            })
          )
        }
        if (requestDigest(recorded.request) !== requestDigest(effect.request)) {
          return Effect.fail(
            new EffectFailed({
              kind: effect.kind,
              key: effect.key,
              reason: "replay-mismatch",
              detail: `occurrence #${occurrence} was recorded with another request`
            })
          )
        }
        if ("error" in recorded.outcome) {
          const e = recorded.outcome.error
          return e.reason === "rate-limit" || e.reason === "server-error" || e.reason === "timeout" || e.reason === "unreachable"
            ? Effect.fail(new EffectFault({ kind: effect.kind, key: effect.key, occurrence, reason: e.reason, injected: false, ...(e.permanent === true ? { permanent: true } : {}) }))
            : Effect.fail(new EffectFailed({ kind: effect.kind, key: effect.key, reason: "handler", detail: e.message }))
        }
        const result = recorded.outcome.ok as Json
        return Effect.as(settle(world, effect, result), result)
      })
  }
}

export const layerReplay = (recording: ReadonlyArray<RecordedEffect>): Layer.Layer<WorldEffects, never, AttemptWorld> =>
  Layer.effect(WorldEffects, Effect.map(AttemptWorld, (world) => makeReplay(recording, world)))

// ---------------------------------------------------------------------------------------------
// Recording

/** Where the recording layer appends; read at the end of the Attempt. */
export interface Recorder {
  readonly entries: Ref.Ref<ReadonlyArray<RecordedEffect>>
}
export const Recorder = Context.GenericTag<Recorder>("assay/Recorder")

export const layerRecorder: Layer.Layer<Recorder> = Layer.effect(
  Recorder,
  Effect.map(Ref.make<ReadonlyArray<RecordedEffect>>([]), (entries) => ({ entries }))
)

/** Appends every effect that reaches the handler, and its outcome, to the Recorder. */
export const wrapRecording = (inner: WorldEffects, recorder: Recorder): WorldEffects => {
  const counters = new Map<string, number>()
  return {
    // Counted when run, not when built, so a retried effect is a new occurrence.
    perform: (effect) =>
      Effect.suspend(() => {
        const id = `${effect.kind}\u0000${effect.key}`
        const occurrence = (counters.get(id) ?? 0) + 1
        counters.set(id, occurrence)
        const append = (outcome: RecordedEffect["outcome"]) =>
          Ref.update(recorder.entries, (es) => [...es, { kind: effect.kind, key: effect.key, occurrence, request: effect.request, outcome }])
        return inner.perform(effect).pipe(
          Effect.tap((ok) => append({ ok })),
          Effect.tapError((e) =>
            e._tag === "EffectRefused"
              ? Effect.void
              : append({ error: { reason: e.reason, message: e.message, ...(e._tag === "EffectFault" && e.permanent === true ? { permanent: true } : {}) } })
          )
        )
      })
  }
}

export const recording: Layer.Layer<WorldEffects, never, WorldEffects | Recorder> = Layer.effect(
  WorldEffects,
  Effect.zipWith(WorldEffects, Recorder, wrapRecording)
)

// ---------------------------------------------------------------------------------------------
// Faults

/**
 * Whether the n-th occurrence of an effect faults, and how: a pure function of (seed, task,
 * site, n), where the site is the effect's kind and its role or tool name (`model/generate:agent`,
 * `tool/write:transfer`), never a model or candidate name. Two candidates that make the same
 * effects on a task meet the same draws (paired); different tasks draw independently.
 */
export const drawFault = (
  spec: Pick<FaultSpec, "seed" | "rate" | "kinds">,
  site: string,
  occurrence: number,
  task = ""
): FaultReason | null => {
  if (spec.rate <= 0) return null
  const h = createHash("sha256").update(`${spec.seed}\u0000${task}\u0000${site}\u0000${occurrence}`).digest()
  // 48 bits are plenty for a uniform draw in [0, 1).
  const u = h.readUIntBE(0, 6) / 2 ** 48
  if (u >= spec.rate) return null
  return spec.kinds[h.readUInt32BE(8) % spec.kinds.length] ?? null
}

/** Where the faults layer notes each fault it injects; read at the end of the Attempt. */
export interface FaultLog {
  readonly entries: Ref.Ref<ReadonlyArray<{ readonly key: string; readonly occurrence: number; readonly reason: FaultReason }>>
}
export const FaultLog = Context.GenericTag<FaultLog>("assay/FaultLog")

export const layerFaultLog: Layer.Layer<FaultLog> = Layer.effect(
  FaultLog,
  Effect.map(Ref.make<FaultLog["entries"] extends Ref.Ref<infer A> ? A : never>([]), (entries) => ({ entries }))
)

export const wrapFaults = (spec: FaultSpec, inner: WorldEffects, log: FaultLog, task = ""): WorldEffects => {
  const counters = new Map<string, number>()
  return {
    perform: (effect) =>
      Effect.suspend(() => {
        if (spec.only !== null && !spec.only.includes(effect.kind)) return inner.perform(effect)
        // Judging is verification, not the candidate's environment: a judge's calls never fault.
        if (effect.key === "judge" || effect.key.startsWith("judge:")) return inner.perform(effect)
        const key = `${effect.kind}:${effect.key}`
        const occurrence = (counters.get(key) ?? 0) + 1
        counters.set(key, occurrence)
        const reason = drawFault(spec, key, occurrence, task)
        if (reason === null) return inner.perform(effect)
        return Ref.update(log.entries, (es) => [...es, { key, occurrence, reason }]).pipe(
          Effect.zipRight(Effect.fail(new EffectFault({ kind: effect.kind, key: effect.key, occurrence, reason, injected: true })))
        )
      })
  }
}

/** Injects faults by the spec; `task` (benchmark/task) keys the draws, so tasks draw independently. */
export const faults = (spec: FaultSpec, task: string): Layer.Layer<WorldEffects, never, WorldEffects | FaultLog> =>
  Layer.effect(WorldEffects, Effect.zipWith(WorldEffects, FaultLog, (inner, log) => wrapFaults(spec, inner, log, task)))

// ---------------------------------------------------------------------------------------------
// Admission

const writes = new Set<EffectKind>(["tool/write", "fs/write", "http/request", "process/spawn"])

const wrapAdmission = (admits: (kind: EffectKind) => boolean, reason: EffectRefused["reason"]) => (inner: WorldEffects): WorldEffects => ({
  perform: (effect) =>
    admits(effect.kind) ? inner.perform(effect) : Effect.fail(new EffectRefused({ kind: effect.kind, key: effect.key, reason }))
})

const admissionWrapper = (spec: Admission): (inner: WorldEffects) => WorldEffects =>
  spec === "all"
    ? (inner) => inner
    : spec === "read-only"
    ? wrapAdmission((kind) => !writes.has(kind), "read-only")
    : wrapAdmission((kind) => spec.admit.includes(kind), "not-admitted")

/** Refuses every effect that can write (tool writes, file writes, HTTP, processes). */
export const readOnly: Layer.Layer<WorldEffects, never, WorldEffects> = Layer.effect(WorldEffects, Effect.map(WorldEffects, admissionWrapper("read-only")))

/** Refuses every effect whose kind is not listed. */
export const admit = (kinds: ReadonlyArray<EffectKind>): Layer.Layer<WorldEffects, never, WorldEffects> =>
  Layer.effect(WorldEffects, Effect.map(WorldEffects, admissionWrapper({ admit: kinds })))

/** What the admission of an EnvironmentDef's world spec admits, as a wrapping layer. */
export const admission = (spec: Admission): Wrap => Layer.effect(WorldEffects, Effect.map(WorldEffects, admissionWrapper(spec)))

/**
 * A wrapping layer: takes the WorldEffects below it and provides a new one (a latency injector,
 * a cassette, a stricter admission). A library user passes their own through `evaluate`'s
 * `wraps` or the runner's settings; they sit outermost, above admission.
 */
export type Wrap = Layer.Layer<WorldEffects, never, WorldEffects>

/**
 * The one way an Attempt's effects are composed, outermost first: admission, faults, recording,
 * then `inner` (the handler, live or replay). The EnvironmentDef's `world.effects` chooses
 * admission and faults; `task` keys the fault draws. The wrapping layers above (`admission`,
 * `faults`, `recording`) have these same wrappers as their bodies; put together directly, no
 * layer is built (building layers for every Attempt costs more CPU than the rest of a one-call
 * Attempt).
 */
export const attemptEffects = (spec: EffectsSpec, task: string, inner: WorldEffects, recorder: Recorder, log: FaultLog): WorldEffects => {
  let effects = wrapRecording(inner, recorder)
  if (spec.faults !== null) effects = wrapFaults(spec.faults, effects, log, task)
  if (spec.admission !== "all") effects = admissionWrapper(spec.admission)(effects)
  return effects
}

/**
 * A caller's own wraps around `effects`, outermost first (the first wrap sees every effect
 * first). Each wrap's layer is built once, over the service below it; a wrap's own resources live
 * while it is built, so a wrap acquires long-lived ones outside.
 */
export const withWraps = (effects: WorldEffects, wraps: ReadonlyArray<Wrap>): Effect.Effect<WorldEffects> =>
  wraps.length === 0
    ? Effect.succeed(effects)
    : Effect.provide(WorldEffects, wraps.reduceRight<Layer.Layer<WorldEffects>>((inner, wrap) => Layer.provide(wrap, inner), Layer.succeed(WorldEffects, effects)))

/**
 * `attemptEffects` as a layer over a handler layer, with the caller's wraps outermost: the same
 * composition, for callers that build their stack from layers.
 */
export const attemptStack = <E, R>(
  spec: EffectsSpec,
  task: string,
  handler: Layer.Layer<WorldEffects, E, R>,
  wraps: ReadonlyArray<Wrap> = []
): Layer.Layer<WorldEffects, E, R | Recorder | FaultLog> =>
  Layer.effect(
    WorldEffects,
    Effect.flatMap(
      Effect.all([WorldEffects, Recorder, FaultLog]),
      ([inner, recorder, log]) => withWraps(attemptEffects(spec, task, inner, recorder, log), wraps)
    )
  ).pipe(Layer.provide(handler))
