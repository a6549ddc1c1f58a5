import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import {
  decodeJson,
  encodeJson,
  formatCost,
  frontiers,
  renderHtml,
  renderMarkdown,
  renderText
} from "../../src/experiment/Report.ts"
import { sampleReport } from "./sampleReport.ts"

/** The blocks of lines between blank lines that look like tables (a header then rows). */
const blocks = (text: string): ReadonlyArray<ReadonlyArray<string>> =>
  text
    .split("\n\n")
    .map((block) => block.split("\n").filter((line) => line.length > 0))

describe("the --json document", () => {
  it.effect("carries DESIGN.md's stable fields and reads back to the same report", () =>
    Effect.gen(function* () {
      const text = yield* encodeJson(sampleReport)
      const json = JSON.parse(text)
      expect(Object.keys(json)).toEqual(expect.arrayContaining(["runId", "experimentId", "home", "cells", "scorecards", "comparisons"]))
      expect(Object.keys(json.cells).sort()).toEqual(["faulted", "kept", "ran", "skipped", "stale", "total"])
      expect(Object.keys(json.scorecards[0])).toEqual(
        expect.arrayContaining([
          "candidate", "benchmark", "stratum", "n", "meanReward", "interval", "passRate",
          "failures", "tokens", "costUsd", "wallSeconds"
        ])
      )
      expect(Object.keys(json.comparisons[0])).toEqual(expect.arrayContaining(["a", "b", "n", "difference", "interval"]))
      const unknown = json.scorecards.find((s: { candidate: string }) => s.candidate.startsWith("anthropic"))
      expect(unknown.costUsd).toBeNull()
      expect(yield* decodeJson(text)).toEqual(sampleReport)
    }))

  it.effect("refuses a number JSON cannot carry rather than printing null", () =>
    Effect.gen(function* () {
      const [first, ...rest] = sampleReport.scorecards
      if (first === undefined) return yield* Effect.die("sample has no scorecard")
      const broken = { ...sampleReport, scorecards: [{ ...first, meanReward: Number.NaN }, ...rest] }
      expect(Exit.isFailure(yield* Effect.exit(encodeJson(broken)))).toBe(true)
    }))

  it("names each benchmark's frontier, leaving out reference candidates and unknown costs", () => {
    expect(frontiers(sampleReport.scorecards)).toEqual([
      { benchmark: "bfcl", candidates: ["openai:gpt-4o-mini", "openai:gpt-4o"] },
      { benchmark: "tau2", candidates: ["openai:gpt-4o"] }
    ])
  })
})

describe("renderText", () => {
  const text = renderText(sampleReport)

  it("prints unknown cost as unknown, never as $0", () => {
    expect(formatCost(null)).toBe("unknown")
    expect(formatCost(0)).toBe("$0.00")
    expect(formatCost(0.0042)).toBe("$0.0042")
    expect(formatCost(1234.5)).toBe("$1,234.50")
    const row = text.split("\n").find((line) => line.startsWith("anthropic:claude-<sonnet>|x  118"))
    expect(row).toMatch(/ unknown +1h 02m$/)
    expect(row).not.toContain("$")
  })

  it("aligns every table's columns", () => {
    const tables = blocks(text).filter((b) => /^(candidate|check|a) /.test(b[1] ?? ""))
    // bfcl: whole, simple, multiple, failures; tau2: whole, retail, failures; the comparisons.
    expect(tables.length).toBe(8)
    for (const [, header = "", ...rows] of tables) {
      // Cells are separated by two spaces or more; each column lines up on its left or right edge.
      const spans = (line: string) => [...line.matchAll(/\S+(?: \S+)*/g)].map((m) => [m.index ?? 0, (m.index ?? 0) + m[0].length] as const)
      const lines = [header, ...rows].map(spans)
      const columns = lines[0]?.length ?? 0
      for (const cells of lines) expect(cells.length).toBe(columns)
      for (let i = 0; i < columns; i++) {
        const starts = new Set(lines.map((cells) => cells[i]?.[0]))
        const ends = new Set(lines.map((cells) => cells[i]?.[1]))
        expect(starts.size === 1 || ends.size === 1).toBe(true)
      }
    }
  })

  it("shows a table per stratum, pass^k, the frontier and the comparisons", () => {
    expect(text).toContain("bfcl, whole benchmark\n")
    expect(text).toContain("bfcl, simple\n")
    expect(text).toContain("bfcl, multiple\n")
    expect(text).toContain("tau2, retail\n")
    expect(text).toContain("^1 0.55 ^2 0.41 ^4 0.28")
    expect(text).toContain("frontier: openai:gpt-4o-mini (0.783 at $0.22) → openai:gpt-4o (0.867 at $3.59)")
    expect(text).toContain("+0.025  [−0.042, +0.093]")
    expect(text).toContain("warning: 3 cells faulted")
  })

  it("renders the same report to the same text", () => {
    expect(renderText(sampleReport)).toBe(text)
  })

  it("shows what judging cost in a column of its own, only where a judge was asked", () => {
    expect(text).not.toContain("judging")
    const [first, ...rest] = sampleReport.scorecards
    const judged = { ...sampleReport, scorecards: [{ ...first!, judging: { calls: 40, tokens: { input: 36000, output: 1600 }, costUsd: 0.0064 } }, ...rest] }
    const lines = renderText(judged).split("\n")
    const header = lines.find((l) => l.startsWith("candidate ") && l.endsWith("judging"))
    expect(header).toBeDefined()
    expect(lines.find((l) => l.startsWith(`${first!.candidate} `) && l.endsWith("$0.0064 (40 calls)"))).toBeDefined()
  })
})

