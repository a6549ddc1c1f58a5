#!/usr/bin/env -S node --max-semi-space-size=32
// The flag: V8's young generation may grow to 32 MB semi-spaces (the default stops at 16 MB on
// 64-bit). A run with a thousand conversations in flight keeps each one's objects alive for the
// model's seconds, so with small semi-spaces they are promoted and the old generation is collected
// over and over: at --parallel 1000 that was ~8 s of a 23 s run, and the run took 22-27 s against
// 15.5-17 s with 64 MB (`npm run bench -- slots`, 2026-12-02). Since the run allocates less, 32 MB
// keeps the slots as full as 64 (busy 0.86-0.89 against 0.88, 2026-12-03) and costs a run with
// nothing to run at 100,000 cells less (2.82-2.87 s against 2.99-3.04 s, 430 against 480 MB).
// V8 reads it only at start, so it is here and not set from the code; `node bin/assay.js` without
// it works the same, more slowly at that scale.
// Compiles the command's TypeScript with esbuild (dependencies stay external and load natively)
// and runs it in this process, so a signal sent to this process reaches the command itself.
//
// The build is split into chunks, so a dependency only one command needs (the model clients,
// a benchmark's provider) loads when that command asks for it. It is kept in
// node_modules/.assay and reused while none of the files it was built from has changed (size and
// modification time, as listed in its manifest), so most starts run no esbuild at all.
import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const cache = join(root, "node_modules", ".assay")
const manifestFile = join(cache, "manifest.json")
const FORMAT = 7 // the layout of a build; a new one invalidates old builds

const stamp = (file) => {
  const s = statSync(join(root, file), { throwIfNoEntry: false })
  return s === undefined ? null : `${s.size}:${s.mtimeMs}`
}

/** The entry of a build whose inputs are all unchanged, or undefined. */
const current = () => {
  if (!existsSync(manifestFile)) return undefined
  let manifest
  try {
    manifest = JSON.parse(readFileSync(manifestFile, "utf8"))
  } catch {
    return undefined // unreadable (written by hand?): build afresh
  }
  if (manifest.format !== FORMAT || !existsSync(join(cache, manifest.entry))) return undefined
  for (const [file, was] of Object.entries(manifest.inputs)) if (stamp(file) !== was) return undefined
  return join(cache, manifest.entry)
}

const rebuild = async () => {
  const { build } = await import("esbuild")
  // Each file keeps its own import.meta.url, so paths relative to a source file stay right.
  const ownUrl = {
    name: "own-import-meta-url",
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => ({
        contents: readFileSync(args.path, "utf8").replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)),
        loader: "ts"
      }))
    }
  }
  const effectInside = {
    name: "effect-inside",
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) =>
        /^(effect|@effect\/[^/]+|fast-check|pure-rand)(\/|$)/.test(args.path) ? undefined : { path: args.path, external: true })
    }
  }
  // Dependencies that every start would load (~0.5 s of CPU together) though only some commands
  // call them: platform-node re-exports undici with `export *`, @effect/cli imports three config
  // file parsers, the frozen web needs html-to-text, `data pull` yauzl. Each is replaced by a
  // module with the same names that loads the real one on its first call. The names are the ones
  // these importers use; one not listed fails the build (below) rather than being undefined.
  const lazyModules = {
    undici: ["Agent", "getGlobalDispatcher"],
    ini: ["parse"],
    toml: ["parse"],
    yaml: ["parse"],
    "html-to-text": ["convert"],
    yauzl: ["openPromise"]
  }
  const lazy = {
    name: "lazy-externals",
    setup(b) {
      b.onResolve({ filter: /^(undici|ini|toml|yaml|html-to-text|yauzl)$/ }, (args) => ({ path: args.path, namespace: "lazy" }))
      b.onLoad({ filter: /.*/, namespace: "lazy" }, (args) => ({
        // A function called with `new` that returns an object gives that object: `new Agent()` is undici's Agent.
        contents: `import { createRequire } from "node:module"
let real
const load = () => (real ??= createRequire(${JSON.stringify(join(root, "package.json"))})(${JSON.stringify(args.path)}))
${lazyModules[args.path].map((n) => `export function ${n}(...args) { return new.target ? new (load().${n})(...args) : load().${n}(...args) }`).join("\n")}
export default new Proxy({}, { get: (_, key) => load()[key] })
`,
        loader: "js",
        resolveDir: root
      }))
    }
  }
  // Files edited while esbuild reads them would be stamped afterwards with their new state over
  // the old content: such a build is used once but not kept (the next start builds again).
  const started = Date.now()
  const name = `build-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`
  const outdir = join(cache, name)
  const result = await build({
    absWorkingDir: root,
    // The library surface is a second entry: a provider loaded by path imports "assay" from it
    // and so shares the command's own modules (chunks), not a second copy of them.
    entryPoints: { main: join(root, "src", "cli", "main.ts"), index: join(root, "src", "index.ts") },
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Effect and its packages are bundled (their hundreds of module files load as a few chunks);
    // every other dependency stays outside and loads natively: some find files beside themselves.
    // Only @effect packages depend on effect, so there is one copy of it. fast-check (and pure-rand,
    // which it re-exports) is bundled too: effect's index re-exports it, and an external module
    // re-exported with `export *` is loaded at every start, used or not.
    plugins: [ownUrl, lazy, effectInside],
    outdir,
    entryNames: "[name]",
    // .mjs: the build lives under node_modules, where Node looks for no package.json "type", so a
    // .js file there is of unknown format and Node compiles it once more to find out.
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunk-[hash]",
    // Less text for V8 to parse at each start (compiling the chunks is most of start-up); names
    // are kept as written, so stack traces and class names read as before.
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: "linked",
    metafile: true,
    logLevel: "error"
  })
  const missing = result.warnings.filter((w) => w.id === "import-is-undefined")
  if (missing.length > 0) {
    rmSync(outdir, { recursive: true, force: true })
    throw new Error(`bin/assay.js: a lazily loaded module is used by a name it does not list: ${missing.map((w) => w.text).join("; ")}`)
  }
  const inputs = {}
  for (const file of [...Object.keys(result.metafile.inputs), relative(root, fileURLToPath(import.meta.url))]) {
    const path = relative(root, join(root, file))
    inputs[path] = stamp(path)
  }
  const editedMeanwhile = Object.keys(inputs).some((path) => (statSync(join(root, path), { throwIfNoEntry: false })?.mtimeMs ?? 0) >= started - 1000)
  if (!editedMeanwhile) {
    const tmp = `${manifestFile}.${process.pid}.tmp`
    writeFileSync(tmp, JSON.stringify({ format: FORMAT, entry: join(name, "main.mjs"), inputs }))
    renameSync(tmp, manifestFile)
  }
  // Older builds go, but not ones a command started within the hour may still load chunks from.
  for (const old of readdirSync(cache)) {
    const path = join(cache, old)
    // Another start rebuilding at the same moment may have removed it already.
    const made = statSync(path, { throwIfNoEntry: false })?.mtimeMs
    if (old !== name && (old.startsWith("build-") || old.endsWith(".mjs")) && made !== undefined && Date.now() - made > 3_600_000) {
      rmSync(path, { recursive: true, force: true })
    }
  }
  return join(outdir, "main.mjs")
}

mkdirSync(cache, { recursive: true })
const entry = current() ?? (await rebuild())
// Where the surface of this build is, for src/cli/benchmarks.ts (its import.meta.url is the source's).
globalThis[Symbol.for("assay/library-url")] = pathToFileURL(join(dirname(entry), "index.mjs")).href
await import(pathToFileURL(entry).href)
