/**
 * Agent CLIs as candidates from the command, as a user types it: the CLI's model calls reach the
 * model server through assay (recorded, capped, priced), the report lists the cells, and a replay
 * needs neither the CLI nor the server.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { costAt } from "../../src/model/Cost.ts"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import * as Registry from "../../src/model/Registry.ts"
import { assay, tempDir } from "../cli/support.ts"

const registry = Registry.make(await Effect.runPromise(Registry.fixture))

const serverEnv = (server: LoopbackServer.LoopbackServer): Record<string, string> => ({
  OPENAI_BASE_URL: server.openAiBaseUrl,
  OPENAI_API_KEY: "sk-test-not-a-key",
  ANTHROPIC_BASE_URL: server.anthropicBaseUrl,
  ANTHROPIC_API_KEY: "sk-ant-test-not-a-key",
  GOOGLE_BASE_URL: server.googleBaseUrl,
  GEMINI_API_KEY: "gm-test-not-a-key"
})

/** What the server's answers cost at the registry's list prices. */
const servedCost = (requests: ReadonlyArray<LoopbackServer.LoggedRequest>): number =>
  requests.reduce((sum, r) => {
    if (r.usage === null || r.status !== 200) return sum
    const body = r.body as { readonly model?: string } | null
    const model = r.path.includes("/models/") ? decodeURIComponent(r.path.split("/models/")[1]!.split(":")[0]!) : body?.model ?? ""
    const resolved = registry.resolve(model)
    const entry = Effect.runSync(Effect.either(resolved))
    if (entry._tag === "Left") throw new Error(`no price for ${model}`)
    const cost = costAt(entry.right.model.cost!, { inputTokens: r.usage.input, outputTokens: r.usage.output, cacheReadTokens: r.usage.cacheRead, cacheWriteTokens: r.usage.cacheWrite })
    return sum + cost
  }, 0)

describe("harness candidates from the command", { timeout: 600_000 }, () => {
  it("assay run --benchmark tau2-retail --candidate harness:claude --task 0: one cell through the proxy and MCP, listed by report --json --cells; replay needs no CLI and no server", async () => {
    const home = tempDir()
    const script = [
      { match: { system: "User Simulation Guidelines" }, text: "Hi, I want to return something.", usage: { input: 900, output: 12 } },
      { match: { system: "User Simulation Guidelines" }, text: "###STOP###", usage: { input: 950, output: 3 }, repeat: true },
      { text: "I can help with that. Could you give me your order id?", usage: { input: 4000, output: 14 }, repeat: true }
    ]
    const { requests, run } = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const server = yield* LoopbackServer.start(script)
      const run = yield* Effect.promise(() => assay(["run", "--benchmark", "tau2-retail", "--candidate", "harness:claude", "--task", "0", "--yes", "--home", home], serverEnv(server)))
      return { run, requests: server.requests() }
    })))
    expect(run.code, run.stderr).toBe(0)
    // The CLI's turn went to the server through assay's own client, as an Anthropic call.
    expect(requests.filter((r) => r.api === "anthropic-messages" && r.status === 200).length).toBeGreaterThan(0)
    // The user's key never reached the server from the CLI: assay's client sent it, the CLI had a placeholder.
    const report = await assay(["report", "--json", "--cells", "--home", home])
    expect(report.code, report.stderr).toBe(0)
    const doc = JSON.parse(report.stdout) as {
      cellResults: ReadonlyArray<{ task: string; candidate: string; reward: number; ended: unknown; cliUsage?: unknown }>
      spend: { runUsd: number }
      harnesses: Readonly<Record<string, string>>
      cliUsage?: unknown
    }
    // The report names the CLI's version it ran (run settings' `harnesses`).
    expect(doc.harnesses).toEqual({ claude: expect.stringMatching(/^\d+\.\d+\.\d+/) })
    expect(doc.cellResults).toEqual([expect.objectContaining({ task: "0", candidate: "harness:claude", reward: 0 })])
    expect(doc.spend.runUsd).toBeCloseTo(servedCost(requests), 9)
    // The CLI's own count of its calls beside assay's: both what the server answered the agent's turns.
    const agentTurns = requests.filter((r) => r.status === 200 && r.turn === 2).length
    const tokens = { inputTokens: 4000 * agentTurns, outputTokens: 14 * agentTurns, cacheReadTokens: 0, cacheWriteTokens: 0 }
    expect(agentTurns).toBeGreaterThan(0)
    expect(doc.cellResults[0]?.cliUsage).toEqual({ harness: "claude", assay: tokens, cli: tokens })
    expect(doc.cliUsage).toEqual([{ candidate: "harness:claude", cells: 1, differ: 0, unreported: 0, assay: tokens, cli: tokens }])
    const text = await assay(["report", "--home", home])
    expect(text.stdout).toMatch(new RegExp(`harness:claude\\s+1\\s+${(4000 * agentTurns).toLocaleString("en-US")}\\s+${14 * agentTurns}\\s+0\\s+0\\s+0\\s+0`))

    // Offline: no server (the scope closed it), no CLI to be found.
    const replay = await assay(["replay", "--json", "--home", home], { ASSAY_HARNESS_BIN_DIRS: "", PATH: "/usr/bin:/bin" })
    expect(replay.code, replay.stderr).toBe(0)
    expect(JSON.parse(replay.stdout)).toMatchObject({ replayed: 1, same: 1, differ: [], missing: [], notReplayable: [], spendUsd: 0 })
  })

  it("four harness candidates at --parallel 8 under --max-usd: what the server answered costs no more than the cap and is the report's spend; the cells past the cap are skipped with the reason", async () => {
    const home = tempDir()
    const cap = 0.8
    // The user opens, and says ###STOP### once the agent has answered; the agent answers in words.
    const script = [
      { match: { system: "User Simulation Guidelines", lastUser: "Hello, how can I help" }, text: "###STOP###", usage: { input: 1000, output: 5 }, repeat: true },
      { match: { system: "User Simulation Guidelines" }, text: "Hi, I want to return something.", usage: { input: 1000, output: 20 }, repeat: true },
      { text: "Hello, how can I help?", usage: { input: 20_000, output: 100 }, repeat: true }
    ]
    const { requests, run } = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const server = yield* LoopbackServer.start(script)
      const run = yield* Effect.promise(() =>
        assay([
          "run", "--benchmark", "tau2-retail",
          "--candidate", "harness:claude", "--candidate", "harness:codex", "--candidate", "harness:gemini", "--candidate", "harness:qwen",
          "--task", "0", "--task", "1", "--task", "2", "--task", "3", "--task", "4", "--task", "5",
          "--parallel", "8", "--max-usd", String(cap), "--yes", "--json", "--home", home
        ], serverEnv(server))
      )
      return { run, requests: server.requests() }
    })))
    expect([0, 3]).toContain(run.code)
    const doc = JSON.parse(run.stdout) as { cells: { ran: number; skipped: number }; skipped: ReadonlyArray<{ reason: string }>; spend: { runUsd: number } }
    const served = servedCost(requests)
    expect(served).toBeLessThanOrEqual(cap)
    expect(doc.spend.runUsd).toBeCloseTo(served, 9)
    expect(doc.cells.ran, JSON.stringify({ cells: doc.cells, skipped: doc.skipped.slice(0, 3), spend: doc.spend })).toBeGreaterThan(0)
    expect(doc.cells.skipped).toBeGreaterThan(0)
    for (const s of doc.skipped) expect(s.reason).toMatch(/spend cap/)
  })
})
