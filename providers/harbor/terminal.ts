/**
 * The `terminal` tool's shell: one bash per Attempt, kept running in the container, so a `cd`, an
 * exported variable or a background process stays from one call to the next, as in the tmux
 * session Harbor's terminus agent drives.
 *
 * Each command is sent as `eval` of its base64 text (a command with a syntax error or an unclosed
 * quote answers bash's error and leaves the shell as it was), with stdin from /dev/null (a command
 * that reads its input ends rather than swallowing the next command), then a line with a marker
 * and its exit status, which ends its output. At its deadline the rest of its line is stopped and
 * what it started is killed (the shell stays, with its directory, variables and the background
 * processes of earlier commands); a shell that ended (`exit`) or does not
 * answer is started again at the next call, in the image's working directory, and says so.
 */
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { Effect } from "effect"
import { type Engine, EngineError, type ExecResult } from "../../src/container/Engine.ts"

export interface Shell {
  readonly run: (command: string, timeoutSeconds: number) => Effect.Effect<ExecResult, EngineError>
  /** Ends the shell (the container's removal ends it too). */
  readonly close: Effect.Effect<void>
}

/** Output kept per command, as Engine.exec keeps it: the tool's answer cuts it further. */
const MAX_OUTPUT_BYTES = 1024 * 1024
/** After a command's deadline and the kill, how long its marker may take before the shell is given up. */
const AFTER_KILL_MS = 15_000

/** Where the shell notes, as each command starts, the background jobs earlier commands left running. */
const JOBS_FILE = "/tmp/.assay-terminal-jobs"

/**
 * bash in the container: stops the command line the shell `pid` runs (USR1 first: its trap returns
 * from the running command once the killed process is reaped, so the rest of the line does not
 * run, as Ctrl-C stops a line in a terminal), then kills what that command started: the shell's
 * children but the background jobs of earlier commands, and all under them. A background process
 * an earlier command started (a server) is left running, as Ctrl-C leaves it.
 */
const killCommand = (pid: number): string =>
  [
    `kill -USR1 ${pid} 2>/dev/null`,
    `spared=" $(tr '\\n' ' ' < ${JOBS_FILE} 2>/dev/null) "`,
    `set --`,
    `for stat in /proc/[0-9]*/stat; do`,
    `  { read -ra f < "$stat"; } 2>/dev/null || continue`,
    `  [ "\${f[3]}" = ${pid} ] && case "$spared" in *" \${f[0]} "*) ;; *) set -- "$@" "\${f[0]}";; esac`,
    `done`,
    `changed=1`,
    `while [ "$changed" = 1 ] && [ $# -gt 0 ]; do changed=0`,
    `  for stat in /proc/[0-9]*/stat; do`,
    `    { read -ra f < "$stat"; } 2>/dev/null || continue`,
    `    case " $* " in *" \${f[3]} "*) case " $* " in *" \${f[0]} "*) ;; *) set -- "$@" "\${f[0]}"; changed=1;; esac;; esac`,
    `  done`,
    `done`,
    `[ $# -gt 0 ] && kill -KILL "$@" 2>/dev/null; true`
  ].join("\n")

interface Answer {
  readonly output: string
  readonly status: number
}

interface Live {
  readonly write: (text: string) => void
  readonly kill: () => void
  /** The shell's pid in the container (answered by its first marker). */
  pid: number
  /** Resolves with the output up to the marker and the status, or null when the shell ended first. */
  next: ((done: Answer | null) => void) | null
  /** An answer that came while nobody waited (between the deadline and the kill's wait). */
  early: Answer | null | undefined
  alive: boolean
}

