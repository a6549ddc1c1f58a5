import { describe, expect, it } from "@effect/vitest"
import { join } from "node:path"
import { Effect } from "effect"
import { runEquivalence } from "../../../providers/bfcl/equivalence.ts"

const dataDir = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"

describe("bfcl equivalence with upstream's checker", () => {
  it.effect("every line of the dev oracle corpus agrees on valid and error_type, and on the errors list", () =>
    Effect.gen(function*() {
      const report = yield* runEquivalence(join(dataDir, "bfcl", "oracle", "verdicts-dev.jsonl"), { dataDir })
      expect(report.lines).toBe(17972)
      expect(report.disagree).toEqual([])
      expect(report.agree).toBe(17972)
      expect(report.errorsAgree).toBe(17972)
    }))
})
