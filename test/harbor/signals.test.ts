/**
 * `assay run --benchmark harbor:DIR` stopped while a task's container runs: Ctrl-C (SIGINT) removes
 * it before the command exits; SIGKILL cannot, so the next harbor command's sweep removes it as it
 * starts. The task's solution sleeps, so the container is there when the signal is sent.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { assay, bin, cleanEnv, root } from "../cli/support.ts"
import { tempDir } from "../support/tempDirs.ts"
import { baseTag, containersOf, fixtures, unable } from "./podman.ts"

/** The fixtures' FROM image replaced by the local base image, as a user would ask. */
const image = ["--image", `python:3.13-slim-bookworm=${baseTag}`]

/** A folder with one task whose solution sleeps (its verifier never matters: the run is stopped). */
const slowTasks = (): string => {
  const dir = tempDir("assay-harbor-signal-")
  fs.cpSync(path.join(fixtures, "git-repair"), path.join(dir, "slow"), { recursive: true })
  fs.writeFileSync(path.join(dir, "slow/solution/solve.sh"), "#!/bin/bash\nsleep 600\n")
  return dir
}

/** Resolves once the process's container is listed (its label names the pid). */
const containerStarted = async (child: ChildProcess): Promise<string> => {
  for (;;) {
    const ids = containersOf(child.pid!)
    if (ids !== "") return ids
    if (child.exitCode !== null) throw new Error(`assay exited (${child.exitCode}) before its container started`)
    await new Promise((ok) => setTimeout(ok, 250))
  }
}

const exited = (child: ChildProcess): Promise<number | string | null> =>
  new Promise((ok) => child.on("exit", (code, signal) => ok(code ?? signal)))

const goldRun = (tasks: string) => {
  let stderr = ""
  const child = spawn(process.execPath, [bin, "run", "--benchmark", `harbor:${tasks}`, "--candidate", "gold", ...image, "--yes", "--home", tempDir("assay-harbor-home-")], {
    cwd: root,
    env: cleanEnv(),
    stdio: ["ignore", "ignore", "pipe"]
  })
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
  return { child, stderr: () => stderr }
}

describe.skipIf(unable !== null)(`a harbor run stopped by a signal leaves no container${unable !== null ? ` (skipped: ${unable})` : ""}`, { timeout: 240_000 }, () => {
  it("Ctrl-C (SIGINT): the container is removed before assay exits", async () => {
    const run = goldRun(slowTasks())
    const done = exited(run.child)
    await containerStarted(run.child)
    run.child.kill("SIGINT")
    expect(await done, run.stderr()).toBe(130)
    expect(containersOf(run.child.pid!)).toBe("")
  })

  it("SIGKILL: the container outlives assay, and the next harbor command removes it as it starts", async () => {
    const tasks = slowTasks()
    const run = goldRun(tasks)
    const done = exited(run.child)
    const left = await containerStarted(run.child)
    run.child.kill("SIGKILL")
    await done
    expect(containersOf(run.child.pid!)).toBe(left)
    const next = await assay(["run", "--benchmark", `harbor:${tasks}`, "--candidate", "none", ...image, "--yes", "--home", tempDir("assay-harbor-home-")])
    expect(next.code, next.stderr).toBe(0)
    expect(containersOf(run.child.pid!)).toBe("")
  })
})
