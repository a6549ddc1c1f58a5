/**
 * Agent CLIs inside the task's container (providers/harbor/agent.ts): the real Claude Code, codex
 * and opencode (tools/harnesses), bound into the Attempt's container from the host, reach assay's
 * model proxy through the relayed loopback, not through any network of the container's. A scripted
 * model behind the proxy has each fix the failing test with its own shell tool, which runs in the
 * container; the task's verifier grades what it did. gemini and qwen, Node programs, run there on
 * the host's Node, bound into the container (the test image has no Node of its own), within the
 * task's memory; on the image's own node where the host's cannot run; and where neither runs, the cell says so.
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
import { tempDir } from "../support/tempDirs.ts"
import { containersOf, fixtures, images, unable } from "./podman.ts"

const provider: Provider = harbor.make({ dir: fixtures, engine: "podman", images })
const envOf = (task: string) => Effect.map(provider.environments, (es) => es.find((e) => e.task === task)!)

const notHere = unable ?? (fs.existsSync(path.join(toolsBin, "claude")) ? null : `no agent CLIs in ${toolsBin} (tools/harnesses/ensure.mjs installs them)`)
  ?? (process.getuid?.() !== 0 ? "not root: the relay into the container's network namespace needs root" : null)

const solve = fs.readFileSync(path.join(fixtures, "fix-failing-test/solution/solve.sh"), "utf8")

/** Each CLI's own shell tool, and its arguments for a command. */
const shells = {
  claude: { tool: "Bash", args: (command: string) => ({ command, description: "Fix the median and run the tests" }) },
  codex: { tool: "exec_command", args: (cmd: string) => ({ cmd }) },
  opencode: { tool: "bash", args: (command: string) => ({ command, description: "Fix the median and run the tests" }) },
  gemini: { tool: "run_shell_command", args: (command: string) => ({ command }) },
  qwen: { tool: "run_shell_command", args: (command: string) => ({ command, description: "Fix the median and run the tests" }) }
} as const

/** The model behind the proxy: one call of the CLI's own shell tool with the solution, then words. */
const fixingModel = (harness: keyof typeof shells): Model.Model => {
  let calls = 0
  const shell = shells[harness]
  return Model.scripted((request) => {
    // A side request of the CLI's own (a title, a summary) is answered in words and not counted.
    if (!request.tools.some((t) => t.name === shell.tool)) return { text: "ok" }
    calls++
    return calls === 1
      ? { toolCalls: [{ id: "call_fix", name: shell.tool, arguments: shell.args(solve) }] }
      : { text: "Fixed: median now averages the middle pair." }
  })
}

/** fix-failing-test copied as task `name` with its task.toml (and Dockerfile) edited: a provider of that one task, and its environment. */
const taskCopy = async (name: string, edit: (toml: string) => string, editDockerfile: (text: string) => string = (text) => text) => {
  const dir = tempDir("assay-harbor-task-")
  fs.cpSync(path.join(fixtures, "fix-failing-test"), path.join(dir, name), { recursive: true })
  const toml = path.join(dir, name, "task.toml")
  fs.writeFileSync(toml, edit(fs.readFileSync(toml, "utf8")))
  const dockerfile = path.join(dir, name, "environment", "Dockerfile")
  fs.writeFileSync(dockerfile, editDockerfile(fs.readFileSync(dockerfile, "utf8")))
  const copy = harbor.make({ dir, engine: "podman", images })
  return { provider: copy, env: (await Effect.runPromise(copy.environments))[0]! }
}

const agentCalls = (a: Attempt) => a.recording.filter((r) => r.kind === "model/generate" && r.key === "agent")

/** The CLI fixed the task: the Attempt ran to its grade, the verifier gave 1, the CLI called the model at least twice (its tool call, then its words), and no container is left. */
const expectFixed = (live: Attempt): void => {
  expect(live.verdict.ended, JSON.stringify(live.verdict)).toBeNull()
  expect(live.verdict.reward).toBe(1)
  expect(agentCalls(live).length).toBeGreaterThanOrEqual(2)
  expect(containersOf(process.pid)).toBe("")
}

