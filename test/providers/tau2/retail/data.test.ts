import { mkdir, writeFile } from "node:fs/promises"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as World from "../../../../src/world/World.ts"
import { loadRetailData, pinnedFiles, readPinned, tau2Dir, worldFromDbText } from "../../../../providers/tau2/retail/data.ts"
import { finalDbSha256, upstreamDbHash } from "../../../../providers/tau2/retail/hash.ts"
import type { Product } from "../../../../providers/tau2/retail/model.ts"
import { tempDir } from "../../../support/tempDirs.ts"

describe("retail data", () => {
  it.effect("loads the pinned files into a world of 50 products, 500 users and 1000 orders", () =>
    Effect.gen(function* () {
      const data = yield* loadRetailData()
      expect(World.size(data.initialWorld, "products")).toBe(50)
      expect(World.size(data.initialWorld, "users")).toBe(500)
      expect(World.size(data.initialWorld, "orders")).toBe(1000)
      expect(data.toolSpecs.map((t) => t.name)).toEqual(data.toolTypes.map((t) => t.name))
      expect(data.splits.train.length + data.splits.test.length).toBe(data.splits.base.length)
    }))

  it.effect("hashes the initial DB as upstream does (initial-db.json)", () =>
    Effect.gen(function* () {
      const data = yield* loadRetailData()
      const expected = JSON.parse(readFileSync(join(tau2Dir(), "retail", "oracle", "initial-db.json"), "utf8")) as Record<string, string>
      expect(finalDbSha256(data.initialWorld)).toBe(expected["final_db_sha256"])
      expect(upstreamDbHash(data.initialWorld)).toBe(expected["upstream_db_hash"])
    }))

  it.effect("keeps db.json order for integer-like keys (products and their variants)", () =>
    Effect.gen(function* () {
      const data = yield* loadRetailData()
      const [firstId, first] = World.entries(data.initialWorld, "products")[0]!
      expect(firstId).toBe("9523456873")
      expect((first as unknown as Product).variants[0]!.item_id).toBe("9612497925")
    }))

  it("fills the optional Order fields with null, as pydantic's dump has them", () => {
    const db = JSON.stringify({
      products: {},
      users: {},
      orders: {
        "#W1": {
          order_id: "#W1", user_id: "u", status: "pending", items: [], fulfillments: [], payment_history: [],
          address: { address1: "a", address2: "", city: "c", country: "US", state: "s", zip: "1" }
        }
      }
    })
    const world = Either.getOrThrow(worldFromDbText(db))
    expect(World.get(world, "orders", "#W1")).toMatchObject({ cancel_reason: null, exchange_price_difference: null, return_items: null })
  })

  it.effect("every pinned file present in the data folder has its pinned hash", () =>
    Effect.gen(function* () {
      for (const file of Object.values(pinnedFiles)) {
        const text = yield* readPinned(file)
        expect(text.length, file.name).toBeGreaterThan(0)
      }
    }))

  it.effect("names the file and both hashes when a file differs from the pinned one", () =>
    Effect.gen(function* () {
      const dir = tempDir("tau2-")
      yield* Effect.promise(() => mkdir(join(dir, "tau2", "retail"), { recursive: true }))
      yield* Effect.promise(() => writeFile(join(dir, "tau2", "retail", "policy.md"), "not the policy"))
      const error = yield* Effect.flip(readPinned(pinnedFiles.policy, dir))
      expect(error.reason).toBe("hash-mismatch")
      expect(error.message).toContain("policy.md")
      expect(error.message).toContain(pinnedFiles.policy.sha256)
      expect(error.message).toMatch(/has sha256 [0-9a-f]{64}/)
    }))

  it.effect("says how to get the data when a file is missing", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(loadRetailData("/nonexistent-assay-data"))
      expect(error.reason).toBe("missing")
      expect(error.message).toContain("assay data pull tau2-retail")
      expect(error.message).toContain("ASSAY_DATA_DIR")
    }))
})
