/**
 * The report's new figures in every format: the noise floor, the outages kept apart, the
 * comparisons' p, detectable difference and Holm's mark; and `--json` keeps them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { decodeJson, encodeJson, renderHtml, renderMarkdown, renderText, type Report } from "../../src/experiment/Report.ts"
import { formatP } from "../../src/experiment/report/Layout.ts"
import { sampleReport } from "./sampleReport.ts"

const report: Report = {
  ...sampleReport,
  scorecards: sampleReport.scorecards.map((c) =>
    c.candidate === "openai:gpt-4o" && c.stratum === null && c.benchmark === "bfcl"
      ? { ...c, tasks: 40, outages: 3, noise: { repetitions: 3, tasks: 40, flipRate: 0.175, repetitionSd: 0.021, withinShare: 0.31 } }
      : c
  ),
  comparisons: [
    { a: "openai:gpt-4o", b: "openai:gpt-4o-mini", n: 40, difference: 0.1, interval: [0.02, 0.18], benchmark: "bfcl", p: 0.004, minimumDetectable: 0.11, holm: true },
    { a: "openai:gpt-4o", b: "gold", n: 40, difference: -0.1, interval: [-0.2, 0.01], benchmark: "bfcl", p: 0.06, minimumDetectable: 0.12, holm: false },
    { a: "openai:gpt-4o-mini", b: "gold", n: 40, difference: -0.2, interval: [-0.3, -0.1], benchmark: "bfcl", p: 0.0004, minimumDetectable: 0.12, holm: true }
  ],
  outages: [
    { benchmark: "bfcl", task: "simple_1", candidate: "openai:gpt-4o", repetition: 0, reasons: ["unreachable"] },
    { benchmark: "bfcl", task: "simple_2", candidate: "openai:gpt-4o", repetition: 1, reasons: ["rate-limit"] },
    { benchmark: "bfcl", task: "simple_3", candidate: "openai:gpt-4o", repetition: 2, reasons: ["unreachable"] }
  ]
}

describe("the report's numbers", () => {
  it("text shows the noise floor, the outages apart with the promise of a rerun, and how many comparisons Holm's correction kept", () => {
    const text = renderText(report)
    expect(text).toContain("bfcl, noise floor")
    expect(text).toMatch(/openai:gpt-4o +3 +40 +17\.5% +0\.021 +31% +69%/)
    expect(text).toContain("outages: 3 cells ended in an outage (unreachable, rate-limit)")
    expect(text).toContain("running the experiment again runs them")
    expect(text).toContain("bfcl: 3 pairwise comparisons; significant at 5% after Holm's correction: 2 of 3")
    expect(text).toMatch(/0\.004 +±0\.110 +significant/)
    expect(text).toContain("<0.001")
  })

  it("Markdown and HTML say the same", () => {
    const markdown = renderMarkdown(report)
    expect(markdown).toContain("### Noise floor")
    expect(markdown).toContain("## Outages")
    expect(markdown).toContain("2 of 3")
    const html = renderHtml(report)
    expect(html).toContain("<h3>Noise floor</h3>")
    expect(html).toContain('<section class="outages">')
    expect(html).toContain("significant at 5% after Holm&#39;s correction: 2 of 3")
  })

  it("--json keeps every new field", () =>
    Effect.gen(function*() {
      const back = yield* decodeJson(yield* encodeJson(report))
      expect(back.outages).toEqual(report.outages)
      expect(back.comparisons).toEqual(report.comparisons)
      expect(back.scorecards.find((c) => c.noise !== undefined)).toMatchObject({ tasks: 40, outages: 3, noise: { flipRate: 0.175 } })
    }).pipe(Effect.runPromise))
})

describe("a comparison's p as printed", () => {
  it("keeps three decimals, and a p just under 0.05 is never printed as 0.050", () => {
    expect(formatP(0.0004)).toBe("<0.001")
    expect(formatP(0.004)).toBe("0.004")
    expect(formatP(0.0499)).toBe("0.0499")
    expect(formatP(0.04999)).toBe("0.0499")
    expect(formatP(0.05)).toBe("0.050")
    expect(formatP(0.0504)).toBe("0.050")
    expect(formatP(0.5)).toBe("0.500")
  })
})
