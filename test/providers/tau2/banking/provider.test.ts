import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import type { Message } from "../../../../src/evaluation/Conversation.ts"
import { evaluate } from "../../../../src/evaluation/evaluate.ts"
import type { ModelRequest } from "../../../../src/model/Clients.ts"
import { modelAgent } from "../../../../src/model/ModelAgent.ts"
import * as Registry from "../../../../src/model/Registry.ts"
import type { AgentDef } from "../../../../src/schema/AgentDef.ts"
import type { Attempt } from "../../../../src/schema/Attempt.ts"
import { type EnvironmentDef, noLimits } from "../../../../src/schema/EnvironmentDef.ts"
import { failuresOf } from "../../../../src/schema/Verdict.ts"
import * as World from "../../../../src/world/World.ts"
import { loadBankingData } from "../../../../providers/tau2/banking/data.ts"
import { capabilities, makeCapabilities, offeredUserTools, openingOf, provider, userPromptOf } from "../../../../providers/tau2/banking/index.ts"
import { decodeTasks, initialWorld } from "../../../../providers/tau2/banking/tasks.ts"
import { dbWorld } from "../../../../providers/tau2/banking/tools.ts"
import type { ConversationOutput } from "../../../../providers/tau2/common/conversation.ts"
import type { JudgeCall } from "../../../../providers/tau2/common/evaluator.ts"
import { loadPrompts } from "../../../../providers/tau2/common/prompts.ts"
import { scriptedModels } from "../scriptedModels.ts"

const dataDir = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"
const environments = await Effect.runPromise(provider.environments)
const prompts = await Effect.runPromise(loadPrompts())
const banking = await Effect.runPromise(loadBankingData())
const tasks = await Effect.runPromise(decodeTasks(banking))
const envOf = (id: string): EnvironmentDef => environments.find((e) => e.task === id)!
const taskOf = (id: string) => tasks.find((t) => t.id === id)!

const run = (name: string, env: EnvironmentDef, caps = capabilities) =>
  Effect.flatMap(provider.scripted(name, env), (agent) => evaluate(env, { capabilities: caps, agentDef: provider.rosterDef(name), agent, repetition: 0 }))

const resultOf = (attempt: Attempt) => (attempt.output as { result: ConversationOutput }).result
const transcriptOf = (attempt: Attempt) => (attempt.output as { transcript: ReadonlyArray<Message> }).transcript

const withJudge = (env: EnvironmentDef): EnvironmentDef => ({ ...env, capabilities: { ...env.capabilities, models: { ...env.capabilities.models, judge: "openai:gpt-4o-mini" } } })
const llmDef: AgentDef = { name: "openai:gpt-4o-mini", kind: "llm", model: "openai:gpt-4o-mini", actionSpace: "tools", prompt: "", limits: noLimits }

