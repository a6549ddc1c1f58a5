import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { RegistryModel } from "../../src/harness/Candidates.ts"
import { loadCorpus } from "../../src/harness/Corpus.ts"
import { detectAll } from "../../src/harness/Detect.ts"
import { planHarnessRuns } from "../../src/harness/Plan.ts"
import { fakeBin } from "./support.ts"

const registry: ReadonlyArray<RegistryModel> = [
  { provider: "openai", id: "gpt-5", family: "gpt-5", retired: false, cost: { input: 1.25, output: 10 } },
  { provider: "openai", id: "gpt-5-mini", family: "gpt-5-mini", retired: false, cost: { input: 0.25, output: 2 } }
]

describe("harness plan", () => {
  it.effect("with fake CLIs: live harnesses give candidates, absent ones are listed, Python-only tasks skipped without python3", () =>
    Effect.gen(function* () {
      const bin = fakeBin(["codex", "pi"])
      const detections = yield* detectAll({ binDirs: [bin], path: "" })
      const tasks = yield* loadCorpus()
      const plan = planHarnessRuns({ detections, registry, tasks, python: undefined, reps: 2, judge: "default" })
      expect(plan.harnesses.filter((h) => h.liveness.status === "live").map((h) => h.harness)).toEqual(["codex", "pi"])
      expect(plan.candidates.map((c) => c.label)).toEqual(["codex:gpt-5", "codex:gpt-5-mini", "pi:default"])
      const pythonOnly = tasks.filter((t) => t.graders.every((g) => g.kind === "python")).map((t) => t.id)
      expect(plan.skippedTasks.map((s) => s.task)).toEqual(pythonOnly)
      expect(plan.skippedTasks[0]?.reason).toContain("python3 not found")
      expect(plan.runs).toHaveLength(3 * (tasks.length - pythonOnly.length) * 2)
      expect(plan.judge).toMatchObject({ kind: "harness", harness: { harness: "codex", model: "gpt-5" }, alsoCandidate: true })
      expect(plan.judgeCalls).toBe(plan.runs.length)
    }))

  it.effect("--no-judge makes no judge calls; an explicit judge outside the candidates says so", () =>
    Effect.gen(function* () {
      const detections = yield* detectAll({ binDirs: [fakeBin(["codex"])], path: "" })
      const tasks = yield* loadCorpus()
      const python = { executable: "/usr/bin/python3", version: "3.11.0" }
      const none = planHarnessRuns({ detections, registry, tasks, python, reps: 1, judge: "none" })
      expect(none.skippedTasks).toEqual([])
      expect(none.judgeCalls).toBe(0)
      const other = planHarnessRuns({ detections, registry, tasks, python, reps: 1, judge: { harness: { harness: "claude", model: "claude-opus-4-5" } } })
      expect(other.judge).toMatchObject({ kind: "harness", alsoCandidate: false })
    }))
})
