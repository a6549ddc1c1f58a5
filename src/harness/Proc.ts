/**
 * Linux's process table, read from /proc: what the process sweeps (Process.ts) and the container
 * engine's build stops (container/Engine.ts) walk. Elsewhere (macOS, BSD) there is no /proc: the
 * table reads as empty and callers fall back on what they know (a process group, a pid).
 */
import * as fs from "node:fs"

/** Whether this system has a /proc to read. */
export const hasProc: boolean = fs.existsSync("/proc/self/stat")

export interface ProcStat {
  /** One letter: R, S, D, Z (zombie), X (dead), ... */
  readonly state: string
  readonly ppid: number
  readonly pgid: number
  /** Start time in clock ticks since boot: with the pid, names one process (pids are reused). */
  readonly start: string
}

/** The error code of a failed system call (ENOENT, ESRCH, EPERM, ...), else undefined. */
export const errnoOf = (e: unknown): unknown => (e instanceof Error && "code" in e ? e.code : undefined)

/** The pids /proc lists now (empty without /proc). */
export const procPids = (): ReadonlyArray<number> => {
  let names: Array<string>
  try {
    names = fs.readdirSync("/proc")
  } catch (e) {
    if (errnoOf(e) === "ENOENT") return []
    throw e
  }
  const pids: Array<number> = []
  for (const name of names) if (/^\d+$/.test(name)) pids.push(Number(name))
  return pids
}

/** /proc/PID/stat; undefined when the process is gone (between listing /proc and reading it). */
export const procStat = (pid: number): ProcStat | undefined => {
  let text: string
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  } catch (e) {
    if (errnoOf(e) === "ENOENT" || errnoOf(e) === "ESRCH") return undefined
    throw e
  }
  // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
  return { state: fields[0] ?? "", ppid: Number(fields[1]), pgid: Number(fields[2]), start: fields[19] ?? "" }
}

/** Every listed process's parent, by pid (empty without /proc). */
export const procParents = (): Map<number, number> => {
  const out = new Map<number, number>()
  for (const pid of procPids()) {
    const s = procStat(pid)
    if (s !== undefined) out.set(pid, s.ppid)
  }
  return out
}

/** A process and its descendants, by pid: the root alone without /proc. */
export const procTree = (root: number): Set<number> => {
  const parents = procParents()
  const found = new Set([root])
  for (let grew = true; grew;) {
    grew = false
    for (const [pid, ppid] of parents) {
      if (!found.has(pid) && found.has(ppid)) {
        found.add(pid)
        grew = true
      }
    }
  }
  return found
}
