/**
 * terminal-bench-2, pinned: its manifest (every file of the 89 tasks by raw URL at the pinned
 * commit and sha256), a pull that refuses files other than the pinned ones, and what a run says
 * without the data. No network, no copy of the tasks: the files here are made up.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import { benchmarkNames, loadBenchmark } from "../../src/cli/benchmarks.ts"
import { pullData } from "../../src/cli/pull.ts"
import { absentFrom, NAME, pinnedFiles, taskIds } from "../../providers/harbor/terminalBench2.ts"
import * as manifest from "../../providers/harbor/tb2Manifest.ts"
import { assay } from "../cli/support.ts"
import { tempDir } from "../support/tempDirs.ts"

const COMMIT = "f9f89fadc42150d0b3de9dfa8ff31da31607ca89"
const REQUIRED = ["task.toml", "instruction.md", "environment/Dockerfile", "solution/solve.sh", "tests/test.sh"]

/** A made-up file at a pinned path of the benchmark, under `root` laid out like the data folder. */
const madeUp = (root: string, file: string, text: string): void => {
  const at = path.join(root, NAME, file)
  fs.mkdirSync(path.dirname(at), { recursive: true })
  fs.writeFileSync(at, text)
}

const provider = await Effect.runPromise(loadBenchmark(NAME))

describe("terminal-bench-2's manifest", () => {
  it("pins every file of the 89 tasks by its raw URL at the pinned commit and its sha256, all under terminal-bench-2/ in the data folder", () => {
    expect(benchmarkNames()).toContain(NAME)
    expect(manifest.commit).toBe(COMMIT)
    expect(taskIds).toHaveLength(89)
    const paths = new Set(manifest.files.map((f) => f.path))
    expect(paths.size).toBe(manifest.files.length)
    for (const id of taskIds) for (const f of REQUIRED) expect(paths.has(`${id}/${f}`), `${id}/${f}`).toBe(true)
    for (const f of pinnedFiles) {
      expect(f.sha256, f.path).toMatch(/^[0-9a-f]{64}$/)
      expect(f.url).toBe(`https://raw.githubusercontent.com/yujianll/skill-usage/${COMMIT}/terminal-bench-2/${f.path}`)
      // Each is needed by its own task only: a pull brings what it can and says what it could not.
      expect(f.optional, f.path).toBeDefined()
    }
    expect(provider.data?.map((f) => f.path)).toEqual(pinnedFiles.map((f) => `${NAME}/${f.path}`))
  })

  it("lists the three tasks whose files the public copy lacks as not runnable, naming the files, and scores them apart", () => {
    expect([...absentFrom.keys()]).toEqual(["pytorch-model-recovery", "sqlite-with-gcov", "train-fasttext"])
    expect([...(provider.impassable ?? [])]).toEqual([...absentFrom.keys()])
    expect(absentFrom.get("pytorch-model-recovery")).toContain("pytorch-model-recovery/environment/weights.pt")
    expect(absentFrom.get("train-fasttext")).toContain("train-fasttext/tests/private_test.tar.gz")
    for (const a of manifest.absent) expect(manifest.files.map((f) => f.path)).not.toContain(a.path)
  })
})

describe("assay data pull terminal-bench-2 --from DIR", () => {
  it.effect("refuses files that are not the pinned ones, by sha256, and leaves the data folder as it was", () =>
    Effect.gen(function*() {
      const from = tempDir("assay-tb2-from-")
      const target = path.join(tempDir("assay-tb2-data-"), "data")
      madeUp(from, "fix-git/task.toml", "[agent]\ntimeout_sec = 60\n")
      madeUp(from, "fix-git/instruction.md", "Fix the repository.\n")
      const pulled = yield* Effect.either(pullData(provider, { target, from, mirror: null, log: () => Effect.void }))
      expect(Either.isLeft(pulled)).toBe(true)
      if (Either.isLeft(pulled)) {
        expect(pulled.left.message).toMatch(
          /^data pull terminal-bench-2: terminal-bench-2\/fix-git\/(task\.toml|instruction\.md) \(from .*\) has sha256 [0-9a-f]{64}, the pinned sha256 is [0-9a-f]{64}; the data folder is unchanged$/
        )
      }
      expect(fs.existsSync(target)).toBe(false)
    }))
})

describe("terminal-bench-2 without its data", () => {
  it("a run says in one line that the data is missing and which pull brings it", async () => {
    const data = tempDir("assay-tb2-empty-")
    const home = tempDir("assay-tb2-home-")
    const run = await assay(["run", "--benchmark", NAME, "--candidate", "gold", "--yes", "--home", home], { ASSAY_DATA_DIR: data })
    expect(run.code, run.stderr).toBe(1)
    const lines = run.stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`${path.join(data, NAME)} is missing from the data folder ${data}`)
    expect(lines[0]).toContain("`assay data pull terminal-bench-2 --from DIR`")
  })

  it.effect("a task whose files are not in place, or not the pinned ones, is listed and not run, with why", () =>
    Effect.gen(function*() {
      const data = tempDir("assay-tb2-partial-")
      // The first of fix-git's files (they are checked in the manifest's order), with other bytes.
      const first = manifest.files.find((f) => f.path.startsWith("fix-git/"))!.path
      madeUp(data, first, "made up\n")
      // A provider of its own: the dataset is loaded once per provider, here from this data folder.
      const tb2 = yield* loadBenchmark(NAME)
      const inData = Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["ASSAY_DATA_DIR", data]])))
      const envs = yield* tb2.environments.pipe(inData)
      expect(envs.map((e) => e.task)).toEqual(taskIds)
      const setupOf = (id: string) => Effect.flip(tb2.capabilities.worldSetup.setup(envs.find((e) => e.task === id)!))
      const changed = yield* setupOf("fix-git")
      expect(changed.message).toContain(`not run: ${path.join(data, NAME, first)} has sha256 `)
      expect(changed.message).toMatch(/, expected the pinned [0-9a-f]{64}: run `assay data pull terminal-bench-2`/)
      const missing = yield* setupOf("regex-log")
      expect(missing.message).toContain("regex-log/")
      expect(missing.message).toContain(`is missing from the data folder ${data}`)
      const absent = yield* setupOf("sqlite-with-gcov")
      expect(absent.message).toContain("lacks sqlite-with-gcov/environment/vendor/sqlite-fossil-release.tar.gz")
    }))
})
