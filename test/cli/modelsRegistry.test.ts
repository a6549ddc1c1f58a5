/**
 * Every model provider with its price: `assay models` shows the registry and its date; `assay
 * models refresh --from FILE` remakes it from a models.dev-shaped catalogue (a small synthetic one
 * here: this machine has no network), after which a provider the snapshot never named runs as
 * PROVIDER:MODEL at its listed price. A price change keeps a candidate's inputs id (its cells stay
 * kept); a limit change makes them stale.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { tasks } from "../../providers/ledger/tasks.ts"
import { loadBenchmark } from "../../src/cli/benchmarks.ts"
import { resolveCandidate } from "../../src/cli/candidates.ts"
import { inputsIdOf } from "../../src/evaluation/evaluate.ts"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import * as Registry from "../../src/model/Registry.ts"
import { assay, tempDir } from "./support.ts"

const model = (over: Record<string, unknown> = {}) => ({
  name: "A model",
  family: "synthetic",
  attachment: false,
  reasoning: false,
  tool_call: true,
  temperature: true,
  release_date: "2026-01-15",
  last_updated: "2026-01-15",
  modalities: { input: ["text"], output: ["text"] },
  open_weights: true,
  cost: { input: 2, output: 6, cache_read: 0.5 },
  limit: { context: 64000, output: 4096 },
  a_field_models_dev_may_add: { anything: true },
  ...over
})

/** A models.dev-shaped catalogue: synthetic providers and prices, and entries that cannot be read. */
const catalogue = (acmeLarge: Record<string, unknown> = {}) => ({
  acme: {
    id: "acme",
    name: "Acme Inference",
    env: ["ACME_API_KEY"],
    npm: "@ai-sdk/openai-compatible",
    api: "https://api.acme.invalid/v1",
    doc: "https://acme.invalid/models",
    models: {
      "acme-large": model({ id: "acme-large", name: "Acme Large", ...acmeLarge }),
      "acme-free": model({ id: "acme-free", name: "Acme Free", cost: undefined }),
      "acme-broken": { id: "acme-broken", name: "Broken", limit: { context: "a lot" } }
    }
  },
  groq: {
    id: "groq",
    name: "Groq",
    env: ["GROQ_API_KEY"],
    npm: "@ai-sdk/groq",
    doc: "https://groq.invalid",
    models: { "llama-9": model({ id: "llama-9", tool_call: { supported: true, parallel: true }, cost: { input: 0.1, output: 0.3 } }) }
  },
  openai: {
    id: "openai",
    name: "OpenAI",
    env: ["OPENAI_API_KEY"],
    npm: "@ai-sdk/openai",
    doc: "https://openai.invalid",
    models: {
      "gpt-4o-mini": model({ id: "gpt-4o-mini", cost: { input: 99, output: 99 } }),
      "gpt-9": model({ id: "gpt-9", cost: { input: 3, output: 12 } })
    }
  },
  bedrock: { id: "bedrock", name: "Amazon Bedrock", env: ["AWS_ACCESS_KEY_ID"], npm: "@ai-sdk/amazon-bedrock", doc: "https://aws.invalid", models: {} },
  "no-shape": { id: "no-shape", name: 42 }
})

const shipped = Effect.runSync(Registry.fixture)

const refreshed = (json: unknown) =>
  Registry.fromCatalogue(json, { base: shipped, source: "catalogue.json", sha256: "0".repeat(64), date: "2026-12-06" })

