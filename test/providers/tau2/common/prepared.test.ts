import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { crc32 } from "node:zlib"
import { Effect, Either } from "effect"
import { type Canonical, DataRoot } from "../../../../src/index.ts"
import * as World from "../../../../src/world/World.ts"
import { indentedSpans, type PreparedDomain, preparedWorld, recordSpans } from "../../../../providers/tau2/common/prepared.ts"
import { airlineWorld, pinnedFiles as airlineFiles, readPinned as readAirline } from "../../../../providers/tau2/airline/data.ts"
import { upstreamDbHash as airlineHash } from "../../../../providers/tau2/airline/hash.ts"
import { loadRetailData, pinnedFiles, readPinned, readPinnedBytes, retailWorld, worldFromDbText } from "../../../../providers/tau2/retail/data.ts"
import { upstreamDbHash } from "../../../../providers/tau2/retail/hash.ts"
import { afterFsTick } from "../../../support/fsClock.ts"
import { tempDir } from "../../../support/tempDirs.ts"

let saved: string | undefined
let cache = ""
beforeEach(() => {
  saved = process.env["XDG_CACHE_HOME"]
  cache = tempDir("assay-prepared-")
  process.env["XDG_CACHE_HOME"] = cache
})
afterEach(() => {
  if (saved === undefined) delete process.env["XDG_CACHE_HOME"]
  else process.env["XDG_CACHE_HOME"] = saved
})

const retailText = () => Effect.runSync(Effect.either(readPinned(pinnedFiles.db))).pipe(Either.getOrThrow)
const formFiles = () => readdirSync(join(cache, "assay", "prepared")).map((f) => join(cache, "assay", "prepared", f))

