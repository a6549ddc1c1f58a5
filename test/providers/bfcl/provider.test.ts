import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Json } from "../../../src/content/Canonical.ts"
import { sha256Hex } from "../../../src/content/ContentId.ts"
import type { Agent } from "../../../src/evaluation/Agent.ts"
import type { AgentInput, AgentReply } from "../../../src/evaluation/Conversation.ts"
import { evaluate } from "../../../src/evaluation/evaluate.ts"
import type { AgentDef } from "../../../src/schema/AgentDef.ts"
import { type EnvironmentDef, noLimits } from "../../../src/schema/EnvironmentDef.ts"
import { CHECK_NAMES } from "../../../providers/bfcl/checker.ts"
import { CATEGORIES, loadAll, PINNED_FILES, TASK_COUNTS, UNPASSABLE_TASKS } from "../../../providers/bfcl/data.ts"
import { provider } from "../../../providers/bfcl/index.ts"
import { PYTHON_HINT, promptSystemPrompt } from "../../../providers/bfcl/tools.ts"

const def = (name: string, actionSpace: "tools" | "text"): AgentDef => ({ name, kind: "llm", model: null, actionSpace, prompt: "", limits: noLimits })
const toolsDef = def("fc", "tools")
const textDef = def("prompt", "text")

/** An agent that answers once with `reply` and keeps what it was given. */
const answering = (reply: AgentReply) => {
  const seen: Array<AgentInput> = []
  const agent: Agent = { name: "spy", reply: (input) => Effect.sync(() => (seen.push(input), reply)) }
  return { agent, seen }
}

const envOf = (task: string) =>
  Effect.flatMap(provider.environments, (envs) => {
    const env = envs.find((e) => e.task === task)
    return env ? Effect.succeed(env) : Effect.dieMessage(`no task ${task}`)
  })

const attemptOn = (task: string, agentDef: AgentDef, agent: Agent) =>
  Effect.flatMap(envOf(task), (env) => evaluate(env, { capabilities: provider.capabilities, agentDef, agent, repetition: 0 }))

const call = (name: string, args: { readonly [key: string]: Json }, argumentsText?: string) => ({
  id: "call-1",
  name,
  arguments: args,
  ...(argumentsText !== undefined ? { argumentsText } : {})
})

const failedChecks = (checks: Readonly<Record<string, boolean>>) => Object.keys(checks).filter((k) => !checks[k])

