/**
 * Fault draws pinned from outside the code under test: the draws for known (seed, task, site)
 * triples, computed once by a small implementation of the documented rule (sha256 of seed, task,
 * site and occurrence; the first 48 bits against the rate, bytes 8-11 choosing the reason) and
 * written down here; tasks that draw independently through the faults layer as production
 * composes it; and a judge's calls, never faulted, whatever the rate.
 */
import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Ref, Schema } from "effect"
import type { Json } from "../../src/content/Canonical.ts"
import type { FaultReason, FaultSpec } from "../../src/schema/EnvironmentDef.ts"
import * as WE from "../../src/world/WorldEffects.ts"
import { call } from "../../src/model/ModelAgent.ts"
import { make as makeWallet, Wallet } from "../../src/budget/Wallet.ts"
import { noLimits } from "../../src/schema/EnvironmentDef.ts"

const kinds: FaultSpec["kinds"] = ["rate-limit", "server-error", "timeout"]
const spec = (seed: number, rate: number): FaultSpec => ({ seed, rate, only: null, kinds })

/** The rule as DESIGN.md states it, written again here: a pure function of (seed, task, site, n). */
const independentDraw = (seed: number, task: string, site: string, n: number, rate: number): FaultReason | null => {
  const h = createHash("sha256").update([String(seed), task, site, String(n)].join("\0")).digest()
  let u = 0
  for (let i = 0; i < 6; i++) u = u * 256 + h[i]!
  if (u / 2 ** 48 >= rate) return null
  const pick = ((h[8]! << 24) >>> 0) + (h[9]! << 16) + (h[10]! << 8) + h[11]!
  return kinds[pick % kinds.length]!
}

// Occurrences 1..8 at rate 0.3, computed once with the rule above (node:crypto) and pinned.
const pinned: ReadonlyArray<readonly [number, string, string, ReadonlyArray<FaultReason | null>]> = [
  [7, "ledger/ledger-01", "model/generate:agent", ["rate-limit", "timeout", null, null, null, "timeout", "server-error", null]],
  [7, "ledger/ledger-01", "tool/write:transfer", [null, "server-error", null, null, null, "rate-limit", null, null]],
  [7, "ledger/ledger-02", "model/generate:agent", [null, "server-error", null, "rate-limit", null, null, null, "timeout"]],
  [7, "ledger/ledger-02", "tool/write:transfer", [null, "timeout", null, "server-error", null, "timeout", "timeout", "rate-limit"]],
  [42, "tau2/retail/5", "model/generate:agent", [null, null, "rate-limit", null, "rate-limit", null, "server-error", null]],
  [42, "tau2/retail/5", "tool/write:transfer", [null, null, null, null, "rate-limit", null, null, null]]
]

/** A handler answering every effect, counting what reaches it. */
const echo = (calls: Ref.Ref<number>): WE.WorldEffects => ({
  perform: (effect) => Effect.as(Ref.update(calls, (n) => n + 1), { echoed: effect.key } as Json)
})

/** The faults layer as an Attempt composes it (keyed by its task), over the echo handler. */
const faulted = (faults: FaultSpec, task: string, calls: Ref.Ref<number>) =>
  WE.faults(faults, task).pipe(Layer.provide(Layer.succeed(WE.WorldEffects, echo(calls))), Layer.provide(WE.layerFaultLog))

/** The outcome of each of `n` occurrences of one effect through the faults layer of `task`. */
const outcomes = (faults: FaultSpec, task: string, effect: WE.EffectRequest, n: number) =>
  Effect.gen(function*() {
    const calls = yield* Ref.make(0)
    const out: Array<string | null> = []
    yield* Effect.gen(function*() {
      for (let i = 0; i < n; i++) {
        const r = yield* Effect.either(WE.perform(effect, Schema.Unknown))
        out.push(r._tag === "Left" ? (r.left._tag === "EffectFault" ? r.left.reason : r.left._tag) : null)
      }
    }).pipe(Effect.provide(faulted(faults, task, calls)))
    return out
  })

