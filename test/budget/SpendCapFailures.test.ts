/**
 * What the spend cap charges a call that failed. A vendor finishes and bills a request it received
 * whatever the client does: a call that failed after its request was sent (no answer in time, a
 * connection lost while waiting for the answer) is charged its reservation and keeps its ledger
 * row, as an interrupted one does. One never sent, or answered with an HTTP error status, was not
 * billed: it settles at 0 and its ledger row is removed.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Either, Layer, Ref } from "effect"
import * as SpendCap from "../../src/budget/SpendCap.ts"
import * as Wallet from "../../src/budget/Wallet.ts"
import { costOf } from "../../src/model/Cost.ts"
import * as Live from "../../src/model/Live.ts"
import { Model, type ModelError, type ModelRequest, scripted, scriptedError } from "../../src/model/Model.ts"
import * as ModelAgent from "../../src/model/ModelAgent.ts"
import { modelHandler } from "../../src/model/ModelEffect.ts"
import * as Registry from "../../src/model/Registry.ts"
import { noLimits } from "../../src/schema/EnvironmentDef.ts"
import * as World from "../../src/world/World.ts"
import * as WE from "../../src/world/WorldEffects.ts"
import { httpServer, json } from "../model/servers.ts"

const registry = Effect.runSync(Registry.fixture)
const resolved = Either.getOrThrow(Registry.resolveIn(registry, "openai:gpt-4o-mini"))
const entry = resolved.model
const request: ModelRequest = {
  provider: "openai",
  model: entry.id,
  system: "s",
  messages: [{ role: "user", content: "hello" }],
  tools: [],
  maxOutputTokens: 1000
}
const worst = SpendCap.worstCaseUsd(request, entry)!

/** A ledger in memory: the rows it holds, by id. */
const memoryLedger = () => {
  const held = new Map<string, number>()
  let next = 0
  const ledger: SpendCap.Ledger = {
    reserve: ({ usd }) =>
      Effect.sync(() => {
        const id = `r${++next}`
        held.set(id, usd)
        return id
      }),
    release: (id) => Effect.sync(() => void held.delete(id))
  }
  return { held, ledger }
}

/** One call failing with `error` under a cap of ten reservations: what the cap and the ledger kept. */
const failWith = (error: ModelError) =>
  Effect.gen(function*() {
    const { held, ledger } = memoryLedger()
    const spends: Array<SpendCap.CallSpend> = []
    const cap = yield* SpendCap.make(worst * 10)
    const model = SpendCap.wrapModel(cap, scripted([error]), { priceOf: () => entry, ledger, onSpend: (s) => Effect.sync(() => void spends.push(s)) })
    const failure = yield* Effect.flip(model.generate(request))
    expect(failure).toBe(error)
    const state = yield* cap.state
    expect(state.reservedUsd).toBe(0)
    expect(spends).toEqual([])
    return { spentUsd: state.spentUsd, ledgerRows: [...held.values()] }
  })

