import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as ContentId from "../../src/content/ContentId.ts"
import { AgentError } from "../../src/evaluation/Agent.ts"
import type { Agent } from "../../src/evaluation/Agent.ts"
import { CapabilityError, type Capabilities } from "../../src/evaluation/Capabilities.ts"
import type { Message } from "../../src/evaluation/Conversation.ts"
import { assemble, evaluate, inputsIdOf, predictInputsId } from "../../src/evaluation/evaluate.ts"
import * as AgentDefs from "../../src/schema/AgentDef.ts"
import type { Attempt } from "../../src/schema/Attempt.ts"
import * as EnvironmentDefs from "../../src/schema/EnvironmentDef.ts"
import { failuresOf } from "../../src/schema/Verdict.ts"
import { provider } from "../../providers/ledger/index.ts"
import { tasks } from "../../providers/ledger/tasks.ts"
import { tools } from "../../providers/ledger/tools.ts"

const environments = Effect.runSync(provider.environments)

const runRoster = (name: string, env: EnvironmentDefs.EnvironmentDef, capabilities: Capabilities = provider.capabilities) =>
  Effect.flatMap(provider.scripted(name, env), (agent) =>
    evaluate(env, { capabilities, agentDef: provider.rosterDef(name), agent, repetition: 0 }))

const transcriptOf = (attempt: Attempt) => (attempt.output as { transcript: ReadonlyArray<Message> }).transcript

describe("the ledger benchmark through evaluate", () => {
  it.effect("gold scores 1 on every ledger task", () =>
    Effect.gen(function*() {
      expect(environments).toHaveLength(tasks.length)
      for (const env of environments) {
        const attempt = yield* runRoster("gold", env)
        expect({ task: env.task, reward: attempt.verdict.reward, failures: failuresOf(attempt.verdict) }).toEqual({ task: env.task, reward: 1, failures: [] })
        expect(attempt.verdict.ended).toBeNull()
        expect(attempt.verdict.trust).toBe("deterministic")
      }
    }))

  it.effect("echo scores below 1, failing the world check where a write was due and the answer check on questions", () =>
    Effect.gen(function*() {
      const writers = new Set(tools.filter((t) => t.access === "write").map((t) => t.spec.name))
      const failures = new Map<string, number>()
      let total = 0
      for (const env of environments) {
        const attempt = yield* runRoster("echo", env)
        total += attempt.verdict.reward
        for (const check of failuresOf(attempt.verdict)) failures.set(check, (failures.get(check) ?? 0) + 1)
        expect(attempt.recording).toEqual([])
      }
      const writeTasks = tasks.filter((t) => t.gold.some((a) => writers.has(a.name))).length
      const questions = tasks.filter((t) => t.answer !== undefined).length
      expect(total / environments.length).toBeLessThan(1)
      expect(Object.fromEntries(failures)).toEqual({ world: writeTasks, answer: questions })
      expect(writeTasks + questions).toBe(tasks.length)
    }))

  it.effect("an Attempt carries its ids, evidence, inputs id and a receipt of content ids", () =>
    Effect.gen(function*() {
      const env = environments[0]!
      const agentDef = provider.rosterDef("gold")
      const attempt = yield* runRoster("gold", env)
      expect(attempt.environmentId).toBe(EnvironmentDefs.idOf(env))
      expect(attempt.agentId).toBe(AgentDefs.idOf(agentDef))
      expect(attempt.inputsId).toBe(yield* predictInputsId(provider.capabilities, env, agentDef, null))
      expect(attempt.receipt.outputId).toBe(ContentId.ofUnsafe(attempt.output))
      expect(attempt.receipt.evidenceId).toBe(ContentId.ofUnsafe(attempt.evidence))
      expect(attempt.receipt.recordingId).toBe(ContentId.ofUnsafe(attempt.recording))
    }))

  it.effect("the inputs id is of what the candidate was actually presented with: a protocol that offers another tool than it declared gives another id", () =>
    Effect.gen(function*() {
      const env = environments[0]!
      const agentDef = provider.rosterDef("gold")
      const predicted = yield* predictInputsId(provider.capabilities, env, agentDef, null)
      const extra = { name: "ledger_extra", description: "not declared", parameters: { type: "object", properties: {} } }
      const sneaky: Capabilities = {
        ...provider.capabilities,
        protocol: {
          ...provider.capabilities.protocol,
          run: (ctx) => provider.capabilities.protocol.run({ ...ctx, inputs: { ...ctx.inputs, tools: [...ctx.inputs.tools, extra] } })
        }
      }
      const honest = yield* runRoster("gold", env)
      const attempt = yield* runRoster("gold", env, sneaky)
      expect(honest.inputsId).toBe(predicted)
      expect(attempt.inputsId).not.toBe(predicted)
      const declared = assemble(yield* provider.capabilities.protocol.inputs(env, agentDef), agentDef)
      expect(attempt.inputsId).toBe(inputsIdOf({ system: declared.system, tools: [...declared.tools, extra] }, agentDef, null))
    }))
})

