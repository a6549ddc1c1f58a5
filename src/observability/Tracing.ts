/**
 * Tracing. With `OTEL_EXPORTER_OTLP_ENDPOINT` set, the command sends spans over OTLP/HTTP: one
 * per run (`assay.run`), per Attempt (`assay.attempt`), per model call (`assay.model`) and per
 * tool call (`assay.tool`), with the cell, the candidate, tokens and cost as attributes.
 *
 * A span carries names, ids, counts and dollars, never a prompt, a message or a key: a model
 * call's own spans (the HTTP client's URL and headers, the model library's) are not traced at
 * all, and a failed model or tool call's span says how it failed (its tag and reason), never the
 * error's text, which can quote a server's answer or a tool's arguments.
 *
 * This module loads no exporter: `layerFromEnv` imports one (./Otlp.ts) only when the variable
 * is set, so a command without it pays nothing at start-up.
 */
import { Cause, type Context, Effect, Exit, FiberRef, Layer, Option, Tracer } from "effect"
import type { OtlpConfig } from "./Otlp.ts"

export type Attributes = Readonly<Record<string, string | number | boolean | ReadonlyArray<string>>>

// ---------------------------------------------------------------------------------------------
// Spans whose failure says only how it failed

/** `Tag: reason` of a failure (`EffectFault: rate-limit`), `defect` or `interrupted`: never its text. */
export const failureOf = (cause: Cause.Cause<unknown>): string => {
  if (Cause.isInterruptedOnly(cause)) return "interrupted"
  const failure = Cause.failureOption(cause)
  if (Option.isNone(failure)) return "defect"
  const e = failure.value
  if (typeof e !== "object" || e === null) return "failure"
  const tag = "_tag" in e && typeof e._tag === "string" ? e._tag : "failure"
  return "reason" in e && typeof e.reason === "string" ? `${tag}: ${e.reason}` : tag
}

/** The only error a quiet span ends with: its message is what `failureOf` says, and nothing else. */
class Failed extends Error {
  override readonly name = "Failed"
}

/**
 * `spanned` where spans are made, else `self` as it is. With the tracer disabled (the runner's
 * cells when nothing exports, src/experiment/Runner.ts) a span is not made, yet `withSpan` and its
 * annotations still cost ~20-30 fiber steps and two copies of the fiber's refs each.
 */
const whenTracing = <A, E, R>(self: Effect.Effect<A, E, R>, spanned: () => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(FiberRef.get(FiberRef.currentTracerEnabled), (enabled) => (enabled ? spanned() : self))

/**
 * `self` in a span named `name`, with `attributes` and what `outcome` says of its exit. When
 * `self` fails, the span ends with an error that names only the failure's tag and reason; `self`'s
 * own failure is returned unchanged.
 */
export const quietSpan = <A, E>(name: string, attributes: Attributes, outcome: (exit: Exit.Exit<A, E>) => Attributes) =>
<R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  whenTracing(self, () => {
    let result: Exit.Exit<A, E> | undefined
    return Effect.exit(self).pipe(
      Effect.tap((exit) => {
        result = exit
        return Effect.annotateCurrentSpan(outcome(exit))
      }),
      Effect.flatMap((exit) =>
        Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause) ? Effect.fail(new Failed(failureOf(exit.cause))) : Effect.void
      ),
      Effect.withSpan(name, { attributes, captureStackTrace: false }),
      Effect.catchAll(() => Effect.void),
      Effect.flatMap(() => result!)
    )
  })

const tokens = (usage: { readonly inputTokens: number; readonly outputTokens: number; readonly cacheReadTokens: number; readonly cacheWriteTokens: number }): Attributes => ({
  "assay.tokens.input": usage.inputTokens,
  "assay.tokens.output": usage.outputTokens,
  "assay.tokens.cache_read": usage.cacheReadTokens,
  "assay.tokens.cache_write": usage.cacheWriteTokens
})

/** Unknown stays unknown: no `assay.cost_usd`, and `assay.cost_known` false. */
const cost = (costUsd: number | null): Attributes => (costUsd === null ? { "assay.cost_known": false } : { "assay.cost_usd": costUsd, "assay.cost_known": true })

// ---------------------------------------------------------------------------------------------
// assay.model

export const MODEL_SPAN = "assay.model"

/**
 * A model call as an `assay.model` span: provider, model, role (the effect's key), tokens. Inside
 * it nothing is traced: the HTTP client's spans would carry URLs (a key in a query string) and
 * headers, and a model library's spans may carry the prompt.
 */
export const modelSpan = (call: { readonly role: string; readonly provider: string; readonly model: string }) =>
<A extends { readonly usage: Parameters<typeof tokens>[0] }, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  whenTracing(self, () => self.pipe(
    Effect.withTracerEnabled(false),
    quietSpan(
      MODEL_SPAN,
      { "assay.model.provider": call.provider, "assay.model.name": call.model, "assay.model.role": call.role },
      (exit) => (Exit.isSuccess(exit) ? { ...tokens(exit.value.usage), "assay.error": false } : { "assay.error": true })
    )
  ))

