/**
 * Model calls as world effects: a `modelAgent` on the ledger, answered by the scripted Model
 * service (in memory, no socket), recorded, replayed with no model at all, faulted and retried,
 * and failing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import type { Json } from "../../src/content/Canonical.ts"
import type { Message } from "../../src/evaluation/Conversation.ts"
import { evaluate } from "../../src/evaluation/evaluate.ts"
import * as Model from "../../src/model/Model.ts"
import { modelAgent } from "../../src/model/ModelAgent.ts"
import * as Registry from "../../src/model/Registry.ts"
import type { AgentDef } from "../../src/schema/AgentDef.ts"
import type { Attempt } from "../../src/schema/Attempt.ts"
import { type EffectsSpec, type EnvironmentDef, noLimits, withEffects } from "../../src/schema/EnvironmentDef.ts"
import * as WE from "../../src/world/WorldEffects.ts"
import { provider } from "../../providers/ledger/index.ts"

const REF = "openai:gpt-4o-mini-2024-07-18"
const model_ = Effect.runSync(
  Effect.flatMap(Registry.fixture, (file) =>
    Either.match(Registry.resolveIn(file, REF), { onLeft: (e) => Effect.dieMessage(e.message), onRight: Effect.succeed }))
)
const agentDef: AgentDef = { name: "openai:gpt-4o-mini", kind: "llm", model: model_.ref, actionSpace: "tools", prompt: "", limits: noLimits }
const ledger01: EnvironmentDef = Effect.runSync(provider.environments).find((e) => e.task === "ledger-01")!

/** The model moves the money, then says so. */
const ledgerScript: ReadonlyArray<Model.ScriptedTurn> = [
  {
    toolCalls: [{ name: "transfer", arguments: { from_account: "ACC-1001", to_account: "ACC-1002", amount: 50000, memo: "savings" } }],
    usage: { inputTokens: 480, outputTokens: 36 }
  },
  { text: "Moved 500.00 USD to ACC-1002.", usage: { inputTokens: 620, outputTokens: 14 } }
]

/** An Attempt whose model calls the given Model service answers. */
const live = (env: EnvironmentDef, model: Model.Model) =>
  evaluate(env, {
    capabilities: provider.capabilities,
    agentDef,
    agent: modelAgent(agentDef.name, model_),
    repetition: 0,
    registryEntry: model_ as unknown as Json
  }).pipe(Effect.provide(Layer.succeed(Model.Model, model)))

/** A replay, with a scripted model that has no turn at all: any call it made would be a defect. */
const replay = (env: EnvironmentDef, recording: Attempt["recording"]) =>
  evaluate(env, {
    capabilities: provider.capabilities,
    agentDef,
    agent: modelAgent(agentDef.name, model_),
    repetition: 0,
    replay: recording,
    registryEntry: model_ as unknown as Json
  }).pipe(Effect.provide(Model.layerScripted([])))

const withoutWall = ({ wallSeconds: _, ...usage }: Attempt["usage"]) => usage
const transcriptOf = (attempt: Attempt) => (attempt.output as { transcript: ReadonlyArray<Message> }).transcript

describe("model calls recorded and replayed", () => {
  it.effect("a modelAgent run recorded with the scripted model replays with no model: same verdict, usage and transcript", () =>
    Effect.gen(function*() {
      const scripted = Model.scripted(ledgerScript)
      const attempt = yield* live(ledger01, scripted)
      // Both turns were played, to the agent, with the ledger's tools offered.
      expect(scripted.requests()).toHaveLength(2)
      expect(scripted.requests().map((r) => r.provider + ":" + r.model)).toEqual([model_.ref, model_.ref])
      expect(scripted.requests()[0]?.tools.map((t) => t.name)).toContain("transfer")
      expect(scripted.requests()[1]?.messages.at(-1)).toMatchObject({ role: "tool", name: "transfer" })
      expect(attempt.verdict.reward).toBe(1)
      expect(attempt.usage).toMatchObject({ calls: 2, inputTokens: 1100, outputTokens: 50, retries: 0 })
      expect(attempt.usage.costUsd).toBeCloseTo((1100 * 0.15 + 50 * 0.6) / 1e6, 12)
      expect(attempt.recording.map((r) => `${r.kind} ${r.key}`)).toEqual([
        "model/generate agent",
        "tool/write transfer",
        "model/generate agent"
      ])
      // The recorded tool call keeps the arguments' text the model sent.
      const first = attempt.recording[0]?.outcome as { ok?: { toolCalls?: ReadonlyArray<{ argumentsText?: string }> } }
      expect(first.ok?.toolCalls?.[0]?.argumentsText).toBe(JSON.stringify({ from_account: "ACC-1001", to_account: "ACC-1002", amount: 50000, memo: "savings" }))

      // The replay's model has no turn: a call would die; the replay makes none.
      const replayed = yield* replay(ledger01, JSON.parse(JSON.stringify(attempt.recording)) as Attempt["recording"])
      expect(replayed.verdict).toEqual(attempt.verdict)
      expect(withoutWall(replayed.usage)).toEqual(withoutWall(attempt.usage))
      expect(transcriptOf(replayed)).toEqual(transcriptOf(attempt))
      expect(replayed.finalWorld).toBe(attempt.finalWorld)
      expect(replayed.inputsId).toBe(attempt.inputsId)
    }))
})

