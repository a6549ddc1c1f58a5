import { describe, expect, it } from "@effect/vitest"
import { assay, cardOf, tempDir } from "./support.ts"

describe("tau2-banking through the command", { timeout: 300_000 }, () => {
  it("gold scores 1 on all 97 tasks without a judge, echo 0; the transcription agrees with upstream on 1,397 of 1,397 oracle lines", async () => {
    const [run, equivalence] = await Promise.all([
      assay(["run", "--benchmark", "tau2-banking", "--candidate", "gold", "--candidate", "echo", "--no-judge", "--yes", "--json", "--home", tempDir()]),
      assay(["equivalence", "tau2-banking", "--json"])
    ])
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout) as { cells: { total: number; ran: number } }
    expect(report.cells).toMatchObject({ total: 194, ran: 194 })
    expect(cardOf(run.stdout, "gold")).toMatchObject({ n: 97, meanReward: 1, failures: {} })
    const echo = cardOf(run.stdout, "echo")
    expect(echo).toMatchObject({ n: 97, meanReward: 0 })
    // Doing nothing leaves the DB as it was, which no DB task's gold does.
    expect(echo.failures["db"]).toBe(88)

    expect(equivalence.code, equivalence.stderr).toBe(0)
    expect(JSON.parse(equivalence.stdout)).toMatchObject({ benchmark: "tau2-banking", lines: 1397, agree: 1397, disagree: [] })
  })
})
