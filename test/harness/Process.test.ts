import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { runProcess } from "../../src/harness/Process.ts"

const env = { PATH: process.env.PATH ?? "" }

describe("process groups", () => {
  it.live("stdin is closed: a child reading stdin sees end of input at once", () =>
    Effect.gen(function* () {
      const o = yield* runProcess({ command: "sh", args: ["-c", "cat; echo read-done"], cwd: "/", env, timeoutMs: 10_000 })
      expect(o).toMatchObject({ exitCode: 0, timedOut: false, stdout: "read-done\n" })
    }))

  it.live("a descendant that left the group and holds the output pipe does not hold the run", () =>
    Effect.gen(function* () {
      const o = yield* runProcess({
        command: "sh",
        args: ["-c", "setsid sleep 5 & echo leader-done"],
        cwd: "/",
        env,
        timeoutMs: 20_000
      })
      expect(o.stdout).toBe("leader-done\n")
      expect(o.wallMs).toBeLessThan(10_000)
    }))
})
