// Before the tests, or by hand (`node tools/bird-sqlite/ensure.mjs`, as `assay equivalence bird`
// says on another engine): install the SQLite BIRD's oracle was graded on (3.40.1, bundled by
// better-sqlite3 8.1.0) for the BIRD grader, from the lock file, when it is missing or another
// version. It has no prebuilt binary for Node 20: npm compiles SQLite and the addon (a few minutes
// on two cores; a C/C++ toolchain and Node's headers, which this kind of machine has). Without it
// the grader runs on the project's own SQLite and `assay equivalence bird` says which line differs.
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
// Run by npm (the tests' pretest): quiet when there is nothing to do, and never fatal.
const underNpm = process.env["npm_lifecycle_event"] !== undefined
const wanted = JSON.parse(readFileSync(join(here, "package.json"), "utf8")).dependencies["better-sqlite3"]
const module = join(here, "node_modules", "better-sqlite3")
const installed = (() => {
  try {
    return JSON.parse(readFileSync(join(module, "package.json"), "utf8")).version
  } catch {
    return undefined // not installed
  }
})()
if (installed !== wanted || !existsSync(join(module, "build", "Release", "better_sqlite3.node"))) {
  process.stderr.write(`assay: building SQLite 3.40.1 for the BIRD grader (better-sqlite3 ${wanted}, from source, a few minutes): npm ci --prefix tools/bird-sqlite\n`)
  try {
    execFileSync("npm", ["ci", "--prefix", here, "--no-audit", "--no-fund"], { stdio: "inherit" })
  } catch (e) {
    // Not fatal before the tests: the grader falls back to the project's SQLite, and says so.
    process.stderr.write(`assay: could not build it (${e instanceof Error ? e.message : String(e)}); BIRD grades on the project's own SQLite\n`)
    if (!underNpm) process.exitCode = 1
  }
} else if (!underNpm) {
  process.stdout.write(`SQLite 3.40.1 for the BIRD grader is built: ${module} (the grader uses it)\n`)
}
