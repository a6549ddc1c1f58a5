/**
 * Upstream's hashes of the two telecom DBs, computed from a World. Both hash `model_dump()`
 * (`TelecomDB`: lists plans, customers, lines, bills, devices; `TelecomUserDB`: device,
 * surroundings) with `json.dumps(..., sort_keys=True, default=str)`; the oracle's canonical
 * one also uses compact separators and keeps UTF-8 unescaped. The DBs are small (10 kB), so
 * each hash serializes the whole DB; the evaluator compares `World.digest` instead.
 */
import { createHash } from "node:crypto"
import { World } from "../../../src/index.ts"
import { compactFormat, type DumpFormat, pythonDefaultFormat, recordText } from "../common/dbHash.ts"
import { compareCodePoints, dict, dumps, type PyDict } from "../common/pyjson.ts"
import { agentDumps, agentTables, dumpPhone, dumpSurroundings, userTable, type PhoneDevice, type Surroundings } from "./model.ts"

/** `TelecomDB.model_dump()`. */
export const dbDump = (world: World.World): PyDict =>
  dict(agentTables.map(([table]) => [table, World.entries(world, table).map(([, v]) => agentDumps[table](v as never))] as const))

/** `TelecomUserDB.model_dump()`. */
export const userDbDump = (world: World.World): PyDict =>
  dict([
    ["device", dumpPhone(World.get(world, userTable, "device") as unknown as PhoneDevice)],
    ["surroundings", dumpSurroundings(World.get(world, userTable, "surroundings") as unknown as Surroundings)]
  ])

const compact = compactFormat()
const pythonDefault = pythonDefaultFormat()

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

/** `json.dumps(TelecomDB.model_dump(), sort_keys=True, ...)`, record texts cached. */
const dbText = (world: World.World, format: DumpFormat): string => {
  const [itemSep, keySep] = format.options.separators ?? [", ", ": "]
  const tables = [...agentTables].sort((a, b) => compareCodePoints(a[0], b[0]))
  const parts = tables.map(([table]) => {
    const records = World.entries(world, table).map(([, v]) => recordText(format, v, () => agentDumps[table](v as never)))
    return `${dumps(table, format.options)}${keySep}[${records.join(itemSep)}]`
  })
  return `{${parts.join(itemSep)}}`
}

/** The oracle's canonical hash of the agent DB. */
export const dbSha256 = (world: World.World): string => sha256(dbText(world, compact))
/** The oracle's canonical hash of the user DB. */
export const userDbSha256 = (world: World.World): string => sha256(dumps(userDbDump(world), compact.options))
/** `Environment.get_db_hash()`. */
export const upstreamDbHash = (world: World.World): string => sha256(dbText(world, pythonDefault))
/** `Environment.get_user_db_hash()`. */
export const upstreamUserDbHash = (world: World.World): string => sha256(dumps(userDbDump(world), pythonDefault.options))