describe("a DB domain's world from its prepared form", () => {
  it("the first load parses and stores the form; the next is built from it, the same world, hashes included", () => {
    const text = retailText()
    const first = Either.getOrThrow(preparedWorld(retailWorld, text, pinnedFiles.db.sha256))
    expect(first.source).toBe("parsed")
    expect(formFiles().length).toBe(1)
    const next = Either.getOrThrow(preparedWorld(retailWorld, text, pinnedFiles.db.sha256))
    expect(next.source).toBe("prepared")
    expect(World.digest(next.world)).toBe(World.digest(first.world))
    // Upstream's own hash reads every record: all of them load from their slices as the full parse made them.
    expect(upstreamDbHash(next.world)).toBe(upstreamDbHash(first.world))
    expect(World.toJson(next.world)).toEqual(World.toJson(first.world))
    for (const table of ["products", "users", "orders"]) {
      expect(World.entries(next.world, table).map(([k]) => k)).toEqual(World.entries(first.world, table).map(([k]) => k))
    }
  })

  it("a damaged form is not used: the full parse runs and stores a sound one", () => {
    const text = retailText()
    Either.getOrThrow(preparedWorld(retailWorld, text, pinnedFiles.db.sha256))
    const [file] = formFiles()
    const stored = readFileSync(file!, "utf8")
    // One digit of a span changed: the form's checksum no longer matches.
    writeFileSync(file!, stored.replace(/"spans":\[(\d)/, (_, d: string) => `"spans":[${(Number(d) + 1) % 10}`))
    expect(readFileSync(file!, "utf8")).not.toBe(stored)
    const again = Either.getOrThrow(preparedWorld(retailWorld, text, pinnedFiles.db.sha256))
    expect(again.source).toBe("parsed")
    expect(World.digest(again.world)).toBe(World.digest(Either.getOrThrow(worldFromDbText(text))))
    expect(Either.getOrThrow(preparedWorld(retailWorld, text, pinnedFiles.db.sha256)).source).toBe("prepared")
    // A form cut short (a crash mid-write cannot leave one, but a full disk might) is not used either.
    writeFileSync(file!, stored.slice(0, 1000))
    expect(Either.getOrThrow(preparedWorld(retailWorld, text, pinnedFiles.db.sha256)).source).toBe("parsed")
  })

  it("another text is not read through the form of the first: a changed DB is parsed, and its errors are the full parse's", () => {
    const text = retailText()
    Either.getOrThrow(preparedWorld(retailWorld, text, pinnedFiles.db.sha256))
    const changed = text.replace('"status": "pending"', '"status": "cancelled"')
    expect(changed).not.toBe(text)
    const world = Either.getOrThrow(preparedWorld(retailWorld, changed))
    expect(world.source).toBe("parsed")
    expect(World.digest(world.world)).toBe(World.digest(Either.getOrThrow(worldFromDbText(changed))))
    expect(World.digest(world.world)).not.toBe(World.digest(Either.getOrThrow(worldFromDbText(text))))
    // The same length and another sha256 (a caller's wrong claim aside, the key is the text's own hash).
    const broken = text.replace('"users"', '"users" x')
    expect(preparedWorld(retailWorld, broken)).toEqual(Either.map(worldFromDbText(broken), (w) => ({ world: w, source: "parsed" })))
    expect(Either.isLeft(preparedWorld(retailWorld, broken))).toBe(true)
  })

  it("from the file's bytes (what a load reads), the same world as from its text, either way round", () => {
    const text = retailText()
    const bytes = Either.getOrThrow(Effect.runSync(Effect.either(readPinnedBytes(pinnedFiles.db))))
    const parsed = Either.getOrThrow(worldFromDbText(text))
    const first = Either.getOrThrow(preparedWorld(retailWorld, bytes, pinnedFiles.db.sha256))
    expect(first.source).toBe("parsed")
    const fromText = Either.getOrThrow(preparedWorld(retailWorld, text, pinnedFiles.db.sha256))
    const fromBytes = Either.getOrThrow(preparedWorld(retailWorld, bytes, pinnedFiles.db.sha256))
    expect([fromText.source, fromBytes.source]).toEqual(["prepared", "prepared"])
    for (const w of [fromText.world, fromBytes.world]) {
      expect(World.digest(w)).toBe(World.digest(parsed))
      expect(upstreamDbHash(w)).toBe(upstreamDbHash(parsed))
    }
    expect(World.toJson(fromBytes.world)).toEqual(World.toJson(parsed))
    // Without a claimed sha256 the bytes' own is computed: the same key, the same form.
    expect(Either.getOrThrow(preparedWorld(retailWorld, bytes)).source).toBe("prepared")
  })

  it("a file that is not ASCII: its form is used through the decoded text, and makes the full parse's world", () => {
    const text = retailText().replace('"first_name": "', '"first_name": "Zoë ')
    const bytes = Buffer.from(text, "utf8")
    expect(bytes.length).toBeGreaterThan(text.length)
    expect(Either.getOrThrow(preparedWorld(retailWorld, bytes)).source).toBe("parsed")
    const again = Either.getOrThrow(preparedWorld(retailWorld, bytes))
    expect(again.source).toBe("prepared")
    expect(World.toJson(again.world)).toEqual(World.toJson(Either.getOrThrow(worldFromDbText(text))))
    expect(Either.getOrThrow(preparedWorld(retailWorld, text)).source).toBe("prepared")
  })

  it("a stale form (sound checksum, but another layout or another file's) is not used", () => {
    const text = retailText()
    Either.getOrThrow(preparedWorld(retailWorld, text, pinnedFiles.db.sha256))
    const [file] = formFiles()
    const stored = readFileSync(file!, "utf8")
    const body = JSON.parse(stored.slice(9)) as { key: string; form: { ascii: boolean; tables: ReadonlyArray<unknown> } }
    const rewrite = (value: unknown) => {
      const b = JSON.stringify(value)
      writeFileSync(file!, `${crc32(b).toString(16).padStart(8, "0")}\n${b}`)
    }
    const load = () => Either.getOrThrow(preparedWorld(retailWorld, text, pinnedFiles.db.sha256))
    // The previous layout (tables alone, no ASCII flag), stored under this key.
    rewrite({ key: body.key, form: body.form.tables })
    expect(load().source).toBe("parsed")
    // Spans past the end of the file.
    rewrite({ key: body.key, form: { ...body.form, tables: body.form.tables.map((t) => ({ ...(t as object), spans: (t as { spans: Array<number> }).spans.map((n) => n + text.length) })) } })
    expect(load().source).toBe("parsed")
    // Another file's form in this one's place: its key is not this file's.
    const other = text.replace('"status": "pending"', '"status": "cancelled"')
    Either.getOrThrow(preparedWorld(retailWorld, other))
    const otherFile = formFiles().find((f) => f !== file)!
    copyFileSync(otherFile, file!)
    const world = load()
    expect(world.source).toBe("parsed")
    expect(World.digest(world.world)).toBe(World.digest(Either.getOrThrow(worldFromDbText(text))))
    expect(load().source).toBe("prepared")
  })

  it("any layout of the file: the form's record spans are right however it is indented (or not), so later loads make the full parse's world", () => {
    // A domain of plain records: its full parse is JSON.parse, each record loads from its slice.
    const domain: PreparedDomain = {
      kind: "layout-test",
      full: (text) => {
        const db = JSON.parse(text) as Record<string, Record<string, Canonical.Json>>
        return Either.right(World.fromEntries(Object.entries(db).map(([t, records]) => [t, Object.entries(records)] as const)))
      },
      records: { people: (text) => JSON.parse(text) as Canonical.Json, notes: (text) => JSON.parse(text) as Canonical.Json }
    }
    const db = {
      people: { ann: { name: "Ann", tags: ["a", "}"], address: { city: "X\n    }" } }, bob: { name: "Bob \"B\"", tags: [], address: {} }, cy: 3 },
      notes: { n1: "a, b", n2: [1, 2.5, { deep: [[]] }], n3: false, n4: { "}": "{" } }
    }
    const misleading = [
      "{",
      '  "people": {',
      '    "ann": {"name": "Ann", "tags": ["a", "}"], "address": {"city": "X\\n    }"',
      "    }},",
      '    "bob": {"name": "Bob \\"B\\"", "tags": [',
      "    ], \"address\": {}},",
      '    "cy": 3',
      "  },",
      '  "notes": {"n1": "a, b", "n2": [1, 2.5, {"deep": [[]]}], "n3": false, "n4": {"}": "{"}}',
      "}"
    ].join("\n")
    expect(JSON.parse(misleading)).toEqual(db)
    const layouts = [JSON.stringify(db, null, 4), JSON.stringify(db, null, 2), JSON.stringify(db), JSON.stringify(db, null, 4).replaceAll("\n", "\r\n"), JSON.stringify(db, null, "\t"), misleading]
    for (const [i, text] of layouts.entries()) {
      // The spans read from the indentation (a few indexOf per record) are the full scan's, or none.
      const fast = indentedSpans(text)
      expect(fast === undefined ? undefined : [...fast]).toEqual(i < 2 || i === 3 ? [...recordSpans(text)!] : undefined)
      const first = Either.getOrThrow(preparedWorld(domain, text))
      expect(first.source).toBe("parsed")
      const next = Either.getOrThrow(preparedWorld(domain, text))
      expect(next.source).toBe("prepared")
      expect(World.toJson(next.world)).toEqual(World.toJson(first.world))
      expect(World.toJson(next.world)).toEqual(db)
      expect(World.digest(next.world)).toBe(World.digest(first.world))
    }
  })

  it("airline: the world from its form equals the full parse's, upstream's hash included", () => {
    const text = Either.getOrThrow(Effect.runSync(Effect.either(readAirline(airlineFiles.db))))
    const first = Either.getOrThrow(preparedWorld(airlineWorld, text, airlineFiles.db.sha256))
    const next = Either.getOrThrow(preparedWorld(airlineWorld, text, airlineFiles.db.sha256))
    expect([first.source, next.source]).toEqual(["parsed", "prepared"])
    expect(World.digest(next.world)).toBe(World.digest(first.world))
    expect(airlineHash(next.world)).toBe(airlineHash(first.world))
  })
})

describe("a tau2 pinned file's sha256 noted by its state", () => {
  it("the provider's load: db.json changed after its form and note were made is refused, put back it loads the same world", () => {
    const root = tempDir("assay-tau2-root-")
    const source = DataRoot.dataRoot()
    const files = [pinnedFiles.db, pinnedFiles.tasks, pinnedFiles.policy, pinnedFiles.splits, pinnedFiles.tools, pinnedFiles.toolTypes]
    for (const f of files) {
      mkdirSync(join(root, "tau2", f.name, ".."), { recursive: true })
      copyFileSync(join(source, "tau2", f.name), join(root, "tau2", f.name))
    }
    afterFsTick(join(root, "tau2", pinnedFiles.db.name))
    const path = join(root, "tau2", pinnedFiles.db.name)
    const load = () => Effect.runSync(Effect.either(loadRetailData(root)))
    const first = Either.getOrThrow(load())
    const again = Either.getOrThrow(load()) // from the note and the form
    expect(DataRoot.notedSha256(path)).toBe(pinnedFiles.db.sha256)
    expect(World.digest(again.initialWorld)).toBe(World.digest(first.initialWorld))
    // One byte changed in place, same size: the note no longer vouches, the hash is taken and differs.
    const original = readFileSync(path)
    const changed = Buffer.from(original)
    changed[changed.indexOf("pending")] = "P".charCodeAt(0)
    writeFileSync(path, changed)
    const refused = load()
    expect(Either.isLeft(refused) && refused.left.reason).toBe("hash-mismatch")
    // The original bytes back (a new write: the note is stale, the file is hashed again).
    rmSync(path)
    writeFileSync(path, original)
    expect(DataRoot.notedSha256(path)).toBeUndefined()
    const restored = Either.getOrThrow(load())
    expect(World.digest(restored.initialWorld)).toBe(World.digest(Either.getOrThrow(worldFromDbText(original.toString("utf8")))))
    expect(upstreamDbHash(restored.initialWorld)).toBe(upstreamDbHash(first.initialWorld))
  })


  it("a large file is hashed once per state: a copy changed after its note is refused", () => {
    const root = tempDir("assay-tau2-root-")
    mkdirSync(join(root, "tau2", "retail"), { recursive: true })
    const path = join(root, "tau2", "retail", "db.json")
    copyFileSync(join(DataRoot.dataRoot(), "tau2", "retail", "db.json"), path)
    afterFsTick(path)
    const read = () => Effect.runSync(Effect.either(readPinned(pinnedFiles.db, root)))
    expect(Either.isRight(read())).toBe(true)
    expect(DataRoot.notedSha256(path)).toBe(pinnedFiles.db.sha256)
    expect(Either.isRight(read())).toBe(true)
    const bytes = readFileSync(path)
    bytes[100] = bytes[100] === 0x61 ? 0x62 : 0x61
    writeFileSync(path, bytes)
    expect(DataRoot.notedSha256(path)).toBeUndefined()
    const refused = read()
    expect(Either.isLeft(refused) && refused.left.reason).toBe("hash-mismatch")
  })
})
