/**
 * What the viewer's pages promise without a server: credentials never shown, loopback told
 * apart, the report's sections on a run page without what the page already says, an Attempt's
 * faults placed where they happened, and where two candidates' tool calls part.
 */
import { describe, expect, it } from "@effect/vitest"
import { renderHtml, type Report } from "../../src/experiment/Report.ts"
import { type Attempt, noUsage, type RecordedEffect, SESSION_ENDED_KIND } from "../../src/schema/Attempt.ts"
import { callsOf, firstDifference, timelineOf } from "../../src/view/Data.ts"
import { attemptPage, expectedActual, redact, reportSections, runPage } from "../../src/view/Pages.ts"
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

describe("a run page's paired comparisons", () => {
  it("are signed, with their interval signed too, p and Holm's mark, as the report has them", () => {
    const report: Report = {
      ...sampleReport,
      comparisons: [{ a: "openai:gpt-4o", b: "openai:gpt-4o-mini", n: 120, difference: -0.083, interval: [-0.15, -0.017], benchmark: "bfcl", stratum: null, p: 0.012, holm: true }]
    }
    const brief = { runId: "r-1", experimentId: report.experimentId, startedAt: "2026-12-07T00:00:00Z", finishedAt: null, state: "finished" as const, benchmarks: ["bfcl"], candidates: [], cells: { total: 0, written: 0, kept: null, skipped: 0 } }
    const html = runPage(brief, report, null, [])
    expect(html).toContain(">−0.083<")
    expect(html).toContain("[−0.150, −0.017]")
    expect(html).toContain(">0.012<")
    expect(html).toContain(">significant<")
  })
})

describe("a run page's report sections", () => {
  it("leave out the report's own title and run facts, which the page's header shows once", () => {
    const html = reportSections(sampleReport)
    expect(renderHtml(sampleReport)).toContain("<h1>assay report</h1>")
    expect(html).not.toContain("<h1>")
    expect(html).not.toContain(`<dd>${sampleReport.experimentId}</dd>`)
    expect(html).toContain('class="plot score"')
  })

  it("leave out the cost plot when no candidate has a known cost, and keep it when one has", () => {
    expect(reportSections(sampleReport)).toContain('class="plot cost"')
    const unknown: Report = { ...sampleReport, scorecards: sampleReport.scorecards.map((s) => ({ ...s, costUsd: null })) }
    const html = reportSections(unknown)
    expect(html).not.toContain('class="plot cost"')
    expect(html).not.toContain("no candidate has a known cost")
    expect(html).toContain('class="plot score"')
  })
})

describe("what the evaluator says of a failed check", () => {
  it("pairs expected and actual values wherever the details name them so", () => {
    const details = { ex: 0, goldRows: [[1]], predRows: [[2]], nested: { expected: "a", actual: "b" }, unrelated: { gold: 1 } }
    expect(expectedActual(details)).toEqual([
      { where: "Rows", expected: [[1]], actual: [[2]] },
      { where: "nested", expected: "a", actual: "b" }
    ])
    expect(expectedActual({ errors: ["wrong type"] })).toEqual([])
  })
})

const effect = (kind: string, key: string, occurrence: number, outcome: RecordedEffect["outcome"] = { ok: null }): RecordedEffect => ({
  kind,
  key,
  occurrence,
  request: {},
  outcome
})

const attemptWith = (parts: Pick<Attempt, "recording" | "faults" | "output"> & { readonly ended?: Attempt["verdict"]["ended"] }): Attempt => ({
  environmentId: "sha256:env",
  agentId: "sha256:agent",
  benchmark: "ledger",
  task: "ledger-01",
  stratum: null,
  candidate: "gold",
  repetition: 0,
  inputsId: "sha256:inputs",
  evidence: null,
  output: parts.output,
  verdict: { reward: 0, checks: { world: false }, notEvaluated: [], trust: "deterministic", ended: parts.ended ?? null },
  usage: noUsage,
  faults: parts.faults,
  finalWorld: null,
  recording: parts.recording,
  receipt: { evidenceId: "e", outputId: "o", verdictId: "v", recordingId: "r", library: "assay/test" },
  startedAt: "2026-01-01T00:00:00.000Z"
})

