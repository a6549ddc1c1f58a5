// Before the tests (npm test's pretest), or by hand (`node tools/data/ensure.mjs`): the data
// folder the tests read (tools/data/root.mjs) gets every built-in benchmark's pinned files.
// When it has them, nothing is done: a note in the user's cache records the folder's files as
// they were when last checked (size and modification time) and what the check depended on (the
// providers' sources, which pin the files), so a run with nothing to do loads no TypeScript and
// hashes nothing. Otherwise each benchmark that lacks files is pulled into the folder, all or
// nothing, as `assay data pull` does: from ASSAY_DATA_MIRROR (a local copy laid out like the data
// folder, i.e. `--from DIR`) when it is set, else from the upstream URLs. One line per benchmark;
// when a pull fails (no network), one line says which benchmarks' tests will fail and how to fix
// it. Run by npm it is never fatal and quiet when there is nothing to do; by hand it exits 1 when
// files are still missing.
import { createHash, randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { checkout, testDataFolder, userCacheFolder } from "./root.mjs"

const underNpm = process.env["npm_lifecycle_event"] !== undefined
const { dir, why } = testDataFolder()
const mirror = process.env["ASSAY_DATA_MIRROR"] === undefined || process.env["ASSAY_DATA_MIRROR"] === ""
  ? null
  : resolve(process.env["ASSAY_DATA_MIRROR"])
const say = (line) => process.stdout.write(`assay: ${line}\n`)
const warn = (line) => process.stderr.write(`assay: ${line}\n`)

// ---------------------------------------------------------------------------------------------
// The note of the last check, and whether it still holds.

/** Size and modification time of every file the providers' pins come from (providers/, and the list of built-in benchmarks). */
const sourceStamps = () => {
  const stamps = []
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if (entry.name === "node_modules") continue
      const path = join(d, entry.name)
      if (entry.isDirectory()) walk(path)
      else {
        const s = statSync(path)
        stamps.push(`${relative(checkout, path)}:${s.size}:${s.mtimeMs}`)
      }
    }
  }
  walk(join(checkout, "providers"))
  const list = statSync(join(checkout, "src", "cli", "benchmarks.ts"))
  stamps.push(`src/cli/benchmarks.ts:${list.size}:${list.mtimeMs}`)
  return stamps
}

const sha256 = (text) => createHash("sha256").update(text).digest("hex")
const key = sha256(JSON.stringify({ checkout, dir, mirror, sources: sourceStamps() }))
const noteFile = join(userCacheFolder("data-checks"), `tests-${sha256(`${checkout}\0${dir}`).slice(0, 32)}.json`)

/** A file's state as the note keeps it, or null when it is missing. */
const stateOf = (path) => {
  const s = statSync(join(dir, path), { throwIfNoEntry: false })
  return s === undefined ? null : `${s.size}:${s.mtimeMs}`
}

/** The note's lines to print again when it still holds (all files as they were, the missing ones still missing), else null. */
const noted = () => {
  let note
  try {
    note = JSON.parse(readFileSync(noteFile, "utf8"))
  } catch {
    return null // no note yet, or one that cannot be read: check afresh
  }
  if (note === null || typeof note !== "object" || note.key !== key || typeof note.files !== "object" || !Array.isArray(note.lines)) return null
  for (const [path, state] of Object.entries(note.files)) if (stateOf(path) !== state) return null
  return note.lines
}

const writeNote = (files, lines) => {
  const staged = `${noteFile}.${process.pid}-${randomBytes(4).toString("hex")}`
  try {
    mkdirSync(join(noteFile, ".."), { recursive: true })
    writeFileSync(staged, JSON.stringify({ key, files, lines }))
    renameSync(staged, noteFile)
  } catch (e) {
    // Without a note the next run checks again (slower, not wrong).
    rmSync(staged, { force: true })
    warn(`cannot write ${noteFile} (${e instanceof Error ? e.message : String(e)}): the next run checks the data again`)
  }
}

const printAgain = (lines) => {
  for (const line of lines) warn(line)
  if (lines.length > 0 && !underNpm) process.exitCode = 1
}

// ---------------------------------------------------------------------------------------------
// The check and the pulls, with the command's own modules (TypeScript, loaded with tsx).

