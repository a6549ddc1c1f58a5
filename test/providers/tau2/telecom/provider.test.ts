import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import type { Message } from "../../../../src/evaluation/Conversation.ts"
import { evaluate } from "../../../../src/evaluation/evaluate.ts"
import { modelAgent } from "../../../../src/model/ModelAgent.ts"
import * as Registry from "../../../../src/model/Registry.ts"
import type { AgentDef } from "../../../../src/schema/AgentDef.ts"
import type { Attempt } from "../../../../src/schema/Attempt.ts"
import { type EnvironmentDef, noLimits } from "../../../../src/schema/EnvironmentDef.ts"
import { failuresOf } from "../../../../src/schema/Verdict.ts"
import * as World from "../../../../src/world/World.ts"
import type { ConversationOutput } from "../../../../providers/tau2/common/conversation.ts"
import { loadPrompts } from "../../../../providers/tau2/common/prompts.ts"
import { loadTelecomData } from "../../../../providers/tau2/telecom/data.ts"
import { capabilities, environmentsOf, plainJson, provider, userPromptOf } from "../../../../providers/tau2/telecom/index.ts"
import { float } from "../../../../providers/tau2/common/pyjson.ts"
import { decodeTasks, taskInitialWorld } from "../../../../providers/tau2/telecom/tasks.ts"
import { scriptedModels } from "../scriptedModels.ts"

const dataDir = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"
const environments = await Effect.runPromise(provider.environments)
const prompts = await Effect.runPromise(loadPrompts())
const telecom = await Effect.runPromise(loadTelecomData())
const tasks = await Effect.runPromise(decodeTasks(telecom.tasksJson))
const envOf = (id: string): EnvironmentDef => environments.find((e) => e.task === id)!

const run = (name: string, env: EnvironmentDef) =>
  Effect.flatMap(provider.scripted(name, env), (agent) => evaluate(env, { capabilities, agentDef: provider.rosterDef(name), agent, repetition: 0 }))

const resultOf = (attempt: Attempt) => (attempt.output as { result: ConversationOutput }).result
const transcriptOf = (attempt: Attempt) => (attempt.output as { transcript: ReadonlyArray<Message> }).transcript

const llmDef: AgentDef = { name: "openai:gpt-4o-mini", kind: "llm", model: "openai:gpt-4o-mini", actionSpace: "tools", prompt: "", limits: noLimits }

