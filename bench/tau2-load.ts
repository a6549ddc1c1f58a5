/**
 * Run by bench/tau2.ts as a child process: one fresh retail world as a process's first load makes
 * it (read db.json's bytes, check their sha256 or its note, build the world: from the prepared
 * form when the cache folder it is given holds one), timed once; prints wall and CPU time, the
 * wall time of each part, and the source as JSON.
 */
import { Effect, Either } from "effect"
import { preparedWorld } from "../providers/tau2/common/prepared.ts"
import { pinnedFiles, readPinnedBytes, retailWorld } from "../providers/tau2/retail/data.ts"

const start = performance.now()
const cpu = process.cpuUsage()
const bytes = Effect.runSync(readPinnedBytes(pinnedFiles.db))
const read = performance.now()
const { source } = Either.getOrThrow(preparedWorld(retailWorld, bytes, pinnedFiles.db.sha256))
const end = performance.now()
const used = process.cpuUsage(cpu)
process.stdout.write(JSON.stringify({ ms: end - start, cpuMs: (used.user + used.system) / 1000, readMs: read - start, worldMs: end - read, source }) + "\n")
