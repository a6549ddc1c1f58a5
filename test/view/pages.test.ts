/**
 * What the viewer's pages promise without a server: credentials never shown, loopback told
 * apart, and the HTML report's cost-plot caption naming the staircase only when it is drawn.
 */
import { describe, expect, it } from "@effect/vitest"
import { renderHtml, type Report } from "../../src/experiment/Report.ts"
import { redact } from "../../src/view/Pages.ts"
import { isLoopback } from "../../src/view/Server.ts"
import { sampleReport } from "../experiment/sampleReport.ts"

describe("the viewer's pages", () => {
  it("credentials are redacted wherever they sit in a record, and other fields are left as they are", () => {
    const record = {
      request: { headers: { Authorization: "Bearer sk-live-ABCDEFGH12345", "x-api-key": "sk-ant-XYZ", accept: "application/json" } },
      body: { api_key: "AIza-123", inputTokens: 12, note: "sent with Bearer abcdefghijkl" },
      list: [{ password: "hunter2" }, "plain"]
    }
    const shown = JSON.stringify(redact(record))
    for (const secret of ["sk-live-ABCDEFGH12345", "sk-ant-XYZ", "AIza-123", "abcdefghijkl", "hunter2"]) expect(shown).not.toContain(secret)
    expect(redact(record)).toMatchObject({ body: { inputTokens: 12 }, list: [{ password: "[redacted]" }, "plain"], request: { headers: { accept: "application/json" } } })
  })

  it("only loopback addresses count as loopback", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1"]) expect(isLoopback(host), host).toBe(true)
    for (const host of ["0.0.0.0", "::", "192.168.1.10", "example.com", "127.0.0.1.example.com"]) expect(isLoopback(host), host).toBe(false)
  })
})

describe("the HTML report's cost plot caption", () => {
  it("names the dashed staircase when a frontier is drawn", () => {
    const html = renderHtml(sampleReport)
    expect(html).toContain('class="frontier"')
    expect(html).toContain("dashed staircase")
  })

  it("says no frontier is drawn when every candidate is a scripted reference (gold and echo)", () => {
    const references: Report = { ...sampleReport, scorecards: sampleReport.scorecards.filter((s) => s.reference === true), comparisons: [] }
    expect(references.scorecards.length).toBeGreaterThan(0)
    const html = renderHtml(references)
    expect(html).not.toContain('class="frontier"')
    expect(html).not.toContain("dashed staircase")
    expect(html).toContain("No frontier drawn")
  })
})
