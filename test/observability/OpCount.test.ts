import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { assay, tempDir } from "../cli/support.ts"

// The bench's operations per cell are a difference of two such counts: each must be the whole
// command's, and a run of more cells must count more.
describe("ASSAY_COUNT_OPS", () => {
  it("writes the command's Effect operation count to the file it names, more for more cells", async () => {
    const countOf = async (reps: number) => {
      const home = tempDir()
      const file = join(home, "ops.txt")
      const r = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--reps", String(reps), "--home", home, "--yes", "--json"], { ASSAY_COUNT_OPS: file })
      expect(r.code, r.stderr).toBe(0)
      const text = readFileSync(file, "utf8")
      expect(text).toMatch(/^\d+\n$/)
      return Number(text)
    }
    const one = await countOf(1)
    const three = await countOf(3)
    expect(one).toBeGreaterThan(0)
    // 40 more gold cells: each runs tens of operations at the least.
    expect(three - one).toBeGreaterThan(40 * 20)
  }, 120_000)
})
