/**
 * Running a child with stdin closed, in its own process group, and making sure nothing it started
 * outlives the run: at the deadline, on interruption, and once the leader exits.
 *
 * A process group is not enough: a descendant that calls `setsid` leaves the group, and once its
 * parent exits it is reparented and no longer a descendant either. So every run marks its tree:
 * the child's environment gets `ASSAY_RUN_TOKEN=<random>`, which fork and exec pass on to every
 * descendant. Ending a run signals the group, the leader's descendants and every process whose
 * /proc/PID/environ carries the token: SIGTERM first (a CLI may remove its temp files), SIGKILL
 * after a short grace, scanning again until none remain or a bound is reached.
 *
 * The child's TMPDIR is a folder of the run's own, removed once every process is gone: what an
 * agent CLI or a check leaves in its temp folder goes with the run.
 *
 * What it cannot catch: a descendant that starts with a cleared environment (`env -i`) *and*
 * leaves the group *and* is orphaned before the sweep. Without /proc (macOS, BSD) only the group
 * is killed, as before.
 */
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Deferred, Effect, Option, Schema } from "effect"
import { errnoOf, hasProc, procPids, procStat, type ProcStat } from "./Proc.ts"

export interface ProcessSpec {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  /** The complete environment of the child (nothing is inherited implicitly) but the run's token
   * (ASSAY_RUN_TOKEN) and temp folder (TMPDIR). */
  readonly env: Readonly<Record<string, string>>
  readonly timeoutMs: number
  /** Output kept per stream; the rest is dropped (counted in `truncated`). Default 8 MiB. */
  readonly maxOutputBytes?: number
}

/** How the processes of a run were ended. */
export interface Termination {
  /** `marker`: group, descendants and every process carrying the token; `group`: no /proc here. */
  readonly method: "marker" | "group"
  /** Distinct processes signalled (the group counts as one without /proc). */
  readonly signalled: number
  /** Processes still alive when the sweep gave up (0 = every one is gone). */
  readonly remaining: number
  /** From the start of the sweep to the last process gone: at a timeout, the overshoot. */
  readonly ms: number
}

export interface ProcessOutcome {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  readonly stdout: string
  readonly stderr: string
  readonly truncated: boolean
  readonly wallMs: number
  /** The run's marker, as the child saw it in ASSAY_RUN_TOKEN. */
  readonly token: string
  /** The sweep at the end of the run (also when the leader exited by itself, for stragglers). */
  readonly termination: Termination
}

export class ProcessError extends Schema.TaggedError<ProcessError>()("ProcessError", {
  command: Schema.String,
  reason: Schema.Literal("spawn-failed"),
  detail: Schema.String
}) {
  override get message() {
    return `${this.command}: ${this.reason}: ${this.detail}`
  }
}

/** The variable marking every process of a run. Nested runs append their token (space-separated). */
export const RUN_TOKEN_VARIABLE = "ASSAY_RUN_TOKEN"

/** How long output may still arrive after the leader exited. */
const CLOSE_GRACE_MS = 2_000
/** Between SIGTERM and SIGKILL. */
const TERM_GRACE_MS = 500
/** A sweep gives up after this long (a process stuck in uninterruptible sleep cannot be killed). */
const SWEEP_LIMIT_MS = 5_000
const SWEEP_POLL_MS = 20

/**
 * Wall-clock sleep: a real process's deadline is wall time, not the Effect clock (under a
 * TestClock an Effect.sleep would never end, and the child would run forever).
 */
const wallSleep = (ms: number): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const t = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(t))
  })

/** Sends a signal; false when there is no such process (ESRCH) or it is not ours (EPERM: a reused pid). */
const signal = (pid: number, sig: NodeJS.Signals): boolean => {
  try {
    process.kill(pid, sig)
    return true
  } catch (e) {
    const code = errnoOf(e)
    if (code === "ESRCH" || code === "EPERM") return false
    throw e
  }
}

/** /proc/PID/stat of a live process; undefined when it is gone or a zombie (nothing left to kill). */
const statOf = (pid: number): ProcStat | undefined => {
  const s = procStat(pid)
  return s === undefined || s.state === "Z" || s.state === "X" ? undefined : s
}

const carriesToken = (pid: number, token: string): boolean => {
  let environ: string
  try {
    environ = fs.readFileSync(`/proc/${pid}/environ`, "latin1")
  } catch (e) {
    // Gone, or not readable by us (another user's process, or a setuid one): not ours to kill.
    const code = errnoOf(e)
    if (code === "ENOENT" || code === "ESRCH" || code === "EACCES" || code === "EPERM") return false
    throw e
  }
  const prefix = `${RUN_TOKEN_VARIABLE}=`
  const entry = environ.split("\0").find((v) => v.startsWith(prefix))
  return entry !== undefined && entry.slice(prefix.length).split(" ").includes(token)
}