describe("a models.dev catalogue over the shipped snapshot", () => {
  it.effect("adds every provider assay can reach with its wire API, base URL, key variable and prices; names what it leaves out", () =>
    Effect.gen(function*() {
      const { file, skipped, pinned } = yield* refreshed(catalogue())
      expect(file.snapshot_date).toBe("2026-12-06")
      expect(file.catalogue_sha256).toBe("0".repeat(64))
      expect(file.providers["acme"]).toMatchObject({ api: "openai-chat", base_url: "https://api.acme.invalid/v1", env: ["ACME_API_KEY"] })
      expect(file.providers["acme"]?.models["acme-large"]).toEqual({
        id: "acme-large",
        name: "Acme Large",
        family: "synthetic",
        release_date: "2026-01-15",
        tool_call: true,
        reasoning: false,
        limit: { context: 64000, output: 4096 },
        cost: { input: 2, output: 6, cache_read: 0.5 }
      })
      expect(file.providers["acme"]?.models["acme-free"]?.cost).toBeUndefined()
      // Groq's package has no `api` in the catalogue: its base URL is the package's.
      expect(file.providers["groq"]).toMatchObject({ api: "openai-chat", base_url: "https://api.groq.com/openai/v1", env: ["GROQ_API_KEY"] })
      expect(file.providers["groq"]?.models["llama-9"]?.tool_call).toBe(true)
      // The snapshot's providers keep how they are reached and their pinned models, and gain new ones.
      expect(file.providers["openai"]?.api).toBe("openai-responses")
      expect(file.providers["openai"]?.models["gpt-4o-mini-2024-07-18"]).toEqual(shipped.providers["openai"]?.models["gpt-4o-mini-2024-07-18"])
      expect(file.providers["openai"]?.models["gpt-9"]?.cost).toEqual({ input: 3, output: 12 })
      expect(file.providers["ollama"]).toEqual(shipped.providers["ollama"])
      // gpt-4o-mini is an alias of a pinned model: it keeps naming it, at the snapshot's price.
      expect(pinned).toEqual(["openai:gpt-4o-mini"])
      expect(Either.getOrThrow(Registry.resolveIn(file, "openai:gpt-4o-mini")).ref).toBe("openai:gpt-4o-mini-2024-07-18")
      expect(skipped.map((s) => s.name).sort()).toEqual(["acme:acme-broken", "bedrock", "no-shape"])
      expect(skipped.find((s) => s.name === "bedrock")?.reason).toContain("@ai-sdk/amazon-bedrock")
      expect(Either.getOrThrow(Registry.resolveIn(file, "acme:acme-large"))).toMatchObject({ ref: "acme:acme-large", provider: "acme", api: "openai-chat" })
    }))

  it.effect("keeps a model's dearer rates for long prompts: models.dev's `tiers`, or `context_over_200k` as one tier", () =>
    Effect.gen(function*() {
      const over = { input: 4, output: 9, cache_read: 1 }
      const tiers = [{ tier: { type: "context", size: 128000 }, input: 3, output: 8 }, { tier: { type: "context", size: 200000 }, ...over }]
      const withTiers = yield* refreshed(catalogue({ cost: { input: 2, output: 6, cache_read: 0.5, tiers } }))
      expect(withTiers.file.providers["acme"]?.models["acme-large"]?.cost).toEqual({ input: 2, output: 6, cache_read: 0.5, tiers })
      const withOld = yield* refreshed(catalogue({ cost: { input: 2, output: 6, cache_read: 0.5, context_over_200k: over } }))
      expect(withOld.file.providers["acme"]?.models["acme-large"]?.cost).toEqual({
        input: 2,
        output: 6,
        cache_read: 0.5,
        tiers: [{ tier: { type: "context", size: 200000 }, ...over }]
      })
      // A tier of a kind assay cannot price (not by prompt size) leaves the model out, never under-priced.
      const other = yield* refreshed(catalogue({ cost: { input: 2, output: 6, tiers: [{ tier: { type: "time-of-day", size: 0 }, input: 1, output: 1 }] } }))
      expect(other.file.providers["acme"]?.models["acme-large"]).toBeUndefined()
      expect(other.skipped.map((s) => s.name)).toContain("acme:acme-large")
    }))

  it.effect("refuses a catalogue it cannot read (nothing to write)", () =>
    Effect.gen(function*() {
      const notObject = yield* Effect.flip(refreshed([1, 2]))
      expect(notObject.reason).toBe("invalid")
      const noneRead = yield* Effect.flip(refreshed({ a: { name: 1 }, b: { models: [] } }))
      expect(noneRead.message).toMatch(/none of its 2 providers could be read/)
      const mostlyBroken = yield* Effect.flip(refreshed({ ...catalogue(), x: 1, y: 2, z: 3, w: 4 }))
      expect(mostlyBroken.message).toMatch(/only 4 of its 9 providers could be read/)
    }))
})

