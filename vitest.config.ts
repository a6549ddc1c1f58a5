import { defineConfig } from "vitest/config"

const shared = {
  // Benchmark data is read from ASSAY_DATA_DIR; the shared copy sits beside the checkout.
  env: { ASSAY_DATA_DIR: process.env.ASSAY_DATA_DIR ?? "../shared/data" },
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
          exclude: ["test/harness/**"],
          // These files share a worker's module cache: Effect and the providers load once per
          // worker rather than once per file, which saves minutes on two cores.
          isolate: false
        }
      }
    ]
  }
})