/** A shell in `container`, started at its first command. */
export const openShell = (engine: Engine, container: string): Shell => {
  const marker = `__assay_${randomBytes(8).toString("hex")}__`
  let live: Live | null = null
  let restarted = false

  const start = Effect.async<Live, EngineError>((resume) => {
    const line = engine.execCommand(container, ["bash", "--noprofile", "--norc"], { interactive: true })
    const child = spawn(line.command, [...line.args], { stdio: ["pipe", "pipe", "pipe"] })
    let buffer = Buffer.alloc(0)
    let dropped = 0
    let started = false
    const s: Live = {
      write: (text) => void child.stdin.write(text),
      kill: () => void child.kill("SIGKILL"),
      pid: 0,
      next: null,
      early: undefined,
      alive: true
    }
    const answer = (done: Answer | null) => {
      const next = s.next
      s.next = null
      if (next !== null) next(done)
      else s.early = done
    }
    const take = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      const text = buffer.toString("latin1")
      const at = text.indexOf(`\n${marker} `)
      if (at < 0) {
        // Keep the tail that may hold the marker's start; drop output beyond the bound.
        if (buffer.length > MAX_OUTPUT_BYTES + 4096) {
          dropped += buffer.length - MAX_OUTPUT_BYTES
          buffer = Buffer.concat([buffer.subarray(0, MAX_OUTPUT_BYTES - 4096), buffer.subarray(buffer.length - 4096)])
        }
        return
      }
      const end = text.indexOf("\n", at + 1 + marker.length + 1)
      if (end < 0) return
      const status = Number(text.slice(at + 1 + marker.length + 1, end))
      const output = buffer.subarray(0, at).toString("utf8") + (dropped > 0 ? `\n[${dropped} bytes of output dropped]` : "")
      buffer = buffer.subarray(end + 1)
      dropped = 0
      if (!started) {
        started = true
        s.pid = status
        resume(Effect.succeed(s))
        return
      }
      answer({ output, status })
      // A marker right behind (two outputs in one chunk) is not expected: one command at a time.
    }
    child.stdout.on("data", take)
    child.stderr.on("data", take)
    child.stdin.on("error", () => {
      // The shell ended: `close` below answers the waiting command.
    })
    child.on("error", (e) => {
      s.alive = false
      if (!started) resume(Effect.fail(new EngineError({ reason: "exec-failed", detail: `the terminal's shell: ${e.message}` })))
    })
    child.on("close", () => {
      s.alive = false
      if (!started) {
        started = true
        resume(Effect.fail(new EngineError({ reason: "exec-failed", detail: `the terminal's shell ended at start: ${buffer.toString("utf8").trim().slice(-300)}` })))
        return
      }
      answer(null)
    })
    // stderr into stdout, in order; a command runs in a function whose USR1 trap ends it at its
    // deadline (in the shell itself, so `cd` and `export` stay); the shell's own pid is answered
    // as the first marker's status.
    child.stdin.write([
      "exec 2>&1",
      "__assay_run() { trap 'trap - USR1; return 124' USR1; eval \"$1\"; }",
      `printf '\\n%s %d\\n' '${marker}' "$$"`,
      ""
    ].join("\n"))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

  const awaitMarker = (s: Live, ms: number | null) =>
    Effect.async<Answer | null | "late">((resume) => {
      if (s.early !== undefined) {
        const done = s.early
        s.early = undefined
        resume(Effect.succeed(done))
        return
      }
      const timer = ms === null ? undefined : setTimeout(() => {
        s.next = null
        resume(Effect.succeed("late"))
      }, ms)
      s.next = (done) => {
        if (timer !== undefined) clearTimeout(timer)
        resume(Effect.succeed(done))
      }
      return Effect.sync(() => {
        if (timer !== undefined) clearTimeout(timer)
        s.next = null
      })
    })

  const run = (command: string, timeoutSeconds: number): Effect.Effect<ExecResult, EngineError> =>
    Effect.gen(function*() {
      let note = ""
      if (live === null || !live.alive) {
        if (live !== null || restarted) note = "[the terminal's shell had ended: a new one was started in the working directory]\n"
        live = yield* start
        restarted = true
      }
      const s = live
      const b64 = Buffer.from(command, "utf8").toString("base64")
      // The background jobs running as the command starts, which killCommand leaves alone.
      const started = `jobs -p > ${JOBS_FILE}`
      s.write(`${started}; __assay_run "$(printf '%s' '${b64}' | base64 -d)" < /dev/null; __assay_status=$?; trap - USR1\nprintf '\\n%s %d\\n' '${marker}' "$__assay_status"\n`)
      const first = yield* awaitMarker(s, Math.max(1, timeoutSeconds) * 1000)
      if (first !== "late") {
        if (first === null) return { exitCode: null, timedOut: false, output: `${note}[the shell ended]` }
        return { exitCode: first.status, timedOut: false, output: note + first.output }
      }
      // The deadline: the command and what it started are killed; the shell stays.
      yield* Effect.ignore(engine.exec(container, { command: killCommand(s.pid), timeoutSeconds: 30 }))
      const after = yield* awaitMarker(s, AFTER_KILL_MS)
      if (after === "late" || after === null) {
        s.kill()
        live = null
        return { exitCode: null, timedOut: true, output: `${note}[the shell did not answer after the command was killed; the next command starts a new one]` }
      }
      return { exitCode: null, timedOut: true, output: note + after.output }
    })

  return {
    run,
    close: Effect.sync(() => {
      live?.kill()
      live = null
    })
  }
}
