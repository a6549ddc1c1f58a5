import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Benchmark data is read from ASSAY_DATA_DIR; the shared copy sits beside the checkout.
    env: { ASSAY_DATA_DIR: process.env.ASSAY_DATA_DIR ?? "../shared/data" },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Many tests wait on child processes (the command, agent CLIs, chromium): one worker per core
    // plus one keeps both cores busy.
    maxWorkers: 3,
    minWorkers: 1
  }
})
