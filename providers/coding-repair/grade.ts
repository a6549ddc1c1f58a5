/**
 * Grading a repair: the workspace as the candidate left it, in a fresh temp folder, with the
 * task's tests put back as they were (whatever the candidate did to them) and the hidden tests
 * beside them; the hidden tests run in the same sandbox as the candidate's commands
 * (src/sandbox/Sandbox.ts), with the report's folder as the one other writable folder. Each expected test's outcome is read from a report of the
 * runner's, never from what the code under test prints: node:test's TAP, and for Python a small
 * runner of ours (runner/unittest_report.py) writing JSON, each to a file outside the folder.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import * as Sandbox from "../../src/sandbox/Sandbox.ts"
import { type Files, isTestPath, type RepairTask } from "./repos.ts"
import { commandEnv, interpreterBinds, materialize, nodeExecutable, python, tempFolder } from "./workspace.ts"

/** The hidden tests' time limit: a fix that loops fails its tests here instead of hanging the run. */
export const HIDDEN_TIMEOUT_MS = 60_000

const unittestReport = fileURLToPath(new URL("./runner/unittest_report.py", import.meta.url))

export type TestOutcome = "passed" | "failed" | "missing"

export interface HiddenRun {
  /** Each expected test (fail-to-pass and pass-to-pass) by name. */
  readonly tests: Readonly<Record<string, TestOutcome>>
  readonly timedOut: boolean
  /** The runner's last output, for a reader of the verdict. */
  readonly log: string
}

/** Test files the candidate changed, added or removed (paths under tests/). */
export const editedTests = (task: RepairTask, final: Files): ReadonlyArray<string> => {
  const edited = new Set<string>()
  for (const [p, text] of task.workspace) if (isTestPath(p) && final.get(p) !== text) edited.add(p)
  for (const p of final.keys()) if (isTestPath(p) && !task.workspace.has(p)) edited.add(p)
  return [...edited].sort()
}

/** What the hidden tests run on: the candidate's files but the tests, the given tests, the hidden ones. */
export const gradingFiles = (task: RepairTask, final: Files): Map<string, string> => {
  const files = new Map([...final].filter(([p]) => !isTestPath(p)))
  for (const [p, text] of task.workspace) if (isTestPath(p)) files.set(p, text)
  for (const [p, text] of task.hidden) files.set(p, text)
  return files
}

const hiddenTestFiles = (task: RepairTask): ReadonlyArray<string> =>
  [...task.hidden.keys()].filter((p) => (task.language === "python" ? /\/test_[^/]*\.py$/.test(p) : /\.test\.[cm]?js$/.test(p))).sort()

/** Top-level TAP results of `node --test`: `ok 3 - name` / `not ok 4 - name`. */
export const parseTap = (tap: string): Map<string, boolean> => {
  const results = new Map<string, boolean>()
  for (const line of tap.split("\n")) {
    const m = /^(not )?ok \d+ - (.*?)(?: # (?:SKIP|TODO)\b.*)?$/.exec(line)
    // A name reported twice passes only if it passed both times.
    if (m && m[2] !== undefined) results.set(m[2], (results.get(m[2]) ?? true) && m[1] === undefined && !/ # (SKIP|TODO)\b/.test(line))
  }
  return results
}

/**
 * The runner's output for a reader, the same for the same outcome (a replay re-grades and must
 * agree): the grading folder's path and durations left out, the last lines kept.
 */
const readable = (text: string, dir: string, lines = 40): string =>
  text
    .replaceAll(dir, ".")
    .split("\n")
    .filter((l) => !/^\s*(# )?duration_ms\b/.test(l))
    .join("\n")
    .trim()
    .split("\n")
    .slice(-lines)
    .join("\n")

/** Runs the hidden tests on a workspace's files. */
export const runHidden = (task: RepairTask, final: Files, timeoutMs: number = HIDDEN_TIMEOUT_MS): Effect.Effect<HiddenRun, string> =>
  Effect.scoped(
    Effect.gen(function*() {
      const py = yield* python
      const dir = yield* tempFolder("assay-repair-grade-")
      yield* Effect.try({ try: () => materialize(dir, gradingFiles(task, final)), catch: (e) => `grading folder: ${String(e)}` })
      const testFiles = hiddenTestFiles(task)
      const expected = [...task.failToPass, ...task.passToPass]
      let found: Map<string, boolean>
      let outcome: { readonly stdout: string; readonly stderr: string; readonly timedOut: boolean }
      if (task.language === "python") {
        if (py === undefined) return yield* Effect.fail("python3 not found on /usr/local/bin:/usr/bin:/bin")
        // The report is written outside the folder the code under test runs in.
        const reportDir = yield* tempFolder("assay-repair-report-")
        const report = path.join(reportDir, "report.json")
        const modules = testFiles.map((p) => p.replace(/\.py$/, "").split("/").join("."))
        outcome = yield* Sandbox.run({
          command: py.executable,
          args: ["-I", "-B", unittestReport, report, ...modules],
          work: dir,
          env: commandEnv(py),
          timeoutMs,
          readOnly: [...interpreterBinds(py), unittestReport],
          writable: [reportDir],
          maxOutputBytes: 256 * 1024
        }).pipe(Effect.mapError((e) => e.message))
        found = new Map()
        if (fs.existsSync(report)) {
          const parsed = JSON.parse(fs.readFileSync(report, "utf8")) as Record<string, string>
          for (const [id, status] of Object.entries(parsed)) found.set(id, status === "passed")
        }
      } else {
        // Each file run by node itself, its node:test results as TAP: without `--test`, no
        // child process per file (half the time). The deadline is the suite's, not each file's.
        const deadline = Date.now() + timeoutMs
        const parts = { stdout: "", stderr: "", timedOut: false }
        // The TAP goes to a file outside the folder, apart from what the code under test prints.
        const tapDir = yield* tempFolder("assay-repair-report-")
        let tap = ""
        for (const [i, file] of testFiles.entries()) {
          const left = deadline - Date.now()
          if (left <= 0) {
            parts.timedOut = true
            break
          }
          const o = yield* Sandbox.run({
            command: nodeExecutable,
            args: ["--test-reporter=tap", `--test-reporter-destination=${path.join(tapDir, `${i}.tap`)}`, file],
            work: dir,
            env: commandEnv(py),
            timeoutMs: left,
            readOnly: interpreterBinds(py),
            writable: [tapDir],
            maxOutputBytes: 256 * 1024
          }).pipe(Effect.mapError((e) => e.message))
          parts.stdout += o.stdout
          parts.stderr += o.stderr
          parts.timedOut ||= o.timedOut
          const report = path.join(tapDir, `${i}.tap`)
          if (fs.existsSync(report)) tap += fs.readFileSync(report, "utf8")
        }
        outcome = { ...parts, stdout: `${tap}\n${parts.stdout}` }
        found = parseTap(tap)
      }
      const tests: Record<string, TestOutcome> = {}
      for (const name of expected) {
        const passed = found.get(name)
        tests[name] = passed === undefined ? "missing" : passed ? "passed" : "failed"
      }
      return { tests, timedOut: outcome.timedOut, log: readable(`${outcome.stdout}\n${outcome.stderr}`, dir) }
    })
  )
