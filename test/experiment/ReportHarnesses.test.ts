/** A harness run's report names the agent CLIs' versions it ran, in every rendering and in its JSON. */
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
