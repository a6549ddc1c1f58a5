/**
 * `assay import bfcl DIR`: BFCL result files written as upstream's runner writes them become a run
 * of `import:NAME`, one graded Attempt per line, which `report` lists and `replay` re-grades alike.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { CATEGORIES, loadAll, UNPASSABLE_TASKS } from "../../providers/bfcl/data.ts"
import { goldAnswer } from "../../providers/bfcl/gold.ts"
import { fromPlain } from "../../providers/bfcl/pyjson.ts"
import { fcResult, line, promptResult, writeResultFiles } from "../bfcl/resultFiles.ts"
import { assay, type Card, tempDir } from "./support.ts"

const tasks = Effect.runSync(loadAll())

/** The first `n` passable tasks of every category. */
const sample = (n: number) => CATEGORIES.flatMap((c) => tasks.filter((t) => t.category === c && !UNPASSABLE_TASKS.has(t.id)).slice(0, n))

/** The gold answers of `sample(n)` as one model's result files, in function-calling or prompt format. */
const goldFiles = (dir: string, format: "fc" | "prompt", n: number) => {
  const byCategory = new Map<string, Array<string>>()
  for (const t of sample(n)) {
    const answer = goldAnswer(t)
    const result = format === "fc" ? fcResult(answer, "None of the functions can be used for this.") : promptResult(answer, "I cannot do this with the functions given.")
    byCategory.set(t.category, [...(byCategory.get(t.category) ?? []), line(t.id, result)])
  }
  writeResultFiles(dir, byCategory)
  return sample(n).length
}

/** Upstream's verdict for an answer, from the oracle corpus (its answers as upstream decoded them). */
const oracleVerdict = (id: string, answer: unknown): { readonly valid: boolean; readonly error_type: string | null } => {
  const lines = readFileSync(join(process.env["ASSAY_DATA_DIR"] ?? "", "bfcl", "oracle", "verdicts-dev.jsonl"), "utf8").split("\n")
  const found = lines.filter((l) => l !== "").map((l) => JSON.parse(l)).find((o) => o.id === id && JSON.stringify(o.answer) === JSON.stringify(answer))
  if (found === undefined) throw new Error(`no oracle verdict for ${id} ${JSON.stringify(answer)}`)
  return found
}

