import { mkdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { dataRoot, loadTelecomData, pinnedFiles, readPinned } from "../../../../providers/tau2/telecom/data.ts"
import { dbSha256, upstreamDbHash, upstreamUserDbHash, userDbSha256 } from "../../../../providers/tau2/telecom/hash.ts"
import { tempDir } from "../../../support/tempDirs.ts"

describe("telecom pinned data", () => {
  it.effect("the fresh environment hashes as upstream's (db.toml + user_db.toml, both hash forms)", () =>
    Effect.gen(function* () {
      const data = yield* loadTelecomData()
      const expected = JSON.parse(
        yield* Effect.promise(() => readFile(join(dataRoot(), "tau2", "telecom", "oracle", "initial-db.json"), "utf8"))
      ) as Record<string, string>
      expect({
        db_sha256: dbSha256(data.initialWorld),
        user_db_sha256: userDbSha256(data.initialWorld),
        upstream_db_hash: upstreamDbHash(data.initialWorld),
        upstream_user_db_hash: upstreamUserDbHash(data.initialWorld)
      }).toEqual(expected)
      expect(data.policy.startsWith("<main_policy>\n")).toBe(true)
    }))

  it.effect("a missing file and an altered file are typed errors naming the file", () =>
    Effect.gen(function* () {
      const dir = tempDir("telecom-data-")
      const missing = yield* Effect.flip(readPinned(pinnedFiles.db, dir))
      expect(missing).toMatchObject({ _tag: "DataError", reason: "missing" })
      yield* Effect.promise(() => mkdir(join(dir, "tau2", "telecom"), { recursive: true }))
      yield* Effect.promise(() => writeFile(join(dir, pinnedFiles.db.name), "[[plans]]\n"))
      const altered = yield* Effect.flip(readPinned(pinnedFiles.db, dir))
      expect(altered).toMatchObject({ _tag: "DataError", reason: "hash-mismatch" })
      expect(altered.message).toContain(pinnedFiles.db.sha256)
      expect(altered.message).toContain("db.toml")
    }))
})
