/**
 * The live Model layers, in the @effect/ai way: the wire-format clients (Clients.ts: OpenAI
 * Responses, chat completions, Anthropic messages, Gemini) over one HttpClient provided from
 * outside (`layerLive`, `layerWire` for one format), or over Node's HTTP client with one keep-alive
 * agent for the layer's life (`layerNode`, what the command provides for a run). The clients load
 * when a layer needs them, never when this module does: @effect/platform's start-up is paid only
 * by a run that calls a model.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import { Context, Effect, Layer } from "effect"
import type { LiveOptions } from "./Clients.ts"
import { Model } from "./Model.ts"
import type { ApiType } from "./Registry.ts"

// ---------------------------------------------------------------------------------------------
// Live layers
// ---------------------------------------------------------------------------------------------

export type { LiveOptions }

/**
 * The live clients over the `HttpClient` in context, taken once when the layer is built (the
 * decoders are built once, when the clients load). Endpoints come from the `Registry` in context
 * where the layer is built, else from the one where a call is made, else the built-in openai and
 * anthropic ones; base URLs and keys are read from the environment (Config) on each call.
 */
export const layerLiveWith = (options: LiveOptions = {}): Layer.Layer<Model, never, HttpClient.HttpClient> =>
  Layer.effect(
    Model,
    Effect.flatMap(
      Effect.promise(() => import("./Clients.ts")),
      (clients) => Effect.map(clients.make(options), (live): Model => ({ generate: (request) => live.generate(request) }))
    )
  )

export const layerLive: Layer.Layer<Model, never, HttpClient.HttpClient> = layerLiveWith()

/**
 * The live clients over Node's HTTP client: what the command provides, once for the run. One
 * keep-alive agent serves every call and is closed with the layer's scope. The clients load on the
 * first call (once, however many calls start together), so a run of scripted candidates never
 * pays their start-up; endpoints come from the Registry in context where the layer is built, else
 * from the one where a call is made.
 */
export const layerNodeWith = (options: LiveOptions = {}): Layer.Layer<Model> =>
  Layer.scoped(
    Model,
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const context = yield* Effect.context<never>()
      // Once loaded, a call goes straight to the clients: a lookup of the cached load per call
      // was a measurable share of a cell's CPU at --parallel 1000.
      let live: Model | undefined
      const load = yield* Effect.cached(Effect.uninterruptible(
        Effect.flatMap(Effect.promise(() => import("./Clients.ts")), (clients) =>
          Effect.flatMap(Layer.buildWithScope(clients.nodeHttpClient, scope), (http) =>
            Effect.map(Effect.provide(clients.make(options), Context.merge(context, http)), (made): Model => (live = made))))
      ))
      return { generate: (request) => (live !== undefined ? live.generate(request) : Effect.flatMap(load, (model) => model.generate(request))) }
    })
  )

export const layerNode: Layer.Layer<Model> = layerNodeWith()

/** Every request sent in one wire format (to its provider's endpoint), over the `HttpClient` in context. */
export const layerWire = (api: ApiType, options: Omit<LiveOptions, "api"> = {}): Layer.Layer<Model, never, HttpClient.HttpClient> =>
  layerLiveWith({ ...options, api })
