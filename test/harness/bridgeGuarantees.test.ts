/**
 * What makes a harness's numbers comparable with a model's: the same paired faults, tools on the
 * first model call, and a deadline that ends the CLI's whole process tree.
 */
import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { loadBenchmark } from "../../src/cli/benchmarks.ts"
import { evaluate } from "../../src/evaluation/evaluate.ts"
import { bridgedAgent } from "../../src/harness/bridge/Bridge.ts"
import { modelAgent } from "../../src/model/ModelAgent.ts"
import type * as Model from "../../src/model/Model.ts"
import * as Registry from "../../src/model/Registry.ts"
import type { EnvironmentDef } from "../../src/schema/EnvironmentDef.ts"
import { tempDir } from "../support/tempDirs.ts"
import { goldModel, runBridged, toolsBin } from "./bridgeSupport.ts"

const provider = await Effect.runPromise(loadBenchmark("tau2-retail"))
const environments = await Effect.runPromise(provider.environments)
const envOf = (task: string) => environments.find((e) => e.task === task)!
const registry = Registry.make(await Effect.runPromise(Registry.fixture))
const sonnet = await Effect.runPromise(registry.resolve("anthropic:claude-sonnet-4-5"))

const withFaults = (env: EnvironmentDef): EnvironmentDef => ({
  ...env,
  world: { ...env.world, effects: { ...env.world.effects, faults: { seed: 7, rate: 0.3, only: null, kinds: ["rate-limit", "server-error", "timeout"] } } }
})