describe("bfcl provider", () => {
  it.effect("offers all 3,491 tasks, one stratum per category, with no world and one turn", () =>
    Effect.gen(function*() {
      const envs = yield* provider.environments
      expect(envs.length).toBe(3491)
      for (const c of CATEGORIES) expect(envs.filter((e) => e.stratum === c).length).toBe(TASK_COUNTS[c])
      expect(new Set(envs.map((e) => e.task)).size).toBe(3491)
      for (const e of envs) {
        expect(e.benchmark).toBe("bfcl")
        expect(e.world.isolation).toBe("none")
        expect(e.limits.turns).toBe(1)
        expect(e.capabilities.upstream).toBe("ShishirPatil/gorilla@6ea57973c7a6097fd7c5915698c54c17c5b1b6c8")
      }
      expect(yield* provider.environments).toBe(envs)
      expect([...(provider.impassable ?? [])].sort()).toEqual([...UNPASSABLE_TASKS.keys()].sort())
    }))

  it.effect("gold scores 1 on every passable task and 0 on the four impassable ones, echo passes only where no call is right", () =>
    Effect.gen(function*() {
      const envs = yield* provider.environments
      const run = (name: string, env: EnvironmentDef) =>
        Effect.flatMap(provider.scripted(name, env), (agent) =>
          evaluate(env, { capabilities: provider.capabilities, agentDef: provider.rosterDef(name), agent, repetition: 0 }))
      const goldFailing: Array<string> = []
      for (const env of envs) {
        const attempt = yield* run("gold", env)
        if (attempt.verdict.reward !== 1) goldFailing.push(env.task)
      }
      expect(goldFailing.sort()).toEqual([...UNPASSABLE_TASKS.keys()].sort())

      for (const task of ["irrelevance_0", "simple_python_0", "live_relevance_0-0-0"]) {
        const attempt = yield* run("echo", yield* envOf(task))
        expect(attempt.verdict.reward, task).toBe(task === "irrelevance_0" ? 1 : 0)
      }
    }), 120_000)

  it.effect("function-calling mode offers upstream's converted schemas and grades the right call 1", () =>
    Effect.gen(function*() {
      const { agent, seen } = answering({ text: null, toolCalls: [call("math_factorial", { number: 5 })] })
      const attempt = yield* attemptOn("simple_python_1", toolsDef, agent)
      const input = seen[0]!
      expect(input.tools.map((t) => t.name)).toEqual(["math_factorial"])
      expect(input.tools[0]!.description).toBe(`Calculate the factorial of a given number.${PYTHON_HINT}`)
      expect(input.tools[0]!.parameters).toEqual({
        type: "object",
        properties: { number: { type: "integer", description: "The number for which factorial needs to be calculated." } },
        required: ["number"]
      })
      expect(input.system).toBe("")
      expect(input.messages).toEqual([{ role: "user", content: "Calculate the factorial of 5 using math functions." }])
      expect(attempt.verdict.reward).toBe(1)
      expect(Object.keys(attempt.verdict.checks)).toEqual([...CHECK_NAMES])
      expect(attempt.verdict.details).toEqual({ errorType: null, errors: [] })
      // The transcript is the question and the reply.
      const transcript = (attempt.output as { transcript: ReadonlyArray<{ role: string }> }).transcript
      expect(transcript.map((m) => m.role)).toEqual(["user", "assistant"])
    }))

  it.effect("a wrong value scores 0 with wrong-value failed and upstream's error type in the details", () =>
    Effect.gen(function*() {
      const { agent } = answering({ text: null, toolCalls: [call("math_factorial", { number: 6 })] })
      const attempt = yield* attemptOn("simple_python_1", toolsDef, agent)
      expect(attempt.verdict.reward).toBe(0)
      expect(failedChecks(attempt.verdict.checks)).toEqual(["wrong-value"])
      expect(attempt.verdict.details).toMatchObject({ errorType: "value_error:others" })
    }))

  it.effect("a reply with text and no tool call fails the format check, as upstream's decoder does", () =>
    Effect.gen(function*() {
      const { agent } = answering({ text: "math.factorial(number=5)", toolCalls: [] })
      const attempt = yield* attemptOn("simple_python_1", toolsDef, agent)
      expect(failedChecks(attempt.verdict.checks)).toEqual(["wrong-format"])
    }))

  it.effect("the arguments' JSON text, when a call carries it, keeps 5.0 apart from 5", () =>
    Effect.gen(function*() {
      // simple_python_13's `interval` is an array of floats: upstream fails [1, 3] and passes [1.0, 3.0].
      const args = { function: "x**2", interval: [1, 3] }
      const plain = answering({ text: null, toolCalls: [call("calculate_area_under_curve", args)] })
      const exact = answering({ text: null, toolCalls: [call("calculate_area_under_curve", args, '{"function": "x**2", "interval": [1.0, 3.0]}')] })
      const a = yield* attemptOn("simple_python_13", toolsDef, plain.agent)
      const b = yield* attemptOn("simple_python_13", toolsDef, exact.agent)
      expect(failedChecks(a.verdict.checks)).toEqual(["wrong-type"])
      expect(b.verdict.reward).toBe(1)
    }))

  it.effect("prompt mode gives upstream's system prompt and no tools, and decodes Python call text", () =>
    Effect.gen(function*() {
      const tasks = yield* loadAll()
      const task = tasks.find((t) => t.id === "simple_python_1")!
      const right = answering({ text: "[math.factorial(number=5)]", toolCalls: [] })
      const wrong = answering({ text: "[math.gamma(number=5)]", toolCalls: [] })
      const a = yield* attemptOn("simple_python_1", textDef, right.agent)
      const b = yield* attemptOn("simple_python_1", textDef, wrong.agent)
      expect(right.seen[0]!.system).toBe(promptSystemPrompt(task.functions))
      expect(right.seen[0]!.tools).toEqual([])
      expect(a.verdict.reward).toBe(1)
      expect(failedChecks(b.verdict.checks)).toEqual(["wrong-function"])
    }))

  it.effect("a task's own system message is the system prompt in function-calling mode and follows upstream's in prompt mode", () =>
    Effect.gen(function*() {
      const tasks = yield* loadAll()
      const task = tasks.find((t) => t.question[0]?.[0]?.role === "system")!
      const own = task.question[0]![0]!.content
      const fc = answering({ text: "", toolCalls: [] })
      const pm = answering({ text: "", toolCalls: [] })
      yield* attemptOn(task.id, toolsDef, fc.agent)
      yield* attemptOn(task.id, textDef, pm.agent)
      expect(fc.seen[0]!.system).toBe(own)
      expect(pm.seen[0]!.system).toBe(`${promptSystemPrompt(task.functions)}\n\n${own}`)
      expect(fc.seen[0]!.messages.some((m) => m.role === "user" && m.content === own)).toBe(false)
    }))

  it.effect("the world setup's evidence is the digest of the function docs, the same in both modes", () =>
    Effect.gen(function*() {
      const fc = yield* attemptOn("simple_python_1", toolsDef, answering({ text: "", toolCalls: [] }).agent)
      const pm = yield* attemptOn("simple_python_1", textDef, answering({ text: "", toolCalls: [] }).agent)
      const other = yield* attemptOn("simple_python_0", toolsDef, answering({ text: "", toolCalls: [] }).agent)
      expect(fc.evidence).toEqual(pm.evidence)
      expect(fc.evidence).not.toEqual(other.evidence)
      expect(fc.inputsId).not.toBe(pm.inputsId)
    }))

  it.effect("irrelevance passes without a call and fails with one; live_relevance needs a call", () =>
    Effect.gen(function*() {
      const none = yield* attemptOn("irrelevance_0", toolsDef, answering({ text: "I cannot help with that.", toolCalls: [] }).agent)
      expect(none.verdict.reward).toBe(1)
      const envs = yield* provider.environments
      const irrelevant = envs.find((e) => e.task === "irrelevance_0")!
      const tool = (yield* provider.capabilities.protocol.inputs(irrelevant, toolsDef)).tools[0]!
      const made = yield* attemptOn("irrelevance_0", toolsDef, answering({ text: null, toolCalls: [call(tool.name, {})] }).agent)
      expect(failedChecks(made.verdict.checks)).toEqual(["relevance"])
      const missing = yield* attemptOn("live_relevance_0-0-0", toolsDef, answering({ text: "No.", toolCalls: [] }).agent)
      expect(failedChecks(missing.verdict.checks)).toEqual(["relevance"])
    }))

  it("lists every pinned upstream file under bfcl/v4/, and the oracle corpus under bfcl/oracle/, with the hash of the file in the data folder", () => {
    const root = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"
    const upstream = (provider.data ?? []).filter((f) => f.oracle !== true)
    const oracle = (provider.data ?? []).filter((f) => f.oracle === true)
    expect(upstream.length).toBe(PINNED_FILES.length)
    expect(oracle.map((f) => f.path).sort()).toEqual(["bfcl/oracle/README.md", "bfcl/oracle/verdicts-dev.jsonl"])
    for (const f of upstream) {
      expect(f.path.startsWith("bfcl/v4/")).toBe(true)
      expect(f.url).toMatch(/^https:\/\/raw\.githubusercontent\.com\/ShishirPatil\/gorilla\/6ea57973/)
    }
    for (const f of provider.data ?? []) expect(sha256Hex(readFileSync(join(root, f.path)))).toBe(f.sha256)
  })

  it.effect("equivalence over the default dev corpus agrees on all 17,972 lines; a missing corpus is a data error", () =>
    Effect.gen(function*() {
      const equivalence = provider.equivalence!
      const result = yield* equivalence(null)
      expect(result).toMatchObject({ benchmark: "bfcl", lines: 17972, agree: 17972, disagree: [] })
      const missing = yield* Effect.flip(equivalence("/nonexistent/corpus.jsonl"))
      expect(missing._tag).toBe("CapabilityError")
      expect(missing.message).toContain("/nonexistent/corpus.jsonl")
    }), 60_000)
})
