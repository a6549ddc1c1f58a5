import { spawn } from "node:child_process"
import { join, resolve } from "node:path"
import { tempDir as sharedTempDir } from "../support/tempDirs.ts"

export const root = resolve(import.meta.dirname, "..", "..")
export const bin = join(root, "bin", "assay.js")

// Removed after the test file (test/support/tempDirs.ts): homes hold SQLite stores and builds.
export const tempDir = (prefix = "assay-cli-"): string => sharedTempDir(prefix)

export interface Result {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * The environment of a command a test runs: a clean one, but for the test run's own temp and
 * cache folders (test/support/tempFolders.ts), so what the command leaves there is the run's.
 */
export const cleanEnv = (env: Record<string, string> = {}): Record<string, string> => ({
  PATH: process.env["PATH"] ?? "",
  HOME: process.env["HOME"] ?? "/tmp",
  ASSAY_DATA_DIR: process.env["ASSAY_DATA_DIR"] ?? "",
  ...(process.env["TMPDIR"] !== undefined ? { TMPDIR: process.env["TMPDIR"] } : {}),
  ...(process.env["XDG_CACHE_HOME"] !== undefined ? { XDG_CACHE_HOME: process.env["XDG_CACHE_HOME"] } : {}),
  // The shipped model registry, not one the user refreshed (~/.config/assay/models.json).
  ASSAY_REGISTRY: "shipped",
  ...env
})

/** Runs the assay command as a user would, with a clean environment plus `env`. */
export const assay = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Result> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: root,
      env: cleanEnv(env),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", fail)
    child.on("close", (code) => done({ code, stdout, stderr }))
  })

/** A Scorecard as the `--json` document has it (the fields the tests read). */
export interface Card {
  readonly candidate: string
  readonly stratum: string | null
  readonly n: number
  readonly meanReward: number
  readonly failures: Readonly<Record<string, number>>
  readonly tokens: { readonly input: number; readonly output: number }
}

/** The whole-benchmark Scorecard of a candidate in a run's `--json` output. */
export const cardOf = (stdout: string, candidate: string): Card =>
  (JSON.parse(stdout) as { scorecards: ReadonlyArray<Card> }).scorecards.find((s) => s.candidate === candidate && s.stratum === null)!

/**
 * How a signalled child ended, or "hung" when it had not within `ms` (then it is killed): the
 * bound is what the signal tests assert, a hang, and is far above a busy machine's exit time.
 */
export const exitOrHung = (child: import("node:child_process").ChildProcess, ms = 20_000): Promise<number | string | null> =>
  new Promise((ok) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      ok("hung")
    }, ms)
    void exitOf(child).then((code) => {
      clearTimeout(timer)
      ok(code)
    })
  })

/** How a child process ended: its exit code, or the signal that ended it. Waits on its exit event. */
export const exitOf = (child: import("node:child_process").ChildProcess): Promise<number | string | null> =>
  new Promise((ok) => {
    if (child.exitCode !== null || child.signalCode !== null) ok(child.exitCode ?? child.signalCode)
    else child.once("exit", (code, signal) => ok(code ?? signal))
  })