/** The value `probe` gives, once it gives one (polled; a test's own timeout bounds it). */
const until = async <A>(probe: () => A | undefined): Promise<A> => {
  for (;;) {
    const value = probe()
    if (value !== undefined) return value
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Processes whose command line names the marker (a CLI's leftovers). */
const processesWith = (marker: string): ReadonlyArray<number> =>
  readdirSync("/proc").filter((d) => /^\d+$/.test(d)).flatMap((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker) ? [Number(pid)] : []
    } catch {
      // Gone between the listing and the read.
      return []
    }
  })

/** One Attempt of a bridged claude (or a stand-in binary) on a tau2 task, the model playing gold. */
const claudeAttempt = (env: EnvironmentDef, options: { readonly binary?: string; readonly mcpDelayMs?: number; readonly timeoutSeconds: number }) =>
  Effect.gen(function*() {
    const agent = bridgedAgent("harness:claude", {
      harness: "claude",
      binary: options.binary ?? join(toolsBin, "claude"),
      model: sonnet,
      cliModel: sonnet.model.id,
      ...(options.mcpDelayMs !== undefined ? { mcpDelayMs: options.mcpDelayMs } : {})
    })
    return yield* evaluate(env, {
      capabilities: provider.capabilities,
      agentDef: { name: "harness:claude", kind: "harness", model: sonnet.ref, actionSpace: "tools", prompt: "", limits: env.limits },
      agent,
      repetition: 0,
      timeoutSeconds: options.timeoutSeconds,
      model: goldModel(yield* provider.scripted("gold", env))
    })
  }).pipe(Effect.provide(Registry.layer))

describe("the bridge's guarantees", { timeout: 600_000 }, () => {
  it("harness:claude and the built-in agent, scripted to make the same calls, meet the same faults on the same tau2 tasks (--faults 7:0.3)", async () => {
    const tasks = ["0", "1", "70"].map((t) => withFaults(envOf(t)))
    const pairs = await Effect.runPromise(Effect.forEach(tasks, (env) =>
      Effect.gen(function*() {
        const harness = yield* runBridged(provider, env, "claude", goldModel(yield* provider.scripted("gold", env)))
        const model = yield* evaluate(env, {
          capabilities: provider.capabilities,
          agentDef: { name: "anthropic:claude-sonnet-4-5", kind: "llm", model: sonnet.ref, actionSpace: "tools", prompt: "", limits: env.limits },
          agent: modelAgent("anthropic:claude-sonnet-4-5", sonnet),
          repetition: 0,
          model: goldModel(yield* provider.scripted("gold", env))
        }).pipe(Effect.provide(Registry.layer))
        return { task: env.task, harness, model }
      }), { concurrency: 3 }))
    const injected = pairs.reduce((n, p) => n + p.model.faults.length, 0)
    expect(injected).toBeGreaterThan(0)
    for (const p of pairs) {
      expect({ task: p.task, faults: p.harness.faults }).toEqual({ task: p.task, faults: p.model.faults })
      expect({ task: p.task, reward: p.harness.verdict.reward }).toEqual({ task: p.task, reward: p.model.verdict.reward })
    }
  })

  it("16 claude Attempts at once with an MCP server slow to answer: every model call the proxy forwards carries the benchmark's tools", async () => {
    const env = envOf("70")
    const attempts = await Effect.runPromise(
      Effect.forEach(Array.from({ length: 16 }, (_, i) => i), () => claudeAttempt(env, { mcpDelayMs: 3000, timeoutSeconds: 300 }), { concurrency: 16 })
    )
    for (const a of attempts) {
      const turns = a.recording.filter((e) => e.kind === "model/generate" && e.key === "agent")
      expect(turns.length).toBeGreaterThan(0)
      for (const t of turns) expect((t.request as Model.ModelRequest).tools.map((x) => x.name)).toContain("exchange_delivered_order_items")
      expect(a.verdict.reward).toBe(1)
    }
  })

  it("the CLI runs in the sandbox: no key of the user's, no repository, a user of its own; it ends as an infrastructure fault when it never asks the model", async () => {
    const dir = tempDir()
    const log = join(dir, "cli.log")
    const cli = join(dir, "nosy-cli")
    const repo = fileURLToPath(new URL("../..", import.meta.url))
    writeFileSync(cli, [
      "#!/bin/sh",
      // One stream, so what it says stays in order in the log.
      "exec 2>&1",
      "echo ENV; env",
      "echo PROC1; tr '\\0' '\\n' < /proc/1/environ",
      "echo PARENT; tr '\\0' '\\n' < /proc/$PPID/environ",
      `echo REPO; ls ${repo}/package.json 2>&1`,
      "echo UID; id -u",
      // The folder it works in, which it may write: its own user's.
      "echo OWNER; stat -c %u .",
      "echo NAME; id -un",
      ""
    ].join("\n"))
    chmodSync(cli, 0o755)
    // The sandbox's user reads the CLI's folder, as it reads an npm installation.
    chmodSync(dir, 0o755)
    const secret = `sk-parent-secret-${process.pid}`
    process.env["OPENAI_API_KEY"] = secret
    process.env["ASSAY_BRIDGE_LOG"] = log
    try {
      const attempt = await Effect.runPromise(claudeAttempt(envOf("70"), { binary: cli, timeoutSeconds: 60 }))
      expect(attempt.verdict.ended).toMatchObject({ reason: "fault" })
    } finally {
      delete process.env["OPENAI_API_KEY"]
      delete process.env["ASSAY_BRIDGE_LOG"]
    }
    // The log is written as the CLI's output arrives: read it once its last line is there.
    const seen = await until(() => {
      const text = readFileSync(log, "utf8")
      return /NAME\n.+\n/.test(text) ? text : undefined
    })
    expect(seen).toContain("ENV")
    expect(seen).not.toContain(secret)
    expect(seen).toMatch(/REPO\n.*No such file or directory/)
    // As root, a uid of its own (not root, not the nobody every sandbox once shared), with a name.
    const uid = /UID\n(\d+)/.exec(seen)?.[1]
    expect(seen).toContain(`OWNER\n${uid}\n`)
    if (process.getuid?.() === 0) {
      expect(uid).not.toBe("0")
      expect(uid).not.toBe("65534")
      expect(seen).toMatch(/NAME\nsandbox\n/)
    }
  })

  it("a CLI that hangs is ended at the Attempt's deadline with its whole process tree, and the cell says so", async () => {
    const marker = `assay-hang-${process.pid}-${Date.now()}`
    const dir = tempDir()
    const cli = join(dir, "hanging-cli")
    // It leaves a grandchild in a session of its own (out of its process group), then never answers.
    chmodSync(dir, 0o755)
    writeFileSync(cli, `#!/bin/sh\nsetsid sh -c 'sleep 600; echo ${marker}' &\nsh -c 'sleep 600; echo ${marker}'\n`)
    chmodSync(cli, 0o755)
    const env = envOf("70")
    const attempt = await Effect.runPromise(claudeAttempt(env, { binary: cli, timeoutSeconds: 3 }))
    expect(attempt.verdict.reward).toBe(0)
    expect(attempt.verdict.ended?.reason).toMatch(/budget-exceeded|timeout/)
    expect(processesWith(marker)).toEqual([])
  })
})