describe("a candidate's inputs id and its model's registry entry", () => {
  it.effect("a price change leaves the inputs id as it was; a limit change changes it", () =>
    Effect.gen(function*() {
      const ledger = yield* loadBenchmark("ledger")
      const idUnder = (json: unknown) =>
        Effect.gen(function*() {
          const { file } = yield* refreshed(json)
          const candidate = yield* resolveCandidate(ledger, "acme:acme-large").pipe(Effect.provide(Layer.succeed(Registry.Registry, Registry.make(file))))
          return inputsIdOf({ system: "You keep the ledger.", tools: [] }, candidate.def, candidate.registryEntry)
        })
      const base = yield* idUnder(catalogue())
      expect(yield* idUnder(catalogue({ cost: { input: 20, output: 60, cache_read: 5 } }))).toBe(base)
      expect(yield* idUnder(catalogue({ limit: { context: 64000, output: 2048 } }))).not.toBe(base)
      expect(yield* idUnder(catalogue({ limit: { context: 32000, output: 4096 } }))).not.toBe(base)
      // Whether there is a price at all is presented: a priced model's request bounds its output.
      expect(yield* idUnder(catalogue({ cost: undefined }))).not.toBe(base)
    }))
})

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
const task = tasks[0]!
const goldScript = [
  ...task.gold.map((action) => ({ match: { lastUser: `^${escape(task.instruction)}$` }, toolCalls: [{ name: action.name, arguments: action.arguments }], usage: { input: 300, output: 20 } })),
  { match: { lastUser: `^${escape(task.instruction)}$` }, text: task.answer ?? "Done.", usage: { input: 400, output: 10 } }
]

