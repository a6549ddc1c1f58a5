/**
 * Upstream's two hashes of the airline DB, computed from a World (common/dbHash.ts): both hash the
 * pydantic `FlightDB.model_dump()` (every field, `status` of a reservation as null, gift-card and
 * certificate amounts as floats). They serialize the whole DB (7 MB), so they serve equivalence
 * with upstream; the evaluator compares `World.digest`, kept along the structure.
 */
import { dbHashes } from "../common/dbHash.ts"
import { dumpFlight, dumpReservation, dumpUser, type Flight, type Reservation, type User } from "./model.ts"

/** `FlightDB.model_dump()`: flights, users, reservations. */
export const { finalDbSha256, modelDump, upstreamDbHash } = dbHashes([
  ["flights", (f: Flight) => dumpFlight(f)],
  ["users", (u: User) => dumpUser(u)],
  ["reservations", (r: Reservation) => dumpReservation(r)]
])
