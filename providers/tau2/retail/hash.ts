/**
 * Upstream's two hashes of the retail DB, computed from a World (common/dbHash.ts): both hash the
 * pydantic `RetailDB.model_dump()` (every field, optional Order fields as null, money as floats).
 * They serialize the whole DB (2.8 MB), so they serve equivalence with upstream; the evaluator
 * compares `World.digest`, kept along the structure.
 */
import { dbHashes } from "../common/dbHash.ts"
import { dumpOrder, dumpProduct, dumpUser, type Order, type Product, type User } from "./model.ts"

/** `RetailDB.model_dump()`: products, users, orders. */
export const { finalDbSha256, modelDump, upstreamDbHash } = dbHashes([
  ["products", (p: Product) => dumpProduct(p)],
  ["users", (u: User) => dumpUser(u)],
  ["orders", (o: Order) => dumpOrder(o)]
])
