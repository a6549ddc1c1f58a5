import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Tracer } from "effect"
import * as Tracing from "../../src/observability/Tracing.ts"
import * as WE from "../../src/world/WorldEffects.ts"

interface Recorded {
  readonly name: string
  readonly spanId: string
  readonly parentId: string | null
  readonly attributes: Map<string, unknown>
  exit?: Exit.Exit<unknown, unknown>
}

/** A tracer that keeps every span it makes, in memory. */
const recording = () => {
  const spans: Array<Recorded> = []
  let next = 0
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const attributes = new Map<string, unknown>()
      const spanId = String(next++)
      const recorded: Recorded = { name, spanId, parentId: Option.isSome(parent) ? parent.value.spanId : null, attributes }
      spans.push(recorded)
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId,
        traceId: "t",
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes,
        links,
        sampled: true,
        kind,
        end: (_, exit) => {
          recorded.exit = exit
        },
        attribute: (key, value) => {
          attributes.set(key, value)
        },
        event: () => {},
        addLinks: () => {}
      }
      return span
    },
    context: (f) => f()
  })
  return { spans, layer: Layer.setTracer(tracer) }
}

const SECRET = "sk-secret-0123456789"
const usage = { inputTokens: 120, outputTokens: 7, cacheReadTokens: 3, cacheWriteTokens: 0 }

describe("spans", () => {
  it.effect("a model call is one assay.model span with provider, model, role and tokens; nothing inside it is traced", () =>
    Effect.gen(function*() {
      const { spans, layer } = recording()
      const response = yield* Effect.succeed({ usage, text: "hello" }).pipe(
        // What an HTTP client would record: the URL (a key in its query) and headers.
        Effect.withSpan("http.client POST", { attributes: { "url.full": `https://example.test/v1?key=${SECRET}` } }),
        Tracing.modelSpan({ role: "agent", provider: "openai", model: "gpt-4o-mini" }),
        Effect.provide(layer)
      )
      expect(response.text).toBe("hello")
      expect(spans.map((s) => s.name)).toEqual(["assay.model"])
      expect(Object.fromEntries(spans[0]!.attributes)).toEqual({
        "assay.model.provider": "openai",
        "assay.model.name": "gpt-4o-mini",
        "assay.model.role": "agent",
        "assay.tokens.input": 120,
        "assay.tokens.output": 7,
        "assay.tokens.cache_read": 3,
        "assay.tokens.cache_write": 0,
        "assay.error": false
      })
      expect(spans[0]!.exit?._tag).toBe("Success")
    }))

  it.effect("a failed model call's span names the failure's tag and reason, never its text; the caller gets the error unchanged", () =>
    Effect.gen(function*() {
      const { spans, layer } = recording()
      const failure = new WE.EffectFailed({ kind: "model/generate", key: "agent", reason: "handler", detail: `HTTP 401: Incorrect API key provided: ${SECRET}` })
      const exit = yield* Effect.fail(failure).pipe(
        Effect.as({ usage }),
        Tracing.modelSpan({ role: "agent", provider: "openai", model: "gpt-4o-mini" }),
        Effect.provide(layer),
        Effect.exit
      )
      expect(exit).toEqual(Exit.fail(failure))
      const span = spans[0]!
      expect(span.attributes.get("assay.error")).toBe(true)
      expect(span.exit !== undefined && Exit.isFailure(span.exit)).toBe(true)
      const pretty = Cause.pretty((span.exit as Exit.Failure<unknown, unknown>).cause, { renderErrorCause: true })
      expect(pretty).toContain("EffectFailed: handler")
      expect(pretty).not.toContain(SECRET)
      expect(JSON.stringify([...span.attributes])).not.toContain(SECRET)
    }))

  it.effect("a defect in a model call is named a defect, not shown", () =>
    Effect.gen(function*() {
      const { spans, layer } = recording()
      const exit = yield* Effect.die(new Error(`socket to https://x.test/?key=${SECRET} hung up`)).pipe(
        Effect.as({ usage }),
        Tracing.modelSpan({ role: "user", provider: "google", model: "gemini-2.5-flash" }),
        Effect.provide(layer),
        Effect.exit
      )
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      const pretty = Cause.pretty((spans[0]!.exit as Exit.Failure<unknown, unknown>).cause)
      expect(pretty).toContain("defect")
      expect(pretty).not.toContain(SECRET)
    }))

  it.effect("a tool call is one assay.tool span with the tool's name, kind and error flag; a fault is an error named by its reason", () =>
    Effect.gen(function*() {
      const { spans, layer } = recording()
      yield* Effect.succeed({ content: "Error: no such account", error: true }).pipe(Tracing.toolSpan({ tool: "transfer", kind: "tool/write" }), Effect.provide(layer))
      yield* Effect.fail(new WE.EffectFault({ kind: "tool/read", key: "find_accounts", occurrence: 1, reason: "timeout", injected: true })).pipe(
        Effect.as({ error: false }),
        Tracing.toolSpan({ tool: "find_accounts", kind: "tool/read" }),
        Effect.provide(layer),
        Effect.ignore
      )
      expect(spans.map((s) => [s.name, Object.fromEntries(s.attributes)])).toEqual([
        ["assay.tool", { "assay.tool.name": "transfer", "assay.tool.kind": "tool/write", "assay.tool.error": true, "assay.error": false }],
        ["assay.tool", { "assay.tool.name": "find_accounts", "assay.tool.kind": "tool/read", "assay.tool.error": true, "assay.error": true }]
      ])
      expect(Cause.pretty((spans[1]!.exit as Exit.Failure<unknown, unknown>).cause)).toContain("EffectFault: timeout")
    }))

  it.effect("the cost of a model call lands on its assay.model span only", () =>
    Effect.gen(function*() {
      const { spans, layer } = recording()
      yield* Tracing.annotateModelCost(0.25).pipe(Effect.withSpan("assay.attempt"), Effect.provide(layer))
      yield* Tracing.annotateModelCost(0.25).pipe(Effect.as({ usage }), Tracing.modelSpan({ role: "agent", provider: "p", model: "m" }), Effect.provide(layer))
      yield* Tracing.annotateModelCost(null).pipe(Effect.as({ usage }), Tracing.modelSpan({ role: "agent", provider: "p", model: "m" }), Effect.provide(layer))
      expect(spans[0]!.attributes.has("assay.cost_usd")).toBe(false)
      expect(spans[1]!.attributes.get("assay.cost_usd")).toBe(0.25)
      expect(spans[2]!.attributes.has("assay.cost_usd")).toBe(false)
      expect(spans[2]!.attributes.get("assay.cost_known")).toBe(false)
    }))

  it("failureOf names a tag and reason, a tag, a defect or an interruption", () => {
    expect(Tracing.failureOf(Cause.fail(new WE.EffectRefused({ kind: "tool/write", key: "t", reason: "read-only" })))).toBe("EffectRefused: read-only")
    expect(Tracing.failureOf(Cause.fail({ _tag: "StoreError", detail: "x" }))).toBe("StoreError")
    expect(Tracing.failureOf(Cause.fail("text"))).toBe("failure")
    expect(Tracing.failureOf(Cause.die(new Error("x")))).toBe("defect")
    expect(Tracing.failureOf(Cause.interrupt(Option.none() as never))).toBe("interrupted")
  })
})

