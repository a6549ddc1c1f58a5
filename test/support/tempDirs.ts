/**
 * Temp folders for tests, each removed after the test file that made it: the per-file setup
 * (test/support/removeTempDirs.ts, a vitest setupFile) removes every folder made here once the
 * file's tests are over. Works where a test file's own afterAll could not: at module level, in a
 * describe, and in a helper module shared by files of one worker (isolate: false).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const made = new Set<string>()

/** A fresh folder under the temp folder (TMPDIR), removed after the current test file. */
export const tempDir = (prefix = "assay-test-"): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.add(dir)
  return dir
}

/** Removes every folder tempDir made so far. */
export const removeTempDirs = (): void => {
  for (const dir of made) {
    rmSync(dir, { recursive: true, force: true })
    made.delete(dir)
  }
}
