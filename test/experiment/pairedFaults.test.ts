/**
 * The guarantees a comparison rests on, through the runner with an in-memory model (no socket):
 * faults are paired across candidates, an unreachable endpoint is an outage and not a verdict,
 * and a caller's own wrapping layer is applied to every Attempt.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Ref } from "effect"
import { provider as ledger } from "../../providers/ledger/index.ts"
import type { AgentReply, Message } from "../../src/evaluation/Conversation.ts"
import { evaluate } from "../../src/evaluation/evaluate.ts"
import { type Candidate, makePlan, run, silent } from "../../src/experiment/Runner.ts"
import * as Store from "../../src/experiment/Store.ts"
import { Model, ModelError, type ModelRequest, type ModelResponse } from "../../src/model/Model.ts"
import { modelAgent } from "../../src/model/ModelAgent.ts"
import * as Registry from "../../src/model/Registry.ts"
import type { Json } from "../../src/content/Canonical.ts"
import { type EnvironmentDef, noLimits, withEffects } from "../../src/schema/EnvironmentDef.ts"
import * as WE from "../../src/world/WorldEffects.ts"

const homes: Array<string> = []
const tempHome = () => {
  const home = mkdtempSync(join(tmpdir(), "assay-paired-"))
  homes.push(home)
  return home
}
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true })
})

const environments = Effect.runSync(ledger.environments)

/** Each task's gold replies, keyed by the task's opening message, read from fault-free gold Attempts. */
const goldReplies = Effect.runSync(
  Effect.forEach(environments, (env) =>
    Effect.gen(function*() {
      const agent = yield* ledger.scripted("gold", env)
      const attempt = yield* evaluate(env, { capabilities: ledger.capabilities, agentDef: ledger.rosterDef("gold"), agent, repetition: 0 })
      const transcript = (attempt.output as { transcript: ReadonlyArray<Message> }).transcript
      const opening = transcript.find((m) => m.role === "user")
      const replies = transcript.flatMap((m): Array<AgentReply> => (m.role === "assistant" ? [{ text: m.content, toolCalls: m.toolCalls }] : []))
      return [opening?.role === "user" ? opening.content : "", replies] as const
    })).pipe(Effect.map((entries) => new Map(entries)))
)

/**
 * A model that plays the task's gold replies, whatever model it is asked for: two candidates on
 * it make the same effects on every task. It counts the calls that reach it.
 */
const goldModel = (calls: Ref.Ref<number>): Model => ({
  generate: (request: ModelRequest) =>
    Effect.gen(function*() {
      yield* Ref.update(calls, (n) => n + 1)
      const opening = request.messages.find((m) => m.role === "user")
      const replies = goldReplies.get(opening?.role === "user" ? opening.content : "") ?? []
      const reply = replies[request.messages.filter((m) => m.role === "assistant").length] ?? { text: "Done.", toolCalls: [] }
      return {
        text: reply.text,
        toolCalls: reply.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
        usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
        finishReason: reply.toolCalls.length > 0 ? "tool-calls" : "stop",
        model: request.model
      } satisfies ModelResponse
    })
})

const registry = Effect.runSync(Registry.fixture)
const modelCandidate = (ref: string): Candidate => {
  const resolved = Registry.resolveIn(registry, ref)
  if (resolved._tag === "Left") throw new Error(resolved.left.message)
  return {
    def: { name: ref, kind: "llm", model: resolved.right.ref, actionSpace: "tools", prompt: "", limits: noLimits },
    registryEntry: resolved.right as unknown as Json,
    agentFor: () => Effect.succeed(modelAgent(ref, resolved.right))
  }
}
const A = "openai:gpt-4o-mini"
const B = "openai:gpt-4o"

const faulty = (env: EnvironmentDef) =>
  withEffects(env, { admission: "all", faults: { seed: 7, rate: 0.5, only: null, kinds: ["rate-limit", "server-error", "timeout"] } })

