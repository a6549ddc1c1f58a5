/**
 * `assay run --benchmark harbor:DIR` stopped while a task's container runs: Ctrl-C (SIGINT) removes
 * it before the command exits; SIGKILL cannot, so the next harbor command's sweep removes it as it
 * starts. The task's solution sleeps, so the container is there when the signal is sent. The same
 * while a task's image is being built (its RUN step sleeps): Ctrl-C ends the build, its RUN step
 * and its working container; after SIGKILL the build goes on, and the next command ends it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { assay, bin, cleanEnv, root } from "../cli/support.ts"
import { tempDir } from "../support/tempDirs.ts"
import { baseTag, containersOf, fixtures, podman, unable } from "./podman.ts"

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

/**
 * A RUN step's sleep, as the marker its process is found by: a number of this run's own, so a
 * RUN step left by another run on the machine (another checkout's tests, an earlier run killed
 * mid-way) is never taken for this one's.
 */
const markerSeconds = (): number => 7_000 + Math.floor(Math.random() * 7_000)

/** A folder with one task whose image build sleeps in a RUN step (`sleep SECONDS`, a marker), never cached. */
const slowBuild = (seconds: number): string => {
  const dir = tempDir("assay-harbor-build-")
  fs.cpSync(path.join(fixtures, "git-repair"), path.join(dir, "slow-build"), { recursive: true })
  const dockerfile = path.join(dir, "slow-build/environment/Dockerfile")
  fs.writeFileSync(dockerfile, `${fs.readFileSync(dockerfile, "utf8")}\n# ${dir}\nRUN sleep ${seconds}\n`)
  return dir
}

/** The pids whose command line is exactly `argv`. */
const processesRunning = (argv: ReadonlyArray<string>): ReadonlyArray<number> =>
  fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n)).flatMap((n) => {
    try {
      return fs.readFileSync(`/proc/${n}/cmdline`, "utf8") === argv.join("\0") + "\0" ? [Number(n)] : []
    } catch {
      return []
    }
  })

/** The image build clients an assay process (by pid) started that are still running. */
const buildsOf = (pid: number): ReadonlyArray<number> =>
  fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n)).flatMap((n) => {
    try {
      const argv = fs.readFileSync(`/proc/${n}/cmdline`, "utf8").split("\0")
      return argv.includes("build") && argv.includes(`assay.pid=${pid}`) ? [Number(n)] : []
    } catch {
      return []
    }
  })

/** The working container a RUN step runs in: the one `podman mount` shows at the overlay layer that is its root. */
const workingContainerOf = (pid: number): string => {
  const layer = /upperdir=[^,]*\/overlay\/([0-9a-f]+)\/diff/.exec(fs.readFileSync(`/proc/${pid}/mountinfo`, "utf8").split("\n").find((l) => l.split(" ")[4] === "/") ?? "")?.[1]
  const line = podman("mount").stdout.split("\n").find((l) => layer !== undefined && l.includes(`/overlay/${layer}/merged`))
  if (line === undefined) throw new Error(`no mounted container at the RUN step's layer ${layer}`)
  return line.trim().split(/\s+/)[0]!
}

/** Whether podman still has the container (a working container of a build included). */
const containerExists = (id: string): boolean => podman("ps", "-a", "--external", "-q").stdout.split("\n").some((l) => l.trim() !== "" && id.startsWith(l.trim()))

/** Resolves once the build's RUN step runs (`sleep SECONDS` is there), with its working container. */
const buildStepRunning = async (child: ChildProcess, seconds: number): Promise<string> => {
  for (;;) {
    const step = processesRunning(["sleep", String(seconds)])
    if (step.length > 0) return workingContainerOf(step[0]!)
    if (child.exitCode !== null) throw new Error(`assay exited (${child.exitCode}) before its build's RUN step started`)
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

  it("Ctrl-C during an image build: the build, its RUN step and its working container are gone when assay exits", async () => {
    const seconds = markerSeconds()
    const run = goldRun(slowBuild(seconds))
    const done = exited(run.child)
    const working = await buildStepRunning(run.child, seconds)
    expect(buildsOf(run.child.pid!).length).toBe(1)
    expect(containerExists(working)).toBe(true)
    run.child.kill("SIGINT")
    expect(await done, run.stderr()).toBe(130)
    expect(buildsOf(run.child.pid!)).toEqual([])
    expect(processesRunning(["sleep", String(seconds)])).toEqual([])
    expect(containerExists(working)).toBe(false)
  })

  it("SIGKILL during an image build: the build goes on without assay, and the next harbor command ends it as it starts", async () => {
    const seconds = markerSeconds()
    const run = goldRun(slowBuild(seconds))
    const done = exited(run.child)
    const working = await buildStepRunning(run.child, seconds)
    run.child.kill("SIGKILL")
    await done
    expect(buildsOf(run.child.pid!).length).toBe(1)
    const next = await assay(["run", "--benchmark", `harbor:${fixtures}`, "--task", "fix-failing-test", "--candidate", "none", ...image, "--yes", "--home", tempDir("assay-harbor-home-")])
    expect(next.code, next.stderr).toBe(0)
    expect(buildsOf(run.child.pid!)).toEqual([])
    expect(processesRunning(["sleep", String(seconds)])).toEqual([])
    expect(containerExists(working)).toBe(false)
  })
})