/** Each line's verdict in a run, by task, from its results.jsonl. */
const verdicts = (home: string, runId: string): ReadonlyMap<string, { reward: number; details: { errorType: string | null } }> =>
  new Map(readFileSync(join(home, "runs", runId, "results.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).map((a) => [a.task, a.verdict]))

const whole = (report: { scorecards: ReadonlyArray<Card> }, candidate: string) => report.scorecards.find((c) => c.candidate === candidate && c.stratum === null)

describe("assay import bfcl", { timeout: 300_000 }, () => {
  it("the gold answers in function-calling and prompt format score 1 per line; report lists the candidate and replay gives the same verdicts", async () => {
    const root = tempDir()
    const home = join(root, "home")
    const fc = join(root, "gpt-gold-2025-FC")
    const n = goldFiles(fc, "fc", 3)
    // A category assay does not run, and an id that is no task: each said in one line, neither graded.
    writeResultFiles(fc, new Map([["simple_java", [line("simple_java_0", [{ f: "{}" }])]]]))
    appendFileSync(join(fc, "non_live", "BFCL_v4_simple_python_result.json"), line("simple_python_9999", [{ f: "{}" }]) + "\n")

    const imported = await assay(["import", "bfcl", fc, "--home", home, "--json"])
    expect(imported.code, imported.stderr).toBe(0)
    const report = JSON.parse(imported.stdout)
    expect(report.import).toMatchObject({ candidate: "import:gpt-gold-2025-FC", format: "fc" })
    expect(report.import.why).toMatch(/^detected/)
    expect(report.import.notes.join("\n")).toMatch(/simple_java/)
    expect(report.import.notes.join("\n")).toMatch(/1 id in the files names no bfcl task \(simple_python_9999\)/)
    expect(report.cells).toMatchObject({ total: n, ran: n })
    expect(whole(report, "import:gpt-gold-2025-FC")).toMatchObject({ n, meanReward: 1, tokens: { input: 100 * n, output: 20 * n } })

    const prompt = join(root, "gpt-gold-2025")
    goldFiles(prompt, "prompt", 3)
    const text = await assay(["import", "bfcl", prompt, "--home", home, "--candidate", "gold", "--json"])
    expect(text.code, text.stderr).toBe(0)
    const paired = JSON.parse(text.stdout)
    expect(paired.import).toMatchObject({ candidate: "import:gpt-gold-2025+text", format: "prompt" })
    expect(whole(paired, "import:gpt-gold-2025+text")).toMatchObject({ n, meanReward: 1 })
    expect(whole(paired, "gold")).toMatchObject({ n, meanReward: 1 })
    expect(paired.comparisons).toContainEqual(expect.objectContaining({ n, difference: 0 }))

    const listed = await assay(["report", paired.runId, "--home", home, "--json"])
    expect(listed.code, listed.stderr).toBe(0)
    expect(JSON.parse(listed.stdout).scorecards.map((c: Card) => c.candidate)).toContain("import:gpt-gold-2025+text")

    for (const runId of [report.runId, paired.runId]) {
      const replayed = await assay(["replay", runId, "--home", home, "--json"])
      expect(replayed.code, replayed.stderr).toBe(0)
      expect(JSON.parse(replayed.stdout)).toMatchObject({ replayed: runId === report.runId ? n : 2 * n, differ: [], missing: [], notReplayable: [] })
    }
  })

  it("lines with mistakes get upstream's verdicts, in both formats; a changed file is graded again, an unchanged one kept", async () => {
    const root = tempDir()
    const home = join(root, "home")
    const wrongValue = [{ calculate_triangle_area: { base: 110, height: 5 } }]
    const wrongFunction = [{ nonexistent_function: { base: 6, height: 10 } }]
    const irrelevantCall = [{ calculate_triangle_area: { base: 10, height: 5 } }]
    const expected = {
      simple_python_0: oracleVerdict("simple_python_0", wrongValue).error_type,
      simple_python_10: oracleVerdict("simple_python_10", wrongFunction).error_type,
      // Reasoned from upstream's eval runner: a decoding exception, and a call where none is due.
      simple_python_2: "ast_decoder:decoder_failed",
      irrelevance_0: "irrelevance_error:decoder_success"
    }
    expect(expected).toMatchObject({ simple_python_0: "value_error:others", simple_python_10: "simple_function_checker:wrong_func_name" })
    for (const format of ["fc", "prompt"] as const) {
      const dir = join(root, `mistakes-${format}`)
      // The answers above as the runner stores them: arguments as json.dumps text, or Python call text.
      const stored = (answer: ReadonlyArray<unknown>) => (format === "fc" ? fcResult(answer.map(fromPlain)) : promptResult(answer.map(fromPlain)))
      writeResultFiles(dir, new Map([
        ["simple_python", [
          line("simple_python_0", stored(wrongValue)),
          line("simple_python_2", format === "fc" ? "The hypotenuse is about 6.4." : "[math.hypot(x=4, y=5"),
          line("simple_python_10", stored(wrongFunction))
        ]],
        ["irrelevance", [line("irrelevance_0", stored(irrelevantCall))]]
      ]))
      const args = ["import", "bfcl", dir, "--home", home, "--format", format, "--json"]
      const run = await assay(args)
      expect(run.code, run.stderr).toBe(0)
      const report = JSON.parse(run.stdout)
      expect(report.cells).toMatchObject({ total: 4, ran: 4 })
      const got = verdicts(home, report.runId)
      for (const [id, errorType] of Object.entries(expected)) expect(got.get(id), `${format} ${id}`).toMatchObject({ reward: 0, details: { errorType } })

      const replayed = await assay(["replay", report.runId, "--home", home, "--json"])
      expect(JSON.parse(replayed.stdout)).toMatchObject({ replayed: 4, same: 4, differ: [] })

      if (format === "fc") {
        const again = await assay(args)
        expect(JSON.parse(again.stdout).cells).toMatchObject({ ran: 0, kept: 4 })
        // The wrong value put right: the file's content changed, so its lines are graded anew.
        const file = join(dir, "non_live", "BFCL_v4_simple_python_result.json")
        writeFileSync(file, readFileSync(file, "utf8").replace("110", "10"))
        const changed = await assay(args)
        const rerun = JSON.parse(changed.stdout)
        expect(rerun.cells).toMatchObject({ stale: 4, ran: 4 })
        expect(verdicts(home, rerun.runId).get("simple_python_0")).toMatchObject({ reward: 1 })
      }
    }
  })

  it("a folder without result files, a benchmark it cannot import, a bad --format and a bad --as are refused, exit 2", async () => {
    const empty = tempDir()
    for (const args of [["import", "bfcl", empty], ["import", "tau2-retail", empty], ["import", "bfcl", empty, "--format", "xml"], ["import", "bfcl", empty, "--as", "my model"]]) {
      const r = await assay([...args, "--home", join(empty, "home")])
      expect(r.code, args.join(" ")).toBe(2)
      expect(r.stderr.trim().split("\n")).toHaveLength(1)
    }
  })

  it("run refuses an imported candidate up front: its outputs come from assay import, exit 2 with one line", async () => {
    const home = tempDir()
    const r = await assay(["run", "--benchmark", "bfcl", "--candidate", "import:someone", "--task", "simple_python_0", "--yes", "--home", home])
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split("\n")).toHaveLength(1)
    expect(r.stderr).toContain("assay import bfcl DIR --as NAME")
  })
})
