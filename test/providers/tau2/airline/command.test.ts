import { describe, expect, it } from "@effect/vitest"
import { assay, cardOf, tempDir } from "../../../cli/support.ts"

describe("tau2-airline through the command", { timeout: 300_000 }, () => {
  it("gold scores 1 on all 50 tasks without a judge; the transcription agrees with upstream on 550 of 550 oracle lines", async () => {
    const [run, equivalence] = await Promise.all([
      assay(["run", "--benchmark", "tau2-airline", "--candidate", "gold", "--candidate", "echo", "--no-judge", "--yes", "--json", "--home", tempDir()]),
      assay(["equivalence", "tau2-airline", "--json"])
    ])
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout) as { cells: { total: number; ran: number } }
    expect(report.cells).toMatchObject({ total: 100, ran: 100 })
    expect(cardOf(run.stdout, "gold")).toMatchObject({ n: 50, meanReward: 1, failures: {} })
    const echo = cardOf(run.stdout, "echo")
    // Doing nothing passes the 23 tasks whose gold changes nothing and that expect nothing said.
    expect(echo).toMatchObject({ n: 50, meanReward: 0.46 })
    expect(echo.failures["db"]).toBe(26)

    expect(equivalence.code, equivalence.stderr).toBe(0)
    expect(JSON.parse(equivalence.stdout)).toMatchObject({ benchmark: "tau2-airline", lines: 550, agree: 550, disagree: [] })
  })
})