describe("a call that failed under the cap", () => {
  it.effect("sent, then no answer in time or the connection lost: charged its reservation, its ledger row kept", () =>
    Effect.gen(function*() {
      for (const error of [scriptedError("timeout", { sent: true }), scriptedError("network", { sent: true }), scriptedError("network", { status: 200, sent: true })]) {
        expect(yield* failWith(error), error.message).toEqual({ spentUsd: worst, ledgerRows: [worst] })
      }
    }))

  it.effect("never sent (no connection, no key, a request that could not be made): settled at 0, its ledger row removed", () =>
    Effect.gen(function*() {
      for (const error of [scriptedError("network", { sent: false }), scriptedError("auth", { sent: false }), scriptedError("timeout", { sent: false }), scriptedError("timeout")]) {
        expect(yield* failWith(error), error.message).toEqual({ spentUsd: 0, ledgerRows: [] })
      }
    }))

  it.effect("answered with an HTTP error status (not billed): settled at 0, its ledger row removed", () =>
    Effect.gen(function*() {
      for (const [reason, status] of [["rate-limit", 429], ["server-error", 503], ["bad-request", 400], ["timeout", 408]] as const) {
        expect(yield* failWith(scriptedError(reason, { status, sent: true })), `${status}`).toEqual({ spentUsd: 0, ledgerRows: [] })
      }
    }))

  it.effect("answered with a 2xx whose content could not be used, with its usage: settled at that cost, its spend row written in place of its ledger row", () =>
    Effect.gen(function*() {
      const usage = { inputTokens: 2000, outputTokens: 1000, cacheReadTokens: 0, cacheWriteTokens: 0 }
      const { held, ledger } = memoryLedger()
      const spends: Array<SpendCap.CallSpend> = []
      const cap = yield* SpendCap.make(worst * 10)
      const error = scriptedError("decode", { status: 200, sent: true, usage })
      const model = SpendCap.wrapModel(cap, scripted([error]), {
        priceOf: () => entry,
        ledger,
        // As the run's store does: the spend row replaces the call's reservation.
        onSpend: (s) => Effect.sync(() => void (spends.push(s), held.delete(s.reservation!)))
      })
      expect(yield* Effect.flip(model.generate(request))).toBe(error)
      const cost = costOf(entry, usage)!
      expect(spends).toEqual([{ provider: "openai", model: entry.id, ...usage, costUsd: cost, reservation: "r1" }])
      expect(held.size).toBe(0)
      expect(yield* cap.state).toMatchObject({ spentUsd: cost, reservedUsd: 0 })
    }))

  it.effect("answered with a 2xx whose usage could not be read: charged its reservation, its ledger row kept", () =>
    Effect.gen(function*() {
      expect(yield* failWith(scriptedError("decode", { status: 200, sent: true }))).toEqual({ spentUsd: worst, ledgerRows: [worst] })
    }))

  it.effect("without a cap, an answered failure's usage is still counted and written", () =>
    Effect.gen(function*() {
      const usage = { inputTokens: 20, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 }
      const spends: Array<SpendCap.CallSpend> = []
      const cap = yield* SpendCap.make(null)
      const model = SpendCap.wrapModel(cap, scripted([scriptedError("decode", { status: 200, sent: true, usage })]), {
        priceOf: () => entry,
        onSpend: (s) => Effect.sync(() => void spends.push(s))
      })
      yield* Effect.flip(model.generate(request))
      expect(spends).toHaveLength(1)
      expect((yield* cap.state).spentUsd).toBe(costOf(entry, usage))
    }))

  it.live("the built-in agent's retries of a timed-out call are each charged: once the cap cannot cover another, it is not sent", () =>
    Effect.gen(function*() {
      const model = scripted(() => scriptedError("timeout", { sent: true }))
      // Room for one and a half calls: the first try is charged its reservation, the retry cannot reserve.
      const cap = yield* SpendCap.make(worst * 1.5)
      const capped = SpendCap.wrapModel(cap, model, { priceOf: () => entry })
      const effects = WE.makeLive({ "model/generate": modelHandler(capped) }, { ref: yield* Ref.make(World.empty) })
      const outcome = yield* Effect.flip(ModelAgent.call(request, { role: "agent", model: resolved })).pipe(
        Effect.provideService(WE.WorldEffects, effects),
        Effect.provideService(Wallet.Wallet, yield* Wallet.make(noLimits))
      )
      expect(outcome).toMatchObject({ _tag: "EffectRefused", reason: "spend-cap" })
      expect(model.requests()).toHaveLength(1)
      const state = yield* cap.state
      expect(state.spentUsd).toBe(worst)
      expect(state.refused).toBe(1)
    }))
})

