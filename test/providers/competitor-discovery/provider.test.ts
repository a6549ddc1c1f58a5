/**
 * competitor-discovery's grader is valid: the gold scores 1 on every task, echo 0, and each
 * damage to a gold answer loses exactly its share of the reward (a missing entry its share of
 * recall, an altered quote or a quote from a page this Attempt did not fetch its share of
 * grounding, an entry the judge rejects its share of relevance), never more and never less.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Agent from "../../../src/evaluation/Agent.ts"
import { WEIGHTS } from "../../../providers/competitor-discovery/grader.ts"
import { goldAgent, makeProvider, provider } from "../../../providers/competitor-discovery/index.ts"
import type { JudgeCall } from "../../../providers/competitor-discovery/judge.ts"
import { type DiscoveryTask, tasks } from "../../../providers/competitor-discovery/tasks.ts"
import type { AgentReply } from "../../../src/evaluation/Conversation.ts"
import { evaluate } from "../../../src/evaluation/evaluate.ts"
import type { ModelResponse } from "../../../src/model/Model.ts"
import type { EnvironmentDef } from "../../../src/schema/EnvironmentDef.ts"

const environments = Effect.runSync(provider.environments)
const envOf = (id: string): EnvironmentDef => environments.find((e) => e.task === id)!
const taskOf = (id: string): DiscoveryTask => tasks.find((t) => t.id === id)!

type Entry = { name: string; site: string; claim: string; quote: string; source: string }
const goldEntries = (task: DiscoveryTask): Array<Entry> =>
  task.references.map((r) => ({ name: r.name, site: r.site, claim: r.gold.claim, quote: r.gold.quote, source: r.gold.source }))

/** An agent that searches, fetches `fetch` (in one turn) and answers `entries`. */
const answering = (task: DiscoveryTask, fetch: ReadonlyArray<string>, entries: ReadonlyArray<unknown>): Agent.Agent =>
  Agent.scripted("damaged", [
    { text: null, toolCalls: [{ id: "s", name: "search", arguments: { query: task.goldQuery } }] },
    ...(fetch.length === 0 ? [] : [{ text: null, toolCalls: fetch.map((url, i) => ({ id: `f${i}`, name: "fetch", arguments: { url } })) } satisfies AgentReply])
  ], JSON.stringify({ competitors: entries }))

const run = (env: EnvironmentDef, agent: Agent.Agent, capabilities = provider.capabilities) =>
  evaluate(env, { capabilities, agentDef: Agent.referenceDef(agent.name), agent, repetition: 0 })

const details = (attempt: { verdict: { details?: unknown } }) => attempt.verdict.details as { recall: number; grounding: number; relevance: number | null; entries: ReadonlyArray<{ why?: string }> }

/** The no-judge reward for a recall and grounding, as the README states it. */
const noJudgeReward = (recall: number, grounding: number) => (WEIGHTS.recall * recall + WEIGHTS.grounding * grounding) / (WEIGHTS.recall + WEIGHTS.grounding)

describe("competitor-discovery: gold and echo", () => {
  it.effect("gold scores 1 on every task, with recall and grounding 1 and relevance not evaluated", () =>
    Effect.gen(function*() {
      expect(environments.length).toBe(tasks.length)
      for (const env of environments) {
        const attempt = yield* run(env, yield* provider.scripted("gold", env))
        expect(attempt.verdict.reward, env.task).toBe(1)
        expect(attempt.verdict.checks).toEqual({ answer: true, recall: true, grounding: true })
        expect(attempt.verdict.notEvaluated).toEqual(["relevance"])
        expect(details(attempt)).toMatchObject({ recall: 1, grounding: 1, relevance: null })
        // Every search and fetch was an http/request effect of the Attempt.
        expect(attempt.recording.every((r) => r.kind === "http/request")).toBe(true)
        expect(attempt.recording.length).toBe(1 + new Set(taskOf(env.task).references.map((r) => r.gold.source)).size)
      }
    }))

  it.effect("echo scores 0 on every task: no answer", () =>
    Effect.gen(function*() {
      for (const env of environments) {
        const attempt = yield* run(env, yield* provider.scripted("echo", env))
        expect(attempt.verdict.reward).toBe(0)
        expect(attempt.verdict.checks["answer"]).toBe(false)
      }
    }))
})

