import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import type { Json } from "../../../src/content/Canonical.ts"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { Agent } from "../../../src/evaluation/Agent.ts"
import * as Agents from "../../../src/evaluation/Agent.ts"
import { evaluate } from "../../../src/evaluation/evaluate.ts"
import * as Model from "../../../src/model/Model.ts"
import { modelAgent } from "../../../src/model/ModelAgent.ts"
import * as Registry from "../../../src/model/Registry.ts"
import type { AgentDef } from "../../../src/schema/AgentDef.ts"
import { type EnvironmentDef, noLimits } from "../../../src/schema/EnvironmentDef.ts"
import { byClauseType, clauseSlug, clauseTypes } from "../../../providers/contract-review/data.ts"
import { goldAnswer } from "../../../providers/contract-review/gold.ts"
import { provider } from "../../../providers/contract-review/index.ts"
import { instructions, replyFor } from "../../../providers/contract-review/prompt.ts"
import { loadCases, readerAt } from "../../../providers/contract-review/upstream.ts"

const cuadDir = join(process.env["ASSAY_DATA_DIR"] ?? "../shared/data", "cuad")

interface RawGold {
  readonly id: string
  readonly clauses: Record<string, { readonly present: boolean; readonly spans: ReadonlyArray<{ readonly text: string }> }>
}

/** The gold files as plain JSON, read without the provider's loader. */
const goldFiles = (): ReadonlyArray<RawGold> =>
  readdirSync(join(cuadDir, "gold"))
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(cuadDir, "gold", f), "utf8")) as RawGold)

const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length

const run = (env: EnvironmentDef, name: string) =>
  Effect.gen(function*() {
    const agent = yield* provider.scripted(name, env)
    return yield* evaluate(env, { capabilities: provider.capabilities, agentDef: provider.rosterDef(name), agent, repetition: 0 })
  })

const agentOf = (name: string, text: string): Agent => Agents.scripted(name, [{ text, toolCalls: [] }])

const textDef = (name: string): AgentDef => ({ name, kind: "scripted", model: null, actionSpace: "text", prompt: "", limits: noLimits })

const envOf = (task: string) =>
  Effect.flatMap(provider.environments, (envs) => {
    const env = envs.find((e) => e.task === task)
    return env ? Effect.succeed(env) : Effect.dieMessage(`no environment ${task}`)
  })

describe("the contract-review provider", () => {
  it.effect("has one text-only, one-turn environment per contract of the case set", () =>
    Effect.gen(function*() {
      const envs = yield* provider.environments
      expect(envs.map((e) => e.task)).toEqual(goldFiles().map((g) => g.id))
      for (const env of envs) {
        expect(env.benchmark).toBe("contract-review")
        expect(env.limits.turns).toBe(1)
        expect(env.world.isolation).toBe("none")
      }
      expect(provider.roster).toEqual(["gold", "echo"])
      expect(provider.rosterDef("gold").actionSpace).toBe("text")
      expect(provider.attribution).toContain("CC BY 4.0")
      expect(provider.attribution).toContain("The Atticus Project")
    }))

  it.effect("gold gets reward 1 on every contract, passing every check, with CUAD precision and recall 1", () =>
    Effect.gen(function*() {
      const envs = yield* provider.environments
      expect(envs).toHaveLength(8)
      for (const env of envs) {
        const attempt = yield* run(env, "gold")
        expect({ task: env.task, ended: attempt.verdict.ended, reward: attempt.verdict.reward }).toEqual({
          task: env.task,
          ended: null,
          reward: 1
        })
        expect(Object.entries(attempt.verdict.checks).filter(([, ok]) => !ok)).toEqual([])
        expect(attempt.verdict.details).toMatchObject({ cuad: { fp: 0, fn: 0 }, answerContract: { kept: true } })
      }
    }))

  it.effect("none gets exactly the mean over contracts of the share of absent types, from the gold files", () =>
    Effect.gen(function*() {
      const expected = mean(goldFiles().map((g) => {
        const clauses = Object.values(g.clauses)
        return clauses.filter((c) => !c.present).length / clauses.length
      }))
      const envs = yield* provider.environments
      const rewards = yield* Effect.forEach(envs, (env) => Effect.map(run(env, "echo"), (a) => a.verdict.reward))
      expect(mean(rewards)).toBe(expected)
    }))

  it.effect("the candidate sees the contract as the user message and the instructions as the system prompt", () =>
    Effect.gen(function*() {
      const [env] = yield* provider.environments
      if (env === undefined) return yield* Effect.dieMessage("no environment")
      const seen: Array<{ system: string; user: string; tools: number }> = []
      const spy: Agent = {
        name: "spy",
        reply: (input) =>
          Effect.sync(() => {
            const first = input.messages[0]
            seen.push({ system: input.system, user: first?.role === "user" ? first.content : "", tools: input.tools.length })
            return { text: "{}", toolCalls: [] }
          })
      }
      const attempt = yield* evaluate(env, { capabilities: provider.capabilities, agentDef: textDef("spy"), agent: spy, repetition: 0 })
      const contract = readFileSync(join(cuadDir, "contracts", `${env.task}.txt`), "utf8")
      expect(seen).toHaveLength(1)
      expect(seen[0]?.system).toBe(instructions)
      expect(seen[0]?.user).toContain(contract)
      expect(seen[0]?.tools).toBe(0)
      expect(attempt.output).toEqual({
        transcript: [
          { role: "user", content: seen[0]?.user },
          { role: "assistant", content: "{}", toolCalls: [] }
        ],
        result: "{}"
      })
      expect(attempt.evidence).toMatchObject({ contract: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) })
    }))

  it.effect("a reply that breaks the answer contract is graded as all absent, and the verdict says so", () =>
    Effect.gen(function*() {
      const env = yield* envOf("dynamex-transportation")
      const attempt = yield* evaluate(env, {
        capabilities: provider.capabilities,
        agentDef: textDef("prose"),
        agent: agentOf("prose", "I think the contract is governed by Texas law."),
        repetition: 0
      })
      expect(attempt.verdict.ended).toBeNull()
      expect(attempt.verdict.checks["answer-contract"]).toBe(false)
      expect(attempt.verdict.details).toMatchObject({ answerContract: { kept: false, reason: "no-json" } })
      // dynamex has every type present, so all absent scores 0.
      expect(attempt.verdict.reward).toBe(0)
    }))

  it.effect("details carry the per-clause outcome and CUAD's counts", () =>
    Effect.gen(function*() {
      const env = yield* envOf("dynamex-transportation")
      const cases = yield* loadCases(readerAt())
      const c = cases.find((x) => x.id === env.task)
      if (c === undefined) return yield* Effect.dieMessage("no case")
      const gold = goldAnswer(c)
      const answer = byClauseType((t) =>
        t === "Governing Law"
          ? { present: true, quotes: ["not a sentence of this contract"] }
          : t === "Audit Rights"
          ? { present: false, quotes: [] }
          : gold[t]
      )
      const attempt = yield* evaluate(env, {
        capabilities: provider.capabilities,
        agentDef: textDef("partial"),
        agent: agentOf("partial", replyFor(answer)),
        repetition: 0
      })
      expect(attempt.verdict.reward).toBe((6 + 0.5 + 0) / 8)
      expect(attempt.verdict.checks[`${clauseSlug("Governing Law")}:quote-not-in-contract`]).toBe(false)
      expect(attempt.verdict.checks[`${clauseSlug("Audit Rights")}:wrong-presence`]).toBe(false)
      expect(attempt.verdict.details).toMatchObject({
        clauses: {
          "Governing Law": { score: 0.5, lost: "quote-not-in-contract", quotes: [{ place: "not-in-contract", at: null }] },
          "Audit Rights": { score: 0, lost: "wrong-presence", goldPresent: true, claimedPresent: false },
          "Exclusivity": { score: 1, lost: null }
        }
      })
      const goldSpans = clauseTypes.reduce((n, t) => n + c.clauses[t].spans.length, 0)
      const auditSpans = c.clauses["Audit Rights"].spans.length
      expect(attempt.verdict.details).toMatchObject({ cuad: { tp: goldSpans - 1 - auditSpans, fp: 1, fn: 1 + auditSpans } })
    }))
})