const runWith = (home: string, model: Model, envs: ReadonlyArray<EnvironmentDef>, extra: { readonly wraps?: ReadonlyArray<WE.Wrap> } = {}) =>
  Effect.gen(function*() {
    const plan = yield* makePlan([{ provider: ledger, environments: envs, candidates: [modelCandidate(A), modelCandidate(B)] }], 1)
    return yield* run(plan, { parallel: 8, maxUsd: null, handlers: {}, progress: silent, settings: {}, ...extra })
  }).pipe(Effect.provide(Layer.mergeAll(Store.layer(home), Layer.succeed(Model, model), Registry.layer)))

describe("faults are paired across model candidates", () => {
  it.live("two models on ledger at 7:0.5 meet the same faults per task, different ones across tasks, and differ by 0", () =>
    Effect.gen(function*() {
      const calls = yield* Ref.make(0)
      const outcome = yield* runWith(tempHome(), goldModel(calls), environments.map(faulty))
      const byCell = new Map(outcome.attempts.map((a) => [`${a.task}|${a.candidate}`, a]))
      const patterns = new Set<string>()
      for (const env of environments) {
        const a = byCell.get(`${env.task}|${A}`)!
        const b = byCell.get(`${env.task}|${B}`)!
        expect(b.faults, env.task).toEqual(a.faults)
        expect(b.verdict.reward, env.task).toBe(a.verdict.reward)
        expect(a.faults.every((f) => !f.key.includes("gpt"))).toBe(true)
        patterns.add(JSON.stringify(a.faults))
      }
      expect(patterns.size).toBeGreaterThan(1)
      const comparison = outcome.report.comparisons.find((c) => c.stratum === undefined || c.stratum === null)
      expect(comparison?.difference).toBe(0)
      // The faults were injected: the report says so per candidate.
      expect(outcome.report.faults?.spec).toMatchObject({ seed: 7, rate: 0.5 })
    }), { timeout: 120_000 })
})

describe("an endpoint that cannot be reached", () => {
  const refused: Model = {
    generate: (request) =>
      Effect.fail(new ModelError({ provider: request.provider, model: request.model, reason: "network", status: null, detail: "connect ECONNREFUSED 127.0.0.1:9" }))
  }

  it.live("ends every cell as a fault, never a model verdict; a run against a live model runs them all again", () =>
    Effect.gen(function*() {
      const home = tempHome()
      const envs = environments.slice(0, 3)
      const down = yield* runWith(home, refused, envs)
      expect(down.report.cells).toMatchObject({ total: 6, ran: 6, faulted: 6 })
      for (const a of down.attempts) {
        expect(a.verdict.ended).toMatchObject({ reason: "fault", injected: false })
        expect(a.verdict.ended?.detail).toContain("unreachable")
      }
      const calls = yield* Ref.make(0)
      const up = yield* runWith(home, goldModel(calls), envs)
      expect(up.report.cells).toMatchObject({ total: 6, ran: 6, kept: 0, faulted: 0 })
      expect(up.attempts.every((a) => a.verdict.reward === 1)).toBe(true)
    }), { timeout: 120_000 })
})

describe("a wrapping layer of the caller's own", () => {
  it.live("is applied to every effect of every Attempt, outermost", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      // A latency injector that also notes what passes through it.
      const delayTools: WE.Wrap = Layer.effect(
        WE.WorldEffects,
        Effect.map(WE.WorldEffects, (inner): WE.WorldEffects => ({
          perform: (effect) =>
            Effect.zipRight(
              Effect.zipRight(Ref.update(seen, (s) => [...s, `${effect.kind}:${effect.key}`]), effect.kind.startsWith("tool/") ? Effect.sleep(Duration.millis(5)) : Effect.void),
              inner.perform(effect)
            )
        }))
      )
      const calls = yield* Ref.make(0)
      const envs = environments.slice(0, 2)
      const outcome = yield* runWith(tempHome(), goldModel(calls), envs, { wraps: [delayTools] })
      const passed = yield* Ref.get(seen)
      const recorded = outcome.attempts.flatMap((a) => a.recording.map((r) => `${r.kind}:${r.key}`))
      expect(passed.length).toBe(recorded.length)
      expect([...passed].sort()).toEqual([...recorded].sort())
      expect(passed.filter((k) => k.startsWith("tool/")).length).toBeGreaterThan(0)
      expect(passed.filter((k) => k === "model/generate:agent").length).toBe(yield* Ref.get(calls))
    }), { timeout: 120_000 })
})