describe.skipIf(notHere !== null)(`agent CLIs inside the task's container${notHere !== null ? ` (skipped: ${notHere})` : ""}`, () => {
  it("claude: its model calls reach the proxy as recorded effects, its own Bash runs in the container, the verifier grades 1; the replay needs neither CLI nor container", async () => {
    const env = await Effect.runPromise(envOf("fix-failing-test"))
    const live = await Effect.runPromise(runBridged(provider, env, "claude", fixingModel("claude")))
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

  it("in a task without internet (allow_internet = false): the container has no network, yet the CLI's calls reach the proxy through the relay", async () => {
    const { provider: offline, env } = await taskCopy("offline", (toml) => toml.replace("[environment]", "[environment]\nallow_internet = false"))
    // The model also has the CLI look at the container's network: only its loopback is there.
    let calls = 0
    const model = Model.scripted((request) => {
      if (!request.tools.some((t) => t.name === "Bash")) return { text: "ok" }
      calls++
      return calls === 1
        ? { toolCalls: [{ id: "call_net", name: "Bash", arguments: { command: `ls /sys/class/net; ${solve}`, description: "Look, then fix" } }] }
        : { text: "Fixed." }
    })
    const live = await Effect.runPromise(runBridged(offline, env, "claude", model))
    expect(live.verdict.ended, JSON.stringify(live.verdict)).toBeNull()
    expect(live.verdict.reward).toBe(1)
    // The tool result the CLI sent back in its next request: the interfaces the container has.
    const second = agentCalls(live)[1]!.request as { readonly messages: ReadonlyArray<{ readonly role: string; readonly content?: unknown }> }
    const results = JSON.stringify(second.messages.filter((m) => m.role === "tool"))
    expect(results).toMatch(/\blo\b/)
    expect(results).not.toMatch(/eth0|tap0/)
    expect(containersOf(process.pid)).toBe("")
  }, 300_000)

  it.each(["codex", "opencode"] as const)("%s: its native program runs in the container (no Node there), its own shell fixes the task, the verifier grades 1", async (harness) => {
    const env = await Effect.runPromise(envOf("fix-failing-test"))
    const live = await Effect.runPromise(runBridged(provider, env, harness, fixingModel(harness)))
    expectFixed(live)
  }, 300_000)

  it("gemini, a Node program, in an image without Node: it runs on the host's Node bound into the container, its own shell fixes the task, the verifier grades 1", async () => {
    const env = await Effect.runPromise(envOf("fix-failing-test"))
    const live = await Effect.runPromise(runBridged(provider, env, "gemini", fixingModel("gemini")))
    expectFixed(live)
  }, 300_000)

  it("qwen, a Node program, runs on the host's Node too, within the task's memory: given 2 GB, its own shell fixes the task, the verifier grades 1", async () => {
    // The CLI runs under the task's limits, as Harbor's installed agents do: Node sizes its heap to
    // the container's memory, and qwen ran out of heap running its shell tool in the fixture's 512 MB.
    // The same task's name and environment: its image, already built, is used again.
    const { provider: roomy, env } = await taskCopy("fix-failing-test", (toml) => toml.replace(/memory_mb = \d+/, "memory_mb = 2048"))
    const live = await Effect.runPromise(runBridged(roomy, env, "qwen", fixingModel("qwen")))
    expectFixed(live)
  }, 300_000)

  it("gemini in an image where the host's Node cannot run and none of its own: the cell ends saying why, before the CLI starts, and no container is left", async () => {
    // Without libstdc++ (which the host's Node links) the bound Node cannot start; the image has no node.
    const { provider: bare, env } = await taskCopy("fix-failing-test", (toml) => toml, (text) => `${text}RUN rm -f /usr/lib/*-linux-gnu/libstdc++.so.6*\n`)
    const live = await Effect.runPromise(runBridged(bare, env, "gemini", fixingModel("gemini")))
    expect(live.verdict.ended?.reason).toBe("protocol-failed")
    expect(live.verdict.ended?.detail).toMatch(/gemini is a Node program; the host's Node does not run in the task's image \(.*libstdc\+\+.*\) and the image has no node of its own/)
    expect(agentCalls(live)).toHaveLength(0)
    expect(containersOf(process.pid)).toBe("")
  }, 300_000)

  it("gemini in an image where the host's Node cannot run but the image has a node of its own: it runs on that node, its own shell fixes the task, the verifier grades 1", async () => {
    // The image's node stands in for one an image would install: the host's Node, given the
    // libstdc++ moved out of the default path, by a wrapper on the PATH that names where it went.
    // Bound Node alone cannot start there (the test above), so a fixed task means the wrapper ran it.
    const { provider: own, env } = await taskCopy("fix-failing-test", (toml) => toml, (text) =>
      `${text}RUN mkdir -p /opt/assay-test-lib && mv /usr/lib/*-linux-gnu/libstdc++.so.6* /opt/assay-test-lib/ && ` +
      `printf '#!/bin/sh\\nLD_LIBRARY_PATH=/opt/assay-test-lib exec /.assay/node "$@"\\n' > /usr/local/bin/node && chmod 755 /usr/local/bin/node\n`)
    const live = await Effect.runPromise(runBridged(own, env, "gemini", fixingModel("gemini")))
    expectFixed(live)
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