describe("tau2-banking as a provider", () => {
  it("has the 97 tasks in upstream order, stratum banking, upstream's user model and step limit", () => {
    expect(environments).toHaveLength(97)
    expect(environments.map((e) => e.task)).toEqual(tasks.map((t) => t.id))
    expect(new Set(environments.map((e) => e.stratum))).toEqual(new Set(["banking"]))
    expect(environments[0]!.capabilities.models).toEqual({ user: "openai:gpt-4.1-2025-04-14" })
    expect(environments[0]!.capabilities.upstream).toBe("sierra-research/tau2-bench@a2c024725189473d2d7cea3a5cfdbcc67478e41f")
    expect(environments[0]!.limits.turns).toBe(200)
    expect(provider.judged).toBe(true)
    expect(provider.roster).toEqual(["gold", "echo"])
  })

  it.effect("offers the agent upstream's system prompt around the bm25 policy and its 15 tools, KB_search first", () =>
    Effect.gen(function*() {
      const inputs = yield* capabilities.protocol.inputs(environments[0]!, provider.rosterDef("gold"))
      // Upstream's rendered retail prompt with retail's policy swapped for banking's: the same template.
      const retailPrompt = readFileSync(join(dataDir, "tau2", "prompts", "agent_system_prompt_retail.txt"), "utf8")
      const retailPolicy = readFileSync(join(dataDir, "tau2", "retail", "policy.md"), "utf8")
      expect(inputs.system).toBe(retailPrompt.replace(retailPolicy, () => banking.policy))
      expect(inputs.system).toContain("`KB_search`")
      expect(inputs.tools.map((t) => t.name)).toEqual(banking.toolSpecs.map((t) => t.name))
      expect(inputs.tools).toHaveLength(15)
      expect(inputs.tools[0]!.name).toBe("KB_search")
    }))

  it("offers the user the task's user_tools subset: null all 6, [] none (and then the guidelines without tools)", () => {
    const byShape = (pred: (u: ReadonlyArray<string> | null) => boolean) => tasks.find((t) => pred(t.userTools))!
    const none = byShape((u) => u !== null && u.length === 0)
    const some = byShape((u) => u !== null && u.length > 0)
    expect(offeredUserTools(banking, none)).toEqual([])
    expect(offeredUserTools(banking, some).map((s) => s.name).sort()).toEqual([...some.userTools!].sort())
    expect(offeredUserTools(banking, { ...some, userTools: null })).toHaveLength(6)
    const guidelines = (text: string) => text.replace("<PERSONA_GUIDELINES>", "").slice(0, 300)
    expect(userPromptOf(prompts, banking, none).startsWith(guidelines(prompts.guidelines))).toBe(true)
    expect(userPromptOf(prompts, banking, some).startsWith(guidelines(prompts.guidelinesTools))).toBe(true)
    expect(userPromptOf(prompts, banking, some).endsWith("\n</scenario>")).toBe(true)
    // The scripted opening never carries the stop token the instructions mention.
    for (const t of tasks) expect(openingOf(t)).not.toContain("###")
  })

  it.effect("starts each task from db.json with its agent data merged; evidence is the DB digest without $session; every tool callable", () =>
    Effect.gen(function*() {
      const task = tasks.find((t) => t.agentData !== null)!
      const setup = yield* capabilities.worldSetup.setup(envOf(task.id))
      const expected = Either.getOrThrow(initialWorld(banking, task))
      expect(World.digest(setup.world)).toBe(World.digest(expected))
      expect(World.digest(dbWorld(setup.world))).not.toBe(World.digest(dbWorld(banking.initialWorld)))
      expect(setup.evidence).toEqual({ db: World.digest(dbWorld(expected)), tools: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) })
      // 15 agent + 44 agent discoverable + 6 user + 4 user discoverable, names distinct.
      const names = setup.tools.map((t) => t.spec.name)
      expect(names).toHaveLength(69)
      expect(new Set(names).size).toBe(69)
    }))

  it.effect("gold scores 1 on all 97 tasks on its non-judge basis (user tool calls included), the NL assertion left unevaluated; echo scores 0 everywhere", () =>
    Effect.gen(function*() {
      let userToolCalls = 0
      let dbChecks = 0
      let actionTasks = 0
      let echoZero = 0
      for (const env of environments) {
        const task = taskOf(env.task)
        const gold = yield* run("gold", env)
        expect({ task: env.task, reward: gold.verdict.reward, failures: failuresOf(gold.verdict) }).toEqual({ task: env.task, reward: 1, failures: [] })
        expect(resultOf(gold).terminationReason).toBe("user_stop")
        const basis = task.task.evaluation_criteria?.reward_basis ?? []
        expect(gold.verdict.notEvaluated ?? []).toEqual(basis.includes("NL_ASSERTION") ? ["nl:0"] : [])
        if ("db" in gold.verdict.checks) dbChecks++
        if (basis.includes("ACTION")) {
          actionTasks++
          expect(Object.keys(gold.verdict.checks).filter((c) => c.startsWith("action:"))).toHaveLength(task.goldActions.length)
        }
        const userCalls = resultOf(gold).messages.filter((m) => m.role === "tool" && m.requestor === "user")
        userToolCalls += userCalls.length
        // The user's own tool traffic never reaches what the agent sees.
        expect(transcriptOf(gold).filter((m) => m.role === "tool")).toHaveLength(
          resultOf(gold).messages.filter((m) => m.role === "tool" && m.requestor === "assistant").length
        )
        const echo = yield* run("echo", env)
        if (echo.verdict.reward === 0) echoZero++
      }
      expect(userToolCalls).toBe(102)
      expect(dbChecks).toBe(88)
      expect(actionTasks).toBe(9)
      expect(echoZero).toBe(97)
    }), 240_000)

  it.effect("with a judge configured, task_102's NL assertion is graded by it: met gives 1, unmet 0", () =>
    Effect.gen(function*() {
      const env = withJudge(envOf("task_102"))
      const requests: Array<ModelRequest> = []
      const judgeSaying = (met: boolean): JudgeCall => (request) =>
        Effect.sync(() => {
          requests.push(request)
          return {
            text: JSON.stringify({ results: [{ reasoning: "seen", metExpectation: met }] }),
            toolCalls: [],
            usage: { inputTokens: 900, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 0 },
            finishReason: "stop" as const,
            model: "gpt-4o-mini"
          }
        })
      const passed = yield* run("gold", env, makeCapabilities({ judge: judgeSaying(true) }))
      expect(passed.verdict).toMatchObject({ reward: 1, checks: { db: true, "nl:0": true }, notEvaluated: [] })
      expect(requests[0]!.messages[0]!.content).toContain(taskOf("task_102").task.evaluation_criteria!.nl_assertions![0]!)
      const failed = yield* run("gold", env, makeCapabilities({ judge: judgeSaying(false) }))
      expect(failed.verdict).toMatchObject({ reward: 0, checks: { db: true, "nl:0": false } })
    }))

  it.effect("a model agent searches the knowledge base; the simulated user is offered only its task's tools, and the agent cannot reach them", () =>
    Effect.gen(function*() {
      const task = tasks.find((t) => t.userTools !== null && t.userTools.length === 1 && t.userTools[0] === "apply_for_credit_card")!
      const env = envOf(task.id)
      const agentModel = yield* Registry.resolve("openai:gpt-4o-mini").pipe(Effect.provide(Registry.layer))
      const userTurns = [
        { text: "Which credit card has the best cash back?", toolCalls: [] },
        { text: "Thanks. ###STOP###", toolCalls: [] }
      ]
      const agentTurns = [
        { text: null, toolCalls: [{ id: "a1", name: "KB_search", arguments: { query: "cash back credit card" } }] },
        { text: null, toolCalls: [{ id: "a2", name: "apply_for_credit_card", arguments: {} }] },
        { text: "Here is what I found.", toolCalls: [] }
      ]
      const model = scriptedModels(userTurns, agentTurns)
      const attempt = yield* evaluate(env, { capabilities, agentDef: llmDef, agent: modelAgent(llmDef.name, agentModel), repetition: 0, handlers: { "model/generate": model } })
      expect(resultOf(attempt).terminationReason).toBe("user_stop")
      const messages = resultOf(attempt).messages
      const search = messages.find((m) => m.role === "tool" && m.name === "KB_search")
      expect(search).toMatchObject({ requestor: "assistant", error: false })
      expect(search?.role === "tool" ? search.content : "").toMatch(/^1\. .*\n {3}ID: /)
      expect(messages.find((m) => m.role === "tool" && m.name === "apply_for_credit_card")).toMatchObject({
        content: "Error: Tool 'apply_for_credit_card' not found.",
        error: true
      })
      // Nothing applied: the DB check fails, as upstream's would.
      expect(attempt.verdict).toMatchObject({ reward: 0, checks: { db: false } })
      const userCalls = attempt.recording.filter((r) => r.kind === "model/generate" && r.key === "user")
      const request = userCalls[0]!.request as { system: string; tools: ReadonlyArray<{ name: string }> }
      expect(request.system).toBe(userPromptOf(prompts, banking, task))
      expect(request.tools.map((t) => t.name)).toEqual(["apply_for_credit_card"])
      expect(attempt.usage).toMatchObject({ calls: 5, inputTokens: 2 * 1000 + 3 * 200 })
    }))

  it.effect("equivalence: 97 gold + 300 fuzz + 1,000 ranking lines agree with upstream", () =>
    Effect.gen(function*() {
      const result = yield* provider.equivalence!(null)
      expect(result).toMatchObject({ benchmark: "tau2-banking", lines: 1397, agree: 1397, disagree: [] })
    }), 120_000)

  it("pins every file it reads under tau2/ by sha256", () => {
    // What it reads: the pinned files and the ones the pull makes from upstream's sources (those are under tau2/upstream/, read only by the pull).
    const read = [...provider.data!.filter((f) => !f.path.startsWith("tau2/upstream/")), ...(provider.derived?.files ?? [])]
    const paths = read.map((f) => f.path)
    expect(new Set(paths).size).toBe(paths.length)
    expect(paths.length).toBeGreaterThanOrEqual(808)
    for (const p of ["tau2/banking_knowledge/db.json", "tau2/banking_knowledge/policy-bm25.md", "tau2/banking_knowledge/tasks/task_001.json", "tau2/banking_knowledge/oracle/kb-search-dev.jsonl", "tau2/prompts/first_agent_message.txt", "tau2/user_simulator/simulation_guidelines_tools.md"]) {
      expect(paths).toContain(p)
    }
    for (const file of read) {
      const bytes = readFileSync(join(dataDir, file.path))
      expect(createHash("sha256").update(bytes).digest("hex"), file.path).toBe(file.sha256)
    }
  })
})