describe("a model candidate answered by the Model service", () => {
  const model = Registry.fixture.pipe(Effect.flatMap((file) => Either.match(Registry.resolveIn(file, "openai:gpt-4o-mini-2024-07-18"), {
    onLeft: (e) => Effect.dieMessage(e.message),
    onRight: Effect.succeed
  })))

  it.effect("its reply is graded through the whole path, with tokens and cost in the usage", () =>
    Effect.gen(function*() {
      const env = yield* envOf("glumobile-content-license-2")
      const cases = yield* loadCases(readerAt())
      const c = cases.find((x) => x.id === env.task)
      if (c === undefined) return yield* Effect.dieMessage("no case")
      // Exclusivity is the only present type: quote its first span inside a fenced block, as models do.
      const span = c.clauses["Exclusivity"].spans[0]?.text ?? ""
      const answer = byClauseType((t) => (t === "Exclusivity" ? { present: true, quotes: [span] } : { present: false, quotes: [] }))
      const scripted = Model.scripted([{
        text: `Here is my review.\n\n\`\`\`json\n${replyFor(answer)}\n\`\`\``,
        usage: { inputTokens: 3200, outputTokens: 410 }
      }])
      const resolved = yield* model
      const name = "openai:gpt-4o-mini"
      const attempt = yield* evaluate(env, {
        capabilities: provider.capabilities,
        agentDef: { name, kind: "llm", model: resolved.ref, actionSpace: "text", prompt: "", limits: noLimits },
        agent: modelAgent(name, resolved),
        repetition: 0,
        // A ResolvedModel is plain JSON (Registry.ts); its optional fields keep it from being typed as Json.
        registryEntry: resolved as unknown as Json
      }).pipe(Effect.provideService(Model.Model, scripted))

      expect(attempt.verdict.ended).toBeNull()
      expect(attempt.verdict.reward).toBe(1)
      expect(attempt.verdict.checks["answer-contract"]).toBe(true)
      expect(attempt.usage).toMatchObject({ inputTokens: 3200, outputTokens: 410, calls: 1 })
      // gpt-4o-mini list price: $0.15 per million input tokens, $0.60 per million output tokens.
      expect(attempt.usage.costUsd).toBeCloseTo((3200 * 0.15 + 410 * 0.6) / 1e6, 12)
      expect(attempt.recording.map((r) => r.kind)).toEqual(["model/generate"])
      // What the model was asked: the instructions and the whole contract, no tools.
      const [request, ...more] = scripted.requests()
      expect(more).toEqual([])
      expect(request).toMatchObject({ provider: "openai", model: "gpt-4o-mini-2024-07-18", tools: [] })
      expect(request!.system).toContain("You are reviewing a commercial contract")
      const asked = request!.messages.at(-1)
      expect(asked?.role === "user" && asked.content).toContain("<contract>")
      expect(asked?.role === "user" && asked.content).toContain(c.text.slice(0, 2000))
    }))
})
