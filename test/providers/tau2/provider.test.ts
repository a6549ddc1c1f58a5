import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Model from "../../../src/model/Model.ts"
import type { Capabilities } from "../../../src/evaluation/Capabilities.ts"
import { evaluate } from "../../../src/evaluation/evaluate.ts"
import type { ModelRequest } from "../../../src/model/Clients.ts"
import { costAt } from "../../../src/model/Cost.ts"
import * as Registry from "../../../src/model/Registry.ts"
import type { EnvironmentDef } from "../../../src/schema/EnvironmentDef.ts"
import { failuresOf } from "../../../src/schema/Verdict.ts"
import type { ConversationOutput } from "../../../providers/tau2/common/conversation.ts"
import { conversationText, type JudgeCall, parseJudgeReply } from "../../../providers/tau2/common/evaluator.ts"
import { loadPrompts } from "../../../providers/tau2/common/prompts.ts"
import { loadRetailData } from "../../../providers/tau2/retail/data.ts"
import { capabilities, environmentsOf, makeCapabilities, provider, userPromptOf } from "../../../providers/tau2/retail/index.ts"
import { decodeTasks, goldDigest } from "../../../providers/tau2/retail/tasks.ts"
import * as World from "../../../src/world/World.ts"

const dataDir = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"
const environments = await Effect.runPromise(provider.environments)
const prompts = await Effect.runPromise(loadPrompts())
const retail = await Effect.runPromise(loadRetailData())
const tasks = await Effect.runPromise(decodeTasks(retail.tasksJson))

const run = (name: string, env: EnvironmentDef, caps: Capabilities = capabilities) =>
  Effect.flatMap(provider.scripted(name, env), (agent) => evaluate(env, { capabilities: caps, agentDef: provider.rosterDef(name), agent, repetition: 0 }))

const withJudge = (env: EnvironmentDef): EnvironmentDef => ({ ...env, capabilities: { ...env.capabilities, models: { ...env.capabilities.models, judge: "openai:gpt-4o-mini" } } })

