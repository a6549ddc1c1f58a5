import { mkdir, writeFile } from "node:fs/promises"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as World from "../../../../src/world/World.ts"
import { allPinnedFiles, bankingDir, deepMerge, loadBankingData, pinnedFiles, readPinned } from "../../../../providers/tau2/banking/data.ts"
import { finalDbSha256, upstreamDbHash } from "../../../../providers/tau2/banking/hash.ts"
import { jsonLoads, pyRepr } from "../../../../providers/tau2/banking/pyvalue.ts"
import { tempDir } from "../../../support/tempDirs.ts"

describe("banking data", () => {
  it.effect("loads db.json (23 tables), 698 documents in corpus order and 97 tasks", () =>
    Effect.gen(function* () {
      const data = yield* loadBankingData()
      expect(World.size(data.initialWorld, "users")).toBe(39)
      expect(data.documents).toHaveLength(698)
      expect(data.documents[0]!.id).toBe("doc_business_savings_accounts_platinum_reserve_account_005")
      expect(data.tasksJson).toHaveLength(97)
      expect(data.toolSpecs).toHaveLength(15)
      expect(data.userToolSpecs).toHaveLength(6)
      expect(data.discoverableTools).toHaveLength(48)
    }))

  it.effect("hashes the initial DB as upstream does (initial-db.json)", () =>
    Effect.gen(function* () {
      const data = yield* loadBankingData()
      const expected = JSON.parse(readFileSync(join(bankingDir(), "oracle", "initial-db.json"), "utf8")) as Record<string, string>
      expect(finalDbSha256(data.initialWorld, data.notes)).toBe(expected["final_db_sha256"])
      expect(upstreamDbHash(data.initialWorld, data.notes)).toBe(expected["upstream_db_hash"])
    }))

  it.effect("keeps integer-like user ids in db.json order and floats apart from ints", () =>
    Effect.gen(function* () {
      const data = yield* loadBankingData()
      const ids = World.entries(data.initialWorld, "users").map(([k]) => k)
      // A JS object would list "126" third (integer-like keys first); Python keeps the file's order.
      expect(ids.slice(0, 4)).toEqual(["123", "125", "6680a37184", "af0581dcbf"])
      expect(ids.indexOf("126")).toBeGreaterThan(3)
      const parsed = Either.getOrThrow(jsonLoads('{"a": -50.0, "b": 50, "c": 0.5}')) as Record<string, never>
      expect([pyRepr(parsed["a"]), pyRepr(parsed["b"]), pyRepr(parsed["c"])]).toEqual(["-50.0", "50", "0.5"])
    }))

  it.effect("names the file, both hashes and the fix when a pinned file differs", () =>
    Effect.gen(function* () {
      const dir = tempDir("tau2-banking-data-")
      yield* Effect.promise(() => mkdir(join(dir, "tau2", "banking_knowledge"), { recursive: true }))
      yield* Effect.promise(() => writeFile(join(dir, pinnedFiles.policy.name), "not the policy"))
      const e = yield* Effect.flip(readPinned(pinnedFiles.policy, dir))
      expect(e.reason).toBe("hash-mismatch")
      expect(e.message).toContain(pinnedFiles.policy.sha256)
      expect(e.message).toContain("policy-bm25.md")
      expect(e.message).toContain("assay data pull tau2-banking")
      const missing = yield* Effect.flip(readPinned(pinnedFiles.db, dir))
      expect(missing.reason).toBe("missing")
    }))

  it.effect("pins every document and task with the sha256 of the pinned SHA256SUMS, and every pinned file verifies", () =>
    Effect.gen(function* () {
      const sums = yield* readPinned(pinnedFiles.sums)
      const fromFile = sums.trim().split("\n").map((l) => l.split("  ").reverse().join(" "))
      const pinned = allPinnedFiles.filter((f) => /\/(documents|tasks)\//.test(f.name)).map((f) => `${f.name.replace("tau2/banking_knowledge/", "")} ${f.sha256}`)
      expect(pinned.sort()).toEqual(fromFile.sort())
      // 9 made or read whole, the bm25 template and its 2 components, 795 documents and tasks, 4 oracle corpora.
      expect(allPinnedFiles).toHaveLength(9 + 3 + 795 + 4)
      const docs = allPinnedFiles.find((f) => f.name.includes("(general)_001"))!
      expect(docs.url).toBe(
        "https://raw.githubusercontent.com/sierra-research/tau2-bench/a2c024725189473d2d7cea3a5cfdbcc67478e41f/data/tau2/domains/banking_knowledge/documents/doc_bank_accounts_bank_accounts_(general)_001.json"
      )
      for (const f of allPinnedFiles) yield* readPinned(f)
    }))

  it("deep-merges agent data as addict's update: dicts key by key, lists replaced, new keys last", () => {
    const merged = deepMerge({ a: { x: 1, y: [1, 2] }, b: 2 }, { a: { y: [3], z: 4 }, c: 5 })
    expect(merged).toEqual({ a: { x: 1, y: [3], z: 4 }, b: 2, c: 5 })
    expect(Object.keys(merged)).toEqual(["a", "b", "c"])
  })
})
