import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Ref } from "effect"
import type { Json } from "../../src/content/Canonical.ts"
import type { FaultSpec } from "../../src/schema/EnvironmentDef.ts"
import { ok } from "../../src/world/Tool.ts"
import type { Tool } from "../../src/world/Tool.ts"
import * as World from "../../src/world/World.ts"
import * as WE from "../../src/world/WorldEffects.ts"

const spec = (seed: number, rate: number, extra: Partial<FaultSpec> = {}): FaultSpec => ({
  seed,
  rate,
  only: null,
  kinds: ["rate-limit", "server-error", "timeout"],
  ...extra
})

const DRAWS = 100_000

describe("fault draws", () => {
  it.prop("rate 0 injects no fault, whatever the seed, key and occurrence", [fc.integer(), fc.string(), fc.integer({ min: 1 })], ([seed, key, n]) => {
    expect(WE.drawFault(spec(seed, 0), key, n)).toBeNull()
  })

  it.prop("rate 1 faults every occurrence", [fc.integer(), fc.string(), fc.integer({ min: 1 })], ([seed, key, n]) => {
    expect(WE.drawFault(spec(seed, 1), key, n)).not.toBeNull()
  })

  it.prop("a draw is a pure function of seed, key and occurrence", [fc.integer(), fc.string(), fc.integer({ min: 1 })], ([seed, key, n]) => {
    expect(WE.drawFault(spec(seed, 0.5), key, n)).toBe(WE.drawFault(spec(seed, 0.5), key, n))
  })

  // Draws are hashes, so these counts are fixed numbers, not samples that can flake; the bounds
  // say what an independent uniform source would give (binomial, n = 100,000).
  const faultsOf = (key: string, rate = 0.1, seed = 7) => {
    const out = new Uint8Array(DRAWS + 1)
    for (let n = 1; n <= DRAWS; n++) out[n] = WE.drawFault(spec(seed, rate), key, n) === null ? 0 : 1
    return out
  }
  const a = faultsOf("tool/write:transfer")
  const b = faultsOf("model/generate:agent:openai:gpt-4o-mini")
  const count = (f: (n: number) => boolean) => {
    let c = 0
    for (let n = 1; n <= DRAWS; n++) if (f(n)) c++
    return c / DRAWS
  }

  it("over 100,000 draws at rate 0.1 the observed rate is within 0.095-0.105", () => {
    // sd = sqrt(0.1 * 0.9 / 1e5) ~ 0.00095: the band is over 5 sd wide on each side.
    expect(count((n) => a[n] === 1)).toBeGreaterThanOrEqual(0.095)
    expect(count((n) => a[n] === 1)).toBeLessThanOrEqual(0.105)
    expect(count((n) => b[n] === 1)).toBeGreaterThanOrEqual(0.095)
    expect(count((n) => b[n] === 1)).toBeLessThanOrEqual(0.105)
  })

  it("draws for different keys are independent: the joint rate of two keys is about 0.01", () => {
    // Independent: P(a and b) = 0.1 * 0.1 = 0.01, sd = sqrt(0.01 * 0.99 / 1e5) ~ 0.000315;
    // +-0.0016 is 5 sd. A shared draw for both keys would give 0.1, a disjoint one 0.
    const joint = count((n) => a[n] === 1 && b[n] === 1)
    expect(joint).toBeGreaterThan(0.0084)
    expect(joint).toBeLessThan(0.0116)
    // Knowing key a faulted says nothing of key b: P(b | a) is about 0.1 (sd ~ 0.003 over ~10,000).
    expect(joint / count((n) => a[n] === 1)).toBeGreaterThan(0.085)
    expect(joint / count((n) => a[n] === 1)).toBeLessThan(0.115)
  })

  it("successive occurrences of one key are independent, and seeds give other draws", () => {
    const lag1 = count((n) => n < DRAWS && a[n] === 1 && a[n + 1] === 1)
    expect(lag1).toBeGreaterThan(0.0084)
    expect(lag1).toBeLessThan(0.0116)
    const other = faultsOf("tool/write:transfer", 0.1, 8)
    const jointSeeds = count((n) => a[n] === 1 && other[n] === 1)
    expect(jointSeeds).toBeGreaterThan(0.0084)
    expect(jointSeeds).toBeLessThan(0.0116)
  })

  it("the fault kinds are drawn evenly among those listed", () => {
    const tally = new Map<string, number>()
    for (let n = 1; n <= DRAWS; n++) {
      const reason = WE.drawFault(spec(7, 0.1), "tool/read:get_account", n)
      if (reason !== null) tally.set(reason, (tally.get(reason) ?? 0) + 1)
    }
    const total = [...tally.values()].reduce((x, y) => x + y, 0)
    // About 10,000 faults, a third each: sd ~ 47 per kind, so +-5% of the total is over 10 sd.
    for (const reason of ["rate-limit", "server-error", "timeout"]) {
      expect((tally.get(reason) ?? 0) / total).toBeGreaterThan(0.28)
      expect((tally.get(reason) ?? 0) / total).toBeLessThan(0.39)
    }
    expect(WE.drawFault(spec(7, 1, { kinds: ["timeout"] }), "k", 1)).toBe("timeout")
  })
})

