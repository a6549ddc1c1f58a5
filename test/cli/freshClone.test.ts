/**
 * A new user's start, from a fresh clone of the repository at HEAD, with no `../shared` beside it,
 * their own home, and no network: the README's quick start. Its first command runs the ledger; its
 * second, `npm test`, first runs the test setup (`pretest`), whose data step (tools/data/ensure.mjs)
 * fills the default data folder from ASSAY_DATA_MIRROR, here the real data folder the suite reads,
 * so that the data tests then pass; without a mirror and without a network it says in one line
 * which benchmarks' tests will fail and how to fix it, and lets the tests run.
 *
 * `npm ci` is not run (minutes): the clone's node_modules links to the checkout's packages, one by
 * one, so what the clone builds (bin/assay.js's build) stays in the clone.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs"
import { join, resolve } from "node:path"
import { Schema } from "effect"
import { defaultDataRoot } from "../../src/evaluation/DataRoot.ts"
import { type Result, root, tempDir } from "./support.ts"

/** The real data folder (vitest.config.ts sets ASSAY_DATA_DIR to it): the mirror the new user is given. */
const mirror = resolve(process.env["ASSAY_DATA_DIR"] ?? "")

const base = tempDir("assay-fresh-clone-")
const clone = join(base, "assay")

/** A user's environment: their own home (so the default data folder is in it), no ASSAY_DATA_DIR, no XDG_CACHE_HOME. */
const userEnv = (home: string, env: Record<string, string> = {}): Record<string, string> => ({
  PATH: process.env["PATH"] ?? "",
  HOME: home,
  ...(process.env["TMPDIR"] !== undefined ? { TMPDIR: process.env["TMPDIR"] } : {}),
  // npm would look for a newer npm on the network.
  npm_config_update_notifier: "false",
  ...env
})

const run = (command: string, args: ReadonlyArray<string>, env: Record<string, string>, cwd = clone): Promise<Result> =>
  new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", fail)
    child.on("close", (code) => done({ code, stdout, stderr }))
  })

const newHome = (name: string): string => {
  const home = join(base, name)
  mkdirSync(home)
  return home
}

/** The pinned files of every built-in benchmark, as the clone's own providers declare them. */
const Pins = Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Struct({ path: Schema.String, sha256: Schema.String })) }))
type Pins = typeof Pins.Type

/** Lists them with the clone's sources (a process of its own: the clone's modules, not this checkout's). */
const listPins = async (home: string): Promise<Pins> => {
  const script = `
    import { Effect } from "effect"
    import { benchmarkNames, loadBenchmark } from "./src/cli/benchmarks.ts"
    const pins = {}
    for (const name of benchmarkNames()) {
      const p = await Effect.runPromise(loadBenchmark(name))
      // What the tests read: the pinned files but those only read to derive others or needed by some tasks only (pulled when they can be), and the derived ones.
      pins[name] = [...(p.data ?? []).filter((f) => f.derivationInput !== true && f.optional === undefined), ...(p.derived?.files ?? [])]
        .map((f) => ({ path: f.path, sha256: f.sha256 }))
    }
    process.stdout.write(JSON.stringify(pins))`
  const listed = await run("node", ["--import", "tsx", "--input-type=module", "-e", script], userEnv(home))
  expect(listed.stderr).toBe("")
  return Schema.decodeUnknownSync(Pins)(listed.stdout)
}

const sha256Of = (file: string): string => createHash("sha256").update(readFileSync(file)).digest("hex")

/** The environment of git: this process's, less what is unset. */
const gitEnv = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined))

/** No network: every fetch fails as it does offline (no DNS), whatever network the machine running the test has. */
const offline = `data:text/javascript,${encodeURIComponent(`globalThis.fetch = async () => { throw new TypeError("fetch failed") }`)}`

