import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { isAscii } from "node:buffer"
import { appendFileSync, cpSync, existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { crc32 } from "node:zlib"
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
    writeFileSync(file, `${crc32(body).toString(16).padStart(8, "0")}\n${body}`)
    expect(isAscii(readFileSync(file))).toBe(false)
    expect(DataRoot.readPrepared("test-kind", "k1")).toEqual(form)
    // One byte changed (a 1 for a 2 in the form's numbers): the checksum fails, the entry is not used.
    const bytes = readFileSync(file)
    bytes[bytes.lastIndexOf(0x32)] = 0x31
    writeFileSync(file, bytes)
    expect(DataRoot.readPrepared("test-kind", "k1")).toBeUndefined()
    // Cut short (as a full disk might leave it): not used either.
    writeFileSync(file, readFileSync(file).subarray(0, 20))
    expect(DataRoot.readPrepared("test-kind", "k1")).toBeUndefined()
  })

  it("writing a form removes its kind's older forms but the two newest, and no other kind's", () => {
    const folder = DataRoot.userCacheFolder("prepared")
    const files = () => (existsSync(folder) ? readdirSync(folder).sort() : [])
    // Forms of one kind, given known times (a file's clock is too coarse to order writes).
    const names: Array<string> = []
    for (let i = 1; i <= 4; i++) {
      const before = new Set(files())
      DataRoot.writePrepared("test-kind", `k${i}`, { i })
      const [name] = files().filter((f) => !before.has(f))
      names.push(name!)
      utimesSync(join(folder, name!), 1_000_000 + i, 1_000_000 + i)
    }
    DataRoot.writePrepared("other-kind", "k1", { other: true })
    DataRoot.writePrepared("test-kind-2", "k1", { longer: true }) // a kind whose name starts with another's
    const older = join(folder, `test-kind-${"a".repeat(32)}.json`) // a name of the scheme before
    writeFileSync(older, "x")
    utimesSync(older, 1, 1)
    // Writing k1..k4 already pruned k1 (k2 and k3 were the two kept beside k4).
    expect(files().filter((f) => f.startsWith("test-kind-") && !f.startsWith("test-kind-2-"))).toHaveLength(4)
    DataRoot.writePrepared("test-kind", "k5", { i: 5 })
    // k5 and the two newest before it (k4, k3) remain; k2 and the old-scheme form are gone.
    expect(DataRoot.readPrepared("test-kind", "k5")).toEqual({ i: 5 })
    expect(DataRoot.readPrepared("test-kind", "k4")).toEqual({ i: 4 })
    expect(DataRoot.readPrepared("test-kind", "k3")).toEqual({ i: 3 })
    expect(DataRoot.readPrepared("test-kind", "k2")).toBeUndefined()
    expect(DataRoot.readPrepared("test-kind", "k1")).toBeUndefined()
    expect(files()).not.toContain(names[1])
    expect(files()).not.toContain(`test-kind-${"a".repeat(32)}.json`)
    expect(DataRoot.readPrepared("other-kind", "k1")).toEqual({ other: true })
    expect(DataRoot.readPrepared("test-kind-2", "k1")).toEqual({ longer: true })
  })
})