/** A handler that answers every effect with its key, counting the calls it gets. */
const echoHandler = (calls: Ref.Ref<number>): WE.WorldEffects => ({
  perform: (effect) => Effect.as(Ref.update(calls, (n) => n + 1), { echoed: effect.key } as Json)
})

const effectArb = fc.record({
  kind: fc.constantFrom("tool/read" as const, "tool/write" as const, "model/generate" as const),
  key: fc.constantFrom("get_account", "transfer", "agent:openai:gpt-4o-mini")
})

describe("the faults layer", () => {
  it.effect.prop(
    "the n-th occurrence of a key faults as drawn, however the effects are interleaved",
    [fc.array(effectArb, { maxLength: 60 }), fc.integer()],
    ([effects, seed]) =>
      Effect.gen(function*() {
        const calls = yield* Ref.make(0)
        const log: WE.FaultLog = { entries: yield* Ref.make<ReadonlyArray<{ key: string; occurrence: number; reason: "rate-limit" | "server-error" | "timeout" }>>([]) }
        const faulted = WE.wrapFaults(spec(seed, 0.4), echoHandler(calls), log)
        const seen = new Map<string, number>()
        for (const e of effects) {
          const id = `${e.kind}:${e.key}`
          const n = (seen.get(id) ?? 0) + 1
          seen.set(id, n)
          const expected = WE.drawFault(spec(seed, 0.4), id, n)
          const outcome = yield* Effect.either(faulted.perform({ ...e, request: null }))
          if (expected === null) expect(outcome._tag).toBe("Right")
          else expect(outcome).toMatchObject({ _tag: "Left", left: { _tag: "EffectFault", key: e.key, occurrence: n, reason: expected, injected: true } })
        }
        const entries = yield* Ref.get(log.entries)
        // A faulted effect never reaches the handler.
        expect(yield* Ref.get(calls)).toBe(effects.length - entries.length)
      }),
    { fastCheck: { numRuns: 40 } }
  )

  it.effect("effects whose kind is not in `only` never fault and do not advance the draws", () =>
    Effect.gen(function*() {
      const calls = yield* Ref.make(0)
      const log: WE.FaultLog = { entries: yield* Ref.make<ReadonlyArray<{ key: string; occurrence: number; reason: "rate-limit" | "server-error" | "timeout" }>>([]) }
      const faulted = WE.wrapFaults(spec(1, 1, { only: ["model/generate"] }), echoHandler(calls), log)
      for (let i = 0; i < 20; i++) yield* faulted.perform({ kind: "tool/write", key: "transfer", request: null })
      const refused = yield* Effect.flip(faulted.perform({ kind: "model/generate", key: "agent:m", request: null }))
      expect(refused).toMatchObject({ _tag: "EffectFault", occurrence: 1 })
      expect(yield* Ref.get(log.entries)).toEqual([{ key: "model/generate:agent:m", occurrence: 1, reason: refused.reason }])
    }))
})

