import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { isAscii } from "node:buffer"
import { createHash } from "node:crypto"
import { appendFileSync, cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { loadAll } from "../../../providers/bfcl/data.ts"
import { readPlanned, writePlanned } from "../../../providers/bfcl/prepared.ts"
import { toolSpecsOf } from "../../../providers/bfcl/index.ts"
import { Canonical, DataRoot } from "../../../src/index.ts"
import { afterFsTick } from "../../support/fsClock.ts"
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
    afterFsTick(root)
    expect(Effect.runSync(readPlanned(root))).toBeUndefined() // nothing hashed or stored yet
    const tasks = Effect.runSync(loadAll({ dataDir: root }))
    writePlanned(tasks.map((t) => ({ id: t.id, category: t.category, system: "", tools: toolSpecsOf(t) })))
    const planned = Effect.runSync(readPlanned(root))
    expect(planned?.length).toBe(3491)
    const i = tasks.findIndex((t) => t.category === "live_multiple")
    expect(planned![i]!.tools).toEqual(toolSpecsOf(tasks[i]!))
    expect(planned![i]!.texts).toEqual(toolSpecsOf(tasks[i]!).map((t) => Canonical.canonicalUnsafe(t)))
    expect(Canonical.rememberedText(planned![i]!.tools[0]!)).toBe(planned![i]!.texts[0])
    // Every task, as a full load makes it: ids, categories, tool specs with their keys in order, and
    // canonical texts (what inputs ids are made of) made afresh from the full load's specs.
    const fresh = tasks.map((t) => ({ id: t.id, category: t.category, tools: JSON.stringify(toolSpecsOf(t)), texts: toolSpecsOf(t).map((x) => Canonical.canonicalUnsafe(x)) }))
    expect(planned!.map((t) => ({ id: t.id, category: t.category, tools: JSON.stringify(t.tools), texts: t.texts }))).toEqual(fresh)
    // An answer file changed after it was hashed: the form is not used, so the full load hashes it and fails.
    appendFileSync(join(root, "bfcl", "v4", "possible_answer", "BFCL_v4_multiple.json"), " ")
    expect(Effect.runSync(readPlanned(root))).toBeUndefined()
    expect(Effect.runSync(Effect.flip(loadAll({ dataDir: root }))).reason).toBe("hash-mismatch")
  })

  it("a form is stored as ASCII and read back as the same value; a damaged byte or an older writer's UTF-8 entry is handled", () => {
    const form = { text: "café — ✓ 😀", lone: "\ud800", n: [1, 2.5] }
    DataRoot.writePrepared("test-kind", "k1", form)
    const folder = DataRoot.userCacheFolder("prepared")
    const [name] = readdirSync(folder)
    const file = join(folder, name!)
    expect(isAscii(readFileSync(file))).toBe(true)
    expect(DataRoot.readPrepared("test-kind", "k1")).toEqual(form)
    expect(DataRoot.readPrepared("test-kind", "k2")).toBeUndefined() // another key: another file, none there
    // An entry as the older writer made it (its body's UTF-8 bytes, checksum of them) is still read.
    const body = JSON.stringify({ key: "k1", form })
    writeFileSync(file, `${createHash("sha256").update(body).digest("hex")}\n${body}`)
    expect(isAscii(readFileSync(file))).toBe(false)
    expect(DataRoot.readPrepared("test-kind", "k1")).toEqual(form)
    // One byte changed (a 1 for a 2 in the form's numbers): the checksum fails, the entry is not used.
    const bytes = readFileSync(file)
    bytes[bytes.lastIndexOf(0x32)] = 0x31
    writeFileSync(file, bytes)
    expect(DataRoot.readPrepared("test-kind", "k1")).toBeUndefined()
  })
})
