import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
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
import { loadAirlineData } from "../../../../providers/tau2/airline/data.ts"
import { capabilities, environmentsOf, provider, splitsOf, userPromptOf } from "../../../../providers/tau2/airline/index.ts"
import { decodeTasks, goldWorld } from "../../../../providers/tau2/airline/tasks.ts"
import { scriptedModels } from "../scriptedModels.ts"

const dataDir = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"
const environments = await Effect.runPromise(provider.environments)
const prompts = await Effect.runPromise(loadPrompts())
const airline = await Effect.runPromise(loadAirlineData())
const tasks = await Effect.runPromise(decodeTasks(airline.tasksJson))
const envOf = (id: string): EnvironmentDef => environments.find((e) => e.task === id)!

const run = (name: string, env: EnvironmentDef) =>
  Effect.flatMap(provider.scripted(name, env), (agent) => evaluate(env, { capabilities, agentDef: provider.rosterDef(name), agent, repetition: 0 }))

const resultOf = (attempt: Attempt) => (attempt.output as { result: ConversationOutput }).result
const transcriptOf = (attempt: Attempt) => (attempt.output as { transcript: ReadonlyArray<Message> }).transcript

const llmDef: AgentDef = { name: "openai:gpt-4o-mini", kind: "llm", model: "openai:gpt-4o-mini", actionSpace: "tools", prompt: "", limits: noLimits }

