import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import type { Json } from "../../../src/content/Canonical.ts"
import * as Agent from "../../../src/evaluation/Agent.ts"
import type { AgentReply } from "../../../src/evaluation/Conversation.ts"
import { evaluate } from "../../../src/evaluation/evaluate.ts"
import type { Attempt } from "../../../src/schema/Attempt.ts"
import type { EffectsSpec, EnvironmentDef } from "../../../src/schema/EnvironmentDef.ts"
import { provider } from "../../../providers/coding-repair/index.ts"
import { CommandResult } from "../../../providers/coding-repair/workspace.ts"
import { tempDir } from "../../support/tempDirs.ts"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const goldSlugify = path.join(repo, "providers/coding-repair/repos/js-slugify/solution/src/slugify.js")

const envOf = (task: string) =>
  Effect.map(provider.environments, (es) => es.find((e) => e.task === task)!)

const withEffects = (env: EnvironmentDef, effects: EffectsSpec): EnvironmentDef => ({ ...env, world: { ...env.world, effects } })

const run = (env: EnvironmentDef, agent: Agent.Agent, name = agent.name) =>
  evaluate(env, { capabilities: provider.capabilities, agentDef: Agent.referenceDef(name), agent, repetition: 0 })

const rosterRun = (task: string, name: "gold" | "echo") =>
  Effect.gen(function*() {
    const env = yield* envOf(task)
    return yield* run(env, yield* provider.scripted(name, env), name)
  })

const calls = (...replies: ReadonlyArray<ReadonlyArray<readonly [string, { readonly [k: string]: Json }]>>): ReadonlyArray<AgentReply> =>
  replies.map((r, i) => ({ text: null, toolCalls: r.map(([name, args], j) => ({ id: `c${i}-${j}`, name, arguments: args })) }))

const details = (a: Attempt) => a.verdict.details as { readonly failing: ReadonlyArray<string>; readonly editedTests: ReadonlyArray<string> }

const toolMessages = (a: Attempt) =>
  ((a.output as { transcript: ReadonlyArray<{ role: string; name?: string; content: string; error?: boolean }> }).transcript)
    .filter((m) => m.role === "tool")

const commandResults = (a: Attempt) =>
  a.recording.filter((r) => r.kind === "process/spawn" && "ok" in r.outcome).map((r) =>
    Schema.decodeUnknownSync(CommandResult)((r.outcome as { ok: unknown }).ok)
  )

const fixedSlugify = `export function slugify(text) {\n  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "")\n}\n`

