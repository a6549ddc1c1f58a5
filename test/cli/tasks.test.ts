/**
 * Finding tasks: `assay tasks` lists a benchmark's ids with their stratum; `--task` takes an id,
 * a glob or a stratum; a typo is refused naming the nearest ids; the do-nothing candidate has one
 * name on every benchmark.
 */
import { describe, expect, it } from "vitest"
import { assay, tempDir } from "./support.ts"

const planJson = async (args: ReadonlyArray<string>) => {
  const r = await assay(["plan", ...args, "--home", tempDir(), "--json"])
  expect(r.code, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as {
    benchmarks: ReadonlyArray<{ name: string; tasks: number }>
    candidates: ReadonlyArray<string>
    cells: { total: number }
  }
}

describe("assay tasks", () => {
  it("lists BIRD's 500 task ids with their stratum, in text and JSON; --stratum narrows them", async () => {
    const text = await assay(["tasks", "bird"])
    expect(text.code, text.stderr).toBe(0)
    const lines = text.stdout.trim().split("\n")
    expect(lines).toHaveLength(500)
    expect(lines[0]).toMatch(/^000-debit_card_specializing\s+simple$/)
    const json = JSON.parse((await assay(["tasks", "bird", "--json"])).stdout) as { benchmark: string; tasks: ReadonlyArray<{ id: string; stratum: string | null }> }
    expect(json.tasks).toHaveLength(500)
    expect(json.tasks.map((t) => t.id)).toEqual(lines.map((l) => l.split(/\s+/)[0]))
    const simple = JSON.parse((await assay(["tasks", "bird", "--stratum", "simple", "--json"])).stdout) as typeof json
    expect(simple.tasks.length).toBeGreaterThan(0)
    expect(simple.tasks.length).toBeLessThan(500)
    expect(simple.tasks.every((t) => t.stratum === "simple")).toBe(true)
  })

  it("an unknown stratum is refused in one line naming the strata (exit 2)", async () => {
    const r = await assay(["tasks", "bird", "--stratum", "simpl"])
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split("\n")).toHaveLength(1)
    expect(r.stderr).toMatch(/--stratum simpl: no such stratum in bird \(did you mean simple/)
  })
})

describe("--task", () => {
  it("takes a glob, with or without the benchmark's name, and a stratum", async () => {
    const ids = (JSON.parse((await assay(["tasks", "bird", "--json"])).stdout) as { tasks: ReadonlyArray<{ id: string; stratum: string }> }).tasks
    const debit = ids.filter((t) => t.id.includes("debit")).length
    expect(debit).toBeGreaterThan(1)
    expect((await planJson(["--benchmark", "bird", "--candidate", "gold", "--task", "bird/*debit*"])).benchmarks[0]!.tasks).toBe(debit)
    expect((await planJson(["--benchmark", "bird", "--candidate", "gold", "--task", "*debit*"])).benchmarks[0]!.tasks).toBe(debit)
    const simple = ids.filter((t) => t.stratum === "simple").length
    expect((await planJson(["--benchmark", "bird", "--candidate", "gold", "--task", "simple"])).benchmarks[0]!.tasks).toBe(simple)
    // Another benchmark's prefix leaves this one alone; a glob naming nothing anywhere is refused.
    const both = await planJson(["--benchmark", "bird", "--benchmark", "ledger", "--candidate", "gold", "--task", "bird/*debit*", "--task", "ledger/ledger-01"])
    expect(both.benchmarks.map((b) => b.tasks)).toEqual([debit, 1])
  })

  it("a typo is refused in one line naming the nearest id (exit 2)", async () => {
    const r = await assay(["plan", "--benchmark", "bird", "--candidate", "gold", "--task", "0-debit_card_specializing"])
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split("\n")).toHaveLength(1)
    expect(r.stderr).toMatch(/no task 0-debit_card_specializing in bird \(did you mean 000-debit_card_specializing[,?]/)
    const glob = await assay(["plan", "--benchmark", "ledger", "--candidate", "gold", "--task", "ledger/*nothing*"])
    expect(glob.code).toBe(2)
    expect(glob.stderr).toMatch(/^assay: no task ledger\/\*nothing\*/)
  })
})

describe("the do-nothing candidate", () => {
  // The benchmarks whose data is in the repository or the shared data folder.
  const benchmarks = ["ledger", "bfcl", "bird", "contract-review", "tau2-retail", "tau2-airline", "tau2-telecom", "tau2-banking", "competitor-discovery", "coding-repair"]
  it("is `none` on every benchmark with a roster, and `echo` is the same candidate", async () => {
    // One plan of every benchmark: a name missing from a roster is refused; two names for two
    // candidates would be two candidates, and a benchmark without it would have no cells of it.
    const all = benchmarks.flatMap((b) => ["--benchmark", b])
    const both = await planJson([...all, "--candidate", "none", "--candidate", "echo"])
    expect(both.candidates).toEqual(["echo"])
    expect(both.benchmarks.map((b) => b.name)).toEqual(benchmarks)
    expect(both.cells.total).toBe(both.benchmarks.reduce((n, b) => n + b.tasks, 0))
  }, 120_000)
})
