/**
 * Model calls as world effects: a `modelAgent` on the ledger, against the loopback model server
 * (127.0.0.1 only), recorded, replayed with the server gone, faulted and retried, and failing.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import type { Json } from "../../src/content/Canonical.ts"
import type { Message } from "../../src/evaluation/Conversation.ts"
import { evaluate } from "../../src/evaluation/evaluate.ts"
import * as LoopbackServer from "../../src/model/LoopbackServer.ts"
import { liveHandler, modelAgent } from "../../src/model/ModelAgent.ts"
import * as Registry from "../../src/model/Registry.ts"
import type { AgentDef } from "../../src/schema/AgentDef.ts"
import type { Attempt } from "../../src/schema/Attempt.ts"
import { type EffectsSpec, type EnvironmentDef, noLimits, withEffects } from "../../src/schema/EnvironmentDef.ts"
import * as WE from "../../src/world/WorldEffects.ts"
import { provider } from "../../providers/ledger/index.ts"

const REF = "openai:gpt-4o-mini-2024-07-18"
const model = Effect.runSync(
  Effect.flatMap(Registry.fixture, (file) =>
    Either.match(Registry.resolveIn(file, REF), { onLeft: (e) => Effect.dieMessage(e.message), onRight: Effect.succeed }))
)
const agentDef: AgentDef = { name: "openai:gpt-4o-mini", kind: "llm", model: model.ref, actionSpace: "tools", prompt: "", limits: noLimits }
const ledger01: EnvironmentDef = Effect.runSync(provider.environments).find((e) => e.task === "ledger-01")!

/** The model moves the money, then says so. */
const ledgerScript: ReadonlyArray<LoopbackServer.ScriptTurn> = [
  {
    toolCalls: [{ name: "transfer", arguments: { from_account: "ACC-1001", to_account: "ACC-1002", amount: 50000, memo: "savings" } }],
    usage: { input: 480, output: 36 }
  },
  { text: "Moved 500.00 USD to ACC-1002.", usage: { input: 620, output: 14 } }
]

const against = (server: LoopbackServer.LoopbackServer) =>
  Effect.withConfigProvider(
    ConfigProvider.fromMap(new Map([["OPENAI_BASE_URL", server.openAiBaseUrl], ["OPENAI_API_KEY", "sk-test-loopback"]])).pipe(
      ConfigProvider.orElse(() => ConfigProvider.fromEnv())
    )
  )

const live = (env: EnvironmentDef, server: LoopbackServer.LoopbackServer) =>
  evaluate(env, {
    capabilities: provider.capabilities,
    agentDef,
    agent: modelAgent(agentDef.name, model),
    repetition: 0,
    handlers: { "model/generate": liveHandler },
    registryEntry: model as unknown as Json
  }).pipe(against(server))

const replay = (env: EnvironmentDef, recording: Attempt["recording"]) =>
  evaluate(env, {
    capabilities: provider.capabilities,
    agentDef,
    agent: modelAgent(agentDef.name, model),
    repetition: 0,
    replay: recording,
    registryEntry: model as unknown as Json
  })

const withoutWall = ({ wallSeconds: _, ...usage }: Attempt["usage"]) => usage
const transcriptOf = (attempt: Attempt) => (attempt.output as { transcript: ReadonlyArray<Message> }).transcript

describe("model calls recorded and replayed", () => {
  it.live("a modelAgent run recorded against the loopback server replays with the server stopped: same verdict and usage", () =>
    Effect.gen(function*() {
      const recorded = yield* Effect.scoped(
        Effect.gen(function*() {
          const server = yield* LoopbackServer.start(ledgerScript)
          const attempt = yield* live(ledger01, server)
          expect(server.requests().filter((r) => r.api !== null)).toHaveLength(2)
          expect(server.pendingTurns()).toEqual([])
          return { attempt, url: server.openAiBaseUrl }
        })
      )
      const { attempt } = recorded
      expect(attempt.verdict.reward).toBe(1)
      expect(attempt.usage).toMatchObject({ calls: 2, inputTokens: 1100, outputTokens: 50, retries: 0 })
      expect(attempt.usage.costUsd).toBeCloseTo((1100 * 0.15 + 50 * 0.6) / 1e6, 12)
      expect(attempt.recording.map((r) => `${r.kind} ${r.key}`)).toEqual([
        "model/generate agent",
        "tool/write transfer",
        "model/generate agent"
      ])

      // The server is closed: a live call would fail; the replay makes none.
      const closed = yield* Effect.either(Effect.tryPromise(() => fetch(recorded.url)))
      expect(Either.isLeft(closed)).toBe(true)
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

  it.live("a rate-limit fault on model/generate is retried and counted in usage.retries", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start(ledgerScript)
      const attempt = yield* live(withEffects(ledger01, faults), server)
      expect(attempt.faults).toEqual([{ key, occurrence: 1, reason: "rate-limit" }])
      expect(attempt.verdict.ended).toBeNull()
      expect(attempt.verdict.reward).toBe(1)
      expect(attempt.usage).toMatchObject({ calls: 2, retries: 1, inputTokens: 1100 })
      // The injected fault never reached the server.
      expect(server.requests().filter((r) => r.api !== null)).toHaveLength(2)
    }).pipe(Effect.scoped))

  it.live("a server that always answers 500 ends the Attempt with a verdict that says so", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([{ status: 500, text: "upstream exploded", repeat: true }])
      const attempt = yield* live(ledger01, server)
      expect(attempt.verdict.ended?.reason).toBe("fault")
      expect(attempt.verdict.ended?.detail).toContain("server-error")
      expect(attempt.verdict.ended?.detail).toContain("model/generate agent")
      expect(attempt.verdict.reward).toBe(0)
      // Tried, then retried three times; the failed call is one call, its retries in the usage.
      expect(server.requests().filter((r) => r.api !== null)).toHaveLength(4)
      expect(attempt.usage).toMatchObject({ calls: 1, retries: 3 })
      expect(transcriptOf(attempt).map((m) => m.role)).toEqual(["user"])
      // Each real failure is in the recording, so a replay meets the same end.
      expect(attempt.recording.every((r) => "error" in r.outcome && r.outcome.error.reason === "server-error")).toBe(true)
      const replayed = yield* replay(ledger01, attempt.recording)
      expect(replayed.verdict.ended?.reason).toBe("fault")
    }).pipe(Effect.scoped), 30_000)
})
