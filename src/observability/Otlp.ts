/**
 * The OTLP/HTTP exporter of the command's spans (JSON encoding), loaded by Tracing.layerFromEnv
 * only when an endpoint is set. Only assay's own spans are sent (Tracing.onlyAssaySpans), in
 * batches as they end, and the rest when the layer's scope closes, before the command exits.
 */
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Layer, type Tracer } from "effect"

export interface OtlpConfig {
  /** Where trace batches are posted (`.../v1/traces`). */
  readonly tracesUrl: string
  readonly serviceName: string
  /** `OTEL_EXPORTER_OTLP_HEADERS` (a collector's own credentials): sent to it, never put in a span. */
  readonly headers: Readonly<Record<string, string>>
}

/** The exporter as the command's tracer, each span through `only` (Tracing.onlyAssaySpans: the caller's, so this module imports none of it). */
export const layer = (config: OtlpConfig, only: (inner: Tracer.Tracer) => Tracer.Tracer): Layer.Layer<never> =>
  Layer.unwrapScoped(
    Effect.map(
      OtlpTracer.make({
        url: config.tracesUrl,
        resource: { serviceName: config.serviceName },
        headers: config.headers,
        exportInterval: "2 seconds",
        // What is left is sent as the command ends; an unreachable collector delays its exit by at most this.
        shutdownTimeout: "3 seconds"
      }),
      (tracer) => Layer.setTracer(only(tracer))
    )
  ).pipe(Layer.provide(Layer.mergeAll(OtlpSerialization.layerJson, NodeHttpClient.layer)))
