/**
 * Running a child in its own process group with stdin closed: on timeout or interruption the whole
 * group is killed (an agent CLI or a Python check may leave children behind), and once the leader
 * exits any straggler in the group is killed too, so nothing outlives a run.
 */
import { spawn } from "node:child_process"
import { Effect, Schema } from "effect"

export interface ProcessSpec {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  /** The complete environment of the child (nothing is inherited implicitly). */
  readonly env: Readonly<Record<string, string>>
  readonly timeoutMs: number
  /** Output kept per stream; the rest is dropped (counted in `truncated`). Default 8 MiB. */
  readonly maxOutputBytes?: number
}

export interface ProcessOutcome {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  readonly stdout: string
  readonly stderr: string
  readonly truncated: boolean
  readonly wallMs: number
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

/** How long output may still arrive after the leader exited. */
const CLOSE_GRACE_MS = 2_000

const killGroup = (pid: number | undefined): void => {
  if (pid === undefined) return
  try {
    process.kill(-pid, "SIGKILL")
  } catch (e) {
    // ESRCH: the group is already gone, which is the state we want.
    if (!(e instanceof Error && "code" in e && e.code === "ESRCH")) throw e
  }
}

export const runProcess = (spec: ProcessSpec): Effect.Effect<ProcessOutcome, ProcessError> =>
  Effect.async<ProcessOutcome, ProcessError>((resume) => {
    const started = Date.now()
    const limit = spec.maxOutputBytes ?? 8 * 1024 * 1024
    let settled = false
    const settle = (effect: Effect.Effect<ProcessOutcome, ProcessError>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(effect)
    }
    let timedOut = false
    let truncated = false
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    const sizes = { out: 0, err: 0 }
    const child = spawn(spec.command, [...spec.args], {
      cwd: spec.cwd,
      env: { ...spec.env },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"]
    })
    const collect = (into: Array<Buffer>, key: "out" | "err") => (chunk: Buffer) => {
      if (sizes[key] >= limit) {
        truncated = true
        return
      }
      sizes[key] += chunk.length
      into.push(chunk)
    }
    child.stdout.on("data", collect(out, "out"))
    child.stderr.on("data", collect(err, "err"))
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child.pid)
    }, spec.timeoutMs)
    let exit: { code: number | null; signal: string | null } | undefined
    let grace: ReturnType<typeof setTimeout> | undefined
    const done = (code: number | null, signal: string | null) => {
      if (grace !== undefined) clearTimeout(grace)
      settle(
        Effect.succeed({
          exitCode: exit?.code ?? code,
          signal: exit?.signal ?? signal,
          timedOut,
          stdout: Buffer.concat(out).toString("utf8"),
          stderr: Buffer.concat(err).toString("utf8"),
          truncated,
          wallMs: Date.now() - started
        })
      )
    }
    child.on("exit", (code, signal) => {
      exit = { code, signal }
      // Stragglers in the group would keep the pipes open; the run is over, so they go too.
      killGroup(child.pid)
      // A descendant that left the group (setsid) may still hold the pipes: stop waiting for them.
      grace = setTimeout(() => {
        child.stdout.destroy()
        child.stderr.destroy()
        done(code, signal)
      }, CLOSE_GRACE_MS)
    })
    child.on("error", (e) => {
      settle(Effect.fail(new ProcessError({ command: spec.command, reason: "spawn-failed", detail: e.message })))
    })
    child.on("close", (code, signal) => done(code, signal))
    return Effect.sync(() => {
      clearTimeout(timer)
      killGroup(child.pid)
    })
  })

/** The environment of the current process as a plain record (for callers building a child env). */
export const currentEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
  return env
}