describe("tau2-retail as a provider", () => {
  it.effect("has the 114 tasks of upstream's base split, stratum retail; test and train splits of 40 and 74", () =>
    Effect.gen(function*() {
      expect(environments).toHaveLength(114)
      expect(new Set(environments.map((e) => e.stratum))).toEqual(new Set(["retail"]))
      expect(environments.map((e) => e.task)).toEqual(tasks.map((t) => t.id))
      expect(environments[0]!.capabilities.models).toEqual({ user: "openai:gpt-4.1-2025-04-14" })
      expect(environments[0]!.capabilities.upstream).toBe("sierra-research/tau2-bench@a2c024725189473d2d7cea3a5cfdbcc67478e41f")
      expect(environments[0]!.limits.turns).toBe(200)
      expect(yield* Effect.map(environmentsOf("test"), (es) => es.length)).toBe(40)
      expect(yield* Effect.map(environmentsOf("train"), (es) => es.length)).toBe(74)
    }))

  it.effect("offers the agent upstream's exact system prompt and tools.json; the user simulator gets upstream's prompt for every task", () =>
    Effect.gen(function*() {
      const inputs = yield* capabilities.protocol.inputs(environments[0]!, provider.rosterDef("gold"))
      expect(inputs.system).toBe(readFileSync(join(dataDir, "tau2", "prompts", "agent_system_prompt_retail.txt"), "utf8"))
      expect(inputs.tools.map((t) => t.name)).toHaveLength(16)
      const expected = readFileSync(join(dataDir, "tau2", "prompts", "retail_user_system_prompts.jsonl"), "utf8")
        .split("\n")
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as { task_id: string; system_prompt: string })
      expect(expected).toHaveLength(114)
      for (const line of expected) expect(userPromptOf(prompts, tasks.find((t) => t.id === line.task_id)!), line.task_id).toBe(line.system_prompt)
    }))

  it.effect("gold scores 1 on every task without a judge, NL assertions listed as not evaluated; echo loses the DB check exactly where the gold actions change the DB", () =>
    Effect.gen(function*() {
      const setup = yield* capabilities.worldSetup.setup(environments[0]!)
      expect(setup.evidence).toEqual({ db: World.digest(retail.initialWorld), tools: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) })
      let notEvaluated = 0
      let echoDbFailures = 0
      for (const env of environments) {
        const gold = yield* run("gold", env)
        expect({ task: env.task, reward: gold.verdict.reward, failures: failuresOf(gold.verdict), trust: gold.verdict.trust }).toEqual({ task: env.task, reward: 1, failures: [], trust: "deterministic" })
        expect((gold.output as { result: ConversationOutput }).result.terminationReason).toBe("user_stop")
        const task = tasks.find((t) => t.id === env.task)!
        const nl = task.evaluation_criteria?.nl_assertions ?? []
        expect(gold.verdict.notEvaluated).toEqual(nl.map((_, n) => `nl:${n}`))
        notEvaluated += nl.length > 0 ? 1 : 0
        const echo = yield* run("echo", env)
        if (echo.verdict.checks["db"] === false) echoDbFailures++
        // Echo changes nothing: it keeps the DB check exactly where the gold actions change nothing.
        const goldChanges = goldDigest(retail.initialWorld, task) !== World.digest(retail.initialWorld)
        expect(echo.verdict.checks["db"], env.task).toBe(!goldChanges)
      }
      expect(notEvaluated).toBe(40)
      expect(echoDbFailures).toBeGreaterThan(90)
    }), 120_000)

  it.effect("with a judge model configured, NL assertions are graded by it, one check each, and a failed one gives 0", () =>
    Effect.gen(function*() {
      const env = withJudge(environments.find((e) => e.task === "36")!)
      const requests: Array<ModelRequest> = []
      const judgeSaying = (met: ReadonlyArray<boolean>): JudgeCall => (request) =>
        Effect.sync(() => {
          requests.push(request)
          return {
            text: "```json\n" + JSON.stringify({ results: met.map((m, i) => ({ expectedOutcome: `outcome ${i}`, reasoning: "seen", metExpectation: m })) }) + "\n```",
            toolCalls: [],
            usage: { inputTokens: 900, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 0 },
            finishReason: "stop" as const,
            model: "gpt-4o-mini"
          }
        })
      const passed = yield* run("gold", env, makeCapabilities({ judge: judgeSaying([true, true]) }))
      // A judge decided checks: the verdict says so.
      expect(passed.verdict).toMatchObject({ reward: 1, checks: { db: true, "nl:0": true, "nl:1": true }, notEvaluated: [], trust: "judge" })
      expect(requests[0]!.model).toBe("gpt-4o-mini-2024-07-18")
      expect(requests[0]!.messages[0]!.content).toContain("Agent should tell the user the camera costs $481.50.")
      // The judge runs outside the Attempt: its tokens are not the candidate's, but what judging
      // cost is kept beside them, at the judge's list price.
      expect(passed.usage.inputTokens).toBe(0)
      const price = Effect.runSync(Registry.resolve("openai:gpt-4o-mini").pipe(Effect.provide(Registry.layer))).model.cost!
      expect(passed.judging).toEqual({ calls: 1, inputTokens: 900, outputTokens: 40, costUsd: costAt(price, { inputTokens: 900, outputTokens: 40 }) })

      const failed = yield* run("gold", env, makeCapabilities({ judge: judgeSaying([true, false]) }))
      expect(failed.verdict).toMatchObject({ reward: 0, checks: { db: true, "nl:0": true, "nl:1": false } })

      const broken: JudgeCall = () => Effect.succeed({ text: "I think it is fine", toolCalls: [], usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }, finishReason: "stop", model: "m" })
      const unreadable = yield* run("gold", env, makeCapabilities({ judge: broken }))
      expect(unreadable.verdict.ended?.reason).toBe("evaluator-failed")
    }))

  it.effect("the default judge calls the judge model through the Model service of the run (a scripted judge)", () =>
    Effect.gen(function*() {
      const env = withJudge(environments.find((e) => e.task === "36")!)
      const verdict = JSON.stringify({ results: [true, false].map((m) => ({ reasoning: "r", metExpectation: m })) })
      const judge = Model.scripted([{ text: verdict, usage: { inputTokens: 500, outputTokens: 30 } }])
      const attempt = yield* run("gold", env).pipe(Effect.provideService(Model.Model, judge))
      expect(attempt.verdict).toMatchObject({ reward: 0, checks: { db: true, "nl:0": true, "nl:1": false }, notEvaluated: [] })
      // One call, to the judge model, with upstream's judge prompt; none of the candidate's.
      const [request, ...more] = judge.requests()
      expect(more).toEqual([])
      expect(request).toMatchObject({ provider: "openai", model: "gpt-4o-mini-2024-07-18", tools: [] })
      expect(request!.system).toMatch(/expected outcome/)
      expect(attempt.usage.calls).toBe(0)
      const price = Effect.runSync(Registry.resolve("openai:gpt-4o-mini").pipe(Effect.provide(Registry.layer))).model.cost!
      expect(attempt.judging).toEqual({ calls: 1, inputTokens: 500, outputTokens: 30, costUsd: costAt(price, { inputTokens: 500, outputTokens: 30 }) })
    }))

  it.effect("a judge reply that leaves an assertion out fails it", () =>
    Effect.gen(function*() {
      const checks = yield* parseJudgeReply('{"results": [{"expectedOutcome": "b", "reasoning": "r", "metExpectation": true}]}', ["a", "b"])
      expect(checks.map((c) => c.met)).toEqual([false, true])
      expect(conversationText([{ role: "assistant", content: null, toolCalls: [{ id: "1", name: "f", arguments: { x: 1 } }] }])).toBe('assistant: [tool calls: f({"x":1})]')
    }))

  it("pins every file it reads under tau2/ by sha256", () => {
    // What it reads: the pinned files and the ones the pull makes from upstream's sources (those are under tau2/upstream/, read only by the pull).
    const read = [...provider.data!.filter((f) => f.derivationInput !== true || !f.path.startsWith("tau2/upstream/")), ...(provider.derived?.files ?? [])]
    const paths = read.map((f) => f.path)
    expect(new Set(paths).size).toBe(paths.length)
    for (const p of ["tau2/retail/db.json", "tau2/retail/tasks.json", "tau2/retail/policy.md", "tau2/prompts/first_agent_message.txt", "tau2/user_simulator/simulation_guidelines.md"]) {
      expect(paths).toContain(p)
    }
    for (const file of read) {
      expect(file.path.startsWith("tau2/")).toBe(true)
      const bytes = readFileSync(join(dataDir, file.path))
      expect(createHash("sha256").update(bytes).digest("hex"), file.path).toBe(file.sha256)
    }
  })
})
