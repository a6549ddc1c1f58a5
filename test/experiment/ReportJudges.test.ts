import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { decodeJson, encodeJson, renderHtml, renderMarkdown, renderText, type Report } from "../../src/experiment/Report.ts"
import { type CellSummary, judgesOfCells } from "../../src/experiment/Scorecards.ts"
import { sampleReport } from "./sampleReport.ts"

const cell = (task: string, fields: Partial<CellSummary> = {}): CellSummary => ({
  environmentId: `env-${task}`,
  benchmark: "bfcl",
  task,
  stratum: null,
  candidate: "openai:gpt-4o-mini",
  repetition: 0,
  reward: 1,
  failures: [],
  ended: null,
  injected: 0,
  faults: [],
  usage: { inputTokens: 0, outputTokens: 0, costUsd: 0, wallSeconds: 1 },
  ...fields
})

const panel = (inputs: ReadonlyArray<readonly [a: ReadonlyArray<boolean>, b: ReadonlyArray<boolean>]>) => ({
  judges: { judges: ["p:a", "p:b"], reps: 2, inputs: inputs.map(([a, b], i) => ({ input: `nl:${i}`, decisions: [a, b] })) }
})

describe("the judges' section of a report", () => {
  it("pools the inputs of every cell of a benchmark, clustered by task, and leaves out cells with one judge and outages", () => {
    const judges = judgesOfCells([
      cell("t1", panel([[[true, true], [true, true]], [[true, false], [false, false]]])),
      cell("t2", panel([[[false, false], [false, false]]])),
      cell("t3", { candidate: "gold", ...panel([[[true, true], [false, false]]]) }),
      // One judge asked once: nothing recorded.
      cell("t4"),
      // An outage says nothing of the judges (its decisions would not be there anyway).
      cell("t5", { ended: "fault", outage: true, ...panel([[[true, true], [false, false]]]) })
    ])!
    // First answers: (T,T) (T,F) (F,F) (T,F): 2 of 4 alike; a yes 3/4, b 1/4: chance 3/16 + 3/16, kappa (1/2 − 3/8)/(5/8) = 0.2.
    expect(judges.agreement).toEqual([
      expect.objectContaining({ benchmark: "bfcl", judges: ["p:a", "p:b"], decisions: 4, tasks: 3, agree: 2, agreement: 0.5 })
    ])
    expect(judges.agreement[0]!.kappa).toBeCloseTo(0.2, 12)
    expect(judges.consistency).toEqual([
      { benchmark: "bfcl", judge: "p:a", repetitions: 2, inputs: 4, unanimous: 0.75, pairwise: 0.75 },
      { benchmark: "bfcl", judge: "p:b", repetitions: 2, inputs: 4, unanimous: 1, pairwise: 1 }
    ])
    expect(judgesOfCells([cell("t1"), cell("t2")])).toBeUndefined()
  })

  const report: Report = {
    ...sampleReport,
    judges: {
      agreement: [{
        benchmark: "bfcl",
        judges: ["p:a", "p:b"],
        decisions: 40,
        tasks: 12,
        agree: 30,
        agreement: 0.75,
        agreementInterval: [0.6, 0.875],
        kappa: null,
        kappaInterval: null
      }],
      consistency: [{ benchmark: "bfcl", judge: "p:a", repetitions: 3, inputs: 40, unanimous: 0.9, pairwise: 0.95 }]
    }
  }

  it("is printed in text, Markdown and HTML under its benchmark, an undefined kappa as a dash", () => {
    expect(renderText(report)).toMatch(/bfcl, judges' agreement\n.*\np:a +p:b +40 +12 +30 +75\.0% +\[60\.0%, 87\.5%\] +— +—/)
    expect(renderText(report)).toMatch(/bfcl, judge self-consistency\n.*\np:a +3× +40 +90\.0% +95\.0%/)
    expect(renderMarkdown(report)).toContain("### Judges' agreement")
    expect(renderMarkdown(report)).toContain("| p:a | p:b | 40 | 12 | 30 | 75.0% | [60.0%, 87.5%] | — | — |")
    expect(renderHtml(report)).toContain("<h3>Judge self-consistency</h3>")
    // A report without the section prints none.
    expect(renderText(sampleReport)).not.toContain("judges' agreement")
  })

  it.effect("survives the --json document and back", () =>
    Effect.gen(function*() {
      const back = yield* decodeJson(yield* encodeJson(report))
      expect(back.judges).toEqual(report.judges)
    }))
})
