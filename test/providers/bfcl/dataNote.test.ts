import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { readPinned } from "../../../providers/bfcl/data.ts"
import { DataRoot } from "../../../src/index.ts"
import { afterFsTick } from "../../support/fsClock.ts"
import { tempDir } from "../../support/tempDirs.ts"

// The reader notes files from 256 KB on (smaller ones hash faster than a note is read): this one is 283 KB.
const FILE = "BFCL_v4_simple_python.json"

let saved: string | undefined
let cache = ""
beforeEach(() => {
  saved = process.env["XDG_CACHE_HOME"]
  cache = tempDir("assay-bfcl-note-")
  process.env["XDG_CACHE_HOME"] = cache
})
afterEach(() => {
  if (saved === undefined) delete process.env["XDG_CACHE_HOME"]
  else process.env["XDG_CACHE_HOME"] = saved
})

/** A data root holding one pinned file, copied from the shared data. */
const rootWithFile = (): { readonly root: string; readonly path: string } => {
  const root = tempDir("assay-bfcl-root-")
  mkdirSync(join(root, "bfcl", "v4"), { recursive: true })
  const path = join(root, "bfcl", "v4", FILE)
  copyFileSync(join(DataRoot.dataRoot(), "bfcl", "v4", FILE), path)
  afterFsTick(path)
  return { root, path }
}

describe("bfcl pinned files: a verified file's sha256 noted by its state", () => {
  it.effect("the first read hashes and notes the file; later reads of the unchanged file use the note", () =>
    Effect.gen(function*() {
      const { path, root } = rootWithFile()
      const text = yield* readPinned(FILE, { dataDir: root })
      expect(text).toBe(readFileSync(path, "utf8"))
      const notes = readdirSync(join(cache, "assay", "data-checks"))
      expect(notes.length).toBe(1)
      // Said on a failure (seen once under Deno in CI): whether the note was racy by the times.
      const times = (p: string) => {
        const s = statSync(p, { bigint: true })
        return `mtime ${s.mtimeNs} ctime ${s.ctimeNs}`
      }
      expect(DataRoot.notedSha256(path), `file ${times(path)}; note ${times(join(cache, "assay", "data-checks", notes[0]!))}`).toMatch(/^[0-9a-f]{64}$/)
      expect(yield* readPinned(FILE, { dataDir: root })).toBe(text)
    }))

  it.effect("a file changed after its note (same size) is hashed again and refused", () =>
    Effect.gen(function*() {
      const { path, root } = rootWithFile()
      yield* readPinned(FILE, { dataDir: root })
      const bytes = readFileSync(path)
      bytes[10] = bytes[10] === 0x41 ? 0x42 : 0x41
      writeFileSync(path, bytes)
      expect(DataRoot.notedSha256(path)).toBeUndefined()
      const error = yield* Effect.flip(readPinned(FILE, { dataDir: root }))
      expect(error.reason).toBe("hash-mismatch")
    }))

  it.effect("a note written in the same clock tick as the file's last change is not used; the next read notes it again", () =>
    Effect.gen(function*() {
      const { path, root } = rootWithFile()
      yield* readPinned(FILE, { dataDir: root })
      const notes = join(cache, "assay", "data-checks")
      const notePath = join(notes, readdirSync(notes)[0]!)
      // A write in the note's tick would leave the state the note recorded (same inode, size and
      // times); a note whose time is not later than the file's change cannot tell, so it is not used.
      const inTick = new Date(Math.floor(statSync(path).ctimeMs)) // the change's ms, not rounded up
      utimesSync(notePath, inTick, inTick)
      expect(DataRoot.notedSha256(path)).toBeUndefined()
      afterFsTick(path)
      yield* readPinned(FILE, { dataDir: root })
      expect(DataRoot.notedSha256(path)).toMatch(/^[0-9a-f]{64}$/)
    }))

  it.effect("a note of another file, or one that cannot be read, is not used", () =>
    Effect.gen(function*() {
      const { path, root } = rootWithFile()
      yield* readPinned(FILE, { dataDir: root })
      const [note] = readdirSync(join(cache, "assay", "data-checks"))
      const notePath = join(cache, "assay", "data-checks", note!)
      const noted = JSON.parse(readFileSync(notePath, "utf8")) as { path: string }
      writeFileSync(notePath, JSON.stringify({ ...noted, path: `${path}.other` }))
      expect(DataRoot.notedSha256(path)).toBeUndefined()
      writeFileSync(notePath, "{ not json")
      expect(DataRoot.notedSha256(path)).toBeUndefined()
      expect((yield* readPinned(FILE, { dataDir: root })).length).toBeGreaterThan(0)
    }))

  it.effect("once the notes are many, writing one removes those of files that are gone and the older scheme's, keeping the others", () =>
    Effect.gen(function*() {
      const notes = join(cache, "assay", "data-checks")
      const kept = rootWithFile()
      yield* readPinned(FILE, { dataDir: kept.root })
      const keptNote = readdirSync(notes)[0]!
      // 4,000 notes of files that no longer exist (a removed clone's data folder), two of the older
      // naming (32 hex digits), and a note another process is staging (about to be renamed in place).
      for (let i = 0; i < 4000; i++) {
        writeFileSync(join(notes, `${i.toString(16).padStart(16, "0")}.json`), JSON.stringify({ path: join(cache, "gone", `f${i}.json`), state: "0:0:0:0:0", sha256: "0".repeat(64) }))
      }
      writeFileSync(join(notes, `${"a".repeat(32)}.json`), JSON.stringify({ path: kept.path, state: "x", sha256: "0".repeat(64) }))
      writeFileSync(join(notes, `${"b".repeat(32)}.json`), "{ not json")
      const staged = `${"c".repeat(16)}.json.123-abcd1234`
      writeFileSync(join(notes, staged), "{")
      expect(readdirSync(notes)).toHaveLength(4004)
      // A note written now (another data folder's file, hashed for the first time) sweeps.
      const other = rootWithFile()
      yield* readPinned(FILE, { dataDir: other.root })
      const left = readdirSync(notes)
      expect(left).toHaveLength(3) // the kept file's note, the new one, the staged one
      expect(left).toEqual(expect.arrayContaining([keptNote, staged]))
      expect(DataRoot.notedSha256(kept.path)).toMatch(/^[0-9a-f]{64}$/)
      expect(DataRoot.notedSha256(other.path)).toMatch(/^[0-9a-f]{64}$/)
    }))
})
