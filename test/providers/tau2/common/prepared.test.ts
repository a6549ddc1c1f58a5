import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either } from "effect"
import { DataRoot } from "../../../../src/index.ts"
import * as World from "../../../../src/world/World.ts"
import { preparedWorld } from "../../../../providers/tau2/common/prepared.ts"
import { airlineWorld, pinnedFiles as airlineFiles, readPinned as readAirline } from "../../../../providers/tau2/airline/data.ts"
import { upstreamDbHash as airlineHash } from "../../../../providers/tau2/airline/hash.ts"
import { pinnedFiles, readPinned, retailWorld, worldFromDbText } from "../../../../providers/tau2/retail/data.ts"
import { upstreamDbHash } from "../../../../providers/tau2/retail/hash.ts"
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
  it("a large file is hashed once per state: a copy changed after its note is refused", () => {
    const root = tempDir("assay-tau2-root-")
    mkdirSync(join(root, "tau2", "retail"), { recursive: true })
    const path = join(root, "tau2", "retail", "db.json")
    copyFileSync(join(DataRoot.dataRoot(), "tau2", "retail", "db.json"), path)
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