describe("competitor-discovery: each damage loses exactly its share", () => {
  const task = taskOf("rosterly")
  const env = envOf("rosterly")
  const gold = goldEntries(task)
  const sources = gold.map((e) => e.source)
  const n = gold.length

  it.effect("a missing entry loses its share of recall, and nothing of grounding", () =>
    Effect.gen(function*() {
      const attempt = yield* run(env, answering(task, sources, gold.slice(1)))
      expect(details(attempt)).toMatchObject({ recall: (n - 1) / n, grounding: 1 })
      expect(attempt.verdict.reward).toBeCloseTo(noJudgeReward((n - 1) / n, 1), 12)
      expect(1 - attempt.verdict.reward).toBeCloseTo(WEIGHTS.recall / n / 0.7, 12)
      expect(attempt.verdict.checks).toEqual({ answer: true, recall: false, grounding: true })
    }))

  it.effect("an altered quote loses its share of grounding, and nothing of recall", () =>
    Effect.gen(function*() {
      const altered = gold.map((e, i) => (i === 1 ? { ...e, quote: e.quote.replace("suggests", "promises") } : e))
      expect(altered[1]!.quote).not.toBe(gold[1]!.quote)
      const attempt = yield* run(env, answering(task, sources, altered))
      expect(details(attempt)).toMatchObject({ recall: 1, grounding: (n - 1) / n })
      expect(details(attempt).entries[1]).toMatchObject({ grounded: false, why: "quote-not-on-source" })
      expect(1 - attempt.verdict.reward).toBeCloseTo(WEIGHTS.grounding / n / 0.7, 12)
    }))

  it.effect("a quote from a page this Attempt did not fetch loses its share of grounding, though the page has it", () =>
    Effect.gen(function*() {
      const attempt = yield* run(env, answering(task, sources.slice(0, n - 1), gold))
      expect(details(attempt)).toMatchObject({ recall: 1, grounding: (n - 1) / n })
      expect(details(attempt).entries[n - 1]).toMatchObject({ grounded: false, why: "source-not-fetched" })
      expect(1 - attempt.verdict.reward).toBeCloseTo(WEIGHTS.grounding / n / 0.7, 12)
    }))

  it.effect("a true quote cited from another fetched page than the one it is on is not grounded", () =>
    Effect.gen(function*() {
      const miscited = gold.map((e, i) => (i === 0 ? { ...e, source: sources[1]! } : e))
      const attempt = yield* run(env, answering(task, sources, miscited))
      expect(details(attempt).entries[0]).toMatchObject({ grounded: false, why: "quote-not-on-source" })
      expect(1 - attempt.verdict.reward).toBeCloseTo(WEIGHTS.grounding / n / 0.7, 12)
    }))

  it.effect("damages add up: a missing entry and an altered quote lose both shares", () =>
    Effect.gen(function*() {
      const damaged = gold.slice(1).map((e, i) => (i === 0 ? { ...e, quote: `${e.quote} Always.` } : e))
      const attempt = yield* run(env, answering(task, sources, damaged))
      expect(attempt.verdict.reward).toBeCloseTo(noJudgeReward((n - 1) / n, (n - 2) / (n - 1)), 12)
    }))

  it.effect("a decoy listed beside the gold costs nothing without a judge, is ungrounded without a fetched quote, and is reported", () =>
    Effect.gen(function*() {
      const decoy = { name: "ShiftHound Kennels", site: "https://shifthoundkennels.example/", claim: "A kennel.", quote: "a family-run dog boarding kennel in Leeds", source: "https://shifthoundkennels.example/" }
      const attempt = yield* run(env, answering(task, [...sources, decoy.source], [...gold, decoy]))
      expect(details(attempt)).toMatchObject({ recall: 1, grounding: 1, nonCompetitorsListed: ["ShiftHound Kennels"] })
      expect(attempt.verdict.reward).toBe(1)
    }))

  it.effect("a malformed entry counts against grounding; an answer that is not JSON scores 0", () =>
    Effect.gen(function*() {
      const attempt = yield* run(env, answering(task, sources, [...gold, { name: "Crewplan" }]))
      expect(details(attempt)).toMatchObject({ recall: 1, grounding: n / (n + 1) })
      const prose = yield* run(env, Agent.scripted("prose", [], "ShiftHound, Crewplan and Tablewise Schedules."))
      expect(prose.verdict.reward).toBe(0)
    }))

  it.effect("a quote too short to ground anything grounds nothing", () =>
    Effect.gen(function*() {
      const short = gold.map((e, i) => (i === 0 ? { ...e, quote: "ShiftHound" } : e))
      const attempt = yield* run(env, answering(task, sources, short))
      expect(details(attempt).entries[0]).toMatchObject({ grounded: false, why: "quote-too-short" })
    }))
})

