import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { codex } from "../../src/harness/adapters/index.ts"
import { type CorpusTask, loadTask } from "../../src/harness/Corpus.ts"
import { findPython } from "../../src/harness/Graders.ts"
import { runHarness, type RunSpec } from "../../src/harness/Run.ts"
import { fakeBin, isAlive, tempDir, writeJson } from "./support.ts"

const python = await Effect.runPromise(findPython())
const bin = path.join(fakeBin(["codex"]), "codex")
const corpus = new URL("../../src/harness/corpus/", import.meta.url).pathname
const task = (id: string) => Effect.runSync(loadTask(path.join(corpus, id)))

const spec = (t: CorpusTask, script: unknown, extra: Partial<RunSpec> = {}): RunSpec => ({
  adapter: codex,
  binary: bin,
  task: t,
  model: "gpt-test",
  endpoint: { baseUrl: "http://127.0.0.1:9", apiKey: "k-test" },
  timeoutMs: 30_000,
  python,
  baseEnv: { PATH: process.env.PATH ?? "", FAKE_HARNESS_SCRIPT: writeJson(script) },
  ...extra
})


describe("runHarness with a fake CLI", () => {
  it.effect("runs in a fresh copy of the fixture, parses the transcript, diffs and grades, then cleans up", () =>
    Effect.gen(function* () {
      const t = task("csv-summary")
      // A private TMPDIR, so the check below sees only this run's folders (test files run in parallel).
      const tmp = tempDir("tmpdir")
      const saved = process.env.TMPDIR
      process.env.TMPDIR = tmp
      const fixtureBefore = fs.readFileSync(path.join(t.fixtureDir, "sales.csv"), "utf8")
      const run = yield* runHarness(
        spec(t, {
          answer: "The total is 139.72",
          writes: { "summary.json": JSON.stringify({ by_category: { books: 49.75, games: 79.98, music: 9.99 }, total: 139.72 }) },
          usage: [
            { input: 100, cached: 20, output: 7 },
            { input: 50, cached: 0, output: 3 }
          ]
        })
      )
      if (saved === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = saved
      expect(run.outcome).toBe("completed")
      expect(run.transcript?.finalAnswer).toBe("The total is 139.72")
      expect(run.transcript?.calls).toEqual([
        { model: "gpt-test", input: 100, output: 7, cacheRead: 20, cacheWrite: undefined, reasoning: 0 },
        { model: "gpt-test", input: 50, output: 3, cacheRead: 0, cacheWrite: undefined, reasoning: 0 }
      ])
      expect(run.transcript?.models).toEqual(["gpt-test"])
      expect(run.diff.changed).toEqual(["summary.json"])
      expect(run.diff.text).toContain("+++ b/summary.json")
      expect(run.grades).toMatchObject({ passed: 2, evaluated: 2, correctness: 1 })
      // The fixture is untouched and the run's temp folders are gone.
      expect(fs.existsSync(path.join(t.fixtureDir, "summary.json"))).toBe(false)
      expect(fs.readFileSync(path.join(t.fixtureDir, "sales.csv"), "utf8")).toBe(fixtureBefore)
      expect(fs.readdirSync(tmp).filter((n) => !n.startsWith("assay-test-"))).toEqual([])
    }))

  it.effect("the endpoint reaches the CLI through its own config, and the key only through the env", () =>
    Effect.gen(function* () {
      const t = task("config-port")
      const seen = path.join(tempDir("seen"), "config.toml")
      const run = yield* runHarness(
        spec(t, { answer: "8443", writes: {} }, {
          binary: (() => {
            // A CLI that copies its config out before answering, to show what codex would read.
            const dir = tempDir("bin")
            const file = path.join(dir, "codex")
            fs.writeFileSync(
              file,
              `#!/bin/sh\ncp "$CODEX_HOME/config.toml" '${seen}'\necho "key=$ASSAY_LOCAL_API_KEY" >&2\nexec '${bin}' "$@"\n`,
              { mode: 0o755 }
            )
            return file
          })()
        })
      )
      const config = fs.readFileSync(seen, "utf8")
      expect(config).toContain(`base_url = "http://127.0.0.1:9/v1"`)
      expect(config).toContain(`wire_api = "responses"`)
      expect(config).not.toContain("k-test")
      expect(run.stderr).toContain("key=k-test")
      expect(run.grades.correctness).toBe(1)
    }))

  it.effect("the CLI runs in the work folder with PWD saying so, never the caller's folder", () =>
    Effect.gen(function* () {
      const envFile = path.join(tempDir("env"), "env.json")
      yield* runHarness(spec(task("config-port"), { answer: "8443", envFile }, { baseEnv: { PATH: process.env.PATH ?? "", PWD: process.cwd(), FAKE_HARNESS_SCRIPT: writeJson({ answer: "8443", envFile }) } }))
      const seen = JSON.parse(fs.readFileSync(envFile, "utf8")) as { cwd: string; pwd: string; keys: Array<string> }
      expect(seen.cwd).toMatch(/assay-codex-config-port-.*\/work$/)
      expect(seen.pwd).toBe(seen.cwd)
      expect(seen.keys).toContain("CODEX_HOME")
    }))

  it.live("a CLI that runs past the timeout is killed with its children and recorded as a timeout", () =>
    Effect.gen(function* () {
      const pidFile = path.join(tempDir("pid"), "child.pid")
      const run = yield* runHarness(
        // Room for the fake CLI (a node process) to start and write its child's pid before the
        // kill on a loaded machine (node's start took up to 1.4 s at load 8-10 on 2 cores).
        spec(task("config-port"), { answer: "8443", sleepMs: 60_000, spawnChild: pidFile }, { timeoutMs: 4000 })
      )
      expect(run.outcome).toBe("timeout")
      expect(run.wallMs).toBeLessThan(10_000)
      expect(run.transcript).toBeUndefined()
      expect(run.transcriptError).toContain("no-answer")
      expect(run.grades).toMatchObject({ passed: 0, evaluated: 1 })
      const child = Number(fs.readFileSync(pidFile, "utf8"))
      yield* Effect.sleep("200 millis")
      expect(isAlive(child)).toBe(false)
    }))

  it.effect("a non-zero exit is a failed run whose graders still run", () =>
    Effect.gen(function* () {
      const run = yield* runHarness(spec(task("review-patch"), { answer: "REJECT: off-by-one on the first page", exitCode: 2 }))
      expect(run.outcome).toBe("failed")
      expect(run.exitCode).toBe(2)
      expect(run.grades.correctness).toBe(1)
    }))

  it.effect("a missing binary is a typed spawn error", () =>
    Effect.gen(function* () {
      const err = yield* runHarness(spec(task("config-port"), {}, { binary: "/nonexistent/codex" })).pipe(Effect.flip)
      expect(err._tag).toBe("HarnessRunError")
      expect(err.reason).toBe("spawn-failed")
    }))
})
