/**
 * `terminal-bench-2`: the 89 Terminal-Bench 2 tasks, pinned, run by the Harbor-format provider
 * (index.ts) over `$ASSAY_DATA_DIR/terminal-bench-2/`. The official repositories were not reachable
 * where this was built; the pinned copy is the public one in yujianll/skill-usage (tb2Manifest.ts,
 * made by tools/tb2-manifest.mjs), each file by its raw URL at the commit and its sha256.
 *
 * Every file is `optional` to a pull (needed only by its own task), so `assay data pull` brings
 * what it can and says what it could not, and a task runs only when all its files are in place
 * with their pinned sha256; one that is not is listed as not run with the reason. Four files of
 * three tasks are absent from the public copy (large files), so no sha256 is known for them:
 * those tasks are always listed as not run, naming the files.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect, Either } from "effect"
import { type Benchmark, Capabilities, DataRoot, type Provider } from "../../src/index.ts"
import { make as harbor, type Options } from "./index.ts"
import { type HarborTask, loadTask } from "./tasks.ts"
import * as manifest from "./tb2Manifest.ts"

export const NAME = "terminal-bench-2"

/** Where a pinned file is downloaded from: GitHub's raw file at the pinned commit. */
export const rawUrl = (file: string): string =>
  `https://raw.githubusercontent.com/${manifest.repository}/${manifest.commit}/${manifest.folder}/${file.split("/").map(encodeURIComponent).join("/")}`

/** The task a file belongs to, or null for the files beside the task folders (LICENSE, README.md). */
const taskOf = (file: string): string | null => (file.includes("/") ? file.slice(0, file.indexOf("/")) : null)

/** The pinned files, relative to the benchmark's folder under the data root. */
export const pinnedFiles: ReadonlyArray<Provider.PinnedFile> = manifest.files.map((f) => {
  const task = taskOf(f.path)
  return {
    path: f.path,
    url: rawUrl(f.path),
    sha256: f.sha256,
    optional: task === null ? "no task (it is the copy's LICENSE or README)" : `the ${NAME} task ${task}`
  }
})

/** Every task id, from the manifest (not from what the data folder holds). */
export const taskIds: ReadonlyArray<string> = [...new Set([...manifest.files, ...manifest.absent].map((f) => taskOf(f.path)).filter((t) => t !== null))].sort()

/** Why a task can never be run from the public copy (files it lacks), by task. */
export const absentFrom: ReadonlyMap<string, string> = new Map(
  taskIds.flatMap((id) => {
    const lacking = manifest.absent.filter((f) => taskOf(f.path) === id).map((f) => `${f.path} (git blob ${f.gitBlob.slice(0, 12)})`)
    return lacking.length === 0
      ? []
      : [[id, `not run: the public copy (${manifest.repository}@${manifest.commit.slice(0, 12)}) lacks ${lacking.join(", ")}, so no sha256 is pinned for ${lacking.length === 1 ? "it" : "them"}`] as const]
  })
)

/** A task that is not run, as the list of tasks shows it: its id and why. */
const notRun = (dir: string, id: string, why: string): HarborTask => ({
  id,
  dir: path.join(dir, id),
  instruction: "",
  agentTimeoutSeconds: 1,
  verifierTimeoutSeconds: 1,
  buildTimeoutSeconds: 1,
  cpus: null,
  memoryMb: null,
  network: false,
  difficulty: null,
  dockerImage: null,
  testScript: "",
  notRunnable: why
})

/**
 * The tasks, from the data folder (the one the pinned reader reads): each task's files read through
 * the reader (so checked against their sha256); a task with a file missing or changed is not run,
 * with the reader's reason. The folder missing altogether fails the load with the pull that fixes it.
 */
const load = (read: Benchmark.Reader): Effect.Effect<ReadonlyArray<HarborTask>, Capabilities.CapabilityError> =>
  Effect.gen(function*() {
    // As the pinned reader finds it (src/data/Pinned.ts), so the two agree.
    const root = yield* Effect.orDie(DataRoot.dataRootConfig)
    const dir = path.join(root, NAME)
    if (!fs.existsSync(dir)) {
      return yield* new Capabilities.CapabilityError({ capability: NAME, reason: "data", detail: DataRoot.missingDataMessage(NAME, "download", dir, root) })
    }
    const tasks: Array<HarborTask> = []
    for (const id of taskIds) {
      const absent = absentFrom.get(id)
      if (absent !== undefined) {
        // Its task.toml still gives its difficulty, when the rest of it is in place.
        const known = loadTask(dir, id)
        tasks.push(Either.isRight(known) ? { ...known.right, notRunnable: absent } : notRun(dir, id, absent))
        continue
      }
      const checked = yield* Effect.either(Effect.forEach(manifest.files.filter((f) => taskOf(f.path) === id), (f) => read.bytes(f.path), { discard: true }))
      if (Either.isLeft(checked)) {
        tasks.push(notRun(dir, id, `not run: ${checked.left.message}`))
        continue
      }
      const task = loadTask(dir, id)
      tasks.push(Either.isRight(task) ? task.right : notRun(dir, id, `not run: ${task.left}`))
    }
    return tasks
  })

/** The benchmark over the data folder (`ASSAY_DATA_DIR`, else the user's cache), with the command's container options. */
export const make = (options: Omit<Options, "dir" | "pinned">): Provider.Provider =>
  harbor({
    ...options,
    // The tasks' own folders come from `load`, in the data folder of the run's configuration.
    dir: path.join(DataRoot.dataRoot(), NAME),
    pinned: {
      name: NAME,
      description: `Terminal-Bench 2 (${taskIds.length} tasks; copy ${manifest.repository}@${manifest.commit.slice(0, 12)}:${manifest.folder}, ${absentFrom.size} not runnable: files absent from it)`,
      upstream: `${manifest.repository}@${manifest.commit}:${manifest.folder}`,
      folder: NAME,
      files: pinnedFiles,
      load,
      // No answer can pass them here (they are not run): scored apart from the rest, as the report shows.
      impassable: new Set(absentFrom.keys()),
      attribution: "Terminal-Bench 2 tasks (Apache-2.0, the LICENSE beside them), from the public copy in yujianll/skill-usage"
    }
  })
