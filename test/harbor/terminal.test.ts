/**
 * The terminal tool's shell (providers/harbor/terminal.ts) in a container of the local base image:
 * what a model relies on when it drives a task's terminal, as in terminus's tmux session.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Engine from "../../src/container/Engine.ts"
import { openShell } from "../../providers/harbor/terminal.ts"
import { baseTag, unable } from "./podman.ts"

/** A container of the base image for the body, removed however it ends. */
const inContainer = <A>(body: (engine: Engine.Engine, container: string) => Effect.Effect<A, Engine.EngineError>) =>
  Effect.gen(function*() {
    const engine = yield* Engine.make({ engine: "podman" })
    return yield* Effect.acquireUseRelease(
      engine.start({ image: baseTag, cpus: 1, memoryMb: 512, network: false }),
      (c) => body(engine, c),
      (c) => Effect.ignore(engine.remove(c))
    )
  })

describe.skipIf(unable !== null)(`the terminal's shell${unable !== null ? ` (skipped: ${unable})` : ""}`, { timeout: 120_000 }, () => {
  it.live("keeps the directory and exported variables between calls; a syntax error or a reading command leaves it as it was", () =>
    inContainer((engine, c) =>
      Effect.gen(function*() {
        const shell = openShell(engine, c)
        const first = yield* shell.run("mkdir -p /tmp/work && cd /tmp/work && export GREETING=hello && echo ready", 60)
        expect(first).toEqual({ exitCode: 0, timedOut: false, output: "ready\n" })
        expect((yield* shell.run("pwd; echo $GREETING", 60)).output).toBe("/tmp/work\nhello\n")
        // stderr in the output, and the command's own status.
        expect(yield* shell.run("echo out; echo err >&2; false", 60)).toEqual({ exitCode: 1, timedOut: false, output: "out\nerr\n" })
        // An unclosed quote is bash's error, not a stuck shell.
        const broken = yield* shell.run("echo 'unclosed", 60)
        expect(broken.exitCode).not.toBe(0)
        expect(broken.output).toMatch(/unexpected EOF|matching/)
        // A command reading its input gets end of file, not the next command.
        expect((yield* shell.run("cat; echo after-cat", 60)).output).toBe("after-cat\n")
        expect((yield* shell.run("pwd", 60)).output).toBe("/tmp/work\n")
        yield* shell.close
      })
    ))

  it.live("a command past its deadline is killed, the shell stays; `exit` ends it and the next call starts a new one, saying so", () =>
    inContainer((engine, c) =>
      Effect.gen(function*() {
        const shell = openShell(engine, c)
        // A background process of an earlier command, as a server would be.
        yield* shell.run("cd /tmp && (sleep 1234 &)", 60)
        yield* shell.run("sleep 1235 &", 60)
        const slow = yield* shell.run("echo started; sleep 300; echo never", 2)
        expect(slow.timedOut).toBe(true)
        expect(slow.output).toContain("started")
        expect(slow.output).not.toContain("never")
        // Nothing of it runs on, and the shell is where it was.
        const running = yield* engine.exec(c, { command: "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done 2>/dev/null", timeoutSeconds: 30 })
        expect(running.output).toContain("sleep infinity")
        expect(running.output).not.toContain("sleep 300")
        // What earlier commands left running is left running, as Ctrl-C in a terminal leaves it.
        expect(running.output).toContain("sleep 1234")
        expect(running.output).toContain("sleep 1235")
        expect((yield* shell.run("pwd", 60)).output).toBe("/tmp\n")
        const ended = yield* shell.run("exit 3", 60)
        expect(ended.exitCode).toBeNull()
        const fresh = yield* shell.run("echo again", 60)
        expect(fresh.exitCode).toBe(0)
        expect(fresh.output).toContain("a new one was started")
        expect(fresh.output).toContain("again")
        yield* shell.close
      })
    ))
})