/** What a model call cost at list price, on its `assay.model` span (the spend cap knows the price). */
export const annotateModelCost = (costUsd: number | null): Effect.Effect<void> =>
  Effect.flatMap(Effect.option(Effect.currentSpan), (span) =>
    Option.isSome(span) && span.value.name === MODEL_SPAN ? Effect.annotateCurrentSpan(cost(costUsd)) : Effect.void)

// ---------------------------------------------------------------------------------------------
// assay.tool

/** A tool call as an `assay.tool` span: the tool's name, the effect's kind, whether it answered an error. */
export const toolSpan = (call: { readonly tool: string; readonly kind: string }) =>
<A extends { readonly error: boolean }, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  quietSpan<A, E>(
    "assay.tool",
    { "assay.tool.name": call.tool, "assay.tool.kind": call.kind },
    (exit) => ({ "assay.tool.error": Exit.isSuccess(exit) ? exit.value.error : true, "assay.error": Exit.isFailure(exit) })
  )(self)

// ---------------------------------------------------------------------------------------------
// assay.attempt

export interface AttemptCell {
  readonly benchmark: string
  readonly task: string
  readonly stratum: string | null
  readonly candidate: string
  readonly repetition: number
}

export const attemptAttributes = (cell: AttemptCell): Attributes => ({
  "assay.benchmark": cell.benchmark,
  "assay.task": cell.task,
  ...(cell.stratum !== null ? { "assay.stratum": cell.stratum } : {}),
  "assay.candidate": cell.candidate,
  "assay.repetition": cell.repetition
})

/** A finished Attempt's outcome: its environment id, reward, how it ended, tokens, calls, cost. */
export const attemptOutcome = (attempt: {
  readonly environmentId: string
  readonly inputsId: string
  readonly verdict: { readonly reward: number; readonly ended: { readonly reason: string } | null }
  readonly usage: Parameters<typeof tokens>[0] & { readonly calls: number; readonly retries: number; readonly costUsd: number | null; readonly wallSeconds: number }
}): Attributes => ({
  "assay.environment_id": attempt.environmentId,
  "assay.reward": attempt.verdict.reward,
  "assay.ended": attempt.verdict.ended?.reason ?? "finished",
  "assay.inputs_id": attempt.inputsId,
  ...tokens(attempt.usage),
  "assay.model_calls": attempt.usage.calls,
  "assay.retries": attempt.usage.retries,
  ...cost(attempt.usage.costUsd),
  "assay.wall_seconds": attempt.usage.wallSeconds
})

/** `evaluate` as an `assay.attempt` span (evaluate never fails: its outcome is on the span). */
export const attemptSpan = (cell: AttemptCell) =>
<A extends Parameters<typeof attemptOutcome>[0], E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  whenTracing(self, () =>
    self.pipe(
      Effect.tap((attempt) => Effect.annotateCurrentSpan(attemptOutcome(attempt))),
      Effect.withSpan("assay.attempt", { attributes: attemptAttributes(cell), captureStackTrace: false })
    ))

// ---------------------------------------------------------------------------------------------
// assay.run

export const runOutcome = (report: {
  readonly runId: string
  readonly cells: Readonly<Record<"total" | "ran" | "kept" | "stale" | "skipped" | "faulted", number>>
  readonly spend?: { readonly runUsd: number; readonly experimentUsd: number; readonly calls: number; readonly unknownCalls: number } | undefined
}): Attributes => ({
  "assay.run_id": report.runId,
  ...Object.fromEntries(Object.entries(report.cells).map(([k, n]) => [`assay.cells.${k}`, n])),
  ...(report.spend
    ? {
      "assay.spend.run_usd": report.spend.runUsd,
      "assay.spend.experiment_usd": report.spend.experimentUsd,
      "assay.spend.calls": report.spend.calls,
      "assay.spend.unknown_calls": report.spend.unknownCalls
    }
    : {})
})

/** A run as an `assay.run` span: the experiment, its candidates, then the cells' counts and the spend. */
export const runSpan = (plan: {
  readonly experimentId: string
  readonly cells: ReadonlyArray<{ readonly env: { readonly benchmark: string }; readonly candidate: { readonly def: { readonly name: string } } }>
}) =>
<A extends { readonly report: Parameters<typeof runOutcome>[0] }, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  self.pipe(
    Effect.tap((outcome) => Effect.annotateCurrentSpan(runOutcome(outcome.report))),
    Effect.withSpan("assay.run", {
      attributes: {
        "assay.experiment_id": plan.experimentId,
        "assay.benchmarks": Array.from(new Set(plan.cells.map((c) => c.env.benchmark))),
        "assay.candidates": Array.from(new Set(plan.cells.map((c) => c.candidate.def.name))),
        "assay.cells.planned": plan.cells.length
      },
      captureStackTrace: false
    })
  )

