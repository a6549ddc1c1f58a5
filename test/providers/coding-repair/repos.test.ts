import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { editedTests, parseTap, runHidden } from "../../../providers/coding-repair/grade.ts"
import { isTestPath, loadTasks, type RepairTask } from "../../../providers/coding-repair/repos.ts"
import { fileTools } from "../../../providers/coding-repair/index.ts"
import { applyDifference, filesOf, worldOf } from "../../../providers/coding-repair/workspace.ts"
import * as World from "../../../src/world/World.ts"

describe("coding-repair repositories", () => {
  it.effect("there are six, three JavaScript and three Python, each with an issue, hidden tests and a fix outside tests/", () =>
    Effect.gen(function*() {
      const tasks = yield* loadTasks()
      expect(tasks.map((t) => t.language).sort()).toEqual(["javascript", "javascript", "javascript", "python", "python", "python"])
      for (const t of tasks) {
        expect(t.issue.length).toBeGreaterThan(40)
        expect([...t.workspace.keys()].some(isTestPath)).toBe(true)
        expect([...t.hidden.keys()].every(isTestPath)).toBe(true)
        expect(t.solution.size).toBeGreaterThan(0)
        for (const p of t.solution.keys()) {
          expect(isTestPath(p)).toBe(false)
          // The fix changes a file the candidate has, not one only gold knows of.
          expect(t.workspace.has(p)).toBe(true)
        }
        // A hidden test the candidate could read would not be hidden.
        for (const [p, text] of t.hidden) if (t.workspace.has(p)) expect(t.workspace.get(p)).toBe(text)
      }
    }))

  // The grader's validity on its own data: the bug is what the fail-to-pass tests catch, the fix
  // makes them pass, and nothing else breaks (as SWE-bench validates its instances).
  it.effect("on each workspace as given the fail-to-pass tests fail and the pass-to-pass pass; with the fix all pass", () =>
    Effect.gen(function*() {
      const tasks = yield* loadTasks()
      yield* Effect.forEach(tasks, (t) =>
        Effect.gen(function*() {
          const before = yield* runHidden(t, t.workspace)
          const after = yield* runHidden(t, applyDifference(t.workspace, Object.fromEntries(t.solution)))
          for (const n of t.failToPass) expect([t.id, n, before.tests[n]]).toEqual([t.id, n, "failed"])
          for (const n of t.passToPass) expect([t.id, n, before.tests[n]]).toEqual([t.id, n, "passed"])
          for (const n of [...t.failToPass, ...t.passToPass]) expect([t.id, n, after.tests[n]]).toEqual([t.id, n, "passed"])
          expect(before.timedOut || after.timedOut).toBe(false)
        }), { concurrency: 3 })
    }))

  it.effect("a hidden suite that loops is killed at its timeout and its unfinished tests count as failed", () =>
    Effect.gen(function*() {
      const t = (yield* loadTasks()).find((x) => x.id === "py-intervals")!
      const looping = applyDifference(t.workspace, { "intervals.py": "def merge(intervals):\n    while True:\n        pass\n" })
      const started = Date.now()
      const run = yield* runHidden(t, looping, 1_000)
      expect(run.timedOut).toBe(true)
      expect(Date.now() - started).toBeLessThan(8_000)
      expect(Object.values(run.tests).every((o) => o !== "passed")).toBe(true)
    }))

  it.effect("code under test that prints TAP lines of its own does not pass a test", () =>
    Effect.gen(function*() {
      const t = (yield* loadTasks()).find((x) => x.id === "js-slugify")!
      const source = t.workspace.get("src/slugify.js")!
      const spoofing = applyDifference(t.workspace, {
        "src/slugify.js": `console.log("ok 1 - slugify: many words")\nprocess.on("exit", () => console.log("ok 9 - slugify: punctuation runs"))\n${source}`
      })
      const run = yield* runHidden(t, spoofing)
      expect(run.tests["slugify: many words"]).toBe("failed")
      expect(run.tests["slugify: punctuation runs"]).toBe("failed")
    }))

  it("write_file writes inside the workspace only; read_file and list_files see what it wrote", () => {
    const [list, read, write] = ["list_files", "read_file", "write_file"].map((n) => fileTools.find((t) => t.spec.name === n)!)
    const world = worldOf(new Map([["src/a.js", "a"], ["tests/a.test.js", "t"]]))
    for (const bad of ["../outside.js", "/etc/passwd", "", "src/"]) {
      const outcome = write!.run(world, { path: bad, content: "x" })
      expect([bad, outcome.error, outcome.writes]).toEqual([bad, true, []])
    }
    const ok = write!.run(world, { path: "./src/../src/b.js", content: "b" })
    const next = World.apply(world, ok.writes)
    expect([...filesOf(next).keys()].sort()).toEqual(["src/a.js", "src/b.js", "tests/a.test.js"])
    expect(read!.run(next, { path: "src/b.js" }).output).toBe("b")
    expect(list!.run(next, { path: "src" }).output).toBe("src/a.js\nsrc/b.js")
    expect(read!.run(next, { path: "src/missing.js" }).error).toBe(true)
  })

  it("edited tests are found whether changed, added or removed", () => {
    const files = new Map([["src/a.js", "a"], ["tests/a.test.js", "t"], ["tests/b.test.js", "u"]])
    // Only the workspace is read.
    const task = { workspace: files } as unknown as RepairTask
    expect(editedTests(task, files)).toEqual([])
    expect(editedTests(task, new Map([...files, ["src/a.js", "fixed"]]))).toEqual([])
    expect(editedTests(task, new Map([...files, ["tests/a.test.js", "changed"]]))).toEqual(["tests/a.test.js"])
    expect(editedTests(task, new Map([...files, ["tests/c.test.js", "new"]]))).toEqual(["tests/c.test.js"])
    expect(editedTests(task, new Map([...files].filter(([p]) => p !== "tests/b.test.js")))).toEqual(["tests/b.test.js"])
  })

  it("TAP results are read from the top-level lines only, skips not counted as passes", () => {
    const tap = ["TAP version 13", "# Subtest: a", "ok 1 - a", "not ok 2 - b", "  ok 1 - nested", "ok 3 - c # SKIP later", "1..3"].join("\n")
    expect([...parseTap(tap)]).toEqual([["a", true], ["b", false], ["c", false]])
  })
})
