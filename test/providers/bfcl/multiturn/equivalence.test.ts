import { describe, expect, it } from "@effect/vitest"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { multiTurnEquivalence, type MultiTurnReport } from "../../../../providers/bfcl/multiturn/equivalence.ts"

const dataDir = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"
const corpusDir = join(dataDir, "bfcl", "oracle", "multi-turn")
// Upstream's long_context.py constants as JSON; not in the repo (upstream's text), read from the data folder
const longContextFile = process.env["ASSAY_BFCL_LONG_CONTEXT"] ?? join(dataDir, "bfcl", "long_context.json")
const hasLongContext = existsSync(longContextFile)

const reports = new Map<string, Promise<MultiTurnReport>>()
const reportOf = (file: string) => {
  let r = reports.get(file)
  if (r === undefined) {
    r = Effect.runPromise(multiTurnEquivalence(join(corpusDir, file), { longContextFile, keep: Number.MAX_SAFE_INTEGER }))
    reports.set(file, r)
  }
  return r
}

/** Disagreements other than "this line needs the long-context constants and they are absent". */
const real = (report: MultiTurnReport, className?: string) =>
  report.disagree.filter((d) => (className === undefined || d.className === className) && !(d.field === "class" && d.longContext && !hasLongContext))

const classes = ["MathAPI", "MessageAPI", "TwitterAPI", "TicketAPI", "VehicleControlAPI", "TradingBot", "TravelAPI", "GorillaFileSystem"]

describe("bfcl multi-turn worlds against upstream's executor (fuzz-dev)", () => {
  for (const className of classes) {
    it(`every fuzz-dev line of ${className} gives upstream's result texts and state hashes`, async () => {
      const report = await reportOf("fuzz-dev.jsonl")
      expect(report.byClass[className]?.lines).toBe(250)
      expect(real(report, className)).toEqual([])
    })
    it.runIf(hasLongContext)(`with the long-context constants, all 250 lines of ${className} agree`, async () => {
      const report = await reportOf("fuzz-dev.jsonl")
      expect(report.byClass[className]?.agree).toBe(250)
    })
  }
})

describe("bfcl multi-turn worlds against upstream's executor (exec-dev, ground truth turn by turn)", () => {
  it("every task's ground-truth calls give upstream's results and per-turn states", async () => {
    const report = await reportOf("exec-dev.jsonl")
    expect(report.lines).toBe(368)
    expect(real(report)).toEqual([])
  })
  it.runIf(hasLongContext)("with the long-context constants, all 368 tasks agree", async () => {
    const report = await reportOf("exec-dev.jsonl")
    expect(report.agree).toBe(368)
  })
})
