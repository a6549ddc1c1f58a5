/**
 * Run by bench/tau2.ts as a child process: a fresh retail world as a process's first load makes
 * it, then `N` more (default 0) in the same process, each timed; prints wall and CPU time, the
 * wall time of each part and the source as JSON. Modes:
 *
 * - `prepared` (default): read db.json's bytes, check their sha256 or its note, build the world
 *   (common/prepared.ts: from the prepared form when the cache folder it is given holds one).
 * - `full`: read and check the bytes as above, then the world by the full parse and check of the
 *   text (worldFromDbText): what a load without a prepared form does, the form aside.
 * - `first`: `prepared` with no form in the cache it is given: the full parse, and the form made
 *   and stored for later loads.
 */
import { Effect, Either } from "effect"
import { textOf } from "../providers/tau2/common/pinned.ts"
import { preparedWorld } from "../providers/tau2/common/prepared.ts"
import { pinnedFiles, readPinnedBytes, retailWorld, worldFromDbText } from "../providers/tau2/retail/data.ts"

const mode = process.argv[2] ?? "prepared"
const more = Number(process.argv[3] ?? 0)

const load = () => {
  const start = performance.now()
  const cpu = process.cpuUsage()
  const bytes = Effect.runSync(readPinnedBytes(pinnedFiles.db))
  const read = performance.now()
  const source = mode === "full"
    ? (Either.getOrThrow(worldFromDbText(textOf(bytes))), "parsed")
    : Either.getOrThrow(preparedWorld(retailWorld, bytes, pinnedFiles.db.sha256)).source
  const end = performance.now()
  const used = process.cpuUsage(cpu)
  return { ms: end - start, cpuMs: (used.user + used.system) / 1000, readMs: read - start, worldMs: end - read, source }
}

const first = load()
const later = Array.from({ length: more }, load)
process.stdout.write(JSON.stringify({ ...first, later }) + "\n")
