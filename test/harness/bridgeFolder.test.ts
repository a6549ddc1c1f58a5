/**
 * A folder task through the bridge: on coding-repair the task's files are the CLI's work folder,
 * and the CLI edits them with its own tools (the real Claude Code from tools/harnesses, its model
 * scripted behind the proxy). What it changed reaches the world before its next model call, so the
 * hidden tests grade its folder; a replay needs no CLI.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { loadBenchmark } from "../../src/cli/benchmarks.ts"
import * as Model from "../../src/model/Model.ts"
import type { Attempt } from "../../src/schema/Attempt.ts"
import type { EnvironmentDef } from "../../src/schema/EnvironmentDef.ts"
import { idleModel, runBridged } from "./bridgeSupport.ts"

const provider = await Effect.runPromise(loadBenchmark("coding-repair"))
const envs = await Effect.runPromise(provider.environments)
const envOf = (task: string) => envs.find((e) => e.task === task)!

/** The known fix: the task's solution files (whole files, as the gold candidate writes them). */
const fixOf = (task: string): ReadonlyArray<{ readonly path: string; readonly content: string }> => {
  const dir = fileURLToPath(new URL(`../../providers/coding-repair/repos/${task}/solution`, import.meta.url))
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => {
    const full = join(e.parentPath, e.name)
    return { path: relative(dir, full).split(sep).join("/"), content: readFileSync(full, "utf8") }
  })
}

/**
 * A model that fixes the bug with Claude Code's own tools: it reads each file the fix changes,
 * writes the fixed text with `Write` (absolute paths in the CLI's working directory), then answers.
 */
const editingModel = (files: ReadonlyArray<{ readonly path: string; readonly content: string }>): Model.Model =>
  Model.scripted((request) => {
    // Claude Code tells its model its working directory ("Primary working directory: …").
    const said = [request.system, ...request.messages.map((m) => (m.role === "tool" ? "" : m.content ?? ""))].join("\n")
    const dir = /working directory: (\/\S+)/i.exec(said)?.[1]
    if (dir === undefined || !request.tools.some((t) => t.name === "Write")) return { text: "assay" }
    const acted = request.messages.filter((m) => m.role === "assistant" && (m.toolCalls ?? []).length > 0).length
    if (acted === 0) return { toolCalls: files.map((f, i) => ({ id: `read_${i}`, name: "Read", arguments: { file_path: `${dir}/${f.path}` } })) }
    if (acted === 1) return { toolCalls: files.map((f, i) => ({ id: `write_${i}`, name: "Write", arguments: { file_path: `${dir}/${f.path}`, content: f.content } })) }
    return { text: "Fixed the bug." }
  })

const attempt = (env: EnvironmentDef, model: Model.Model, recording?: Attempt["recording"]) => runBridged(provider, env, "claude", model, recording)

describe("harness:claude on coding-repair, the task's folder its own", { timeout: 600_000 }, () => {
  it("fixes the bug with its own Write tool: reward 1, graded on what it wrote, replayed without the CLI; a model that does nothing scores 0", async () => {
    const env = envOf("js-slugify")
    const files = fixOf("js-slugify")
    expect(files.length).toBeGreaterThan(0)
    const fixed = await Effect.runPromise(attempt(env, editingModel(files)))
    expect({ reward: fixed.verdict.reward, ended: fixed.verdict.ended, checks: fixed.verdict.checks }).toEqual({
      reward: 1,
      ended: null,
      checks: { "tests-untouched": true, "fail-to-pass": true, "pass-to-pass": true }
    })
    // The CLI's own edits reached the world as writes of the protocol's tool, recorded.
    const synced = fixed.recording.filter((e) => e.kind === "tool/write" && e.key === "workspace-sync")
    expect(synced.map((e) => (e.request as { args: { path: string } }).args.path).sort()).toEqual(files.map((f) => f.path).sort())
    // The protocol saw no call of the CLI's own tools: only the CLI's final words.
    const transcript = (fixed.output as { transcript: ReadonlyArray<{ role: string; toolCalls?: ReadonlyArray<{ name: string }> }> }).transcript
    expect(transcript.flatMap((m) => (m.toolCalls ?? []).map((c) => c.name))).toEqual([])

    const replayed = await Effect.runPromise(attempt(env, Model.scripted(() => Effect.die("a replay asks no model")), fixed.recording))
    expect({ reward: replayed.verdict.reward, ended: replayed.verdict.ended }).toEqual({ reward: 1, ended: null })

    const idle = await Effect.runPromise(attempt(env, idleModel))
    expect({ reward: idle.verdict.reward, ended: idle.verdict.ended }).toEqual({ reward: 0, ended: null })
  })
})
