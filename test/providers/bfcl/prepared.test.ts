import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { appendFileSync, cpSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { loadAll } from "../../../providers/bfcl/data.ts"
import { readPlanned, writePlanned } from "../../../providers/bfcl/prepared.ts"
import { toolSpecsOf } from "../../../providers/bfcl/index.ts"
import { Canonical, DataRoot } from "../../../src/index.ts"
import { tempDir } from "../../support/tempDirs.ts"

let saved: string | undefined
beforeEach(() => {
  saved = process.env["XDG_CACHE_HOME"]
  process.env["XDG_CACHE_HOME"] = tempDir("assay-bfcl-prepared-")
})
afterEach(() => {
  if (saved === undefined) delete process.env["XDG_CACHE_HOME"]
  else process.env["XDG_CACHE_HOME"] = saved
})

describe("bfcl prepared plan form", () => {
  it("gives the tasks' tool specs and canonical texts as a full load makes them, and none once a data file changes", () => {
    const root = tempDir("assay-bfcl-prepared-root-")
    cpSync(join(DataRoot.dataRoot(), "bfcl", "v4"), join(root, "bfcl", "v4"), { recursive: true })
    expect(readPlanned(root)).toBeUndefined() // nothing hashed or stored yet
    const tasks = Effect.runSync(loadAll({ dataDir: root }))
    writePlanned(tasks.map((t) => ({ id: t.id, category: t.category, system: "", tools: toolSpecsOf(t) })))
    const planned = readPlanned(root)
    expect(planned?.length).toBe(3491)
    const i = tasks.findIndex((t) => t.category === "live_multiple")
    expect(planned![i]!.tools).toEqual(toolSpecsOf(tasks[i]!))
    expect(planned![i]!.texts).toEqual(toolSpecsOf(tasks[i]!).map((t) => Canonical.canonicalUnsafe(t)))
    expect(Canonical.rememberedText(planned![i]!.tools[0]!)).toBe(planned![i]!.texts[0])
    // An answer file changed after it was hashed: the form is not used, so the full load hashes it and fails.
    appendFileSync(join(root, "bfcl", "v4", "possible_answer", "BFCL_v4_multiple.json"), " ")
    expect(readPlanned(root)).toBeUndefined()
    expect(Effect.runSync(Effect.flip(loadAll({ dataDir: root }))).reason).toBe("hash-mismatch")
  })
})