const check = async () => {
  const { register } = await import("tsx/esm/api")
  register()
  const src = (path) => pathToFileURL(join(checkout, "src", path)).href
  const { Effect, Either } = await import("effect")
  const { benchmarkNames, loadBenchmark } = await import(src("cli/benchmarks.ts"))
  const { pullData } = await import(src("cli/pull.ts"))
  const { fileState, notedSha256, noteSha256 } = await import(src("evaluation/DataRoot.ts"))

  /** Whether `path` in the data folder has sha256 `wanted`; a file hashed once is noted (DataRoot), so it is not hashed again. */
  const intact = (path, wanted) => {
    const file = join(dir, path)
    if (!existsSync(file)) return false
    const known = notedSha256(file)
    if (known !== undefined) return known === wanted
    const before = fileState(file)
    const actual = createHash("sha256").update(readFileSync(file)).digest("hex")
    noteSha256(file, actual, before)
    return actual === wanted
  }

  const files = {} // path -> state, of every pinned file checked (present or not)
  const lines = [] // what a later run with nothing to do prints again
  const failed = [] // benchmarks whose data tests will fail
  let pulling = false
  for (const name of benchmarkNames()) {
    const provider = await Effect.runPromise(loadBenchmark(name))
    // What the tests read: the pinned files but those only read to derive others, and the derived ones.
    // An optional file (long_context.py) is pulled when it can be, never counted as missing.
    const wanted = [
      ...(provider.data ?? []).filter((f) => f.derivationInput !== true && f.optional === undefined),
      ...(provider.derived?.files ?? [])
    ]
    if (wanted.length === 0) continue
    const bad = () => wanted.filter((f) => !intact(f.path, f.sha256))
    const before = bad()
    // A file with no download URL (an oracle corpus made by running upstream's code) comes only from a local copy.
    const localOnly = (fs) => fs.filter((f) => f.url === "")
    let after = before
    if (before.length > 0 && (mirror !== null || localOnly(before).length < before.length)) {
      if (!pulling) say(`pulling the missing benchmarks into ${dir} (${why})`)
      pulling = true
      const log = []
      const pulled = await Effect.runPromise(Effect.either(pullData(provider, {
        target: dir,
        from: mirror,
        mirror: null,
        log: (line) => Effect.sync(() => log.push(line))
      })))
      if (Either.isLeft(pulled)) {
        say(`${name}: ${pulled.left.message}`)
        failed.push(name)
        continue // not noted: the next run tries again
      }
      after = bad()
      say(`${name}: ${pulled.right} files pulled from ${mirror ?? "the upstream URLs"}`)
    }
    for (const f of wanted) files[f.path] = stateOf(f.path)
    if (after.length === 0) continue
    const onlyLocal = localOnly(after).length === after.length
    const line = onlyLocal
      ? `${name}: ${after.length} oracle file(s) (e.g. ${after[0].path}) have no download URL (made by running upstream's code), so only a ` +
        `local copy brings them (ASSAY_DATA_MIRROR=DIR${mirror === null ? "" : `; not in ${mirror}`}): \`assay equivalence ${name}\` and its tests will fail`
      : `${name}: ${after.length} pinned file(s) missing or changed in ${dir}, e.g. ${after[0].path}`
    say(line)
    lines.push(line)
    failed.push(onlyLocal ? `${name} (equivalence only)` : name)
  }
  const fix = failed.length === 0
    ? null
    : `the data tests of ${failed.join(", ")} will fail: their pinned files are not in ${dir} (${why}). To fix it, set ` +
      `ASSAY_DATA_MIRROR=DIR (a local copy laid out like the data folder, as \`assay data pull NAME --from DIR\` takes) or ` +
      `ASSAY_DATA_DIR=DIR (a data folder that has them), and run npm test again`
  if (fix !== null) warn(fix)
  // Noted only when a run would have nothing more to do: every pull that was tried succeeded.
  if (failed.every((b) => b.endsWith("(equivalence only)"))) writeNote(files, fix === null ? lines : [...lines, fix])
  if (fix !== null && !underNpm) process.exitCode = 1
  if (fix === null && !pulling && !underNpm) say(`every built-in benchmark's pinned files are in ${dir} (${why})`)
}

const lines = noted()
if (lines !== null) {
  printAgain(lines)
  if (lines.length === 0 && !underNpm) say(`every built-in benchmark's pinned files are in ${dir} (${why})`)
} else {
  try {
    await check()
  } catch (e) {
    // A provider that does not load (or another fault of this check) is the tests' to report; the run goes on.
    warn(`cannot check the tests' data in ${dir}: ${e instanceof Error ? e.message : String(e)}; the data tests may fail`)
    if (!underNpm) process.exitCode = 1
  }
}
