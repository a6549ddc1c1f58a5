/**
 * Run by bench/tau2.ts as a child process: one fresh retail world as a process's first load makes
 * it (read db.json, check its sha256, build the world: from the prepared form when the cache
 * folder it is given holds one), timed once; prints wall and CPU time and the source as JSON.
 */
import { Effect, Either } from "effect"
import { preparedWorld } from "../providers/tau2/common/prepared.ts"
import { pinnedFiles, readPinnedBytes, retailWorld } from "../providers/tau2/retail/data.ts"

const start = performance.now()
const cpu = process.cpuUsage()
const bytes = Effect.runSync(readPinnedBytes(pinnedFiles.db))
const { source } = Either.getOrThrow(preparedWorld(retailWorld, bytes, pinnedFiles.db.sha256))
const used = process.cpuUsage(cpu)
process.stdout.write(JSON.stringify({ ms: performance.now() - start, cpuMs: (used.user + used.system) / 1000, source }) + "\n")