describe("tau2-telecom as a provider", () => {
  it.effect("has the 114 tasks of upstream's base split, stratum telecom; test and train splits of 40 and 74", () =>
    Effect.gen(function*() {
      expect(environments).toHaveLength(114)
      expect(new Set(environments.map((e) => e.stratum))).toEqual(new Set(["telecom"]))
      expect(environments.map((e) => e.task)).toEqual(tasks.map((t) => t.id))
      expect(environments[0]!.capabilities.models).toEqual({ user: "openai:gpt-4.1-2025-04-14" })
      expect(environments[0]!.capabilities.upstream).toBe("sierra-research/tau2-bench@a2c024725189473d2d7cea3a5cfdbcc67478e41f")
      expect(environments[0]!.limits.turns).toBe(200)
      expect(yield* Effect.map(environmentsOf("test"), (es) => es.length)).toBe(40)
      expect(yield* Effect.map(environmentsOf("train"), (es) => es.length)).toBe(74)
    }))

  it.effect("offers the agent upstream's system prompt around the telecom policy and its 13 tools; the user gets the tools guidelines and the scenario", () =>
    Effect.gen(function*() {
      const inputs = yield* capabilities.protocol.inputs(environments[0]!, provider.rosterDef("gold"))
      // Upstream's rendered retail prompt with retail's policy swapped for telecom's: the same template.
      const retailPrompt = readFileSync(join(dataDir, "tau2", "prompts", "agent_system_prompt_retail.txt"), "utf8")
      const retailPolicy = readFileSync(join(dataDir, "tau2", "retail", "policy.md"), "utf8")
      expect(retailPrompt).toContain(retailPolicy)
      expect(inputs.system).toBe(retailPrompt.replace(retailPolicy, () => telecom.policy))
      expect(inputs.system).toContain("<tech_support_policy>")
      expect(inputs.tools.map((t) => t.name)).toEqual(telecom.toolSpecs.map((t) => t.name))
      expect(inputs.tools).toHaveLength(13)

      const withPersona = tasks.find((t) => t.user_scenario.persona !== null)!
      const prompt = userPromptOf(prompts, withPersona)
      expect(prompt.startsWith(prompts.guidelinesTools.replace("<PERSONA_GUIDELINES>", "").slice(0, 200))).toBe(true)
      expect(prompt).not.toContain("<PERSONA_GUIDELINES>")
      // The persona text starts with a newline, which textwrap.indent leaves unprefixed.
      expect(prompt).toContain("<scenario>\nPersona:\n\n\tAs a ")
      expect(prompt).toContain(withPersona.user_scenario.persona!.trim().split("\n")[0])
      expect(prompt).toContain("Instructions:\n\tDomain: telecom\n\tReason for call:\n\t\t")
      expect(prompt.endsWith("\n</scenario>")).toBe(true)
    }))

  it.effect("installs each task's initial state (initialization actions, synced) with both sides' tools; evidence is its digest and the tools digest", () =>
    Effect.gen(function*() {
      const task = tasks[0]!
      const setup = yield* capabilities.worldSetup.setup(envOf(task.id))
      const expected = Either.getOrThrow(taskInitialWorld(telecom.initialWorld, task))
      expect(World.digest(setup.world)).toBe(World.digest(expected))
      expect(World.digest(setup.world)).not.toBe(World.digest(telecom.initialWorld))
      expect(setup.evidence).toEqual({ db: World.digest(expected), tools: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) })
      expect(setup.tools).toHaveLength(13 + 30)
    }))

  it.effect("gold scores 1 on every task with env assertions (and actions) evaluated, nothing left unevaluated; echo fails the env assertions", () =>
    Effect.gen(function*() {
      let assertions = 0
      let actionChecks = 0
      let userToolCalls = 0
      let echoFailures = 0
      for (const env of environments) {
        const task = tasks.find((t) => t.id === env.task)!
        const gold = yield* run("gold", env)
        expect({ task: env.task, reward: gold.verdict.reward, failures: failuresOf(gold.verdict) }).toEqual({ task: env.task, reward: 1, failures: [] })
        expect(resultOf(gold).terminationReason).toBe("user_stop")
        expect(gold.verdict.notEvaluated ?? []).toEqual([])
        const checks = Object.keys(gold.verdict.checks)
        assertions += checks.filter((c) => c.startsWith("env:")).length
        actionChecks += checks.filter((c) => c.startsWith("action:")).length
        expect(checks.filter((c) => c.startsWith("env:"))).toHaveLength(task.evaluation_criteria?.env_assertions?.length ?? 0)
        // The user's phone calls are in the trajectory, never in what the agent sees.
        const userCalls = resultOf(gold).messages.filter((m) => m.role === "tool" && m.requestor === "user")
        userToolCalls += userCalls.length
        expect(transcriptOf(gold).filter((m) => m.role === "tool")).toHaveLength(
          resultOf(gold).messages.filter((m) => m.role === "tool" && m.requestor === "assistant").length
        )
        const echo = yield* run("echo", env)
        if (echo.verdict.reward === 0) echoFailures++
      }
      expect(assertions).toBe(209)
      expect(actionChecks).toBe(tasks.reduce((n, t) => n + (t.evaluation_criteria?.reward_basis.includes("ACTION") ? t.evaluation_criteria.actions?.length ?? 0 : 0), 0))
      expect(actionChecks).toBeGreaterThan(0)
      expect(userToolCalls).toBe(393)
      expect(echoFailures).toBe(114)
    }), 240_000)

  it.effect("a model-played user's phone tool calls run in the Attempt's fork and its model calls debit the same wallet", () =>
    Effect.gen(function*() {
      const id = "[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]"
      const env = envOf(id)
      const task = tasks.find((t) => t.id === id)!
      expect(task.evaluation_criteria?.reward_basis).toEqual(["ENV_ASSERTION"])
      const agentModel = yield* Registry.resolve("openai:gpt-4o-mini").pipe(Effect.provide(Registry.layer))
      const call = (name: string) => ({ text: null, toolCalls: [{ id: name, name, arguments: {} }] })
      const userTurns = [
        { text: "My mobile data does not work.", toolCalls: [] },
        call("toggle_airplane_mode"),
        call("toggle_data"),
        call("run_speed_test"),
        { text: "It works now, thanks. ###STOP###", toolCalls: [] }
      ]
      const agentTurns = [
        { text: null, toolCalls: [{ id: "a1", name: "toggle_data", arguments: {} }] },
        { text: "Please turn airplane mode off and mobile data on.", toolCalls: [] }
      ]
      const model = scriptedModels(userTurns, agentTurns)
      const attempt = yield* evaluate(env, {
        capabilities,
        agentDef: llmDef,
        agent: modelAgent(llmDef.name, agentModel),
        repetition: 0,
        handlers: { "model/generate": model }
      })
      expect(attempt.verdict.ended).toBeNull()
      expect(resultOf(attempt).terminationReason).toBe("user_stop")
      expect(attempt.verdict).toMatchObject({ reward: 1, checks: { "env:0": true, "env:1": true } })
      // Five user calls and two agent calls on one wallet.
      expect(attempt.usage).toMatchObject({ calls: 7, inputTokens: 5 * 1000 + 2 * 200, outputTokens: 5 * 10 + 2 * 20 })
      const kinds = attempt.recording.filter((r) => r.kind.startsWith("tool/")).map((r) => `${r.kind} ${r.key}`)
      // The agent's call of a phone tool is answered by the protocol and never reaches the world.
      expect(kinds).toEqual(["tool/write toggle_airplane_mode", "tool/write toggle_data", "tool/read run_speed_test"])
      // The agent cannot reach the phone: upstream answers from the agent's toolkit only.
      const messages = resultOf(attempt).messages
      expect(messages.find((m) => m.role === "tool" && m.requestor === "assistant")).toMatchObject({ content: "Error: Tool 'toggle_data' not found.", error: true })
      const speed = messages.find((m) => m.role === "tool" && m.name === "run_speed_test")
      expect(speed).toMatchObject({ requestor: "user", error: false })
      expect(speed?.role === "tool" ? speed.content : "").toContain("Excellent")
      // The user model got the tools guidelines, its 30 tools, and its own tool answers as tool messages.
      const userCalls = attempt.recording.filter((r) => r.kind === "model/generate" && r.key === "user")
      const request = userCalls[4]!.request as { system: string; tools: ReadonlyArray<{ name: string }>; messages: ReadonlyArray<{ role: string }> }
      expect(request.system).toBe(userPromptOf(prompts, task))
      expect(request.tools).toHaveLength(30)
      expect(request.messages.filter((m) => m.role === "tool")).toHaveLength(3)
      // The agent saw none of the user's tool traffic.
      expect(transcriptOf(attempt).filter((m) => m.role === "tool")).toHaveLength(1)
    }))

  it("gives the candidate plain JSON for task floats: 2.0 reaches the tools as 2 (the known float limit)", () => {
    expect(plainJson({ gb_amount: float(2), xs: [float(1.5), 3] })).toEqual({ gb_amount: 2, xs: [1.5, 3] })
  })

  it.effect("equivalence: 114 gold + 200 fuzz lines agree with upstream, env assertions included", () =>
    Effect.gen(function*() {
      const result = yield* provider.equivalence!(null)
      expect(result).toMatchObject({ benchmark: "tau2-telecom", lines: 314, agree: 314, disagree: [] })
    }), 120_000)

  it("pins every file it reads under tau2/ by sha256", () => {
    // What it reads: the pinned files and the ones the pull makes from upstream's sources (those are under tau2/upstream/, read only by the pull).
    const read = [...provider.data!.filter((f) => f.derivationInput !== true || !f.path.startsWith("tau2/upstream/")), ...(provider.derived?.files ?? [])]
    const paths = read.map((f) => f.path)
    expect(new Set(paths).size).toBe(paths.length)
    for (const p of ["tau2/telecom/db.toml", "tau2/telecom/user_db.toml", "tau2/telecom/tasks.json", "tau2/telecom/policy-manual.md", "tau2/telecom/user-tools.json", "tau2/telecom/oracle/gold.jsonl", "tau2/prompts/first_agent_message.txt", "tau2/user_simulator/simulation_guidelines_tools.md"]) {
      expect(paths).toContain(p)
    }
    for (const file of read) {
      expect(file.path.startsWith("tau2/")).toBe(true)
      const bytes = readFileSync(join(dataDir, file.path))
      expect(createHash("sha256").update(bytes).digest("hex"), file.path).toBe(file.sha256)
    }
  })
})
