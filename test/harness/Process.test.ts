import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { runProcess } from "../../src/harness/Process.ts"
import { isAlive, processesCarrying } from "../support/processes.ts"

const env = { PATH: process.env.PATH ?? "" }

const pidsIn = (text: string): ReadonlyArray<number> =>
  text.split("\n").filter((l) => /^\d+$/.test(l.trim())).map(Number)

/** Until the processes are seen (a script echoes their pids before it hangs). */
const untilPids = (count: number, read: () => ReadonlyArray<number>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 200; i++) {
      if (read().length >= count) return read()
      yield* Effect.sleep("25 millis")
    }
    throw new Error(`expected ${count} pids, saw ${read().length}`)
  })

// Leaves three sleeps behind before hanging: one that called setsid (out of the group, still a
// child of the leader), one in the background (in the group), and one that called setsid under an
// intermediate shell that exited (out of the group and reparented: no longer a descendant either).
const scatter = [
  "setsid sleep 300 & echo $! >&2",
  "sleep 300 & echo $! >&2",
  "sh -c 'setsid sleep 300 & echo $! >&2'",
  "while :; do sleep 1; done"
].join("\n")

describe("output", () => {
  it.live("each stream is kept up to maxOutputBytes exactly, and the rest is said to be dropped", () =>
    Effect.gen(function* () {
      // 200,000 bytes on stdout (several pipe chunks), 10 on stderr.
      const script = "head -c 200000 /dev/zero | tr '\\0' a; printf 0123456789 >&2"
      const cut = yield* runProcess({ command: "sh", args: ["-c", script], cwd: "/", env, timeoutMs: 10_000, maxOutputBytes: 100_001 })
      expect(cut.stdout).toBe("a".repeat(100_001))
      expect(cut.stderr).toBe("0123456789")
      expect(cut.truncated).toBe(true)
      const whole = yield* runProcess({ command: "sh", args: ["-c", script], cwd: "/", env, timeoutMs: 10_000, maxOutputBytes: 200_000 })
      expect(whole.stdout.length).toBe(200_000)
      expect(whole.truncated).toBe(false)
    }))
})

describe("process groups", () => {
  it.live("stdin is closed: a child reading stdin sees end of input at once", () =>
    Effect.gen(function* () {
      const o = yield* runProcess({ command: "sh", args: ["-c", "cat; echo read-done"], cwd: "/", env, timeoutMs: 10_000 })
      expect(o).toMatchObject({ exitCode: 0, timedOut: false, stdout: "read-done\n" })
    }))

  it.live("a descendant that left the group does not hold the run, and ends with it", () =>
    Effect.gen(function* () {
      const o = yield* runProcess({
        command: "sh",
        args: ["-c", "setsid sleep 300 & echo $! >&2; echo leader-done"],
        cwd: "/",
        env,
        timeoutMs: 20_000
      })
      expect(o.stdout).toBe("leader-done\n")
      expect(o.wallMs).toBeLessThan(5_000)
      expect(pidsIn(o.stderr)).toHaveLength(1)
      expect(pidsIn(o.stderr).filter(isAlive)).toEqual([])
      expect(processesCarrying(o.token)).toEqual([])
    }))
})

describe("a run's temp folder", () => {
  it.live("what the child leaves in TMPDIR is removed with the run, also at a timeout", () =>
    Effect.gen(function* () {
      for (const [script, timeoutMs] of [["mktemp -d; mktemp", 10_000], ["mktemp -d; mktemp; sleep 300", 500]] as const) {
        const o = yield* runProcess({ command: "sh", args: ["-c", script], cwd: "/", env, timeoutMs })
        const left = o.stdout.trim().split("\n")
        expect(left).toHaveLength(2)
        for (const p of left) {
          expect(p.startsWith(`${os.tmpdir()}/assay-run-`), p).toBe(true)
          expect(fs.existsSync(p), p).toBe(false)
        }
        expect(fs.existsSync(path.dirname(left[0] ?? ""))).toBe(false)
      }
    }))
})

describe("a timeout ends every process the run started", () => {
  it.live("setsid'd, backgrounded and reparented children are all gone when the call returns", () =>
    Effect.gen(function* () {
      const timeoutMs = 1_000
      const started = Date.now()
      const o = yield* runProcess({ command: "sh", args: ["-c", scatter], cwd: "/", env, timeoutMs })
      const returnedAt = Date.now()
      expect(o.timedOut).toBe(true)
      const pids = pidsIn(o.stderr)
      expect(pids).toHaveLength(3)
      // Checked at once, from the outside: nothing carrying the run's marker is left.
      expect(processesCarrying(o.token)).toEqual([])
      expect(pids.filter(isAlive)).toEqual([])
      expect(o.termination).toMatchObject({ method: "marker", remaining: 0 })
      // The two that left the group can only be reached one by one.
      expect(o.termination.signalled).toBeGreaterThanOrEqual(2)
      const overshoot = returnedAt - started - timeoutMs
      console.log(`timeout overshoot: ${o.termination.ms} ms to the last process gone (sweep); ${overshoot} ms from the deadline to the call's return`)
      expect(overshoot).toBeLessThan(3_000)
    }))

  it.live("a process that ignores SIGTERM is killed after the grace, within the bound", () =>
    Effect.gen(function* () {
      const o = yield* runProcess({
        command: "sh",
        // An ignored signal stays ignored across exec: the sleeps ignore SIGTERM too.
        args: ["-c", "trap '' TERM; setsid sh -c 'while :; do sleep 1; done' & echo $! >&2; while :; do sleep 1; done"],
        cwd: "/",
        env,
        timeoutMs: 500
      })
      expect(o.timedOut).toBe(true)
      expect(processesCarrying(o.token)).toEqual([])
      expect(pidsIn(o.stderr).filter(isAlive)).toEqual([])
      expect(o.termination.ms).toBeGreaterThanOrEqual(400)
      expect(o.termination.ms).toBeLessThan(5_000)
      console.log(`SIGTERM ignored: ${o.termination.ms} ms from the deadline to the last process gone`)
    }))

  it.live("an interrupted run ends its tree too; a token inherited from an outer run is kept", () =>
    Effect.gen(function* () {
      const outer = `test-outer-${process.pid}-${Date.now()}`
      const fiber = yield* Effect.fork(
        runProcess({ command: "sh", args: ["-c", scatter], cwd: "/", env: { ...env, ASSAY_RUN_TOKEN: outer }, timeoutMs: 60_000 })
      )
      // The three sleeps and the leader's loop carry both tokens.
      yield* untilPids(3, () => processesCarrying(outer).filter((p) => p.cmdline === "sleep 300").map((p) => p.pid))
      yield* Fiber.interrupt(fiber)
      expect(processesCarrying(outer)).toEqual([])
    }))
})