describe("fault draws pinned for known (seed, task, site)", () => {
  it("the pinned draws are what the faults rule gives", () => {
    for (const [seed, task, site, draws] of pinned) {
      expect(draws.map((_, i) => WE.drawFault(spec(seed, 0.3), site, i + 1, task))).toEqual(draws)
      // The table itself came from the rule written in this file.
      expect(draws.map((_, i) => independentDraw(seed, task, site, i + 1, 0.3))).toEqual(draws)
    }
  })

  it.prop("any (seed, task, site, n, rate): the faults rule agrees with the one written here", [
    fc.integer(),
    fc.string(),
    fc.string(),
    fc.integer({ min: 1, max: 10_000 }),
    fc.double({ min: 0.01, max: 1, noNaN: true })
  ], ([seed, task, site, n, rate]) => {
    expect(WE.drawFault(spec(seed, rate), site, n, task)).toBe(independentDraw(seed, task, site, n, rate))
  })

  it.effect("through the faults layer, two tasks at one seed meet their own pinned draws: tasks draw independently", () =>
    Effect.gen(function*() {
      const effect: WE.EffectRequest = { kind: "tool/write", key: "transfer", request: null }
      const one = yield* outcomes(spec(7, 0.3), "ledger/ledger-01", effect, 8)
      const two = yield* outcomes(spec(7, 0.3), "ledger/ledger-02", effect, 8)
      expect(one).toEqual(pinned[1]![3])
      expect(two).toEqual(pinned[3]![3])
      // Over many occurrences the two tasks' faults agree about as often as independent coins.
      const a = yield* outcomes(spec(7, 0.5), "ledger/ledger-01", effect, 2000)
      const b = yield* outcomes(spec(7, 0.5), "ledger/ledger-02", effect, 2000)
      const same = a.filter((x, i) => (x === null) === (b[i] === null)).length / 2000
      expect(same).toBeGreaterThan(0.4)
      expect(same).toBeLessThan(0.6)
    }))
})

describe("a judge's calls are never faulted", () => {
  it.effect("at rate 1, the candidate's model call and tool write fault; the judge's model call and a harness judge's run do not", () =>
    Effect.gen(function*() {
      const all = spec(3, 1)
      const agent = yield* outcomes(all, "t/1", { kind: "model/generate", key: "agent", request: null }, 3)
      const tool = yield* outcomes(all, "t/1", { kind: "tool/write", key: "transfer", request: null }, 3)
      const judge = yield* outcomes(all, "t/1", { kind: "model/generate", key: "judge", request: null }, 3)
      const harnessJudge = yield* outcomes(all, "t/1", { kind: "process/spawn", key: "judge:claude", request: null }, 3)
      expect(agent.every((r) => r !== null)).toBe(true)
      expect(tool.every((r) => r !== null)).toBe(true)
      expect(judge).toEqual([null, null, null])
      expect(harnessJudge).toEqual([null, null, null])
    }))

  it.effect("a judge's call made as judges make it (ModelAgent.call, role judge) under faults at rate 1 is answered, with no retry", () =>
    Effect.gen(function*() {
      const calls = yield* Ref.make(0)
      const answer = {
        text: "7",
        toolCalls: [],
        usage: { inputTokens: 10, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
        finishReason: "stop",
        model: "m"
      }
      const handler: WE.WorldEffects = { perform: () => Effect.as(Ref.update(calls, (n) => n + 1), answer as unknown as Json) }
      const model = { provider: "openai", ref: "openai:m", model: { id: "m" } } as never
      const request = { provider: "openai", model: "m", system: "", messages: [{ role: "user" as const, content: "score it" }], tools: [] }
      const wallet = yield* makeWallet(noLimits)
      const layer = WE.faults(spec(3, 1), "t/1").pipe(Layer.provide(Layer.succeed(WE.WorldEffects, handler)), Layer.provide(WE.layerFaultLog))
      const judged = yield* call(request, { role: "judge", model, retries: 0 }).pipe(Effect.provide(layer), Effect.provideService(Wallet, wallet))
      expect(judged.text).toBe("7")
      expect(yield* Ref.get(calls)).toBe(1)
      // The same call as the agent's is faulted at once.
      const agent = yield* Effect.either(call(request, { role: "agent", model, retries: 0 }).pipe(Effect.provide(layer), Effect.provideService(Wallet, wallet)))
      expect(agent._tag).toBe("Left")
    }))
})