describe("competitor-discovery: relevance by a judge", () => {
  const task = taskOf("rosterly")
  const env: EnvironmentDef = { ...envOf("rosterly"), capabilities: { ...envOf("rosterly").capabilities, models: { judge: "openai:gpt-4o-mini" } } }
  const gold = goldEntries(task)
  const sources = gold.map((e) => e.source)
  const n = gold.length

  /** A judge that holds every entry a competitor except those named. */
  const judgeRejecting = (names: ReadonlyArray<string>, seen: Array<string>): JudgeCall => (request) =>
    Effect.sync((): ModelResponse => {
      const text = request.messages.map((m) => ("content" in m && typeof m.content === "string" ? m.content : "")).join("\n")
      seen.push(text)
      const entries = [...text.matchAll(/^(\d+)\. (.+?) \(/gm)].map((m) => ({ entry: Number(m[1]), name: m[2]! }))
      return {
        text: JSON.stringify({ results: entries.map((e) => ({ entry: e.entry, reasoning: "-", competitor: !names.includes(e.name) })) }),
        toolCalls: [],
        usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 },
        finishReason: "stop",
        model: "gpt-4o-mini"
      }
    })

  it.effect("with a judge that accepts every gold entry, gold scores 1, judged, at the judge's cost", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const attempt = yield* run(env, goldAgent(task), makeProvider({ judge: judgeRejecting([], seen) }).capabilities)
      expect(attempt.verdict.reward).toBe(1)
      expect(attempt.verdict.trust).toBe("judge")
      expect(attempt.verdict.notEvaluated).toEqual([])
      expect(attempt.verdict.checks["relevance"]).toBe(true)
      expect(attempt.judging).toMatchObject({ calls: 1, inputTokens: 100, outputTokens: 20 })
      // The judge is told the product, and each entry with its claim and quote.
      expect(seen[0]).toContain("Rosterly (https://rosterly.example/)")
      expect(seen[0]).toContain(gold[0]!.quote)
    }))

  it.effect("an entry the judge rejects loses exactly its share of relevance", () =>
    Effect.gen(function*() {
      const decoy = { name: "PunchClock Pro", site: "https://punchclock.example/", claim: "A time clock.", quote: "turns any tablet into a time clock with photo check-in", source: "https://punchclock.example/" }
      const attempt = yield* run(env, answering(task, [...sources, decoy.source], [...gold, decoy]), makeProvider({ judge: judgeRejecting(["PunchClock Pro"], []) }).capabilities)
      expect(details(attempt)).toMatchObject({ recall: 1, grounding: 1, relevance: n / (n + 1) })
      expect(1 - attempt.verdict.reward).toBeCloseTo(WEIGHTS.relevance / (n + 1), 12)
      expect(attempt.verdict.checks["relevance"]).toBe(false)
    }))
})

describe("competitor-discovery: the search budget", () => {
  it.effect("searches past the task's budget are refused as tool errors; the Attempt goes on to its answer", () =>
    Effect.gen(function*() {
      const task = taskOf("ledgerline")
      const searches = Array.from({ length: task.searches + 1 }, (_, i): AgentReply => ({ text: null, toolCalls: [{ id: `s${i}`, name: "search", arguments: { query: `bookkeeping ${i}` } }] }))
      const attempt = yield* run(envOf("ledgerline"), Agent.scripted("searcher", searches, "{\"competitors\": []}"))
      const tools = (attempt.output as { transcript: ReadonlyArray<{ role: string; content: string }> }).transcript.filter((m) => m.role === "tool")
      expect(tools.at(-1)!.content).toBe(`Error: search budget exhausted: ${task.searches} of ${task.searches} searches used`)
      expect(attempt.recording).toHaveLength(task.searches)
      expect((attempt.output as { result: { searches: number } }).result.searches).toBe(task.searches)
      expect(attempt.verdict.ended).toBeNull()
    }))
})