describe("tau2-airline as a provider", () => {
  it.effect("has the 50 tasks of upstream's base split, stratum airline; train and test splits of 30 and 20", () =>
    Effect.gen(function*() {
      expect(environments).toHaveLength(50)
      expect(new Set(environments.map((e) => e.stratum))).toEqual(new Set(["airline"]))
      expect(environments.map((e) => e.task)).toEqual(tasks.map((t) => t.id))
      expect(environments[0]!.benchmark).toBe("tau2-airline")
      expect(environments[0]!.capabilities.models).toEqual({ user: "openai:gpt-4.1-2025-04-14" })
      expect(environments[0]!.capabilities.upstream).toBe("sierra-research/tau2-bench@a2c024725189473d2d7cea3a5cfdbcc67478e41f")
      expect(environments[0]!.limits.turns).toBe(200)
      expect(yield* Effect.map(environmentsOf("train"), (es) => es.length)).toBe(30)
      expect(yield* Effect.map(environmentsOf("test"), (es) => es.length)).toBe(20)
      expect(yield* splitsOf("0")).toEqual(["train", "base"])
    }))

  it.effect("offers the agent upstream's system prompt around the airline policy and its 14 tools; the user gets the no-tools guidelines and the scenario", () =>
    Effect.gen(function*() {
      const inputs = yield* capabilities.protocol.inputs(environments[0]!, provider.rosterDef("gold"))
      // Upstream's rendered retail prompt with retail's policy swapped for airline's: the same template.
      const retailPrompt = readFileSync(join(dataDir, "tau2", "prompts", "agent_system_prompt_retail.txt"), "utf8")
      const retailPolicy = readFileSync(join(dataDir, "tau2", "retail", "policy.md"), "utf8")
      expect(retailPrompt).toContain(retailPolicy)
      expect(inputs.system).toBe(retailPrompt.replace(retailPolicy, () => airline.policy))
      expect(inputs.system).toContain("# Airline Agent Policy")
      expect(inputs.tools.map((t) => t.name)).toEqual(airline.toolSpecs.map((t) => t.name))
      expect(inputs.tools).toHaveLength(14)

      const task = tasks.find((t) => t.id === "1")!
      const prompt = userPromptOf(prompts, task)
      expect(prompt).toContain(prompts.guidelines.slice(0, 200))
      expect(prompt).toContain("<scenario>\nInstructions:\n\tDomain: airline\n\tReason for call:\n\t\tYou recently spoke on the phone")
      expect(prompt).toContain("\tKnown info:\n\t\tYou are Raj Sanchez.\n\t\tYour user id is raj_sanchez_7340.")
      expect(prompt.endsWith("\n</scenario>")).toBe(true)
    }))

  it.effect("installs the pinned DB with the 14 tools for every task; evidence is its digest and the tools digest", () =>
    Effect.gen(function*() {
      const setup = yield* capabilities.worldSetup.setup(envOf("0"))
      expect(World.digest(setup.world)).toBe(World.digest(airline.initialWorld))
      expect(setup.evidence).toEqual({ db: World.digest(airline.initialWorld), tools: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) })
      expect(setup.tools).toHaveLength(14)
    }))

  it.effect("gold scores 1 on all 50 tasks (DB and COMMUNICATE), nothing left unevaluated; echo loses exactly where the gold changes the DB or says something", () =>
    Effect.gen(function*() {
      let communicateChecks = 0
      let echoLosses = 0
      let expectedLosses = 0
      for (const env of environments) {
        const task = tasks.find((t) => t.id === env.task)!
        expect(task.evaluation_criteria?.reward_basis).toEqual(["DB", "COMMUNICATE"])
        const gold = yield* run("gold", env)
        expect({ task: env.task, reward: gold.verdict.reward, failures: failuresOf(gold.verdict) }).toEqual({ task: env.task, reward: 1, failures: [] })
        expect(resultOf(gold).terminationReason).toBe("user_stop")
        expect(gold.verdict.notEvaluated ?? []).toEqual([])
        communicateChecks += Object.keys(gold.verdict.checks).filter((c) => c.startsWith("communicate:")).length
        // Every gold call ran in the Attempt's fork and none failed.
        expect(resultOf(gold).messages.filter((m) => m.role === "tool" && m.error)).toEqual([])
        const echo = yield* run("echo", env)
        if (echo.verdict.reward === 0) echoLosses++
        const changes = !World.equals(goldWorld(airline.initialWorld, task), airline.initialWorld)
        if (changes || (task.evaluation_criteria?.communicate_info ?? []).length > 0) expectedLosses++
      }
      expect(communicateChecks).toBe(10)
      expect(echoLosses).toBe(expectedLosses)
      expect(echoLosses).toBe(27)
    }), 240_000)

  it.effect("a model-played user and agent hold a conversation graded on the DB and on what the agent says", () =>
    Effect.gen(function*() {
      // Task 3 changes nothing and expects the agent to say "4" (suitcases); the agent looks the user up and answers.
      const env = envOf("3")
      const task = tasks.find((t) => t.id === "3")!
      expect(task.evaluation_criteria?.communicate_info).toEqual(["4"])
      const userId = (task.evaluation_criteria?.actions ?? [])[1]?.arguments["user_id"] as string
      expect(userId).toBe("anya_garcia_5901")
      const agentModel = yield* Registry.resolve("openai:gpt-4o-mini").pipe(Effect.provide(Registry.layer))
      const userTurns = [
        { text: `Hi, my user id is ${userId}. How many suitcases can I take?`, toolCalls: [] },
        { text: "Thanks. ###STOP###", toolCalls: [] }
      ]
      const agentTurns = [
        { text: null, toolCalls: [{ id: "a1", name: "get_user_details", arguments: { user_id: userId } }] },
        { text: "You can take 4 suitcases.", toolCalls: [] }
      ]
      const attempt = yield* evaluate(env, {
        capabilities,
        agentDef: llmDef,
        agent: modelAgent(llmDef.name, agentModel),
        repetition: 0,
        handlers: { "model/generate": scriptedModels(userTurns, agentTurns) }
      })
      expect(resultOf(attempt).terminationReason).toBe("user_stop")
      expect(attempt.verdict).toMatchObject({ reward: 1, checks: { db: true, "communicate:0": true } })
      expect(attempt.usage).toMatchObject({ calls: 4 })
      const tool = resultOf(attempt).messages.find((m) => m.role === "tool")
      expect(tool).toMatchObject({ requestor: "assistant", name: "get_user_details", error: false })
      expect(attempt.recording.filter((r) => r.kind.startsWith("tool/")).map((r) => `${r.kind} ${r.key}`)).toEqual(["tool/read get_user_details"])
      // The user simulator got upstream's prompt for the task and no tools.
      const userCall = attempt.recording.find((r) => r.kind === "model/generate" && r.key === "user")!
      const request = userCall.request as { system: string; tools: ReadonlyArray<unknown> }
      expect(request.system).toBe(userPromptOf(prompts, task))
      expect(request.tools).toEqual([])
      expect(transcriptOf(attempt).filter((m) => m.role === "tool")).toHaveLength(1)
    }))

  it.effect("equivalence: 50 gold + 500 fuzz lines agree with upstream", () =>
    Effect.gen(function*() {
      const result = yield* provider.equivalence!(null)
      expect(result).toMatchObject({ benchmark: "tau2-airline", lines: 550, agree: 550, disagree: [] })
    }), 300_000)

  it("pins every file it reads under tau2/ by sha256, with upstream URLs for the verbatim ones", () => {
    // What it reads: the pinned files and the ones the pull makes from upstream's sources (those are under tau2/upstream/, read only by the pull).
    const read = [...provider.data!.filter((f) => f.derivationInput !== true || !f.path.startsWith("tau2/upstream/")), ...(provider.derived?.files ?? [])]
    const paths = read.map((f) => f.path)
    expect(new Set(paths).size).toBe(paths.length)
    for (const p of ["tau2/airline/db.json", "tau2/airline/tasks.json", "tau2/airline/policy.md", "tau2/airline/split_tasks.json", "tau2/airline/tools.json", "tau2/airline/oracle/gold.jsonl", "tau2/airline/oracle/fuzz-dev.jsonl", "tau2/prompts/first_agent_message.txt", "tau2/user_simulator/simulation_guidelines.md"]) {
      expect(paths).toContain(p)
    }
    expect(provider.data!.find((f) => f.path === "tau2/airline/db.json")!.url).toBe(
      "https://raw.githubusercontent.com/sierra-research/tau2-bench/a2c024725189473d2d7cea3a5cfdbcc67478e41f/data/tau2/domains/airline/db.json"
    )
    for (const file of read) {
      const bytes = readFileSync(join(dataDir, file.path))
      expect(createHash("sha256").update(bytes).digest("hex"), file.path).toBe(file.sha256)
    }
  })
})