describe("coding-repair", () => {
  it.effect("gold scores 1 on every task: its writes are tool/write effects, its visible test run a process/spawn that passes", () =>
    Effect.gen(function*() {
      const tasks = (yield* provider.environments).map((e) => e.task)
      expect(tasks.length).toBe(6)
      yield* Effect.forEach(tasks, (task) =>
        Effect.gen(function*() {
          const a = yield* rosterRun(task, "gold")
          expect([task, a.verdict.reward, a.verdict.checks]).toEqual([task, 1, { "tests-untouched": true, "fail-to-pass": true, "pass-to-pass": true }])
          expect(a.recording.some((r) => r.kind === "tool/write" && r.key === "write_file")).toBe(true)
          const [tests] = commandResults(a)
          expect([task, tests?.exitCode]).toEqual([task, 0])
        }), { concurrency: 3 })
    }))

  it.effect("echo changes nothing and scores 0 on fail-to-pass alone", () =>
    Effect.gen(function*() {
      const a = yield* rosterRun("py-wordfreq", "echo")
      expect(a.verdict.reward).toBe(0)
      expect(a.verdict.checks).toEqual({ "tests-untouched": true, "fail-to-pass": false, "pass-to-pass": true })
      expect(details(a).failing).toEqual([
        "tests.test_wordfreq_hidden.TopWords.test_ties_alphabetical",
        "tests.test_wordfreq_hidden.TopWords.test_ties_after_higher_counts"
      ])
    }))

  it.effect("a candidate that edits the tests scores 0, also when its fix is right", () =>
    Effect.gen(function*() {
      const env = yield* envOf("js-slugify")
      // Makes the visible test pass by weakening it, fixes nothing.
      const weakened = yield* run(env, Agent.scripted("weakens", calls([["write_file", { path: "tests/slugify.test.js", content: "import { test } from \"node:test\"\ntest(\"ok\", () => {})\n" }]])))
      expect(weakened.verdict.reward).toBe(0)
      expect(weakened.verdict.checks["tests-untouched"]).toBe(false)
      expect(details(weakened).editedTests).toEqual(["tests/slugify.test.js"])
      // The right fix, and a test file removed by a command: the removal is carried back and caught.
      const removes = yield* run(env, Agent.scripted("removes", calls(
        [["write_file", { path: "src/slugify.js", content: fixedSlugify }]],
        [["run_command", { command: "rm tests/slugify.test.js" }]]
      )))
      expect(removes.verdict.checks).toEqual({ "tests-untouched": false, "fail-to-pass": true, "pass-to-pass": true })
      expect(removes.verdict.reward).toBe(0)
      expect(details(removes).editedTests).toEqual(["tests/slugify.test.js"])
      // Adding a file under tests/ counts as editing the tests too.
      const adds = yield* run(env, Agent.scripted("adds", calls(
        [["write_file", { path: "src/slugify.js", content: fixedSlugify }], ["write_file", { path: "tests/extra.test.js", content: "" }]]
      )))
      expect(adds.verdict.reward).toBe(0)
      expect(details(adds).editedTests).toEqual(["tests/extra.test.js"])
    }))

  it.effect("a partial fix scores 0 and the verdict names exactly the hidden tests it still fails", () =>
    Effect.gen(function*() {
      const env = yield* envOf("js-slugify")
      // Every space becomes a dash, but dashes at the ends are left as they were.
      const partial = `export function slugify(text) {\n  return text.toLowerCase().trim().replace(/ +/g, "-").replace(/[^a-z0-9-]/g, "")\n}\n`
      const a = yield* run(env, Agent.scripted("partial", calls([["write_file", { path: "src/slugify.js", content: partial }]])))
      expect(a.verdict.reward).toBe(0)
      expect(a.verdict.checks).toEqual({ "tests-untouched": true, "fail-to-pass": false, "pass-to-pass": true })
      expect(details(a).failing).toEqual(["slugify: no dashes at the ends"])
    }))

  it.effect("a fix made by a command is kept in the workspace and graded", () =>
    Effect.gen(function*() {
      const env = yield* envOf("py-intervals")
      const a = yield* run(env, Agent.scripted("sed", calls(
        [["run_command", { command: "sed -i 's/start < merged/start <= merged/' intervals.py && python3 -m unittest discover -s tests -t ." }]]
      )))
      const [result] = commandResults(a)
      expect(Object.keys(result!.changes)).toEqual(["intervals.py"])
      expect(result!.exitCode).toBe(0)
      expect(a.verdict.reward).toBe(1)
    }))

  it.effect("a command that loops is killed at its timeout with every process it started, and the Attempt goes on", () =>
    Effect.gen(function*() {
      const env = yield* envOf("js-semver")
      const started = Date.now()
      const a = yield* run(env, Agent.scripted("loops", calls([["run_command", { command: "sleep 300 & while :; do :; done", timeout_seconds: 1 }]])))
      const [result] = commandResults(a)
      expect(result?.timedOut).toBe(true)
      expect(result?.remaining).toBe(0)
      expect(result!.wallMs).toBeLessThan(5_000)
      expect(Date.now() - started).toBeLessThan(15_000)
      const [message] = toolMessages(a)
      expect(message?.content).toContain("timed out after 1 s")
      expect(message?.error).toBe(true)
      expect(a.verdict.ended).toBeNull()
    }))

  it.effect("a command sees a cleared environment: none of the caller's variables reach it", () =>
    Effect.gen(function*() {
      process.env["ASSAY_CODING_REPAIR_SECRET"] = "sk-not-for-commands"
      const env = yield* envOf("js-semver")
      const a = yield* run(env, Agent.scripted("env", calls([["run_command", { command: "env" }]]))).pipe(
        Effect.ensuring(Effect.sync(() => delete process.env["ASSAY_CODING_REPAIR_SECRET"]))
      )
      const [result] = commandResults(a)
      expect(result?.stdout).toContain("HOME=")
      expect(result?.stdout).not.toContain("sk-not-for-commands")
    }))

  it.effect("a replay of gold's recording runs no command and gives the same verdict and final workspace", () =>
    Effect.gen(function*() {
      const env = yield* envOf("js-lru-cache")
      const live = yield* run(env, yield* provider.scripted("gold", env), "gold")
      const replayed = yield* evaluate(env, {
        capabilities: provider.capabilities,
        agentDef: Agent.referenceDef("gold"),
        agent: yield* provider.scripted("gold", env),
        repetition: 0,
        replay: live.recording,
        // A replay that ran a command would meet this and fail.
        handlers: { "process/spawn": () => Effect.die("a replay must not run a command") }
      })
      expect(replayed.verdict).toEqual(live.verdict)
      expect(replayed.finalWorld).toBe(live.finalWorld)
    }))

  it.effect("injected faults reach the command as tool errors; read-only admission refuses writes and commands", () =>
    Effect.gen(function*() {
      const env = yield* envOf("js-slugify")
      const faulty = withEffects(env, { admission: "all", faults: { seed: 1, rate: 1, only: ["process/spawn"], kinds: ["server-error"] } })
      const a = yield* run(faulty, yield* provider.scripted("gold", faulty), "gold")
      expect(a.faults).toEqual([{ key: "process/spawn:run_command", occurrence: 1, reason: "server-error" }])
      expect(toolMessages(a).find((m) => m.name === "run_command")?.content).toContain("server-error injected")
      // The fix was written by tool/write, which the faults spared: still 1.
      expect(a.verdict.reward).toBe(1)
      const readOnly = withEffects(env, { admission: "read-only", faults: null })
      const b = yield* run(readOnly, yield* provider.scripted("gold", readOnly), "gold")
      expect(toolMessages(b).every((m) => m.error && m.content.includes("refused (read-only)"))).toBe(true)
      expect(b.verdict.reward).toBe(0)
    }))

  // Issue 39: the escapes a hand-driven candidate used, replayed through run_command and the grader.
  it.effect("a command cannot read the user's key from its parent or PID 1, nor copy the gold fix from the repository", () =>
    Effect.gen(function*() {
      const key = "sk-assay-coding-repair-fake-key"
      const before = process.env["OPENAI_API_KEY"]
      process.env["OPENAI_API_KEY"] = key
      const env = yield* envOf("js-slugify")
      const a = yield* run(env, Agent.scripted("escapes", calls(
        [["run_command", { command: "cat /proc/$PPID/environ | tr '\\000' '\\n'; cat /proc/1/environ; env; grep -rs OPENAI /proc/*/environ" }]],
        [["run_command", { command: `cp ${goldSlugify} src/` }]]
      ))).pipe(Effect.ensuring(Effect.sync(() => {
        if (before === undefined) delete process.env["OPENAI_API_KEY"]
        else process.env["OPENAI_API_KEY"] = before
      })))
      const [leak, copy] = toolMessages(a)
      expect(JSON.stringify(a.output)).not.toContain(key)
      expect(JSON.stringify(a.recording)).not.toContain(key)
      expect(leak?.content).not.toContain("OPENAI")
      expect(copy?.error).toBe(true)
      expect(copy?.content).toContain("No such file or directory")
      expect(a.verdict.reward).toBe(0)
    }))

  it.effect("the hidden tests run in the same sandbox: code under test cannot import the gold fix or write outside", () =>
    Effect.gen(function*() {
      const outside = tempDir("assay-repair-outside-")
      const marker = path.join(outside, "escaped")
      // Would pass every hidden test if the repository were visible when the tests run.
      const cheat = [
        `import { readFileSync, writeFileSync } from "node:fs"`,
        `try { writeFileSync(${JSON.stringify(marker)}, readFileSync("/proc/1/environ")) } catch {}`,
        `const gold = await import(${JSON.stringify(goldSlugify)})`,
        `export const slugify = gold.slugify`
      ].join("\n")
      const env = yield* envOf("js-slugify")
      const a = yield* run(env, Agent.scripted("cheats", calls([["write_file", { path: "src/slugify.js", content: cheat }]])))
      expect(a.verdict.reward).toBe(0)
      expect(a.verdict.checks).toEqual({ "tests-untouched": true, "fail-to-pass": false, "pass-to-pass": false })
      expect(fs.existsSync(marker)).toBe(false)
    }))
})