describe("through the live client against a loopback server", () => {
  const withEnv = (port: number) =>
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["OPENAI_BASE_URL", `http://127.0.0.1:${port}/v1`], ["OPENAI_API_KEY", "sk-test"]])))
  const answer = (model: string) => ({
    id: "r",
    object: "response",
    model,
    status: "completed",
    output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "hi" }] }],
    usage: { input_tokens: 10, output_tokens: 5 }
  })

  it.scopedLive("a request the server received and did not answer within the client's timeout is charged its reservation", () =>
    Effect.gen(function*() {
      // The first request is answered; the second is received and never answered. It goes out on
      // the first's kept-alive connection, so its body is written before its timer can fire.
      let received = 0
      const port = yield* httpServer((_req, res, body) => {
        received++
        if (received === 1) json(res, 200, answer((JSON.parse(body) as { model: string }).model))
      })
      const inner = Context.get(yield* Layer.build(Live.layerNodeWith({ timeout: "200 millis" }).pipe(Layer.provide(Registry.layer))), Model)
      const { held, ledger } = memoryLedger()
      const cap = yield* SpendCap.make(worst * 10)
      const model = SpendCap.wrapModel(cap, inner, { priceOf: () => entry, ledger, onSpend: (s) => Effect.sync(() => void held.delete(s.reservation!)) })
      yield* model.generate(request).pipe(withEnv(port))
      const spentFirst = (yield* cap.state).spentUsd
      const error = yield* Effect.flip(model.generate(request)).pipe(withEnv(port))
      expect(error).toMatchObject({ reason: "timeout", status: null, sent: true })
      expect(received).toBe(2)
      const state = yield* cap.state
      expect(state.spentUsd).toBeCloseTo(spentFirst + worst, 12)
      expect(state.reservedUsd).toBe(0)
      expect([...held.values()]).toEqual([worst])
    }))

  it.scopedLive("a Responses answer cut off at the output limit mid tool call is settled at the usage it reported, and its spend written", () =>
    Effect.gen(function*() {
      const port = yield* httpServer((_req, res, body) =>
        json(res, 200, {
          model: (JSON.parse(body) as { model: string }).model,
          status: "incomplete",
          incomplete_details: { reason: "max_output_tokens" },
          output: [{ type: "function_call", id: "fc_1", call_id: "call_1", name: "lookup", arguments: "{\"city\": \"Par", status: "incomplete" }],
          usage: { input_tokens: 200, output_tokens: 1000 }
        })
      )
      const inner = Context.get(yield* Layer.build(Live.layerNode.pipe(Layer.provide(Registry.layer))), Model)
      const spends: Array<SpendCap.CallSpend> = []
      const cap = yield* SpendCap.make(worst * 10)
      const model = SpendCap.wrapModel(cap, inner, { priceOf: () => entry, onSpend: (s) => Effect.sync(() => void spends.push(s)) })
      expect(yield* Effect.flip(model.generate(request)).pipe(withEnv(port))).toMatchObject({ reason: "decode" })
      const cost = costOf(entry, { inputTokens: 200, outputTokens: 1000 })!
      expect(spends.map((s) => [s.inputTokens, s.outputTokens, s.costUsd])).toEqual([[200, 1000, cost]])
      expect(yield* cap.state).toMatchObject({ spentUsd: cost, reservedUsd: 0 })
    }))

  it.scopedLive("a request the server answered with 500 settles at 0", () =>
    Effect.gen(function*() {
      const port = yield* httpServer((_req, res) => json(res, 500, { error: { message: "boom" } }))
      const inner = Context.get(yield* Layer.build(Live.layerNode.pipe(Layer.provide(Registry.layer))), Model)
      const cap = yield* SpendCap.make(worst * 10)
      const model = SpendCap.wrapModel(cap, inner, { priceOf: () => entry })
      expect(yield* Effect.flip(model.generate(request)).pipe(withEnv(port))).toMatchObject({ reason: "server-error", status: 500 })
      expect(yield* cap.state).toMatchObject({ spentUsd: 0, reservedUsd: 0 })
    }))
})
