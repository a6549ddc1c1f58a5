import { mkdir, writeFile } from "node:fs/promises"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as World from "../../../../src/world/World.ts"
import { dataRoot, loadAirlineData, pinnedFiles, readPinned, worldFromDbText } from "../../../../providers/tau2/airline/data.ts"
import { finalDbSha256, upstreamDbHash } from "../../../../providers/tau2/airline/hash.ts"
import type { Flight, Reservation, User } from "../../../../providers/tau2/airline/model.ts"
import { tempDir } from "../../../support/tempDirs.ts"

describe("airline data", () => {
  it.effect("loads the pinned files into a world of 300 flights, 500 users and 2000 reservations", () =>
    Effect.gen(function*() {
      const data = yield* loadAirlineData()
      expect(World.size(data.initialWorld, "flights")).toBe(300)
      expect(World.size(data.initialWorld, "users")).toBe(500)
      expect(World.size(data.initialWorld, "reservations")).toBe(2000)
      expect(data.toolSpecs.map((t) => t.name)).toEqual(data.toolTypes.map((t) => t.name))
      expect(data.toolSpecs).toHaveLength(14)
      expect(data.splits.base).toHaveLength(50)
      expect(data.splits.train.length + data.splits.test.length).toBe(data.splits.base.length)
    }))

  it.effect("hashes the initial DB as upstream does (initial-db.json)", () =>
    Effect.gen(function*() {
      const data = yield* loadAirlineData()
      const expected = JSON.parse(readFileSync(join(dataRoot(), "tau2", "airline", "oracle", "initial-db.json"), "utf8")) as Record<string, string>
      expect(finalDbSha256(data.initialWorld)).toBe(expected["final_db_sha256"])
      expect(upstreamDbHash(data.initialWorld)).toBe(expected["upstream_db_hash"])
    }))

  it.effect("stores records in pydantic field order, flights in db.json order, reservations with status null", () =>
    Effect.gen(function*() {
      const data = yield* loadAirlineData()
      const [firstId, first] = World.entries(data.initialWorld, "flights")[0]!
      expect(firstId).toBe("HAT001")
      const flight = first as unknown as Flight
      expect(Object.keys(flight)).toEqual(["flight_number", "origin", "destination", "scheduled_departure_time_est", "scheduled_arrival_time_est", "dates"])
      const reservation = World.get(data.initialWorld, "reservations", "Q69X3R") as unknown as Reservation
      expect(reservation.status).toBeNull()
      expect(Object.keys(reservation.flights[0]!)).toEqual(["flight_number", "origin", "destination", "date", "price"])
      // The two edits upstream made to tau-bench v1's data.
      expect(flight.flight_number).toBe("HAT001")
      expect((World.get(data.initialWorld, "flights", "HAT018") as unknown as Flight).dates["2024-05-11"]!.status).toBe("delayed")
      expect(World.get(data.initialWorld, "reservations", "Z7GOZK")).toMatchObject({ destination: "IAH", flight_type: "round_trip" })
      const user = World.get(data.initialWorld, "users", "raj_sanchez_7340") as unknown as User
      expect(user.payment_methods["certificate_4594761"]).toEqual({ source: "certificate", id: "certificate_4594761", amount: 150 })
    }))

  it("refuses a DB whose records are not upstream's models, naming the record", () => {
    const db = JSON.stringify({ flights: {}, users: {}, reservations: { X: { reservation_id: "X" } } })
    const result = worldFromDbText(db)
    expect(Either.isLeft(result) && result.left).toMatch(/^reservations\.X: /)
  })

  it.effect("every pinned file present in the data folder has its pinned hash", () =>
    Effect.gen(function*() {
      for (const file of Object.values(pinnedFiles)) {
        const text = yield* readPinned(file)
        expect(text.length, file.name).toBeGreaterThan(0)
      }
    }))

  it.effect("names the file and both hashes when a file differs from the pinned one", () =>
    Effect.gen(function*() {
      const dir = tempDir("tau2-airline-")
      yield* Effect.promise(() => mkdir(join(dir, "tau2", "airline"), { recursive: true }))
      yield* Effect.promise(() => writeFile(join(dir, "tau2", "airline", "policy.md"), "not the policy"))
      const error = yield* Effect.flip(readPinned(pinnedFiles.policy, dir))
      expect(error.reason).toBe("hash-mismatch")
      expect(error.message).toContain("policy.md")
      expect(error.message).toContain(pinnedFiles.policy.sha256)
      expect(error.message).toContain("assay data pull tau2-airline")
    }))

  it.effect("says how to get the data when a file is missing", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(loadAirlineData("/nonexistent-assay-data"))
      expect(error.reason).toBe("missing")
      expect(error.message).toContain("assay data pull tau2-airline")
      expect(error.message).toContain("ASSAY_DATA_DIR")
    }))
})