describe("replay", () => {
  const recorded: ReadonlyArray<WE.EffectRequest & { outcome: { ok: Json } }> = [
    { kind: "tool/read", key: "get_account", request: { tool: "get_account", args: { account_id: "A" } }, outcome: { ok: { output: "a", error: false, writes: [] } } }
  ]
  const recording = recorded.map((r, i) => ({ ...r, occurrence: i + 1 }))

  it.effect("a replay meeting an effect missing from the recording fails naming the effect and its occurrence", () =>
    Effect.gen(function*() {
      const world: WE.AttemptWorld = { ref: yield* Ref.make(World.empty) }
      const replay = WE.makeReplay(recording, world)
      const first = yield* replay.perform(recorded[0]!)
      expect(first).toEqual({ output: "a", error: false, writes: [] })
      const missing = yield* Effect.flip(replay.perform(recorded[0]!))
      expect(missing).toMatchObject({ _tag: "EffectFailed", kind: "tool/read", key: "get_account", reason: "replay-missing" })
      expect(missing.message).toContain("tool/read get_account")
      expect(missing.message).toContain("#2")
      const unknown = yield* Effect.flip(replay.perform({ kind: "http/request", key: "https://example.invalid/", request: null }))
      expect(unknown.message).toContain("http/request https://example.invalid/")
      expect(unknown.message).toContain("#1")
    }))

  it.effect("a replay meeting the same effect with another request fails as a mismatch", () =>
    Effect.gen(function*() {
      const world: WE.AttemptWorld = { ref: yield* Ref.make(World.empty) }
      const mismatch = yield* Effect.flip(
        WE.makeReplay(recording, world).perform({ ...recorded[0]!, request: { tool: "get_account", args: { account_id: "B" } } })
      )
      expect(mismatch).toMatchObject({ _tag: "EffectFailed", reason: "replay-mismatch", key: "get_account" })
      expect(mismatch.message).toContain("#1")
    }))
})

// ---------------------------------------------------------------------------------------------
// The layers composed as an EnvironmentDef's world spec chooses them, over a live tool handler.

const counter: ReadonlyArray<Tool> = [
  {
    spec: { name: "read_count", description: "", parameters: {} },
    access: "read",
    run: (world) => ok(JSON.stringify(World.get(world, "counter", "n") ?? 0))
  },
  {
    spec: { name: "increment", description: "", parameters: {} },
    access: "write",
    run: (world) => {
      const n = (World.get(world, "counter", "n") as number | undefined ?? 0) + 1
      return ok(String(n), [{ table: "counter", key: "n", value: n }])
    }
  }
]

const toolEffect = (name: "read_count" | "increment"): WE.EffectRequest => ({
  kind: name === "increment" ? "tool/write" : "tool/read",
  key: name,
  request: { tool: name, args: {} }
})

const liveTools = Layer.effect(WE.WorldEffects, Effect.map(WE.AttemptWorld, (world) => WE.makeLive(WE.toolHandlers(counter, world), world)))
const initial = World.make({ counter: { n: 0 } })