/**
 * The live processes of a run, by pid and start time: the leader's group, every process carrying
 * the token, and every descendant of those (and of processes found before, while they live).
 */
const membersOf = (
  leader: number,
  leaderStart: number,
  token: string,
  known: ReadonlyMap<number, string>
): Map<number, string> => {
  const stats = new Map<number, ProcStat>()
  for (const pid of procPids()) {
    if (pid === process.pid) continue
    const s = statOf(pid)
    // Started before the leader: not of this run (and no environ to read, which is what costs).
    if (s !== undefined && Number(s.start) >= leaderStart) stats.set(pid, s)
  }
  const members = new Map<number, string>()
  for (const [pid, s] of stats) {
    if (s.pgid === leader || known.get(pid) === s.start || carriesToken(pid, token)) members.set(pid, s.start)
  }
  // Descendants that left the group and cleared their environment are still children of a member.
  const children = new Map<number, Array<number>>()
  for (const [pid, s] of stats) {
    const siblings = children.get(s.ppid)
    if (siblings === undefined) children.set(s.ppid, [pid])
    else siblings.push(pid)
  }
  const queue = [...members.keys()]
  for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
    for (const child of children.get(pid) ?? []) {
      if (members.has(child) || child === process.pid) continue
      members.set(child, stats.get(child)?.start ?? "")
      queue.push(child)
    }
  }
  return members
}

/**
 * Ends every process of a run and waits until none is left (bounded by SWEEP_LIMIT_MS). Each
 * process found gets SIGTERM; once the grace is over, everything still found gets SIGKILL.
 */
export const terminate = (leader: number, leaderStart: number, token: string): Effect.Effect<Termination> =>
  Effect.gen(function* () {
    const started = Date.now()
    if (!hasProc) {
      // No /proc to find processes that left the group: the group is all we can reach.
      signal(-leader, "SIGKILL")
      return { method: "group", signalled: 1, remaining: 0, ms: Date.now() - started }
    }
    // The leader by its start time, so a pid reused after it was reaped is not taken for it.
    const signalled = new Map<number, string>([[leader, String(leaderStart)]])
    let killing = false
    signal(-leader, "SIGTERM")
    for (;;) {
      const members = membersOf(leader, leaderStart, token, signalled)
      const elapsed = Date.now() - started
      if (members.size === 0) return { method: "marker", signalled: signalled.size, remaining: 0, ms: elapsed }
      if (elapsed >= SWEEP_LIMIT_MS) {
        return { method: "marker", signalled: signalled.size, remaining: members.size, ms: elapsed }
      }
      if (!killing && elapsed >= TERM_GRACE_MS) {
        killing = true
        signal(-leader, "SIGKILL")
      }
      for (const [pid, start] of members) {
        const fresh = !signalled.has(pid)
        signalled.set(pid, start)
        if (killing) signal(pid, "SIGKILL")
        else if (fresh) signal(pid, "SIGTERM")
      }
      yield* wallSleep(SWEEP_POLL_MS)
    }
  })

interface Tree {
  readonly pid: number
  /** The leader's start time (clock ticks since boot); 0 without /proc. */
  readonly start: number
  /** The leader's exit; fails when the child reports an error after it started. */
  readonly exited: Deferred.Deferred<{ readonly code: number | null; readonly signal: string | null }, ProcessError>
  /** Both output pipes closed. */
  readonly closed: Deferred.Deferred<void>
  readonly output: () => { readonly stdout: string; readonly stderr: string; readonly truncated: boolean }
  readonly closePipes: () => void
  /** Set once a sweep has run, so the scope's release does not sweep again. */
  swept: Termination | undefined
}

