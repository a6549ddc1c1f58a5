/**
 * A run's `results.jsonl` (`<home>/runs/<run>/results.jsonl`): one line per Attempt the run
 * stored, appended as each is committed. The store is the record; the file follows it, a line
 * after each commit, so a process killed between the two (SIGKILL, a power cut) leaves the file
 * some lines behind, or with a torn last line. `assay run`, holding the home's lock, rebuilds the
 * file of every run that did not finish from the store before it starts: no other process can be
 * writing those runs then.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs"
import { dirname, join } from "node:path"
import { Effect, Schema } from "effect"
import type { Attempt } from "../schema/Attempt.ts"
import { Store, type StoreError } from "./Store.ts"

/** The results file of a run in a home. */
export const resultsFile = (home: string, runId: string): string => join(home, "runs", runId, "results.jsonl")

/**
 * The results file of a run, opened once for its cells (an appendFileSync per cell opened and
 * closed the file each time): `append` writes an Attempt's line whole, after its commit.
 */
export const openResults = (file: string) => {
  mkdirSync(dirname(file), { recursive: true })
  const fd = openSync(file, "a")
  return {
    // An Attempt's encoded form is itself (no transformations; the store's write checked it).
    append: (attempt: Attempt): void => {
      const bytes = Buffer.from(JSON.stringify(attempt) + "\n")
      // A write may take only part of it, as appendFileSync knows.
      for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at)
    },
    close: (): void => closeSync(fd)
  }
}

export class ResultsError extends Schema.TaggedError<ResultsError>()("ResultsError", {
  reason: Schema.Literal("io"),
  file: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `cannot rebuild ${this.file} from the store: ${this.detail}`
  }
}

/**
 * Rewrites the results file of each unfinished run of this home whose file differs from what the
 * store holds for it (its Attempts, in the order they were stored), whole: written aside and
 * renamed into place. Runs whose folder is not in this home (another machine's, on a shared
 * Postgres store) are left alone. The runs whose file was rebuilt.
 */
export const rebuildUnfinished: Effect.Effect<ReadonlyArray<string>, StoreError | ResultsError, Store> = Effect.gen(function*() {
  const store = yield* Store
  const rebuilt: Array<string> = []
  for (const run of yield* store.runs) {
    if (run.finishedAt !== null || !existsSync(join(store.home, "runs", run.id))) continue
    const file = resultsFile(store.home, run.id)
    const attempts = yield* store.attemptsOfRun(run.id)
    const text = attempts.map((a) => JSON.stringify(a.attempt) + "\n").join("")
    yield* Effect.try({
      try: () => {
        const present = existsSync(file) ? readFileSync(file, "utf8") : null
        if (present === text || (present === null && text === "")) return
        const staged = `${file}.rebuild-${process.pid}`
        try {
          writeFileSync(staged, text)
          renameSync(staged, file)
        } finally {
          rmSync(staged, { force: true })
        }
        rebuilt.push(run.id)
      },
      catch: (e) => new ResultsError({ reason: "io", file, detail: e instanceof Error ? e.message : String(e) })
    })
  }
  return rebuilt
})