describe("a fresh clone, as a new user has it", () => {
  it("is HEAD, with no ../shared beside it and the checkout's packages", async () => {
    const cloned = await run("git", ["clone", "--quiet", root, clone], gitEnv, base)
    expect(cloned.code, cloned.stderr).toBe(0)
    const head = async (cwd: string) => (await run("git", ["rev-parse", "HEAD"], gitEnv, cwd)).stdout
    expect(await head(clone)).toBe(await head(root))
    expect(existsSync(join(clone, "..", "shared"))).toBe(false)
    mkdirSync(join(clone, "node_modules"))
    for (const name of readdirSync(join(root, "node_modules"))) {
      // The packages and their commands; not the checkout's own builds and caches (.assay, .vite).
      if (!name.startsWith(".") || name === ".bin") symlinkSync(join(root, "node_modules", name), join(clone, "node_modules", name))
    }
  })

  it("runs the README's first command: the ledger, gold scoring 1 and echo 0", async () => {
    const readme = readFileSync(join(clone, "README.md"), "utf8")
    const quickStart = readme.slice(readme.indexOf("## Quick start"))
    const first = /```sh\n(.*)\n/.exec(quickStart)?.[1] ?? ""
    expect(first.startsWith("npm ci && npx assay run ")).toBe(true)
    const [npx, ...args] = first.slice("npm ci && ".length).split(/\s+/)
    const result = await run(npx!, args, userEnv(newHome("home-run")))
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/^gold\s+20\s+20\s+1\.000 /m)
    expect(result.stdout).toMatch(/^echo\s+20\s+20\s+0\.000 /m)
  }, 180_000)

  it("has npm test's pretest fill the default data folder from ASSAY_DATA_MIRROR, so the data-reading commands run", async () => {
    const { scripts } = Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ scripts: Schema.Record({ key: Schema.String, value: Schema.String }) })))(
      readFileSync(join(clone, "package.json"), "utf8")
    )
    expect(scripts["pretest"]).toContain("node tools/data/ensure.mjs")

    const home = newHome("home-mirror")
    const data = join(home, ".cache", "assay", "data")
    // The folder the clone's test configuration gives the tests (tools/data/root.mjs) is the command's default one.
    const testFolder = async (env: Record<string, string>) =>
      (await run("node", ["--input-type=module", "-e", `import { testDataFolder } from "./tools/data/root.mjs"; process.stdout.write(testDataFolder().dir)`], env)).stdout
    expect(data).toBe(defaultDataRoot({ HOME: home }))
    expect(await testFolder(userEnv(home))).toBe(data)
    const xdg = join(base, "xdg")
    expect(await testFolder(userEnv(home, { XDG_CACHE_HOME: xdg }))).toBe(defaultDataRoot({ HOME: home, XDG_CACHE_HOME: xdg }))

    // As npm runs it before the tests.
    const filled = await run("node", ["tools/data/ensure.mjs"], userEnv(home, { ASSAY_DATA_MIRROR: mirror, npm_lifecycle_event: "pretest" }))
    expect(filled.code, filled.stderr).toBe(0)
    expect(filled.stderr).toBe("")

    const pins = await listPins(home)
    const withData = Object.keys(pins).filter((name) => pins[name]!.length > 0)
    expect(withData).toEqual(expect.arrayContaining(["bfcl", "bird", "contract-review", "tau2-retail", "tau2-airline", "tau2-telecom", "tau2-banking"]))
    // One line per benchmark it pulled.
    for (const name of withData) expect(filled.stdout).toMatch(new RegExp(`^assay: ${name}: \\d+ files pulled from ${mirror}$`, "m"))
    for (const name of withData) {
      for (const f of pins[name]!) {
        expect(existsSync(join(data, f.path)), `${name}: ${f.path}`).toBe(true)
        expect(sha256Of(join(data, f.path)), `${name}: ${f.path}`).toBe(f.sha256)
      }
    }

    // A command that reads the data, as the user runs it (no ASSAY_DATA_DIR: the default folder).
    const tasks = await run("npx", ["assay", "tasks", "bird", "--json"], userEnv(home))
    expect(tasks.code, tasks.stderr).toBe(0)
    const listed = Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ tasks: Schema.Array(Schema.Struct({ id: Schema.String })) })))(tasks.stdout)
    expect(listed.tasks).toHaveLength(500)

    // The next run has nothing to do, and does nothing.
    const again = await run("node", ["tools/data/ensure.mjs"], userEnv(home, { ASSAY_DATA_MIRROR: mirror }))
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toBe(`assay: every built-in benchmark's pinned files are in ${data} (the default data folder; ASSAY_DATA_DIR is not set)\n`)
  }, 300_000)

  it("without a mirror or a network, says in one line which benchmarks' tests will fail and how to fix it, and lets the tests run", async () => {
    const home = newHome("home-offline")
    const data = join(home, ".cache", "assay", "data")
    const result = await run("node", ["--import", offline, "tools/data/ensure.mjs"], userEnv(home, { npm_lifecycle_event: "pretest" }))
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    const line = lines[0]!
    for (const name of ["bfcl", "bird", "contract-review", "tau2-retail", "tau2-airline", "tau2-telecom", "tau2-banking"]) expect(line).toContain(name)
    expect(line).toContain(`will fail: their pinned files are not in ${data}`)
    expect(line).toContain("ASSAY_DATA_MIRROR=DIR")
    expect(line).toContain("ASSAY_DATA_DIR=DIR")
    // Each failed pull changed nothing.
    expect(existsSync(data) ? readdirSync(data) : []).toEqual([])
  }, 180_000)
})
