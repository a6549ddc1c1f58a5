/**
 * The embedded corpus: small tasks for agent harnesses, one folder each under `corpus/<id>/`:
 * `task.json` (title, role, prompt, graders), `fixture/` (the work folder's initial files) and the
 * check scripts its Python graders name. Each run copies the fixture into a fresh temp folder.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Schema } from "effect"
import { Grader } from "./Graders.ts"

export const Role = Schema.Literal("orchestrator", "worker", "both")
export type Role = typeof Role.Type

export const TaskSpec = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  role: Role,
  prompt: Schema.String,
  graders: Schema.Array(Grader)
})
export type TaskSpec = typeof TaskSpec.Type

export interface CorpusTask extends TaskSpec {
  /** The task folder (check scripts are relative to it). */
  readonly dir: string
  /** The fixture folder copied into each run's work folder. */
  readonly fixtureDir: string
}

export class CorpusError extends Schema.TaggedError<CorpusError>()("CorpusError", {
  task: Schema.String,
  reason: Schema.Literal("unreadable", "invalid", "id-mismatch"),
  detail: Schema.String
}) {
  override get message() {
    return `corpus task ${this.task}: ${this.reason}: ${this.detail}`
  }
}

export const corpusDir: string = fileURLToPath(new URL("./corpus", import.meta.url))

/** Reads one task folder; `task.json`'s id must equal the folder name. */
export const loadTask = (folder: string): Effect.Effect<CorpusTask, CorpusError> =>
  Effect.gen(function* () {
    // Absolute, since checks run with the work folder as their working directory.
    const dir = path.resolve(folder)
    const name = path.basename(dir)
    const raw = yield* Effect.try({
      try: () => JSON.parse(fs.readFileSync(path.join(dir, "task.json"), "utf8")) as unknown,
      catch: (e) => new CorpusError({ task: name, reason: "unreadable", detail: String(e) })
    })
    const spec = yield* Schema.decodeUnknown(TaskSpec)(raw).pipe(
      Effect.mapError((e) => new CorpusError({ task: name, reason: "invalid", detail: e.message }))
    )
    if (spec.id !== name) {
      return yield* new CorpusError({ task: name, reason: "id-mismatch", detail: `task.json says ${spec.id}` })
    }
    return { ...spec, dir, fixtureDir: path.join(dir, "fixture") }
  })

/** All tasks of a corpus folder (default: the embedded one), sorted by id. */
export const loadCorpus = (dir: string = corpusDir): Effect.Effect<ReadonlyArray<CorpusTask>, CorpusError> =>
  Effect.gen(function* () {
    const names = yield* Effect.try({
      try: () =>
        fs
          .readdirSync(dir, { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .map((d) => d.name)
          .sort(),
      catch: (e) => new CorpusError({ task: dir, reason: "unreadable", detail: String(e) })
    })
    return yield* Effect.forEach(names, (n) => loadTask(path.join(dir, n)))
  })
