/**
 * Model access as a service, in the style of @effect/ai's `LanguageModel`: one `generate` from
 * plain request data to a plain response. The live layer speaks the wire formats over an
 * `HttpClient` provided once from outside; the scripted layer answers from a script in memory (no
 * socket); replay never reaches it (recorded calls are answered by the effect handler). Wrapping
 * layers (the experiment's spend cap) take the inner service and return a new one.
 */
import { Context, type Effect } from "effect"
import type { SpendCapReached } from "../budget/SpendCap.ts"
import type { ModelError, ModelRequest, ModelResponse } from "./Clients.ts"

export interface Model {
  /** Fails with SpendCapReached only under the experiment's spend cap (a call it could not cover). */
  readonly generate: (request: ModelRequest) => Effect.Effect<ModelResponse, ModelError | SpendCapReached>
}
export const Model = Context.GenericTag<Model>("assay/Model")
