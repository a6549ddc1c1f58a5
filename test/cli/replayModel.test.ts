/**
 * `assay replay` as a user runs it: a finished model run replays from its recordings with the
 * model server gone and no key set, and spends nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { assay, tempDir } from "./support.ts"

describe("assay replay through the command", () => {
  it("a finished model run replays with the server stopped and no key: exit 0, every verdict the same, $0", async () => {
    const home = tempDir()
    const args = ["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--candidate", "gold", "--task", "ledger-01", "--task", "ledger-02", "--home", home, "--yes", "--json"]
    const ran = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* LoopbackServer.start([{ repeat: true, text: "done", usage: { input: 100, output: 10 } }])
          return yield* Effect.promise(() => assay(args, { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" }))
        })
      )
    )
    expect(ran.code, ran.stderr).toBe(0)
    // The server is stopped; no key, no base URL.
    const replay = await assay(["replay", "--home", home, "--json"])
    expect(replay.code, replay.stderr).toBe(0)
    const result = JSON.parse(replay.stdout)
    expect(result).toMatchObject({ replayedFrom: JSON.parse(ran.stdout).runId, replayed: 4, same: 4, differ: [], missing: [], spendUsd: 0 })
    expect(result.recordedCostUsd).toBeGreaterThan(0)
    expect(result.runId).toBeNull()
  }, 120_000)
})
