import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import {
  type Candidate,
  defaultJudge,
  discoverCandidates,
  parseHarnessModel,
  type RegistryModel,
  registryModels,
  runCostUsd
} from "../../src/harness/Candidates.ts"
import type { Detection, HarnessName } from "../../src/harness/Harness.ts"
import { fixture } from "../../src/model/Registry.ts"

const live = (harness: HarnessName): Detection => ({ harness, binary: `/bin/${harness}`, version: "1", liveness: { status: "live", reason: "" } })
const absent = (harness: HarnessName): Detection => ({ harness, binary: undefined, version: undefined, liveness: { status: "absent", reason: "no binary" } })

const registry: ReadonlyArray<RegistryModel> = [
  { provider: "openai", id: "gpt-5", family: "gpt-5", retired: false, cost: { input: 1.25, output: 10 } },
  { provider: "openai", id: "gpt-5-mini", family: "gpt-5-mini", retired: false, cost: { input: 0.25, output: 2 } },
  { provider: "openai", id: "gpt-4.5", family: "gpt-4.5", retired: true, cost: { input: 75, output: 150 } },
  { provider: "anthropic", id: "claude-sonnet-4-5", family: "claude-sonnet", retired: false, cost: { input: 3, output: 15 } },
  { provider: "ollama", id: "llama3.1:8b", family: "llama", retired: false, cost: undefined }
]

describe("candidate discovery", () => {
  it("each live harness gets its vendor's current models; absent ones none; multi-vendor ones a default", () => {
    const c = discoverCandidates([live("codex"), absent("claude"), live("pi")], registry)
    expect(c.map((x) => x.label)).toEqual(["codex:gpt-5", "codex:gpt-5-mini", "pi:default"])
    expect(c[2]).toMatchObject({ model: undefined, cost: undefined })
  })

  it("--family narrows registry models and --model picks exact pairs, any id the harness accepts", () => {
    expect(discoverCandidates([live("codex"), live("claude")], registry, { families: ["GPT-5-mini"] }).map((x) => x.label)).toEqual([
      "codex:gpt-5-mini"
    ])
    const picked = discoverCandidates([live("codex"), live("pi"), live("claude")], registry, {
      models: [
        { harness: "codex", model: "gpt-5" },
        { harness: "pi", model: "local/my-model" }
      ]
    })
    expect(picked.map((x) => x.label)).toEqual(["codex:gpt-5", "pi:local/my-model"])
    expect(picked[0]?.cost).toEqual({ input: 1.25, output: 10 })
    expect(picked[1]?.cost).toBeUndefined()
  })

  it("HARNESS:MODEL parses with ':' inside the model and rejects unknown harnesses", () => {
    expect(parseHarnessModel("qwen:qwen2.5-coder:7b")).toEqual(Either.right({ harness: "qwen", model: "qwen2.5-coder:7b" }))
    expect(Either.isLeft(parseHarnessModel("codex"))).toBe(true)
    const bad = parseHarnessModel("cursor:gpt-5")
    expect(Either.isLeft(bad) && bad.left.reason).toBe("unknown-harness")
  })

  it("the shipped registry snapshot feeds discovery, skipping its retired models", () => {
    const models = registryModels(Effect.runSync(fixture))
    const c = discoverCandidates([live("codex"), live("gemini")], models)
    expect(c.length).toBeGreaterThan(3)
    expect(c.every((x) => x.harness === "codex" ? x.provider === "openai" : x.provider === "google")).toBe(true)
    const retired = models.filter((m) => m.retired).map((m) => m.id)
    expect(retired.length).toBeGreaterThan(0)
    expect(c.some((x) => x.model !== undefined && retired.includes(x.model))).toBe(false)
  })

  it("the default judge is the candidate with the highest known output price, ties by harness name", () => {
    const cand = (harness: HarnessName, model: string, output: number | undefined): Candidate => ({
      harness,
      model,
      provider: "p",
      cost: output === undefined ? undefined : { input: 1, output },
      label: `${harness}:${model}`
    })
    expect(defaultJudge([cand("pi", "a", 15), cand("codex", "b", 15), cand("qwen", "c", undefined), cand("opencode", "d", 3)])?.label).toBe("codex:b")
    expect(defaultJudge([cand("pi", "a", undefined)])).toBeUndefined()
  })

  it("a run's cost is unknown, never 0, without a price or without token counts", () => {
    const calls = [{ model: "m", input: 1_000_000, output: 100_000, cacheRead: 1_000_000, cacheWrite: undefined, reasoning: undefined }]
    expect(runCostUsd(calls, { input: 1, output: 10, cache_read: 0.1 })).toBeCloseTo(1 + 1 + 0.1)
    expect(runCostUsd(calls, undefined)).toBeUndefined()
    expect(runCostUsd([], { input: 1, output: 10 })).toBeUndefined()
    expect(runCostUsd(undefined, { input: 1, output: 10 })).toBeUndefined()
  })
})
