/**
 * Real agent CLIs, installed by the project into tools/harnesses (`npm install --prefix tools/harnesses`),
 * run headless against the loopback model server on a corpus task. The script makes the model call
 * the CLI's shell tool to write summary.json, then answer; the graders' verdicts follow the script.
 * Claude Code asks `HEAD /` first, then `POST /v1/messages?beta=true` with SSE; gemini-cli streams
 * `POST /v1beta/models/M:streamGenerateContent?alt=sse`; opencode asks for a session title on the
 * side (its own system prompt, the task as the last user message), answered by a side turn.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { claude, codex, gemini, opencode, pi, qwen } from "../../src/harness/adapters/index.ts"
import { loadTask } from "../../src/harness/Corpus.ts"
import { detect } from "../../src/harness/Detect.ts"
import { findPython } from "../../src/harness/Graders.ts"
import type { HarnessAdapter } from "../../src/harness/Harness.ts"
import type { ScriptTurn } from "../../src/testkit/LoopbackServer.ts"
import { runHarness } from "../../src/harness/Run.ts"
import * as Loopback from "../../src/testkit/LoopbackServer.ts"

const binDir = fileURLToPath(new URL("../../tools/harnesses/node_modules/.bin", import.meta.url))
const corpus = fileURLToPath(new URL("../../src/harness/corpus", import.meta.url))

const summary = JSON.stringify({ by_category: { books: 49.75, games: 79.98, music: 9.99 }, total: 139.72 })
const writeCommand = `printf '%s' '${summary}' > summary.json`

interface Case {
  readonly adapter: HarnessAdapter
  readonly tool: string
  readonly args: Record<string, unknown>
  /** reasoning tokens among the answer's 12 output tokens, for CLIs whose parsers are checked on them */
  readonly reasoning?: number
  /** turns placed first, for side calls that would otherwise match the task's turns */
  readonly sideTurns?: ReadonlyArray<ScriptTurn>
}

const cases: ReadonlyArray<Case> = [
  { adapter: codex, tool: "exec_command", args: { cmd: writeCommand } },
  { adapter: pi, tool: "bash", args: { command: writeCommand } },
  { adapter: qwen, tool: "run_shell_command", args: { command: writeCommand, description: "write summary" } },
  { adapter: claude, tool: "Bash", args: { command: writeCommand } },
  // gemini-cli reports thoughts beside the candidates; given a model (-m) it asks no router first.
  { adapter: gemini, tool: "run_shell_command", args: { command: writeCommand }, reasoning: 3 },
  // opencode reports reasoning beside its output; its title call is not on stdout.
  {
    adapter: opencode,
    tool: "bash",
    args: { command: writeCommand, description: "Write summary.json" },
    reasoning: 3,
    sideTurns: [{ match: { system: "title generator" }, repeat: true, text: "CSV summary", usage: { input: 10, output: 1 } }]
  }
]

const liveBinary = (adapter: HarnessAdapter) =>
  Effect.gen(function* () {
    const d = yield* detect(adapter, { binDirs: [binDir], path: "" })
    if (d.liveness.status !== "live" || d.binary === undefined) {
      throw new Error(
        `${adapter.name} is not installed for the tests (${d.liveness.reason}); run \`npm install --prefix tools/harnesses\``
      )
    }
    return d.binary
  })

describe("real agent CLIs against the loopback model server", () => {
  for (const c of cases) {
    it.live(
      `${c.adapter.name} runs headless on csv-summary: tool call, answer, per-call tokens, graders as scripted`,
      () =>
        Effect.scoped(
          Effect.gen(function* () {
            const binary = yield* liveBinary(c.adapter)
            const server = yield* Loopback.start([
              ...(c.sideTurns ?? []),
              {
                match: { lastUser: "sales\\.csv" },
                toolCalls: [{ name: c.tool, arguments: c.args }],
                usage: { input: 200, output: 30, cacheRead: 50 }
              },
              {
                match: { lastUser: "sales\\.csv" },
                text: "The total is 139.72.",
                usage: { input: 300, output: 12, ...(c.reasoning !== undefined ? { reasoning: c.reasoning } : {}) }
              },
              // Side calls some CLIs make (qwen's memory extractor).
              { default: true, text: "nothing to add", usage: { input: 10, output: 1 } }
            ])
            const task = yield* loadTask(path.join(corpus, "csv-summary"))
            const run = yield* runHarness({
              adapter: c.adapter,
              binary,
              task,
              model: "loopback-model",
              endpoint: { baseUrl: server.url, apiKey: "sk-loopback" },
              timeoutMs: 150_000,
              python: yield* findPython()
            })
            const detail = `${run.outcome}\nstdout: ${run.stdout.slice(-3000)}\nstderr: ${run.stderr.slice(-3000)}`
            expect(run.outcome, detail).toBe("completed")
            expect(run.transcript?.finalAnswer, detail).toBe("The total is 139.72.")
            const main = (run.transcript?.calls ?? []).filter((call) => call.output !== 1)
            expect(main.map((call) => [call.input, call.output, call.cacheRead ?? 0]), detail).toEqual([
              [200, 30, 50],
              [300, 12, 0]
            ])
            if (c.reasoning !== undefined) expect(main.map((call) => call.reasoning), detail).toEqual([0, c.reasoning])
            expect(run.transcript?.models).toContain("loopback-model")
            expect(run.diff.changed).toEqual(["summary.json"])
            expect(run.grades.verdicts.map((v) => [v.name, v.status])).toEqual([
              ["summary.json has the keys", "passed"],
              ["sums are right", "passed"]
            ])
            const served = server.requests().filter((r) => r.api !== null && r.status === 200)
            expect(served.length).toBeGreaterThanOrEqual(2)
            expect(fs.existsSync(task.fixtureDir + "/summary.json")).toBe(false)
          })
        ),
      240_000
    )
  }
})
