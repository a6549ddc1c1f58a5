/**
 * `assay run --benchmark competitor-discovery --candidate gold --candidate echo --no-judge --yes`
 * as a user runs it: gold scores 1 on every task with no check failed, echo 0.
 */
import { describe, expect, it } from "@effect/vitest"
import { assay, cardOf, tempDir } from "../../cli/support.ts"

describe("competitor-discovery through the command", () => {
  it("gold scores 1 with recall and grounding met on every task; echo scores 0, failing the answer", async () => {
    const home = tempDir()
    const ran = await assay(["run", "--benchmark", "competitor-discovery", "--candidate", "gold", "--candidate", "echo", "--no-judge", "--home", home, "--yes", "--json"])
    expect(ran.code, ran.stderr).toBe(0)
    expect(cardOf(ran.stdout, "gold")).toMatchObject({ n: 4, meanReward: 1, failures: {} })
    expect(cardOf(ran.stdout, "echo")).toMatchObject({ n: 4, meanReward: 0, failures: { answer: 4, recall: 4, grounding: 4 } })
  }, 240_000)
})
