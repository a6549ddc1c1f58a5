/**
 * The `model/generate` handler: a model call as a world effect, answered by the `Model` service.
 * What went wrong is sorted here: a rate limit, a server error, a timeout or an endpoint that
 * cannot be reached is an infrastructure fault (retried, then the cell ends as a fault, never as
 * a model verdict); so is a key the endpoint refuses (401, 403: the model was never asked, so the
 * cell says nothing of it, and the next run runs it again); a call the spend cap refused is a
 * refusal; anything else (a bad request, a malformed answer) fails the handler with the reason.
 *
 * This module loads no model client: the Model service given is whatever the caller provides.
 */
import { Effect } from "effect"
import type { Json } from "../content/Canonical.ts"
import * as Tracing from "../observability/Tracing.ts"
import * as WE from "../world/WorldEffects.ts"
import type { ModelError, ModelRequest } from "./Model.ts"
import type { Model } from "./Model.ts"

const sorted = (effect: WE.EffectRequest) => (e: ModelError): WE.EffectError => {
  switch (e.reason) {
    case "spend-cap":
      return new WE.EffectRefused({ kind: effect.kind, key: effect.key, reason: "spend-cap" })
    case "rate-limit":
    case "server-error":
    case "timeout":
      return new WE.EffectFault({ kind: effect.kind, key: effect.key, occurrence: 0, reason: e.reason, injected: false })
    case "network":
      return new WE.EffectFault({ kind: effect.kind, key: effect.key, occurrence: 0, reason: "unreachable", injected: false })
    case "auth":
      return new WE.EffectFault({
        kind: effect.kind,
        key: effect.key,
        occurrence: 0,
        reason: "unreachable",
        injected: false,
        detail: `the endpoint refused the key: ${e.message}`,
        permanent: true
      })
    default:
      return new WE.EffectFailed({ kind: effect.kind, key: effect.key, reason: "handler", detail: e.message })
  }
}

/** Answers `model/generate` effects with the given model service, each call an `assay.model` span. */
export const modelHandler = (model: Model): WE.Handler => (effect) => {
  // The request was encoded from a ModelRequest by ModelAgent.call, whose encoding is the identity
  // on plain data: decoding it again here would load the clients' schemas for nothing.
  const request = effect.request as unknown as ModelRequest
  return model.generate(request).pipe(
    Effect.mapError(sorted(effect)),
    Tracing.modelSpan({ role: effect.key, provider: request.provider, model: request.model }),
    Effect.map((response) => response as unknown as Json)
  )
}

