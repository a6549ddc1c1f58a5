/**
 * An agent CLI inside the task's container (providers/harbor/agent.ts): the real Claude Code
 * (tools/harnesses), bound into the Attempt's container from the host, reaches assay's model
 * proxy through the relayed loopback while the container keeps no network of its own. A scripted
 * model behind the proxy has it fix the failing test with its own Bash tool, which runs in the
 * container; the task's verifier grades what it did.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Provider } from "../../src/evaluation/Provider.ts"
import * as Model from "../../src/model/Model.ts"
import type { Attempt } from "../../src/schema/Attempt.ts"
import * as harbor from "../../providers/harbor/index.ts"
import { idleModel, runBridged, toolsBin } from "../harness/bridgeSupport.ts"
import { containersOf, fixtures, images, unable } from "./podman.ts"

const provider: Provider = harbor.make({ dir: fixtures, engine: "podman", images })
const envOf = (task: string) => Effect.map(provider.environments, (es) => es.find((e) => e.task === task)!)

const claude = path.join(toolsBin, "claude")
const notHere = unable ?? (fs.existsSync(claude) ? null : `no Claude Code in ${toolsBin} (tools/harnesses/ensure.mjs installs it)`)
  ?? (process.getuid?.() !== 0 ? "not root: the relay into the container's network namespace needs root" : null)

const solve = fs.readFileSync(path.join(fixtures, "fix-failing-test/solution/solve.sh"), "utf8")

/** The model behind the proxy: one call of Claude Code's own Bash tool with the solution, then words. */
const fixingModel = (): Model.Model => {
  let calls = 0
  return Model.scripted((request) => {
    // A side request of the CLI's own (a title, a summary) is answered in words and not counted.
    if (!request.tools.some((t) => t.name === "Bash")) return { text: "ok" }
    calls++
    return calls === 1
      ? { toolCalls: [{ id: "toolu_fix", name: "Bash", arguments: { command: solve, description: "Fix the median and run the tests" } }] }
      : { text: "Fixed: median now averages the middle pair." }
  })
}

const agentCalls = (a: Attempt) => a.recording.filter((r) => r.kind === "model/generate" && r.key === "agent")

describe.skipIf(notHere !== null)(`harness:claude inside the task's container${notHere !== null ? ` (skipped: ${notHere})` : ""}`, () => {
  it("its model calls reach the proxy as recorded effects, its own Bash runs in the container, the verifier grades 1; the replay needs neither CLI nor container", async () => {
    const env = await Effect.runPromise(envOf("fix-failing-test"))
    const live = await Effect.runPromise(runBridged(provider, env, "claude", fixingModel()))
    expect(live.verdict.ended, JSON.stringify(live.verdict)).toBeNull()
    expect(live.verdict.reward).toBe(1)
    // Both of the CLI's turns went through the Attempt's stack: the tool call, then its words.
    expect(agentCalls(live).length).toBeGreaterThanOrEqual(2)
    const verifier = live.recording.find((r) => r.kind === "process/spawn" && r.key === "verifier")
    expect(verifier).toBeDefined()
    // The CLI's own account of its calls, read from its session files in the bound state folder.
    expect(live.cliUsage?.cli).not.toBeNull()
    expect(containersOf(process.pid)).toBe("")

    const replayed = await Effect.runPromise(runBridged(provider, env, "claude", Model.scripted(() => ({ text: "unused" })), live.recording))
    expect(replayed.verdict.reward).toBe(1)
    expect(agentCalls(replayed).length).toBe(agentCalls(live).length)
    expect(containersOf(process.pid)).toBe("")
  }, 300_000)

  it("a model that does nothing: the CLI answers in words, the verifier grades 0", async () => {
    const env = await Effect.runPromise(envOf("fix-failing-test"))
    const idle = await Effect.runPromise(runBridged(provider, env, "claude", idleModel))
    expect(idle.verdict.ended, JSON.stringify(idle.verdict)).toBeNull()
    expect(idle.verdict.reward).toBe(0)
    expect(agentCalls(idle).length).toBeGreaterThanOrEqual(1)
    expect(containersOf(process.pid)).toBe("")
  }, 300_000)
})