// ---------------------------------------------------------------------------------------------
// Only assay's own spans leave the process

/** Spans made under `onlyAssaySpans` that are not sent; their children are parented past them. */
const unsent = new WeakSet<Tracer.AnySpan>()

const hex = (bytes: number): string => {
  let out = ""
  for (let i = 0; i < bytes; i++) out += Math.floor(Math.random() * 256).toString(16).padStart(2, "0")
  return out
}

/** A span that records nothing and is never sent (a library's: SQL statements, HTTP requests). */
const unsentSpan = (
  name: string,
  parent: Option.Option<Tracer.AnySpan>,
  context: Context.Context<never>,
  links: ReadonlyArray<Tracer.SpanLink>,
  startTime: bigint,
  kind: Tracer.SpanKind
): Tracer.Span => {
  const span: Tracer.Span = {
    _tag: "Span",
    name,
    spanId: hex(8),
    traceId: Option.isSome(parent) ? parent.value.traceId : hex(16),
    parent,
    context,
    status: { _tag: "Started", startTime },
    attributes: new Map(),
    links,
    sampled: false,
    kind,
    end: () => {},
    attribute: () => {},
    event: () => {},
    addLinks: () => {}
  }
  unsent.add(span)
  return span
}

/**
 * A tracer that sends only assay's own spans (`assay.*`), whose attributes are chosen here, through
 * `inner`; a library's spans (SQL statements, HTTP requests with their URLs and headers) are made
 * but never sent, and an assay span under one is parented to the nearest sent span.
 */
export const onlyAssaySpans = (inner: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      if (!name.startsWith("assay.")) return unsentSpan(name, parent, context, links, startTime, kind)
      let sent = parent
      while (Option.isSome(sent) && unsent.has(sent.value)) sent = sent.value._tag === "Span" ? sent.value.parent : Option.none()
      return inner.span(name, sent, context, links, startTime, kind, options)
    },
    context: (f, fiber) => inner.context(f, fiber)
  })

// ---------------------------------------------------------------------------------------------
// The exporter, from the standard environment variables

export type { OtlpConfig }

/**
 * The exporter's settings, as OpenTelemetry's SDKs read them: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
 * as given, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`; `OTEL_SERVICE_NAME` (default
 * `assay`); `OTEL_EXPORTER_OTLP_HEADERS`. None when no endpoint is set or `OTEL_SDK_DISABLED` is
 * true; a string when the endpoint is not an http(s) URL.
 */
export const configOf = (env: Readonly<Record<string, string | undefined>>): OtlpConfig | string | null => {
  if (env["OTEL_SDK_DISABLED"]?.trim().toLowerCase() === "true") return null
  const traces = env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]?.trim()
  const base = env["OTEL_EXPORTER_OTLP_ENDPOINT"]?.trim()
  const tracesUrl = traces ? traces : base ? `${base.replace(/\/+$/, "")}/v1/traces` : null
  if (tracesUrl === null) return null
  let url: URL
  try {
    url = new URL(tracesUrl)
  } catch {
    return `the OTLP endpoint ${JSON.stringify(tracesUrl)} is not a URL`
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `the OTLP endpoint ${JSON.stringify(tracesUrl)} is not an http(s) URL`
  const headers: Record<string, string> = {}
  for (const pair of (env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] ?? env["OTEL_EXPORTER_OTLP_HEADERS"] ?? "").split(",")) {
    const at = pair.indexOf("=")
    if (at <= 0) continue
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim())
    } catch {
      // A malformed escape: the header is left out, as the SDKs do.
    }
  }
  return { tracesUrl: url.href, serviceName: env["OTEL_SERVICE_NAME"]?.trim() || "assay", headers }
}

/**
 * The command's tracer: none when no endpoint is set (nothing is loaded); else an OTLP/HTTP
 * exporter, loaded now, whose spans are flushed when the layer's scope closes (as the command
 * ends). An endpoint that is not a URL is said in one line, and the command runs untraced.
 */
export const layerFromEnv = (env: Readonly<Record<string, string | undefined>> = process.env): Layer.Layer<never> => {
  const config = configOf(env)
  if (config === null) return Layer.empty
  if (typeof config === "string") {
    return Layer.effectDiscard(Effect.sync(() => process.stderr.write(`assay: ${config}: no traces are sent\n`)))
  }
  return Layer.unwrapEffect(
    Effect.tryPromise(() => import("./Otlp.ts")).pipe(
      Effect.map((otlp) => otlp.layer(config, onlyAssaySpans)),
      Effect.catchAll((e) =>
        Effect.sync(() => {
          process.stderr.write(`assay: the OTLP exporter did not load (${e.message}): no traces are sent\n`)
          return Layer.empty
        })
      )
    )
  )
}
