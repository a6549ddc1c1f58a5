/** Shared helpers of the harness tests. */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll } from "@effect/vitest"

export const fakeHarness = fileURLToPath(new URL("./fake-harness.mjs", import.meta.url))

// Every temp folder of a test file lives under one root, removed after the file's tests (vitest
// ends its workers without an exit event, so a process hook would not run).
const root = fs.mkdtempSync(path.join(os.tmpdir(), "assay-test-"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

export const tempDir = (prefix: string): string => fs.mkdtempSync(path.join(root, `${prefix}-`))

/** A bin folder holding executables that run the fake harness under the given names. */
export const fakeBin = (names: ReadonlyArray<string>, extraEnv: Record<string, string> = {}): string => {
  const dir = tempDir("bin")
  const exports = Object.entries(extraEnv).map(([k, v]) => `export ${k}='${v}'\n`).join("")
  for (const name of names) {
    const file = path.join(dir, name)
    fs.writeFileSync(file, `#!/bin/sh\n${exports}exec '${process.execPath}' '${fakeHarness}' "$@"\n`, { mode: 0o755 })
  }
  return dir
}

export const writeJson = (value: unknown): string => {
  const file = path.join(tempDir("script"), "script.json")
  fs.writeFileSync(file, JSON.stringify(value))
  return file
}

/** Whether a process still runs. A zombie (killed, waiting for a reaper that a container's init
 * may never be) counts as dead. */
export const isAlive = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
    return state !== "Z" && state !== "X"
  } catch {
    return false
  }
}
