import { existsSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { CATEGORIES, PINNED_FILES, TASK_COUNTS, UNPASSABLE_TASKS } from "../../providers/bfcl/data.ts"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { assay, type Card, tempDir } from "./support.ts"

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** `model` on simple_python_0 and simple_python_1, answered by the loopback server's `script`. */
const runTwoTasks = (home: string, model: string, script: ReadonlyArray<LoopbackServer.ScriptTurn>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* LoopbackServer.start(script)
        const run = yield* Effect.promise(() =>
          assay(
            ["run", "--benchmark", "bfcl", "--task", "simple_python_0", "--task", "simple_python_1", "--model", model, "--yes", "--json", "--home", home],
            { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" }
          )
        )
        return { run, requests: server.requests() }
      })
    )
  )

describe("bfcl through the command", { timeout: 600_000 }, () => {
  it("equivalence agrees with upstream on every line of the dev corpus", async () => {
    const r = await assay(["equivalence", "bfcl", "--json"])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ benchmark: "bfcl", lines: 17972, agree: 17972, disagree: [] })
  })

  it("gold runs all 3,491 tasks: 1 on every passable task, one scorecard per category and the whole, the impassable ones apart", async () => {
    const home = tempDir()
    const r = await assay(["run", "--benchmark", "bfcl", "--candidate", "gold", "--yes", "--json", "--home", home])
    expect(r.code, r.stderr).toBe(0)
    const report = JSON.parse(r.stdout)
    expect(report.cells).toMatchObject({ total: 3491, ran: 3491, skipped: 0 })
    const cards: ReadonlyArray<Card> = report.scorecards
    const whole = cards.find((c) => c.stratum === null)!
    expect(whole).toMatchObject({ candidate: "gold", n: 3491 - UNPASSABLE_TASKS.size, meanReward: 1 })
    for (const c of CATEGORIES) {
      const apart = [...UNPASSABLE_TASKS.keys()].filter((id) => id.startsWith(`${c}_`)).length
      expect(cards.find((card) => card.stratum === c), c).toMatchObject({ n: TASK_COUNTS[c] - apart, meanReward: 1 })
    }
    expect(cards.find((c) => c.stratum === "impassable")).toMatchObject({ n: UNPASSABLE_TASKS.size, meanReward: 0 })
  })

  it("a model through the loopback server scores 1 for the right tool call and 0, wrong-value, for a wrong one", async () => {
    const home = tempDir()
    const script = [
      { match: { lastUser: `^${escape("Find the area of a triangle with a base of 10 units and height of 5 units.")}$` }, toolCalls: [{ name: "calculate_triangle_area", arguments: { base: 10, height: 5 } }], usage: { input: 120, output: 20 } },
      { match: { lastUser: `^${escape("Calculate the factorial of 5 using math functions.")}$` }, toolCalls: [{ name: "math_factorial", arguments: { number: 6 } }], usage: { input: 100, output: 15 } }
    ]
    const { run, requests } = await runTwoTasks(home, "openai:gpt-4o-mini", script)
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    // One stratum only, so the whole-benchmark scorecard is the simple_python one.
    const card: Card = report.scorecards.find((c: Card) => c.stratum === null)
    expect(card).toMatchObject({ n: 2, meanReward: 0.5, failures: { "wrong-value": 1 } })
    const lines = readFileSync(join(home, "runs", report.runId, "results.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    const byTask = new Map(lines.map((a) => [a.task, a.verdict]))
    expect(byTask.get("simple_python_0")).toMatchObject({ reward: 1 })
    expect(byTask.get("simple_python_1")).toMatchObject({ reward: 0, checks: { "wrong-value": false, "wrong-function": true } })
    // The model was offered the sanitised name with upstream's Python hint.
    const offered = JSON.stringify(requests.map((q) => q.body))
    expect(offered).toContain("math_factorial")
    expect(offered).toContain("Note that the provided function is in Python 3 syntax.")
  })

  it("PROVIDER:MODEL+text is the same model in prompt mode: offered no tools, its text answer decoded and checked", async () => {
    const home = tempDir()
    const script = [
      { match: { lastUser: `^${escape("Find the area of a triangle with a base of 10 units and height of 5 units.")}$` }, text: "[calculate_triangle_area(base=10, height=5)]", usage: { input: 300, output: 20 } },
      { match: { lastUser: `^${escape("Calculate the factorial of 5 using math functions.")}$` }, text: "I would call math.factorial(5).", usage: { input: 280, output: 15 } }
    ]
    const { run, requests } = await runTwoTasks(home, "openai:gpt-4o-mini+text", script)
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    const card: Card = report.scorecards.find((c: Card) => c.stratum === null)
    expect(card).toMatchObject({ candidate: "openai:gpt-4o-mini+text", n: 2, meanReward: 0.5 })
    const lines = readFileSync(join(home, "runs", report.runId, "results.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    const byTask = new Map(lines.map((a) => [a.task, a.verdict]))
    expect(byTask.get("simple_python_0")).toMatchObject({ reward: 1 })
    expect(byTask.get("simple_python_1")).toMatchObject({ reward: 0 })
    // Prompt mode: the functions are described in the system prompt, and no tool is offered.
    for (const q of requests) {
      const body = q.body as { tools?: ReadonlyArray<unknown>; instructions?: string }
      expect(body.tools ?? []).toEqual([])
      expect(JSON.stringify(body)).toContain("You are an expert in composing functions.")
    }
  })

  it("data pull checks every pinned file and says ok", async () => {
    const target = tempDir()
    const r = await assay(["data", "pull", "bfcl", "--from", resolve(process.env["ASSAY_DATA_DIR"] ?? "../shared/data")], { ASSAY_DATA_DIR: target })
    expect(r.code, r.stderr).toBe(0)
    for (const f of PINNED_FILES) {
      expect(r.stdout).toContain(`ok bfcl/v4/${f.file}`)
      expect(existsSync(join(target, "bfcl", "v4", f.file))).toBe(true)
    }
  })
})
