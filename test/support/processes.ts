/** Looking at processes from the outside, through /proc (Linux): what a user would see with ps. */
import * as fs from "node:fs"

const errnoOf = (e: unknown): unknown => (e instanceof Error && "code" in e ? e.code : undefined)

/** Whether a process still runs. A zombie (killed, waiting for a reaper that a container's init
 * may never be) counts as dead. */
export const isAlive = (pid: number): boolean => {
  let stat: string
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  } catch (e) {
    if (errnoOf(e) === "ENOENT" || errnoOf(e) === "ESRCH") return false
    throw e
  }
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
  return state !== "Z" && state !== "X"
}

/** Live processes whose environment holds `ASSAY_RUN_TOKEN` with this token, with their command lines. */
export const processesCarrying = (token: string): ReadonlyArray<{ readonly pid: number; readonly cmdline: string }> => {
  const found: Array<{ pid: number; cmdline: string }> = []
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    const pid = Number(name)
    let environ: string
    let cmdline: string
    try {
      environ = fs.readFileSync(`/proc/${pid}/environ`, "latin1")
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").replaceAll("\0", " ").trim()
    } catch (e) {
      // Gone since the listing, or another user's: neither is one of ours.
      const code = errnoOf(e)
      if (code === "ENOENT" || code === "ESRCH" || code === "EACCES") continue
      throw e
    }
    const entry = environ.split("\0").find((v) => v.startsWith("ASSAY_RUN_TOKEN="))
    if (entry?.slice("ASSAY_RUN_TOKEN=".length).split(" ").includes(token) && isAlive(pid)) found.push({ pid, cmdline })
  }
  return found
}

/** Live processes whose command line holds `marker` (a sandbox's processes carry no token we can read). */
export const processesWithCmdline = (marker: string): ReadonlyArray<{ readonly pid: number; readonly cmdline: string }> => {
  const found: Array<{ pid: number; cmdline: string }> = []
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    let cmdline: string
    try {
      cmdline = fs.readFileSync(`/proc/${name}/cmdline`, "latin1").replaceAll("\0", " ").trim()
    } catch (e) {
      // Gone since the listing, or another user's: neither is one of ours.
      const code = errnoOf(e)
      if (code === "ENOENT" || code === "ESRCH" || code === "EACCES") continue
      throw e
    }
    if (cmdline.includes(marker) && isAlive(Number(name))) found.push({ pid: Number(name), cmdline })
  }
  return found
}