const spawnTree = (spec: ProcessSpec, token: string, tmpDir: string): Effect.Effect<Tree, ProcessError> =>
  Effect.gen(function* () {
    const failed = (detail: string) => new ProcessError({ command: spec.command, reason: "spawn-failed", detail })
    const exited = yield* Deferred.make<{ code: number | null; signal: string | null }, ProcessError>()
    const closed = yield* Deferred.make<void>()
    const inherited = spec.env[RUN_TOKEN_VARIABLE]
    const child = yield* Effect.try({
      try: () =>
        spawn(spec.command, [...spec.args], {
          cwd: spec.cwd,
          env: { ...spec.env, [RUN_TOKEN_VARIABLE]: inherited === undefined ? token : `${inherited} ${token}`, TMPDIR: tmpDir },
          detached: true,
          stdio: ["ignore", "pipe", "pipe"]
        }),
      catch: (e) => failed(String(e))
    })
    const output = keptOutput(child, spec.maxOutputBytes ?? 8 * 1024 * 1024)
    child.on("exit", (code, sig) => Deferred.unsafeDone(exited, Effect.succeed({ code, signal: sig })))
    child.on("close", () => Deferred.unsafeDone(closed, Effect.void))
    // Started (a pid) or not (ENOENT, EACCES): an error before the spawn event is a failed spawn.
    const pid = yield* Effect.async<number, ProcessError>((resume) => {
      let started = false
      child.once("spawn", () => {
        started = true
        if (child.pid === undefined) resume(Effect.fail(failed("no pid")))
        else resume(Effect.succeed(child.pid))
      })
      child.on("error", (e) => {
        // Before the spawn event: it never ran. After: the run fails with it (the release still sweeps).
        if (!started) resume(Effect.fail(failed(e.message)))
        Deferred.unsafeDone(exited, Effect.fail(failed(e.message)))
      })
    })
    return {
      pid,
      // A leader already gone (or a zombie) has no stat to read: our own start time is a lower
      // bound of every start time in its tree too.
      start: hasProc ? Number(statOf(pid)?.start ?? statOf(process.pid)?.start ?? 0) : 0,
      exited,
      closed,
      output,
      closePipes: () => {
        child.stdout.destroy()
        child.stderr.destroy()
      },
      swept: undefined
    }
  })

/**
 * A child's stdout and stderr as it writes them, each kept up to `limit` bytes (the rest dropped
 * and counted as `truncated`): the reader of Process's and Sandbox's spawns.
 */
export const keptOutput = (
  child: { readonly stdout: NodeJS.ReadableStream; readonly stderr: NodeJS.ReadableStream },
  limit: number
): () => { readonly stdout: string; readonly stderr: string; readonly truncated: boolean } => {
  let truncated = false
  const keep = (stream: NodeJS.ReadableStream): Array<Buffer> => {
    const chunks: Array<Buffer> = []
    let size = 0
    stream.on("data", (chunk: Buffer) => {
      const room = limit - size
      if (chunk.length > room) truncated = true
      if (room <= 0) return
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk
      size += kept.length
      chunks.push(kept)
    })
    return chunks
  }
  const out = keep(child.stdout)
  const err = keep(child.stderr)
  return () => ({ stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8"), truncated })
}

const sweep = (tree: Tree, token: string): Effect.Effect<Termination> =>
  tree.swept !== undefined
    ? Effect.succeed(tree.swept)
    : terminate(tree.pid, tree.start, token).pipe(Effect.tap((t) => Effect.sync(() => (tree.swept = t))))

export const runProcess = (spec: ProcessSpec): Effect.Effect<ProcessOutcome, ProcessError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const token = randomBytes(12).toString("hex")
      const started = Date.now()
      // Released after the tree (scopes release in reverse): removed once nothing can write to it.
      const tmpDir = yield* Effect.acquireRelease(
        Effect.try({
          try: () => fs.mkdtempSync(path.join(os.tmpdir(), "assay-run-")),
          catch: (e) => new ProcessError({ command: spec.command, reason: "spawn-failed", detail: `temp folder: ${String(e)}` })
        }),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      )
      // Interrupted (a run cancelled, a budget exceeded): the release ends the whole tree.
      const tree = yield* Effect.acquireRelease(spawnTree(spec, token, tmpDir), (t) => sweep(t, token))
      const first = yield* Effect.raceFirst(
        Deferred.await(tree.exited).pipe(Effect.map(Option.some)),
        wallSleep(spec.timeoutMs).pipe(Effect.as(Option.none()))
      )
      const timedOut = Option.isNone(first)
      // At the deadline the tree goes; after a normal exit the stragglers do (nothing outlives a run).
      const termination = yield* sweep(tree, token)
      const exit = Option.isSome(first)
        ? first.value
        : yield* Deferred.await(tree.exited).pipe(
            Effect.raceFirst(wallSleep(CLOSE_GRACE_MS).pipe(Effect.as({ code: null, signal: null })))
          )
      // A descendant we could not find may still hold the pipes: stop waiting for it.
      yield* Deferred.await(tree.closed).pipe(Effect.raceFirst(wallSleep(CLOSE_GRACE_MS)))
      tree.closePipes()
      return {
        exitCode: exit.code,
        signal: exit.signal,
        timedOut,
        ...tree.output(),
        wallMs: Date.now() - started,
        token,
        termination
      }
    })
  )

/** The environment of the current process as a plain record (for callers building a child env). */
export const currentEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
  return env
}
