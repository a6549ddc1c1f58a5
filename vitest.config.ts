import { defineConfig } from "vitest/config"
import { testDataFolder } from "./tools/data/root.mjs"

const shared = {
  // Benchmark data is read from ASSAY_DATA_DIR: the folder npm test's pretest fills (tools/data/ensure.mjs),
  // chosen in tools/data/root.mjs (ASSAY_DATA_DIR, else ../shared/data when it exists, else the user's default).
  env: { ASSAY_DATA_DIR: testDataFolder().dir },
  // After each test file, the folders test/support/tempDirs.ts made for it are removed.
  setupFiles: ["test/support/removeTempDirs.ts"],
  testTimeout: 60_000,
  hookTimeout: 60_000
}

export default defineConfig({
  test: {
    // A temp folder of the run's own (TMPDIR); what the tests leave in it is listed (ASSAY_TMP_LEAKS=fail: fails).
    globalSetup: ["test/support/tempFolders.ts"],
    pool: "forks",
    // Many tests wait on child processes (the command, agent CLIs, chromium): one worker per core
    // plus one keeps both cores busy.
    maxWorkers: 3,
    minWorkers: 1,
    projects: [
      {
        test: {
          ...shared,
          name: "harness",
          include: ["test/harness/**/*.test.ts"],
          // The harness tests share one temporary root per file and clean it up: keep files apart.
          isolate: true
        }
      },
      {
        test: {
          ...shared,
          name: "assay",
          include: ["test/**/*.test.ts"],
          exclude: ["test/harness/**"]
          // Every file runs in a fork of its own. `isolate: false` here had no effect under vitest
          // 3.2 (a probe module saw a new process per file). At the root (`--no-isolate`) forks are
          // reused and modules cached across files, but tried on test/budget, test/evaluation and
          // test/world (2026-12-07) it broke: it.effect tests run after another file in the same
          // fork failed with "testClock.adjust is not a function", and with several forks the pool's
          // recycling failed ("Terminating worker thread") and left its workers running.
        }
      }
    ]
  }
})
