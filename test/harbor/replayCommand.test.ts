/**
 * `assay replay` of a harbor run, as a user types it: the run's --image substitutions are kept in
 * its settings, so the replay builds (finds) the same images with no flag or variable, and answers
 * every container effect from the recording.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { assay } from "../cli/support.ts"
import { tempDir } from "../support/tempDirs.ts"
import { baseTag, fixtures, unable } from "./podman.ts"

describe.skipIf(unable !== null)(`assay replay of a harbor run${unable !== null ? ` (skipped: ${unable})` : ""}`, { timeout: 600_000 }, () => {
  it("gold and none on one task: the replay gives the same verdicts, with no --image and no ASSAY_IMAGES", async () => {
    const tasks = tempDir("assay-harbor-replay-")
    fs.cpSync(path.join(fixtures, "csv-totals"), path.join(tasks, "csv-totals"), { recursive: true })
    const home = tempDir("assay-harbor-home-")
    const run = await assay(["run", "--benchmark", `harbor:${tasks}`, "--candidate", "gold", "--candidate", "none", "--image", `python:3.13-slim-bookworm=${baseTag}`, "--yes", "--json", "--home", home])
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    expect(report.scorecards.map((c: { candidate: string; meanReward: number }) => [c.candidate, c.meanReward]).sort()).toEqual([["echo", 0], ["gold", 1]])

    const replay = await assay(["replay", "--home", home, "--json"], { ASSAY_IMAGES: "" })
    expect(replay.code, replay.stderr).toBe(0)
    expect(JSON.parse(replay.stdout)).toMatchObject({ replayedFrom: report.runId, replayed: 2, same: 2, differ: [], missing: [] })
  })
})
