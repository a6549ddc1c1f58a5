/**
 * True words: `assay runs` lists a home's runs; the report tells the run's wall time apart from
 * its cells' summed time; a per-Attempt deadline ends as `timeout`; `report --json --format md` is
 * refused; help says what the flags do.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { assay, tempDir } from "./support.ts"

describe("assay runs", () => {
  it("lists each run of a home, newest first, with state, benchmarks, candidates, cells, spend and when", async () => {
    const home = tempDir()
    const first = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--task", "ledger-01", "--yes", "--json", "--home", home])
    expect(first.code, first.stderr).toBe(0)
    const second = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--candidate", "none", "--task", "ledger-0*", "--yes", "--json", "--home", home])
    expect(second.code, second.stderr).toBe(0)
    const ids = [JSON.parse(second.stdout).runId, JSON.parse(first.stdout).runId]
    const json = JSON.parse((await assay(["runs", "--home", home, "--json"])).stdout) as {
      runs: ReadonlyArray<{ runId: string; state: string; benchmarks: ReadonlyArray<string>; candidates: ReadonlyArray<string>; cells: { total: number; written: number }; spend: { usd: number }; startedAt: string }>
    }
    expect(json.runs.map((r) => r.runId)).toEqual(ids)
    expect(json.runs[0]).toMatchObject({ state: "finished", benchmarks: ["ledger"], candidates: ["gold", "echo"], cells: { total: 18, written: 17 }, spend: { usd: 0 } })
    expect(Date.parse(json.runs[0]!.startedAt)).toBeGreaterThan(0)
    const text = await assay(["runs", "--home", home])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout.split("\n")[0]).toMatch(/^run\s+state\s+started\s+cells\s+spend\s+benchmarks\s+candidates$/)
    expect(text.stdout).toContain(ids[0])
    expect(text.stdout).toContain(ids[1])
    const none = await assay(["runs", "--home", tempDir()])
    expect(none.code).toBe(2)
    expect(none.stderr).toMatch(/^assay: no assay home at /)
  })
})

describe("the report", () => {
  it("shows the run's wall time apart from the cells' summed time; --json --format md is refused in one line", async () => {
    const home = tempDir()
    const run = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--yes", "--json", "--home", home])
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout) as { wallSeconds: number; scorecards: ReadonlyArray<{ wallSeconds: number; stratum: string | null }> }
    expect(report.wallSeconds).toBeGreaterThan(0)
    const text = await assay(["report", "--home", home])
    expect(text.stdout).toMatch(/^time\s+\S+ wall time; \S+ of cell time summed over the cells scored$/m)
    expect(text.stdout).toMatch(/ cell time\n/)
    // Run again: every cell kept, and the line says their time is from earlier runs.
    const again = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--yes", "--home", home])
    expect(again.stdout).toMatch(/^time\s+\S+ wall time; \S+ of cell time summed over the cells scored, the 20 kept from earlier runs included$/m)
    const html = await assay(["report", "--home", home, "--format", "html"])
    expect(html.stdout).toContain("<dt>time</dt><dd>")
    const refused = await assay(["report", "--json", "--format", "md", "--home", home])
    expect(refused.code).toBe(2)
    expect(refused.stdout).toBe("")
    expect(refused.stderr.trim().split("\n")).toEqual(["assay: --json prints the report as JSON; --format md renders it otherwise: give one of them"])
  })

  it("plan --faults shows the faulty experiment a run --faults made: its id and its cells kept", async () => {
    const home = tempDir()
    const faulty = ["--benchmark", "ledger", "--candidate", "gold", "--faults", "7:0.3", "--home", home]
    const run = await assay(["run", ...faulty, "--yes", "--json"])
    expect(run.code, run.stderr).toBe(0)
    const plan = await assay(["plan", ...faulty, "--json"])
    expect(plan.code, plan.stderr).toBe(0)
    const planned = JSON.parse(plan.stdout) as { experimentId: string; cells: { total: number; kept: number } }
    expect(planned.experimentId).toBe(JSON.parse(run.stdout).experimentId)
    expect(planned.cells).toMatchObject({ total: 20, kept: 20 })
    const plain = JSON.parse((await assay(["plan", "--benchmark", "ledger", "--candidate", "gold", "--home", home, "--json"])).stdout) as typeof planned
    expect(plain.experimentId).not.toBe(planned.experimentId)
  })

  it.live("an Attempt past --timeout-secs ends as timeout, not budget-exceeded", () =>
    Effect.gen(function*() {
      const home = tempDir()
      const server = yield* LoopbackServer.start([{ repeat: true, text: "done", usage: { input: 10, output: 1 }, delayMs: 4000 }])
      const env = { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" }
      const run = yield* Effect.promise(() =>
        assay(["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--task", "ledger-01", "--timeout-secs", "1", "--yes", "--home", home], env)
      )
      expect(run.code, run.stderr).toBe(0)
      const cells = JSON.parse((yield* Effect.promise(() => assay(["report", "--json", "--cells", "--home", home]))).stdout).cellResults as ReadonlyArray<{ ended: string | null }>
      expect(cells.map((c) => c.ended)).toEqual(["timeout"])
      expect(run.stdout).toContain("ended:timeout")
      expect(run.stdout).not.toContain("budget-exceeded")
    }).pipe(Effect.scoped), 60_000)
})

describe("help", () => {
  it("says --faults faults every candidate, --model takes openai-chat:, and the top level names exit 130 and 3", async () => {
    const run = (await assay(["run", "--help"])).stdout.replace(/\s+/g, " ")
    expect(run).toContain("Every candidate's cells are faulted")
    expect(run).not.toContain("Model runs only")
    expect(run).toContain("openai-chat:MODEL")
    expect(run).toContain("--max-output-tokens N")
    const top = (await assay(["--help"])).stdout.replace(/\s+/g, " ")
    expect(top).toContain("130 stopped by Ctrl-C or SIGTERM")
    expect(top).toContain("3 stopped by budget")
    expect(top).toMatch(/ tasks /)
    expect(top).toMatch(/ runs /)
  })
})
