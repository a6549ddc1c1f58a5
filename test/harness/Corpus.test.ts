import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { loadCorpus } from "../../src/harness/Corpus.ts"
import { findPython, grade } from "../../src/harness/Graders.ts"
import { solutions } from "./corpus-solutions.ts"
import { tempDir } from "./support.ts"

const python = await Effect.runPromise(findPython())

describe("embedded corpus", () => {
  it.effect("about a dozen tasks, each with a fixture, a prompt, a role and graders, covering both roles", () =>
    Effect.gen(function* () {
      const tasks = yield* loadCorpus()
      expect(tasks.length).toBeGreaterThanOrEqual(12)
      for (const t of tasks) {
        expect(fs.statSync(t.fixtureDir).isDirectory(), t.id).toBe(true)
        expect(t.prompt.length, t.id).toBeGreaterThan(40)
        expect(t.graders.length, t.id).toBeGreaterThan(0)
        for (const g of t.graders) {
          if (g.kind === "python") expect(fs.existsSync(path.join(t.dir, g.script)), `${t.id} ${g.script}`).toBe(true)
        }
      }
      const roles = new Set(tasks.map((t) => t.role))
      expect(roles).toEqual(new Set(["orchestrator", "worker", "both"]))
    }))

  it.effect("doing nothing passes no task: every task's graders fail on the untouched fixture with an empty answer", () =>
    Effect.gen(function* () {
      for (const t of yield* loadCorpus()) {
        const work = tempDir(`corpus-${t.id}`)
        fs.cpSync(t.fixtureDir, work, { recursive: true })
        const r = yield* grade(t.graders, { answer: "", workDir: work, taskDir: t.dir, python })
        expect(r.passed, `${t.id}: ${JSON.stringify(r.verdicts)}`).toBe(0)
        fs.rmSync(work, { recursive: true, force: true })
      }
    }))

  it.effect("every task can be passed: a correct solution passes all of its graders", () =>
    Effect.gen(function* () {
      const tasks = yield* loadCorpus()
      expect(Object.keys(solutions).sort()).toEqual(tasks.map((t) => t.id))
      for (const t of tasks) {
        const work = tempDir(`solved-${t.id}`)
        fs.cpSync(t.fixtureDir, work, { recursive: true })
        const solution = solutions[t.id]!
        solution.apply(work)
        const r = yield* grade(t.graders, { answer: solution.answer, workDir: work, taskDir: t.dir, python })
        expect(r.correctness, `${t.id}: ${JSON.stringify(r.verdicts)}`).toBe(1)
        fs.rmSync(work, { recursive: true, force: true })
      }
    }))
})