describe("an Attempt's timeline", () => {
  it("places an injected fault before the call that got through after it, and says what came next", () => {
    // The faults layer counts every call; the recording only those that got through: the model's
    // 2nd call faulted, so the recording's #2 is the faults layer's #3 (the retry).
    const attempt = attemptWith({
      output: null,
      faults: [{ key: "model/generate:agent", occurrence: 2, reason: "rate-limit" }, { key: "tool/write:transfer", occurrence: 1, reason: "server-error" }],
      recording: [effect("model/generate", "agent", 1), effect("tool/read", "find_accounts", 1), effect("model/generate", "agent", 2)]
    })
    const steps = timelineOf(attempt).map((s) => [s.kind, s.key, s.occurrence, s.outcome === null ? "not sent" : "sent", s.fault?.injected ?? null, s.fault?.then ?? null])
    expect(steps).toEqual([
      ["model/generate", "agent", 1, "sent", null, null],
      ["tool/read", "find_accounts", 1, "sent", null, null],
      ["model/generate", "agent", 2, "not sent", true, "retried: ok"],
      ["model/generate", "agent", 2, "sent", null, null],
      ["tool/write", "transfer", 1, "not sent", true, "not called again"]
    ])
  })

  it("marks a fault met live (in the recording) as live, and the last fault as ending the Attempt when it did", () => {
    const attempt = attemptWith({
      output: null,
      faults: [],
      recording: [effect("model/generate", "agent", 1, { error: { reason: "server-error", message: "502" } })],
      ended: { reason: "fault", detail: "server-error", injected: false }
    })
    expect(timelineOf(attempt).map((s) => s.fault)).toEqual([{ injected: false, reason: "server-error", then: "the Attempt ended in this fault" }])
  })

  it("shows how a bridged CLI's session ended as that, never as an ok outcome", () => {
    const ended = effect(SESSION_ENDED_KIND, "model/generate:agent", 1, { ok: { call: { kind: "model/generate", key: "agent" }, failure: { _tag: "EffectFault", reason: "rate-limit" } } })
    const attempt = attemptWith({ output: null, faults: [], recording: [effect("model/generate", "agent", 1), ended], ended: { reason: "fault", detail: "rate-limit", injected: true } })
    const rows = attemptPage({ id: "a", runId: "r", attempt }).split("<tr").filter((row) => row.includes(">harness/ended<"))
    expect(rows).toHaveLength(1)
    expect(rows[0]).toContain("the session ended")
    expect(rows[0]).not.toContain("<summary>ok</summary>")
  })
})

describe("two candidates' tool calls", () => {
  const transcript = (calls: ReadonlyArray<readonly [string, Record<string, unknown>]>) => ({
    transcript: [
      { role: "user", content: "do it" },
      ...calls.map(([name, args], i) => ({ role: "assistant", content: null, toolCalls: [{ id: `c${i}`, name, arguments: args }] }))
    ]
  })

  it("part at the first call whose name or arguments differ (key order aside), or where one stops", () => {
    const a = callsOf(transcript([["find", { owner: "Ada", limit: 2 }], ["transfer", { amount: 5 }]]))
    const b = callsOf(transcript([["find", { limit: 2, owner: "Ada" }], ["transfer", { amount: 6 }]]))
    expect(a.map((c) => [c.message, c.index, c.name])).toEqual([[1, 0, "find"], [2, 1, "transfer"]])
    expect(firstDifference(a, b)).toBe(1)
    expect(firstDifference(a, a)).toBeNull()
    expect(firstDifference(a, a.slice(0, 1))).toBe(1)
    expect(firstDifference([], a)).toBe(0)
  })

  it("count the assistant's calls only: a simulated user's own calls (tau2's messages) are the environment's", () => {
    const output = { messages: [{ role: "user", content: null, toolCalls: [{ id: "u", name: "toggle_airplane_mode", arguments: {} }] }, { role: "assistant", content: null, toolCalls: [{ id: "a", name: "get_user", arguments: { id: 1 } }] }] }
    expect(callsOf(output).map((c) => c.name)).toEqual(["get_user"])
  })
})