describe("renderMarkdown", () => {
  const markdown = renderMarkdown(sampleReport)

  it("writes tables whose rows all have the header's number of cells, pipes in names escaped", () => {
    const tables = blocks(markdown).filter((b) => b[0]?.startsWith("|"))
    expect(tables.length).toBe(8)
    const cells = (line: string) => line.replace(/\\\|/g, "").split("|").length
    for (const [header = "", ...rows] of tables) for (const row of rows) expect(cells(row)).toBe(cells(header))
    expect(markdown).toContain("anthropic:claude-<sonnet>\\|x")
    expect(markdown).toContain("| unknown |")
  })
})

describe("renderHtml", () => {
  const html = renderHtml(sampleReport)

  it("is one self-contained file: no script, nothing loaded from elsewhere", () => {
    expect(html.startsWith("<!doctype html>")).toBe(true)
    expect(html).not.toMatch(/<script|\bsrc=|\bhref=|url\(|@import|@font-face|<link/i)
    expect(html).toContain("default-src 'none'")
  })

  it("draws the score, score–cost and failure plots per benchmark and the comparisons", () => {
    expect(html.match(/<svg /g)?.length).toBe(3 + 3 + 1)
    expect(html).toContain('aria-label="Mean reward with its 95% interval per candidate, bfcl"')
    expect(html).toContain('aria-label="Mean reward against list-price cost, bfcl"')
    expect(html).toContain('aria-label="Failures per check and candidate, tau2"')
    expect(html).toContain('class="frontier"')
    expect(html).toContain("Cost unknown, not placed: anthropic:claude-&lt;sonnet&gt;|x.")
  })

  it("escapes names and shows unknown cost as unknown", () => {
    expect(html).not.toContain("<sonnet>")
    expect(html).toContain('<td class="right unknown">unknown</td>')
  })
})

describe("reports with little in them", () => {
  const empty = {
    runId: "run-empty",
    experimentId: "sha256:00",
    home: "/tmp/home",
    cells: { total: 0, ran: 0, kept: 0, stale: 0, skipped: 0, faulted: 0 },
    scorecards: [],
    comparisons: []
  }

  it("render a run with no scorecard in every format", () => {
    expect(renderText(empty)).toContain("cells       total 0 · ran 0")
    expect(renderMarkdown(empty)).toContain("# assay report run-empty")
    expect(renderHtml(empty)).not.toContain("<svg")
  })

  it("say that no candidate has a known cost instead of placing them at $0", () => {
    const unknownCosts = {
      ...empty,
      scorecards: sampleReport.scorecards
        .filter((s) => s.benchmark === "bfcl" && s.stratum === null)
        .map((s) => ({ ...s, costUsd: null, reference: false }))
    }
    expect(renderText(unknownCosts)).toContain("bfcl, score–cost frontier: no candidate with a known cost; cost unknown, not placed: gold,")
    const html = renderHtml(unknownCosts)
    expect(html).toContain("no candidate has a known cost")
    expect(html).not.toContain("$0.00")
  })

  it("say that scripted references are not placed, rather than that no cost is known beside their $0.00", () => {
    const referencesOnly = {
      ...empty,
      scorecards: sampleReport.scorecards
        .filter((s) => s.benchmark === "bfcl" && s.stratum === null)
        .slice(0, 2)
        .map((s, i) => ({ ...s, candidate: i === 0 ? "gold" : "echo", costUsd: 0, reference: true }))
    }
    expect(renderText(referencesOnly)).toContain("bfcl, score–cost frontier: none placed: gold, echo are scripted references, not contenders")
  })
})