describe("read-only admission", () => {
  it.layer(
    WE.attemptStack({ admission: "read-only", faults: null }, "test/t", liveTools).pipe(
      Layer.provideMerge(Layer.mergeAll(WE.layerAttemptWorld(initial), WE.layerRecorder, WE.layerFaultLog))
    )
  )((it) => {
    it.effect("a write is refused before it runs and the world is unchanged", () =>
      Effect.gen(function*() {
        const effects = yield* WE.WorldEffects
        const refused = yield* Effect.flip(effects.perform(toolEffect("increment")))
        expect(refused).toMatchObject({ _tag: "EffectRefused", kind: "tool/write", key: "increment", reason: "read-only" })
        const world = yield* Effect.flatMap(WE.AttemptWorld, (w) => Ref.get(w.ref))
        expect(World.digest(world)).toBe(World.digest(initial))
      }))

    it.effect("reads pass, and only they are recorded", () =>
      Effect.gen(function*() {
        const effects = yield* WE.WorldEffects
        expect(yield* effects.perform(toolEffect("read_count"))).toMatchObject({ output: "0", error: false })
        const recorder = yield* WE.Recorder
        const kinds = (yield* Ref.get(recorder.entries)).map((e) => e.kind)
        expect(kinds).toEqual(["tool/read"])
      }))
  })

  it.effect("admit(kinds) refuses every kind not listed", () =>
    Effect.gen(function*() {
      const effects = yield* WE.WorldEffects
      expect(yield* effects.perform(toolEffect("read_count"))).toMatchObject({ error: false })
      expect(yield* Effect.flip(effects.perform(toolEffect("increment")))).toMatchObject({ reason: "not-admitted" })
      expect(yield* Effect.flip(effects.perform({ kind: "model/generate", key: "agent:m", request: null }))).toMatchObject({
        _tag: "EffectRefused",
        reason: "not-admitted"
      })
    }).pipe(
      Effect.provide(
        WE.admit(["tool/read"]).pipe(Layer.provide(liveTools), Layer.provide(WE.layerAttemptWorld(initial)))
      )
    ))

  it.effect("the readOnly layer alone lets model calls through and refuses HTTP, file writes and processes", () =>
    Effect.gen(function*() {
      const effects = yield* WE.WorldEffects
      for (const kind of ["http/request", "fs/write", "process/spawn", "tool/write"] as const) {
        expect(yield* Effect.flip(effects.perform({ kind, key: "k", request: null }))).toMatchObject({ _tag: "EffectRefused", reason: "read-only" })
      }
      for (const kind of ["model/generate", "fs/read", "tool/read"] as const) {
        expect(yield* effects.perform({ kind, key: "k", request: null })).toEqual({ echoed: "k" })
      }
    }).pipe(
      Effect.provide(WE.readOnly.pipe(Layer.provide(Layer.effect(WE.WorldEffects, Effect.map(Ref.make(0), echoHandler)))))
    ))
})

describe("recording and replay as layers", () => {
  const script = ["read_count", "increment", "increment", "read_count", "increment"] as const
  const run = Effect.forEach(script, (name) => Effect.flatMap(WE.WorldEffects, (w) => w.perform(toolEffect(name))))
  const finalDigest = Effect.flatMap(WE.AttemptWorld, (w) => Effect.map(Ref.get(w.ref), World.digest))

  it.effect("effects recorded live replay with no live handler to the same outputs and world", () =>
    Effect.gen(function*() {
      const live = yield* Effect.gen(function*() {
        const outputs = yield* run
        return { outputs, digest: yield* finalDigest, recording: yield* Effect.flatMap(WE.Recorder, (r) => Ref.get(r.entries)) }
      }).pipe(
        Effect.provide(
          WE.attemptStack({ admission: "all", faults: null }, "test/t", liveTools).pipe(
            Layer.provideMerge(Layer.mergeAll(WE.layerAttemptWorld(initial), WE.layerRecorder, WE.layerFaultLog))
          )
        )
      )
      expect(live.recording.map((r) => [r.key, r.occurrence])).toEqual([
        ["read_count", 1],
        ["increment", 1],
        ["increment", 2],
        ["read_count", 2],
        ["increment", 3]
      ])
      // Portable: the recording goes through JSON lines and comes back as data.
      const lines = live.recording.map((r) => JSON.stringify(r)).join("\n")
      const restored = lines.split("\n").map((l) => JSON.parse(l) as (typeof live.recording)[number])
      const replayed = yield* Effect.gen(function*() {
        return { outputs: yield* run, digest: yield* finalDigest }
      }).pipe(Effect.provide(WE.layerReplay(restored).pipe(Layer.provideMerge(WE.layerAttemptWorld(initial)))))
      expect(replayed.outputs).toEqual(live.outputs)
      expect(replayed.digest).toBe(live.digest)
      expect(replayed.digest).not.toBe(World.digest(initial))
    }))

  it.effect("a live layer with no handler for a kind fails naming it, instead of doing something else", () =>
    Effect.gen(function*() {
      const effects = yield* WE.WorldEffects
      const error = yield* Effect.flip(effects.perform({ kind: "http/request", key: "http://127.0.0.1:9/", request: null }))
      expect(error).toMatchObject({ _tag: "EffectFailed", reason: "no-handler", kind: "http/request" })
    }).pipe(Effect.provide(liveTools.pipe(Layer.provide(WE.layerAttemptWorld(initial))))))
})
