/**
 * `bfcl-multi-turn` through the command: gold and the do-nothing candidate over the four
 * categories, and a model through the loopback server in both action spaces, replayed with the
 * server gone.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { LONG_CONTEXT_PATH } from "../../providers/bfcl/data.ts"
import { goldTurns } from "../../providers/bfcl/multiturn/gold.ts"
import { ADDED_FUNCTIONS_PROMPT, type Mode } from "../../providers/bfcl/multiturn/protocol.ts"
import { CATEGORIES, loadTasks, type MultiTurnTask } from "../../providers/bfcl/multiturn/tasks.ts"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { assay, type Card, tempDir } from "./support.ts"

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

// Long-context tasks need upstream's long_context.py: in the data folder, or named by ASSAY_BFCL_LONG_CONTEXT.
const dataDir = resolve(process.env["ASSAY_DATA_DIR"] ?? "../shared/data")
const longContextOverride = process.env["ASSAY_BFCL_LONG_CONTEXT"]
const longContextEnv: Record<string, string> = longContextOverride !== undefined && longContextOverride !== "" ? { ASSAY_BFCL_LONG_CONTEXT: longContextOverride } : {}
const hasLongContext = longContextEnv["ASSAY_BFCL_LONG_CONTEXT"] !== undefined || existsSync(join(dataDir, "bfcl", LONG_CONTEXT_PATH))

interface Line {
  readonly task: string
  readonly stratum: string
  readonly candidate: string
  readonly verdict: { readonly reward: number; readonly checks: Readonly<Record<string, boolean>>; readonly ended?: { readonly reason: string; readonly detail: string } }
}
const resultLines = (home: string, runId: string): ReadonlyArray<Line> =>
  readFileSync(join(home, "runs", runId, "results.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Line)

// One run of gold and none over all 800 tasks (~25 s on two cores), shared by the tests that read it.
let goldRun: Promise<{
  readonly cards: ReadonlyArray<Card>
  readonly lines: ReadonlyArray<Line>
  readonly stderr: string
  readonly providerFailed: ReadonlyArray<unknown> | undefined
}> | undefined
const runGoldAndNone = () =>
  (goldRun ??= (async () => {
    const home = tempDir()
    const r = await assay(["run", "--benchmark", "bfcl-multi-turn", "--candidate", "gold", "--candidate", "none", "--yes", "--json", "--home", home], longContextEnv)
    // Without long_context.py its cells are the data's failure, not the candidates': exit 1, one line.
    expect(r.code, r.stderr).toBe(hasLongContext ? 0 : 1)
    const report = JSON.parse(r.stdout)
    expect(report.cells).toMatchObject({ total: 1600, ran: 1600 })
    return { cards: report.scorecards, lines: resultLines(home, report.runId), stderr: r.stderr, providerFailed: report.providerFailed }
  })())

const card = (cards: ReadonlyArray<Card>, candidate: string, stratum: string) => cards.find((c) => c.candidate === candidate && c.stratum === stratum)

describe("bfcl-multi-turn through the command", { timeout: 600_000 }, () => {
  it("gold scores 1 and none 0 on every task of base, miss_func and miss_param (upstream's ground truth passes all, an empty answer none)", async () => {
    const { cards } = await runGoldAndNone()
    for (const c of CATEGORIES.filter((c) => c !== "multi_turn_long_context")) {
      expect(card(cards, "gold", c), c).toMatchObject({ n: 200, meanReward: 1 })
      // Every task has a turn with ground-truth calls: doing nothing fails there
      expect(card(cards, "echo", c), c).toMatchObject({ n: 200, meanReward: 0, failures: { empty_turn_model_response: 200 } })
    }
  })

  it.skipIf(!hasLongContext)("gold scores 1 and none 0 on every long-context task (with upstream's long_context.py)", async () => {
    const { cards } = await runGoldAndNone()
    expect(card(cards, "gold", "multi_turn_long_context")).toMatchObject({ n: 200, meanReward: 1 })
    expect(card(cards, "echo", "multi_turn_long_context")).toMatchObject({ n: 200, meanReward: 0, failures: { empty_turn_model_response: 200 } })
  })

  it.skipIf(hasLongContext)("without upstream's long_context.py, each long-context cell ends as a data error naming the file and its pull, and is not scored", async () => {
    const { cards, lines, stderr, providerFailed } = await runGoldAndNone()
    const longContext = lines.filter((l) => l.stratum === "multi_turn_long_context")
    expect(longContext.length).toBe(400)
    for (const l of longContext) {
      expect(l.verdict.ended?.reason).toBe("setup-failed")
      expect(l.verdict.ended?.detail).toContain("long_context.py")
      expect(l.verdict.ended?.detail).toContain("`assay data pull bfcl-multi-turn`")
    }
    // Left out of every figure: gold's whole-benchmark score is its 600 scored tasks', not cut by a quarter.
    expect(card(cards, "gold", "multi_turn_long_context")).toBeUndefined()
    expect(cards.find((c: Card) => c.candidate === "gold" && c.stratum === null)).toMatchObject({ n: 600, meanReward: 1 })
    expect(providerFailed).toHaveLength(400)
    expect(stderr).toMatch(/^assay: bfcl-multi-turn \(data\): .*long_context\.py is missing.* \(in 400 of 1600 cells, not scored; bring the data and run again\)$/m)
  })

  it("a model through the loopback server, in both action spaces, gets the verdicts its calls earn; replayed with no server, the same", async () => {
    const tasks = await Effect.runPromise(loadTasks(dataDir))
    const chosen = ["multi_turn_base_0", "multi_turn_miss_func_1", "multi_turn_miss_param_2"].map((id) => tasks.find((t) => t.id === id)!)
    // base_0 and miss_func_1 answered with their ground truth, miss_param_2 with no call at all
    const answered = chosen.slice(0, 2)
    const script = (mode: Mode): ReadonlyArray<LoopbackServer.ScriptTurn> => [
      ...answered.flatMap((task: MultiTurnTask) =>
        goldTurns(task, mode).flatMap((step, turn): ReadonlyArray<LoopbackServer.ScriptTurn> => {
          if (step === null) return []
          const user = task.question[turn]?.[0]?.content
          const lastUser = user === undefined ? `${escape(ADDED_FUNCTIONS_PROMPT)}$` : `^${escape(user)}$`
          return [mode === "tools"
            ? { match: { lastUser }, toolCalls: step.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments, argumentsText: c.argumentsText! })), usage: { input: 500, output: 20 } }
            : { match: { lastUser }, text: step.text!, usage: { input: 900, output: 30 } }]
        })
      ),
      // Every other request (after the results, or a turn not answered): a reply with no call ends the turn
      { default: true, text: "Done.", usage: { input: 500, output: 2 } }
    ]
    const runMode = (mode: Mode) =>
      Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const server = yield* LoopbackServer.start(script(mode))
        const home = tempDir()
        const model = mode === "tools" ? "openai:gpt-4o-mini" : "openai:gpt-4o-mini+text"
        const run = yield* Effect.promise(() =>
          assay(
            ["run", "--benchmark", "bfcl-multi-turn", ...chosen.flatMap((t) => ["--task", t.id]), "--model", model, "--yes", "--json", "--home", home],
            { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" }
          )
        )
        return { home, run, requests: server.requests() }
      })))

    for (const mode of ["tools", "text"] as const) {
      const { home, requests, run } = await runMode(mode)
      expect(run.code, run.stderr).toBe(0)
      const report = JSON.parse(run.stdout)
      const verdicts = new Map(resultLines(home, report.runId).map((l) => [l.task, l.verdict]))
      expect(verdicts.get("multi_turn_base_0"), mode).toMatchObject({ reward: 1 })
      expect(verdicts.get("multi_turn_miss_func_1"), mode).toMatchObject({ reward: 1 })
      expect(verdicts.get("multi_turn_miss_param_2"), mode).toMatchObject({ reward: 0, checks: { empty_turn_model_response: false } })

      const bodies = requests.map((q) => JSON.stringify(q.body))
      if (mode === "tools") {
        // mv is held out of miss_func_1 until turn 2: offered only from the request that adds it
        const missFunc = bodies.filter((b) => b.includes("I am alex. Check if the current directory is under my name"))
        const offersMv = (b: string) => b.includes('"name":"mv"')
        expect(missFunc.some(offersMv)).toBe(true)
        for (const b of missFunc) expect(offersMv(b)).toBe(b.includes(ADDED_FUNCTIONS_PROMPT))
      } else {
        // Prompt mode: no tools, upstream's system prompt, the results fed back as the repr of tool dicts
        for (const q of requests) expect((q.body as { tools?: ReadonlyArray<unknown> }).tools ?? []).toEqual([])
        expect(bodies.some((b) => b.includes("You are an expert in composing functions."))).toBe(true)
        expect(bodies.some((b) => b.includes(`[{'role': 'tool', 'name': \\"cd(folder='document')\\", 'content': '{\\"current_working_directory\\": \\"document\\"}'}`))).toBe(true)
      }

      // The server is gone: the run replays from its recordings, verdict for verdict
      const replay = await assay(["replay", "--home", home, "--json"])
      expect(replay.code, replay.stderr).toBe(0)
      expect(JSON.parse(replay.stdout)).toMatchObject({ replayedFrom: report.runId, replayed: 3, same: 3, differ: [], missing: [] })
    }
  })

  it("a model that never stops calling is force-quit after 21 steps of its first turn, and graded force_terminated", async () => {
    const home = tempDir()
    const run = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const server = yield* LoopbackServer.start([{ repeat: true, toolCalls: [{ name: "pwd", arguments: {}, argumentsText: "{}" }], usage: { input: 400, output: 5 } }])
      return yield* Effect.promise(() =>
        assay(["run", "--benchmark", "bfcl-multi-turn", "--task", "multi_turn_base_1", "--model", "openai:gpt-4o-mini", "--yes", "--json", "--home", home], { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" })
      )
    })))
    expect(run.code, run.stderr).toBe(0)
    const [line] = readFileSync(join(home, "runs", JSON.parse(run.stdout).runId, "results.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(line.verdict).toMatchObject({ reward: 0, checks: { force_terminated: false } })
    const output = line.output.result
    expect(output.forceQuit).toBe(true)
    expect(output.turns.length).toBe(1)
    expect(output.turns[0].length).toBe(21)
    expect(output.turns[0][0]).toEqual({ response: [{ pwd: "{}" }], calls: ["pwd()"] })
  })

  it("assay equivalence bfcl-multi-turn --corpus: base lines agree; long-context lines without long_context.py are counted as not checked, named, and exit 1", async () => {
    const exec = readFileSync(join(dataDir, "bfcl", "oracle", "multi-turn", "exec-dev.jsonl"), "utf8").trim().split("\n")
    const corpus = join(tempDir(), "few.jsonl")
    // Two base tasks and two long-context ones (the file is in category order)
    writeFileSync(corpus, [...exec.slice(0, 2), ...exec.slice(-2)].join("\n") + "\n")
    const r = await assay(["equivalence", "bfcl-multi-turn", "--corpus", corpus], { ASSAY_BFCL_LONG_CONTEXT: "", ASSAY_DATA_DIR: dataDir })
    if (existsSync(join(dataDir, "bfcl", LONG_CONTEXT_PATH))) {
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain("bfcl-multi-turn: 4 of 4 lines agree with upstream")
    } else {
      expect(r.code).toBe(1)
      expect(r.stdout).toContain("bfcl-multi-turn: 2 of 2 checked lines agree with upstream, 2 not checked here")
      expect(r.stdout).toContain("`assay data pull bfcl-multi-turn` fetches it")
    }
  })
})
