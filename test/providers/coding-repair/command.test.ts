import { describe, expect, it } from "vitest"
import { assay, cardOf, tempDir } from "../../cli/support.ts"

describe("assay run --benchmark coding-repair", () => {
  it("gold scores 1 and echo 0 on a JavaScript and a Python task, and a replay with no command run agrees", async () => {
    const home = tempDir()
    const tasks = ["--task", "js-lru-cache", "--task", "py-roman"]
    const ran = await assay(["run", "--benchmark", "coding-repair", "--candidate", "gold", "--candidate", "echo", ...tasks, "--parallel", "2", "--yes", "--json", "--home", home])
    expect(ran.code, ran.stderr).toBe(0)
    const gold = cardOf(ran.stdout, "gold")
    const echo = cardOf(ran.stdout, "echo")
    expect([gold.n, gold.meanReward, gold.failures]).toEqual([2, 1, {}])
    expect([echo.n, echo.meanReward, echo.failures]).toEqual([2, 0, { "fail-to-pass": 2 }])
    const replayed = await assay(["replay", "--home", home, "--json"])
    expect(replayed.code, replayed.stderr).toBe(0)
    const doc = JSON.parse(replayed.stdout) as { replayed: number; same: number; differ: ReadonlyArray<unknown> }
    expect([doc.replayed, doc.same, doc.differ]).toEqual([4, 4, []])
  })
})
