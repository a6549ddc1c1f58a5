/**
 * The small repositories of coding-repair, written here (repos/<id>/): each is a task.json (the
 * issue and the hidden tests' names, split as SWE-bench does into the tests the fix must make
 * pass and those it must keep passing), the workspace the candidate gets, the hidden tests put
 * back at grading, and the known fix (whole files) the gold candidate writes.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Schema } from "effect"
import { CapabilityError } from "../../src/evaluation/Capabilities.ts"

export const reposDir: string = fileURLToPath(new URL("./repos", import.meta.url))

const TaskSpec = Schema.Struct({
  id: Schema.String,
  language: Schema.Literal("javascript", "python"),
  title: Schema.String,
  issue: Schema.String,
  /** Hidden tests that fail on the workspace as given and pass once the bug is fixed. */
  failToPass: Schema.NonEmptyArray(Schema.String),
  /** Hidden tests that pass on the workspace as given and must go on passing. */
  passToPass: Schema.Array(Schema.String)
})

/** Files by path relative to the repository's root ("src/lru.js"), as text. */
export type Files = ReadonlyMap<string, string>

export interface RepairTask extends Schema.Schema.Type<typeof TaskSpec> {
  readonly workspace: Files
  readonly hidden: Files
  readonly solution: Files
}

/** Where the tests live in every workspace: a candidate that changes anything under it scores 0. */
export const TESTS_PREFIX = "tests/"

export const isTestPath = (file: string): boolean => file.startsWith(TESTS_PREFIX)

/** The command the candidate is told runs the visible tests. */
export const testCommand = (task: RepairTask): string =>
  task.language === "python" ? "python3 -m unittest discover -s tests -t . -v" : "node --test tests/"

const dataError = (detail: string) => new CapabilityError({ capability: "coding-repair", reason: "data", detail })

/** Every regular file under a folder, by its path relative to it with "/" separators. */
export const readTree = (root: string): Map<string, string> => {
  const files = new Map<string, string>()
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.isFile()) files.set(path.relative(root, full).split(path.sep).join("/"), fs.readFileSync(full, "utf8"))
    }
  }
  walk(root)
  return files
}

const loadTask = (dir: string): Effect.Effect<RepairTask, CapabilityError> =>
  Effect.gen(function*() {
    const name = path.basename(dir)
    const raw = yield* Effect.try({
      try: () => JSON.parse(fs.readFileSync(path.join(dir, "task.json"), "utf8")) as unknown,
      catch: (e) => dataError(`${name}/task.json: ${String(e)}`)
    })
    const spec = yield* Schema.decodeUnknown(TaskSpec)(raw).pipe(Effect.mapError((e) => dataError(`${name}/task.json: ${e.message}`)))
    if (spec.id !== name) return yield* dataError(`${name}/task.json says id ${spec.id}`)
    return yield* Effect.try({
      try: () => ({
        ...spec,
        workspace: readTree(path.join(dir, "workspace")),
        hidden: readTree(path.join(dir, "hidden")),
        solution: readTree(path.join(dir, "solution"))
      }),
      catch: (e) => dataError(`${name}: ${String(e)}`)
    })
  })

let loaded: ReadonlyArray<RepairTask> | undefined

/** Every task, read once per process, in id order. */
export const loadTasks = (dir: string = reposDir): Effect.Effect<ReadonlyArray<RepairTask>, CapabilityError> =>
  Effect.suspend(() => {
    if (loaded !== undefined && dir === reposDir) return Effect.succeed(loaded)
    const names = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort()
    return Effect.forEach(names, (n) => loadTask(path.join(dir, n))).pipe(
      Effect.tap((ts) => Effect.sync(() => {
        if (dir === reposDir) loaded = ts
      }))
    )
  })
