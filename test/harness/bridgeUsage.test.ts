/**
 * A harness cell's tokens are assay's own count (the answers its proxy passed on); the agent CLI's
 * own report of them is kept beside it as a cross-check. Run for real (the pinned CLIs in
 * tools/harnesses) against the loopback model server, through the live Model layer.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { loadBenchmark } from "../../src/cli/benchmarks.ts"
import { evaluate } from "../../src/evaluation/evaluate.ts"
import { bridgedCandidate } from "../../src/harness/bridge/Candidate.ts"
import type { HarnessName } from "../../src/harness/Harness.ts"
import * as Live from "../../src/model/Live.ts"
import * as Registry from "../../src/model/Registry.ts"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { clis, toolsBin, USER_PROMPT } from "./bridgeSupport.ts"

const provider = await Effect.runPromise(loadBenchmark("tau2-retail"))
const env = (await Effect.runPromise(provider.environments)).find((e) => e.task === "0")!

// The user opens and stops once the agent has answered; the agent looks the user up (a tool call
// over MCP), then answers in words. Turns 2 and 3 are the agent's: the CLI's model calls.
const script: ReadonlyArray<LoopbackServer.ScriptTurn> = [
  { match: { system: USER_PROMPT }, text: "Hi, I am Yusuf Rossi, zip 19122. I want to exchange an item.", usage: { input: 900, output: 12 } },
  { match: { system: USER_PROMPT }, text: "###STOP###", usage: { input: 950, output: 3 }, repeat: true },
  {
    toolCalls: [{ name: "find_user_id_by_name_zip", arguments: { first_name: "Yusuf", last_name: "Rossi", zip: "19122" } }],
    usage: { input: 4000, output: 21, cacheRead: 1200, cacheWrite: 300 }
  },
  { text: "I found your account, yusuf_rossi_9620.", usage: { input: 4300, output: 17, cacheRead: 1500 }, repeat: true }
]
const AGENT_TURNS = [2, 3]

const cellOf = (harness: HarnessName) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* LoopbackServer.start(script)
    const candidate = yield* bridgedCandidate(harness, null, { binDirs: [toolsBin] })
    const attempt = yield* evaluate(env, {
      capabilities: provider.capabilities,
      agentDef: candidate.def,
      agent: yield* candidate.agentFor(env),
      repetition: 0,
      registryEntry: candidate.registryEntry,
      timeoutSeconds: 240
    }).pipe(
      Effect.provide(Live.layerNode),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map([
        ["OPENAI_BASE_URL", server.openAiBaseUrl],
        ["OPENAI_API_KEY", "sk-test-loopback"],
        ["ANTHROPIC_BASE_URL", server.anthropicBaseUrl],
        ["ANTHROPIC_API_KEY", "sk-ant-test-loopback"],
        ["GOOGLE_BASE_URL", server.googleBaseUrl],
        ["GEMINI_API_KEY", "gm-test-loopback"]
      ])))
    )
    const served = server.requests().filter((r) => r.status === 200 && r.usage !== null && AGENT_TURNS.includes(r.turn ?? -1))
    // As the wire carries it: OpenAI's APIs have no cache writes, they are input there.
    const sum = (pick: (u: NonNullable<LoopbackServer.LoggedRequest["usage"]>, writes: boolean) => number) =>
      served.reduce((n, r) => n + pick(r.usage!, r.api === "anthropic-messages"), 0)
    return {
      harness,
      attempt,
      calls: served.length,
      served: {
        inputTokens: sum((u, writes) => u.input + (writes ? 0 : u.cacheWrite)),
        outputTokens: sum((u) => u.output),
        cacheReadTokens: sum((u) => u.cacheRead),
        cacheWriteTokens: sum((u, writes) => (writes ? u.cacheWrite : 0))
      }
    }
  })).pipe(Effect.provide(Registry.layer))

describe("an agent CLI's own usage beside assay's", { timeout: 600_000 }, () => {
  it("claude, codex, gemini, qwen and opencode report the tokens the model server answered, as assay counted them", async () => {
    const cells = await Effect.runPromise(Effect.forEach(clis, cellOf, { concurrency: 2 }))
    for (const c of cells) {
      // The CLI made both of the agent's calls (a tool call over MCP, then words).
      expect({ harness: c.harness, calls: c.calls, ended: c.attempt.verdict.ended }).toEqual({ harness: c.harness, calls: 2, ended: null })
      expect(c.attempt.cliUsage).toEqual({ harness: c.harness, assay: c.served, cli: c.served })
    }
  })
})
