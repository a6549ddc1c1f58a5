/**
 * The OTLP/HTTP exporter of the command's spans (JSON encoding), loaded by Tracing.layerFromEnv
 * only when an endpoint is set. Only assay's own spans are sent (Tracing.onlyAssaySpans), in
 * batches as they end, and the rest when the layer's scope closes, before the command exits.
 */
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Layer } from "effect"
import { onlyAssaySpans, type OtlpConfig } from "./Tracing.ts"

export const layer = (config: OtlpConfig): Layer.Layer<never> =>
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
      (tracer) => Layer.setTracer(onlyAssaySpans(tracer))
    )
  ).pipe(Layer.provide(Layer.mergeAll(OtlpSerialization.layerJson, NodeHttpClient.layer)))
