/**
 * vitest globalSetup: the run gets a temporary folder of its own, and what is left in it at the
 * end is a leak, named here.
 *
 * TMPDIR points at a fresh `assay-vitest-*` folder before any worker starts, so every mkdtemp of a
 * test, of the command the tests run, and of the agent CLIs and browsers they start lands in it
 * (os.tmpdir(), mktemp and Chromium all honour TMPDIR). After the run, every entry still in it is
 * listed with its size, and the folder is removed, so a leak never stays in the shared /tmp (a run
 * that ended without teardown has its folder removed by the next run). New
 * `assay-*` entries directly in /tmp (something that ignored TMPDIR) are listed too, as possibly
 * another run's on a shared machine. Live processes still carrying the run's TMPDIR are listed
 * and ended: nothing a test started may outlive the run.
 *
 * A leak is listed as a warning after the run; ASSAY_TMP_LEAKS=fail makes it fail the run (for CI
 * once no test file leaks: today some do, and their folders are removed here all the same).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** The run's own XDG_CACHE_HOME, inside its temp folder: not a leak. */
const CACHE = ".cache"

/** tsx's transform cache (`tsx-<uid>` in the temp folder) of the processes run with `--import tsx`: a cache too. */
const isCache = (name: string): boolean => name === CACHE || /^tsx-\d+$/.test(name)

const sizeOf = (p: string): number => {
  const s = fs.lstatSync(p, { throwIfNoEntry: false })
  if (s === undefined) return 0
  if (!s.isDirectory()) return s.size
  return fs.readdirSync(p).reduce((sum, name) => sum + sizeOf(path.join(p, name)), 0)
}

const human = (bytes: number): string =>
  bytes >= 1 << 20 ? `${(bytes / (1 << 20)).toFixed(1)} MB` : bytes >= 1 << 10 ? `${(bytes / (1 << 10)).toFixed(1)} KB` : `${bytes} B`

const errnoOf = (e: unknown): unknown => (e instanceof Error && "code" in e ? e.code : undefined)

/** Live processes (not zombies) whose environment holds this exact TMPDIR. */
const processesWithTmpdir = (dir: string): ReadonlyArray<{ readonly pid: number; readonly cmdline: string }> => {
  if (!fs.existsSync("/proc/self/environ")) return [] // no /proc (macOS): nothing to look at
  const found: Array<{ pid: number; cmdline: string }> = []
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8")
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
      if (state === "Z" || state === "X") continue
      if (!fs.readFileSync(`/proc/${name}/environ`, "latin1").split("\0").includes(`TMPDIR=${dir}`)) continue
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, "latin1").replaceAll("\0", " ").trim()
      // vitest's own workers (children of this process) may still be closing when teardown runs.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      if (ppid === process.pid && cmdline.includes("tinypool")) continue
      found.push({ pid: Number(name), cmdline })
    } catch (e) {
      // Gone since the listing, or another user's process: not one of this run's.
      const code = errnoOf(e)
      if (code === "ENOENT" || code === "ESRCH" || code === "EACCES") continue
      throw e
    }
  }
  return found
}

const assayEntriesOfTmp = (tmp: string): ReadonlySet<string> =>
  new Set(fs.readdirSync(tmp).filter((n) => n.startsWith("assay-")))

const pidRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return errnoOf(e) === "EPERM" // someone else's process: running
  }
}

/**
 * Removes `dir`, trying again while it is still being written: under Deno the closing test workers
 * write their module cache (XDG_CACHE_HOME/deno, inside the run's folder) as teardown runs, and a
 * recursive remove then meets a folder that was refilled (ENOTEMPTY).
 */
const removeSettling = (dir: string): void => {
  for (let attempt = 1; ; attempt++) {
    try {
      fs.rmSync(dir, { recursive: true, force: true })
      return
    } catch (e) {
      if (attempt >= 20 || (errnoOf(e) !== "ENOTEMPTY" && errnoOf(e) !== "EBUSY")) throw e
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100)
    }
  }
}

/** Folders of earlier runs that ended without their teardown (Ctrl-C, a killed vitest). */
const removeAbandoned = (tmp: string): void => {
  for (const name of fs.readdirSync(tmp)) {
    const pid = /^assay-vitest-(\d+)-/.exec(name)?.[1]
    if (pid !== undefined && !pidRunning(Number(pid))) fs.rmSync(path.join(tmp, name), { recursive: true, force: true })
  }
}

export default function setup(): () => void {
  const sharedTmp = os.tmpdir()
  removeAbandoned(sharedTmp)
  const before = assayEntriesOfTmp(sharedTmp)
  // Named with our pid, so a later run can tell an abandoned folder from a concurrent run's.
  const runTmp = fs.mkdtempSync(path.join(sharedTmp, `assay-vitest-${process.pid}-`))
  // Workers are forked after globalSetup and inherit this; os.tmpdir() reads TMPDIR on each call.
  process.env.TMPDIR = runTmp
  // The user's cache folder too: what the command notes there (store checks, verified data files,
  // prepared worlds) stays in the run's folder rather than in ~/.cache, unless the caller chose one.
  if (process.env.XDG_CACHE_HOME === undefined) process.env.XDG_CACHE_HOME = path.join(runTmp, CACHE)

  return () => {
    // Leaks of this run for certain (the ones ASSAY_TMP_LEAKS=fail fails on).
    const leaks: Array<string> = []
    for (const p of processesWithTmpdir(runTmp)) {
      leaks.push(`process ${p.pid} still running: ${p.cmdline}`)
      try {
        process.kill(p.pid, "SIGKILL")
      } catch (e) {
        if (errnoOf(e) !== "ESRCH") throw e // ESRCH: it ended by itself meanwhile
      }
    }
    for (const name of fs.readdirSync(runTmp).filter((n) => !isCache(n)).sort()) {
      leaks.push(`${path.join(runTmp, name)} (${human(sizeOf(path.join(runTmp, name)))})`)
    }
    removeSettling(runTmp)
    // Perhaps another run's on a shared machine: listed, never failing.
    const appeared = [...assayEntriesOfTmp(sharedTmp)].filter((n) => !before.has(n)).sort()
    if (appeared.length > 0) {
      process.stderr.write(
        `\nnote: new in ${sharedTmp} during the run (something ignored TMPDIR, or another run made them):\n` +
          appeared.map((n) => `  ${path.join(sharedTmp, n)} (${human(sizeOf(path.join(sharedTmp, n)))})\n`).join("")
      )
    }
    if (leaks.length === 0) return
    const report = [
      `the tests left ${leaks.length} temp folder(s) or process(es) behind (removed, and ended, now):`,
      ...leaks.map((l) => `  ${l}`)
    ].join("\n")
    if (process.env.ASSAY_TMP_LEAKS === "fail") throw new Error(report)
    process.stderr.write(`\nwarning: ${report}\n(ASSAY_TMP_LEAKS=fail fails the run on them)\n`)
  }
}