describe("what is sent", () => {
  it.effect("only assay's spans reach the exporter; one made under a library's span is parented to the nearest assay span", () =>
    Effect.gen(function*() {
      const inner = recording()
      yield* Effect.void.pipe(
        Effect.withSpan("assay.tool"),
        Effect.withSpan("sql.transaction", { attributes: { "db.query.text": "INSERT ..." } }),
        Effect.zipLeft(Effect.withSpan(Effect.void, "http.client GET", { attributes: { "url.full": `https://x.test/?key=${SECRET}` } })),
        Effect.withSpan("assay.attempt"),
        Effect.provide(Layer.unwrapEffect(Effect.map(Effect.tracer, (t) => Layer.setTracer(Tracing.onlyAssaySpans(t))))),
        Effect.provide(inner.layer)
      )
      expect(inner.spans.map((s) => s.name)).toEqual(["assay.attempt", "assay.tool"])
      expect(inner.spans[1]!.parentId).toBe(inner.spans[0]!.spanId)
      expect(JSON.stringify(inner.spans.map((s) => [...s.attributes]))).not.toContain(SECRET)
    }))
})

describe("the exporter's settings", () => {
  it("no endpoint, or OTEL_SDK_DISABLED, is no exporter at all", () => {
    expect(Tracing.configOf({})).toBeNull()
    expect(Tracing.configOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "" })).toBeNull()
    expect(Tracing.configOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" })).toBeNull()
    expect(Tracing.layerFromEnv({})).toBe(Layer.empty)
  })

  it("the endpoint is a base (+ /v1/traces), the traces endpoint is used as given, the service is assay unless named", () => {
    expect(Tracing.configOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318/" })).toEqual({
      tracesUrl: "http://127.0.0.1:4318/v1/traces",
      serviceName: "assay",
      headers: {}
    })
    expect(Tracing.configOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://ignored:1",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector.test/custom",
      OTEL_SERVICE_NAME: "nightly",
      OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=a%20b, bad, authorization=Bearer%20t"
    })).toEqual({
      tracesUrl: "https://collector.test/custom",
      serviceName: "nightly",
      headers: { "x-tenant": "a b", authorization: "Bearer t" }
    })
  })

  it("an endpoint that is not an http(s) URL is said, not used", () => {
    expect(Tracing.configOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:4318" })).toMatch(/is not an http\(s\) URL/)
    expect(Tracing.configOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "::" })).toMatch(/is not a URL/)
  })
})
