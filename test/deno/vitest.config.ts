/**
 * The suite under Deno (`deno task test`): the same projects as vitest.config.ts, run by vitest in
 * Deno (its workers, and every `assay` a test spawns through process.execPath, are Deno too), less
 * the files that cannot run there, each named with why.
 */
import { defineConfig } from "vitest/config"
import base from "../../vitest.config.ts"

/** Files left out under Deno, and why. */
export const notUnderDeno: ReadonlyArray<readonly [string, string]> = [
  // These build their store client from @effect/sql-sqlite-node by name, i.e. better-sqlite3, a
  // native addon on the pre-Node-API interface that Deno cannot load. The store itself is covered
  // under Deno by the command tests (test/cli), which reach it through src/experiment/Sqlite.ts.
  ["test/experiment/Home.test.ts", "imports better-sqlite3 (and bundles the store for Node with it)"],
  ["test/experiment/Runner.test.ts", "imports better-sqlite3 through @effect/sql-sqlite-node"],
  ["test/experiment/NothingToRun.test.ts", "imports better-sqlite3 through @effect/sql-sqlite-node"],
  ["test/cli/replay.test.ts", "imports better-sqlite3 through @effect/sql-sqlite-node"]
]

const projects = (base.test?.projects ?? []).map((project) => {
  if (typeof project !== "object" || project === null || !("test" in project) || project.test === undefined) return project
  return { ...project, test: { ...project.test, exclude: [...(project.test.exclude ?? []), ...notUnderDeno.map(([file]) => file)] } }
})

export default defineConfig({ test: { ...base.test, projects } })