describe("model call failures", () => {
  const key = "model/generate:agent"
  /** A seed whose draws fault the first model call once (rate-limit) and leave the retry and the next call alone. */
  const seed = (() => {
    const spec = { rate: 0.5, kinds: ["rate-limit"] as const }
    for (let s = 0; s < 1000; s++) {
      const at = (n: number) => WE.drawFault({ seed: s, ...spec }, key, n, "ledger/ledger-01")
      if (at(1) === "rate-limit" && at(2) === null && at(3) === null) return s
    }
    throw new Error("no seed in 0..999 with the wanted draws")
  })()
  const faults: EffectsSpec = { admission: "all", faults: { seed, rate: 0.5, only: ["model/generate"], kinds: ["rate-limit"] } }

  // live: the retry's backoff sleeps on the real clock
  it.live("a rate-limit fault on model/generate is retried and counted in usage.retries", () =>
    Effect.gen(function*() {
      const scripted = Model.scripted(ledgerScript)
      const attempt = yield* live(withEffects(ledger01, faults), scripted)
      expect(attempt.faults).toEqual([{ key, occurrence: 1, reason: "rate-limit" }])
      expect(attempt.verdict.ended).toBeNull()
      expect(attempt.verdict.reward).toBe(1)
      expect(attempt.usage).toMatchObject({ calls: 2, retries: 1, inputTokens: 1100 })
      // The injected fault never reached the model.
      expect(scripted.requests()).toHaveLength(2)
    }))

  it.live("a model that always answers 500 ends the Attempt with a verdict that says so", () =>
    Effect.gen(function*() {
      const scripted = Model.scripted(() => Model.scriptedError("server-error", { status: 500, detail: "upstream exploded" }))
      const attempt = yield* live(ledger01, scripted)
      expect(attempt.verdict.ended?.reason).toBe("fault")
      expect(attempt.verdict.ended?.detail).toContain("server-error")
      expect(attempt.verdict.ended?.detail).toContain("model/generate agent")
      expect(attempt.verdict.reward).toBe(0)
      // Tried, then retried three times; the failed call is one call, its retries in the usage.
      expect(scripted.requests()).toHaveLength(4)
      expect(attempt.usage).toMatchObject({ calls: 1, retries: 3 })
      expect(transcriptOf(attempt).map((m) => m.role)).toEqual(["user"])
      // Each real failure is in the recording, so a replay meets the same end.
      expect(attempt.recording.every((r) => "error" in r.outcome && r.outcome.error.reason === "server-error")).toBe(true)
      const replayed = yield* replay(ledger01, attempt.recording)
      expect(replayed.verdict.ended?.reason).toBe("fault")
    }), 30_000)

  it.live("an endpoint that cannot be reached is an infrastructure fault, never the model's verdict", () =>
    Effect.gen(function*() {
      const scripted = Model.scripted(() => Model.scriptedError("network", { detail: "cannot reach POST http://127.0.0.1:9/v1/responses: ECONNREFUSED" }))
      const attempt = yield* live(ledger01, scripted)
      expect(attempt.verdict.ended?.reason).toBe("fault")
      expect(attempt.verdict.ended?.detail).toContain("model/generate agent")
      expect(attempt.usage.calls).toBe(1)
    }), 30_000)

  it.effect("a bad request is the model call failing, not a fault, and is not retried", () =>
    Effect.gen(function*() {
      const scripted = Model.scripted(() => Model.scriptedError("bad-request", { status: 400, detail: "max_tokens is too large" }))
      const attempt = yield* live(ledger01, scripted)
      expect(scripted.requests()).toHaveLength(1)
      expect(attempt.verdict.ended?.reason).not.toBe("fault")
      expect(attempt.verdict.reward).toBe(0)
    }))
})