describe("nothing is lost when an Attempt goes wrong", () => {
  const env = environments.find((e) => e.task === "ledger-02")!

  it.effect("a failing setup yields an Attempt whose verdict says setup-failed", () =>
    Effect.gen(function*() {
      const broken: Capabilities = {
        ...provider.capabilities,
        worldSetup: {
          ...provider.capabilities.worldSetup,
          setup: () => Effect.fail(new CapabilityError({ capability: "ledger/setup", reason: "setup", detail: "initial world unreadable" }))
        }
      }
      const attempt = yield* runRoster("gold", env, broken)
      expect(attempt.verdict.ended?.reason).toBe("setup-failed")
      expect(attempt.verdict.ended?.detail).toContain("initial world unreadable")
      expect(attempt.verdict.reward).toBe(0)
      expect(failuresOf(attempt.verdict)).toEqual(["ended:setup-failed"])
      expect(attempt).toMatchObject({ task: "ledger-02", candidate: "gold", finalWorld: null, recording: [], usage: { calls: 0 } })
    }))

  it.effect("a setup that fails, for want of its data or typed, is marked as the benchmark's (not scored), as a throw in its code is", () =>
    Effect.gen(function*() {
      const failing = (reason: "data" | "setup"): Capabilities => ({
        ...provider.capabilities,
        worldSetup: {
          ...provider.capabilities.worldSetup,
          setup: () => Effect.fail(new CapabilityError({ capability: "ledger", reason, detail: "tasks.json is missing" }))
        }
      })
      const data = yield* runRoster("gold", env, failing("data"))
      expect(data.verdict.ended).toMatchObject({ reason: "setup-failed", provider: "ledger", data: true })
      expect(data.verdict.ended?.detail).toContain("tasks.json is missing")
      const setup = yield* runRoster("gold", env, failing("setup"))
      expect(setup.verdict.ended).toMatchObject({ reason: "setup-failed", provider: "ledger" })
      expect(setup.verdict.ended?.data).toBeUndefined()
    }))

  it.effect("a grade out of shape (a reward past 1 or NaN, a check not a boolean, details not JSON) ends that cell as the benchmark's failure; evidence not JSON too", () =>
    Effect.gen(function*() {
      const grading = (result: Record<string, unknown>): Capabilities => ({
        ...provider.capabilities,
        evaluator: {
          ...provider.capabilities.evaluator,
          evaluate: () => Effect.succeed({ reward: 1, checks: { ok: true }, ...result } as never)
        }
      })
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
        [{ reward: 1.5 }, "a reward of 1.5, not a number from 0 to 1"],
        [{ reward: Number.NaN }, "a reward of NaN"],
        [{ checks: { ok: "yes" } }, "the check ok as yes, not true or false"],
        [{ details: { big: 10n } }, "details that are not JSON"]
      ]
      for (const [result, says] of cases) {
        const attempt = yield* runRoster("gold", env, grading(result))
        expect(attempt.verdict.ended).toMatchObject({ reason: "evaluator-failed", provider: provider.capabilities.evaluator.name })
        expect(attempt.verdict.ended?.detail).toContain(says)
        expect(attempt.verdict.reward).toBe(0)
      }
      const evidence: Capabilities = {
        ...provider.capabilities,
        worldSetup: {
          ...provider.capabilities.worldSetup,
          setup: (e) => Effect.map(provider.capabilities.worldSetup.setup(e), (s) => ({ ...s, evidence: { n: 10n } as never }))
        }
      }
      const bad = yield* runRoster("gold", env, evidence)
      expect(bad.verdict.ended).toMatchObject({ reason: "setup-failed", provider: provider.capabilities.worldSetup.name })
      expect(bad.verdict.ended?.detail).toContain("evidence that is not JSON")
    }))

  it.effect("a setup that dies (a bug, not a typed failure) also yields an Attempt that says setup-failed", () =>
    Effect.gen(function*() {
      const dying: Capabilities = {
        ...provider.capabilities,
        worldSetup: { ...provider.capabilities.worldSetup, setup: () => Effect.dieMessage("fixture missing") }
      }
      const attempt = yield* runRoster("gold", env, dying)
      expect(attempt.verdict.ended?.reason).toBe("setup-failed")
      expect(attempt.verdict.ended?.detail).toContain("fixture missing")
    }))

  it.effect("an agent that fails mid-run ends with protocol-failed and the transcript up to that point", () =>
    Effect.gen(function*() {
      let turn = 0
      const flaky: Agent = {
        name: "flaky",
        reply: () =>
          turn++ === 0
            ? Effect.succeed({ text: null, toolCalls: [{ id: "1", name: "find_accounts", arguments: { owner: "Alan Turing" } }] })
            : Effect.fail(new AgentError({ agent: "flaky", reason: "bad-reply", detail: "unparseable tool call" }))
      }
      const attempt = yield* evaluate(env, { capabilities: provider.capabilities, agentDef: provider.rosterDef("gold"), agent: flaky, repetition: 0 })
      expect(attempt.verdict.ended).toEqual({ reason: "protocol-failed", detail: "flaky: bad-reply: unparseable tool call" })
      expect(transcriptOf(attempt).map((m) => m.role)).toEqual(["user", "assistant", "tool"])
      expect(attempt.recording.map((r) => r.key)).toEqual(["find_accounts"])
      expect(attempt.finalWorld).not.toBeNull()
    }))

  it.effect("an evaluator that fails yields evaluator-failed, with the protocol's output kept", () =>
    Effect.gen(function*() {
      const failing: Capabilities = {
        ...provider.capabilities,
        evaluator: {
          ...provider.capabilities.evaluator,
          evaluate: () => Effect.fail(new CapabilityError({ capability: "ledger/final-world", reason: "evaluator", detail: "no gold world" }))
        }
      }
      const attempt = yield* runRoster("gold", env, failing)
      expect(attempt.verdict.ended?.reason).toBe("evaluator-failed")
      expect(attempt.verdict.ended?.detail).toContain("no gold world")
      expect(transcriptOf(attempt).length).toBeGreaterThan(2)
    }))
})
