/**
 * Waits until the file system's clock has ticked past the last change of `path` (of every file
 * under it, for a folder): a file written after
 * this returns carries a later time. A data note is used only when written in a later tick than
 * the file's change (DataRoot.notedSha256), so a test that copies a file and expects its first
 * read to be noted waits here first. The tick is a few ms on Linux.
 */
import { readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"

// The later of the modification and change times: Deno reports the change time in whole seconds
// (the modification time in ms), so the change time alone could be long past while the file's
// modification time is still the clock's present tick, and a note written then would be racy.
const changedAt = (stats: { readonly mtimeNs: bigint; readonly ctimeNs: bigint }): bigint => (stats.mtimeNs > stats.ctimeNs ? stats.mtimeNs : stats.ctimeNs)

const lastChange = (path: string): bigint => {
  const stats = statSync(path, { bigint: true })
  if (!stats.isDirectory()) return changedAt(stats)
  let last = changedAt(stats)
  for (const name of readdirSync(path)) {
    const t = lastChange(join(path, name))
    if (t > last) last = t
  }
  return last
}

export const afterFsTick = (path: string): void => {
  const changed = lastChange(path)
  const probe = `${path.replace(/\/+$/, "")}.tick`
  const deadline = Date.now() + 5_000
  try {
    for (;;) {
      writeFileSync(probe, "")
      if (statSync(probe, { bigint: true }).mtimeNs > changed) return
      if (Date.now() > deadline) throw new Error(`the file system's clock did not move past ${path}'s change in 5 s`)
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1) // 1 ms
    }
  } finally {
    rmSync(probe, { force: true })
  }
}