describe("assay models and models refresh, as a user runs them", { timeout: 300_000 }, () => {
  it.live("refresh --from adds a provider whose model then runs against a server at its listed price; a price change keeps the cell, a limit change runs it again", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const home = join(dir, "home")
      const at = join(dir, "config", "models.json")
      const source = join(dir, "api.json")
      const server = yield* LoopbackServer.start([...goldScript, ...goldScript]) // the two runs that run the cell
      const env = { ASSAY_REGISTRY: at, ACME_BASE_URL: server.openAiBaseUrl, ACME_API_KEY: "acme-key-SECRET42" }
      const cli = (args: ReadonlyArray<string>) => Effect.promise(() => assay(args, env))
      const refreshFrom = (json: unknown) =>
        Effect.gen(function*() {
          writeFileSync(source, JSON.stringify(json))
          const r = yield* cli(["models", "refresh", "--from", source])
          expect(r.code, r.stderr).toBe(0)
          return r
        })

      const before = yield* cli(["models"])
      expect(before.stdout).toMatch(/^model registry: the shipped snapshot of \d{4}-\d{2}-\d{2}/)
      const unknown = yield* cli(["plan", "--benchmark", "ledger", "--model", "acme:acme-large", "--home", home])
      expect(unknown.code).toBe(2)

      const first = yield* refreshFrom(catalogue())
      expect(first.stdout).toContain(`wrote ${at}, dated `)
      expect(first.stdout).toMatch(/left out 2 providers:\n {4}bedrock: no client for @ai-sdk\/amazon-bedrock/)
      expect(first.stdout).toContain("acme:acme-broken")
      const written = JSON.parse(readFileSync(at, "utf8"))
      expect(written.catalogue_sha256).toMatch(/^[0-9a-f]{64}$/)

      const shown = yield* cli(["models", "--provider", "acme", "--json"])
      expect(shown.code, shown.stderr).toBe(0)
      const doc = JSON.parse(shown.stdout)
      expect(doc.registry).toMatchObject({ path: at, shipped: false, catalogueSha256: written.catalogue_sha256 })
      expect(doc.registry.date).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      expect(doc.providers).toHaveLength(1)
      expect(doc.providers[0]).toMatchObject({ id: "acme", api: "openai-chat", keyEnv: ["ACME_API_KEY"], baseUrl: "https://api.acme.invalid/v1", baseUrlEnv: ["ACME_BASE_URL"] })
      const text = yield* cli(["models", "--provider", "acme"])
      expect(text.stdout).toMatch(/acme-large +2 +6 +0\.5 +- +64000 +4096 +yes/)

      const plan = yield* cli(["plan", "--benchmark", "ledger", "--model", "acme:acme-large", "--task", task.id, "--home", home])
      expect(plan.code, plan.stderr).toBe(0)
      expect(plan.stdout).toMatch(new RegExp(`model registry: ${doc.registry.date} \\(catalogue sha256 [0-9a-f]{12}…\\), ${escape(at)}`))

      const run = ["run", "--benchmark", "ledger", "--model", "acme:acme-large", "--task", task.id, "--home", home, "--yes", "--json"]
      const ran = yield* cli(run)
      expect(ran.code, ran.stderr).toBe(0)
      const report = JSON.parse(ran.stdout)
      expect(report.cells).toMatchObject({ ran: 1 })
      const card = report.scorecards.find((s: { candidate: string; stratum: string | null }) => s.candidate === "acme:acme-large" && s.stratum === null)
      expect(card.meanReward).toBe(1)
      const posted = server.requests().filter((r) => r.method === "POST" && r.usage !== null)
      const input = posted.reduce((sum, r) => sum + r.usage!.input, 0)
      const output = posted.reduce((sum, r) => sum + r.usage!.output, 0)
      expect(posted.length).toBeGreaterThan(0)
      expect(card.costUsd).toBeCloseTo((input * 2 + output * 6) / 1e6, 12)

      yield* refreshFrom(catalogue({ cost: { input: 4, output: 12 } }))
      const repriced = yield* cli(run)
      expect(JSON.parse(repriced.stdout).cells, repriced.stderr).toMatchObject({ ran: 0, kept: 1 })

      yield* refreshFrom(catalogue({ limit: { context: 64000, output: 1024 } }))
      const limited = yield* cli(run)
      expect(JSON.parse(limited.stdout).cells, limited.stderr).toMatchObject({ ran: 1, stale: 1 })

      for (const r of [first, shown, plan, ran, repriced, limited]) expect(r.stdout + r.stderr).not.toContain("SECRET42")
      expect(readFileSync(at, "utf8")).not.toContain("SECRET42")
    }).pipe(Effect.scoped))

  it("a refreshed registry that cannot be read stops every command with one line naming it", async () => {
    const at = join(tempDir(), "models.json")
    writeFileSync(at, "{ not json")
    const r = await assay(["models"], { ASSAY_REGISTRY: at })
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split("\n")).toHaveLength(1)
    expect(r.stderr).toContain(`registry ${at} is invalid`)
    expect(r.stderr).toContain("ASSAY_REGISTRY=shipped")
  })

  it("usage: refresh takes no --provider, --from goes with refresh, an unknown provider names the near ones", async () => {
    const [a, b, c] = await Promise.all([
      assay(["models", "refresh", "--provider", "acme"]),
      assay(["models", "--from", "x.json"]),
      assay(["models", "--provider", "openai-cha"])
    ])
    expect([a.code, b.code, c.code]).toEqual([2, 2, 2])
    expect(c.stderr).toMatch(/did you mean .*openai-chat/)
  })
})
