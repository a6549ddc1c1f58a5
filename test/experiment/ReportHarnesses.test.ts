/**
 * A harness run's report names the agent CLIs' versions it ran, and sets each CLI's own count of
 * its tokens beside assay's, in every rendering and in its JSON.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { decodeJson, encodeJson, renderHtml, renderMarkdown, renderText, type Report } from "../../src/experiment/Report.ts"

const report: Report = {
  runId: "r-1",
  experimentId: "e-1",
  home: "/h",
  cells: { total: 0, ran: 0, kept: 0, stale: 0, skipped: 0, faulted: 0 },
  scorecards: [],
  comparisons: [],
  harnesses: { codex: "0.171.0", claude: "2.1.197" }
}

describe("a report's agent CLIs", () => {
  it("are listed by name with their versions in text, Markdown and HTML, and kept through JSON", async () => {
    expect(renderText(report)).toMatch(/agent CLIs\s+claude 2\.1\.197, codex 0\.171\.0/)
    expect(renderMarkdown(report)).toContain("- agent CLIs: claude 2.1.197, codex 0.171.0")
    expect(renderHtml(report)).toContain("<dt>agent CLIs</dt><dd>claude 2.1.197, codex 0.171.0</dd>")
    const again = await Effect.runPromise(Effect.flatMap(encodeJson(report), decodeJson))
    expect(again.harnesses).toEqual(report.harnesses)
    const { harnesses: _, ...modelRun } = report
    expect(renderText(modelRun)).not.toContain("agent CLIs")
  })
})

const counts = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens, cacheReadTokens: 100, cacheWriteTokens: 0 })
const cell = (task: string, candidate: string, cli: ReturnType<typeof counts> | null) => ({
  benchmark: "tau2-retail",
  task,
  candidate,
  repetition: 0,
  reward: 1,
  ended: null,
  faults: [],
  cliUsage: { harness: candidate.split(":")[1]!, assay: counts(1000, 40), cli }
})

describe("a report's agent CLIs' own usage", () => {
  const run: Report = {
    ...report,
    cellResults: [
      cell("0", "harness:claude", counts(1000, 40)),
      // The CLI counted two output tokens more than assay passed it.
      cell("1", "harness:claude", counts(1000, 42)),
      cell("0", "harness:codex", counts(1000, 40)),
      // Ended before it wrote its account.
      cell("1", "harness:codex", null),
      { benchmark: "tau2-retail", task: "0", candidate: "openai:gpt-4o-mini", repetition: 0, reward: 1, ended: null, faults: [] }
    ]
  }

  it("shows assay's count with the CLI's beside it, marking a count where they differ and the cells the CLI reported nothing for", async () => {
    const text = renderText(run)
    expect(text).toContain("agent CLIs' own usage")
    const claude = text.split("\n").find((l) => l.startsWith("harness:claude"))!
    expect(claude).toMatch(/^harness:claude\s+2\s+2,000\s+80 ≠ CLI 82\s+200\s+0\s+≠ 1\s+0$/)
    const codex = text.split("\n").find((l) => l.startsWith("harness:codex"))!
    // Its unreported cell is in neither sum.
    expect(codex).toMatch(/^harness:codex\s+1\s+1,000\s+40\s+100\s+0\s+0\s+1$/)
    expect(text).not.toMatch(/^openai:gpt-4o-mini .*CLI/m)
    expect(renderMarkdown(run)).toContain("| harness:claude | 2 | 2,000 | 80 ≠ CLI 82 | 200 | 0 | ≠ 1 | 0 |")
    expect(renderHtml(run)).toContain("80 ≠ CLI 82")
    // --json --cells keeps each cell's two counts.
    const again = await Effect.runPromise(Effect.flatMap(encodeJson(run, { cells: true }), decodeJson))
    expect(again.cellResults?.[1]?.cliUsage).toEqual(run.cellResults?.[1]?.cliUsage)
    // A model run has no such section.
    expect(renderText(report)).not.toContain("own usage")
  })
})
