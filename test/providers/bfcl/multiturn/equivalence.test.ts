import { describe, expect, it } from "@effect/vitest"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { LONG_CONTEXT_PATH } from "../../../../providers/bfcl/data.ts"
import { multiTurnEquivalence, type MultiTurnReport } from "../../../../providers/bfcl/multiturn/equivalence.ts"
import { LONG_CONTEXT_ENV, loadLongContext } from "../../../../providers/bfcl/multiturn/longContext.ts"

const dataDir = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"
const corpusDir = join(dataDir, "bfcl", "oracle", "multi-turn")
// Upstream's long_context.py: pinned, in the data folder (or named by ASSAY_BFCL_LONG_CONTEXT); not in the repo
const longContextFile = process.env[LONG_CONTEXT_ENV] ?? join(dataDir, "bfcl", LONG_CONTEXT_PATH)
const hasLongContext = existsSync(longContextFile)
const skipWhy = `needs upstream's long_context.py at ${longContextFile} (LONG_CONTEXT_FILE in providers/bfcl/data.ts), or ${LONG_CONTEXT_ENV} naming a copy`

const reports = new Map<string, Promise<MultiTurnReport>>()
const reportOf = (file: string) => {
  let r = reports.get(file)
  if (r === undefined) {
    r = Effect.runPromise(
      Effect.gen(function*() {
        const longContext = hasLongContext ? yield* loadLongContext({ dataDir }) : undefined
        return yield* multiTurnEquivalence(join(corpusDir, file), { ...(longContext !== undefined ? { longContext } : {}), keep: Number.MAX_SAFE_INTEGER })
      })
    )
    reports.set(file, r)
  }
  return r
}

const classes = ["MathAPI", "MessageAPI", "TwitterAPI", "TicketAPI", "VehicleControlAPI", "TradingBot", "TravelAPI", "GorillaFileSystem"]

describe("bfcl multi-turn worlds against upstream's executor (fuzz-dev)", () => {
  for (const className of classes) {
    it(`every fuzz-dev line of ${className} that can run gives upstream's result texts and state hashes`, async () => {
      const report = await reportOf("fuzz-dev.jsonl")
      expect(report.kind).toBe("fuzz")
      expect(report.byClass[className]?.lines).toBe(250)
      expect(report.disagree.filter((d) => d.className === className)).toEqual([])
    })
  }
  it.runIf(hasLongContext)(`with the long-context constants, all 2,000 lines agree (else skipped: ${skipWhy})`, async () => {
    const report = await reportOf("fuzz-dev.jsonl")
    expect(report).toMatchObject({ lines: 2000, agree: 2000, notChecked: 0 })
  })
  it.runIf(!hasLongContext)("without the long-context constants, the long-context lines are counted as not checked, not as agreeing", async () => {
    const report = await reportOf("fuzz-dev.jsonl")
    expect(report.notChecked).toBe(272)
    expect(report.agree).toBe(2000 - 272)
  })
})

describe("bfcl multi-turn worlds against upstream's executor (exec-dev, ground truth turn by turn)", () => {
  it("every task's ground-truth calls that can run give upstream's results and per-turn states", async () => {
    const report = await reportOf("exec-dev.jsonl")
    expect(report.kind).toBe("exec")
    expect(report.lines).toBe(368)
    expect(report.disagree).toEqual([])
  })
  it.runIf(hasLongContext)(`with the long-context constants, all 368 tasks agree (else skipped: ${skipWhy})`, async () => {
    const report = await reportOf("exec-dev.jsonl")
    expect(report.agree).toBe(368)
  })
})

describe("bfcl multi-turn checker against upstream's eval runner (verdicts-dev)", () => {
  it("every verdict that can be checked agrees: valid, error_type, the error dict and the decoded answer", async () => {
    const report = await reportOf("verdicts-dev.jsonl")
    expect(report.kind).toBe("verdicts")
    expect(report.lines).toBe(3093)
    expect(report.disagree).toEqual([])
    expect(report.agree + report.notChecked).toBe(3093)
  })
  it.runIf(hasLongContext)(`with the long-context constants, all 3,093 lines agree (else skipped: ${skipWhy})`, async () => {
    const report = await reportOf("verdicts-dev.jsonl")
    expect(report).toMatchObject({ lines: 3093, agree: 3093, notChecked: 0 })
    // Two lines print a Python set of strings, whose order follows the string hash
    expect(report.hashOrderDependent).toBe(2)
  })
})
