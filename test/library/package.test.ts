/**
 * `import … from "assay"` works from another project: the tarball `npm pack` makes (its prepack
 * compiles src/index.ts to dist/, JavaScript and .d.ts) is installed into a fresh project, a
 * provider written there against "assay" type-checks with tsc, evaluates gold with the library,
 * and runs with the installed command.
 *
 * Offline and fast: the project's node_modules first links every package of this checkout's
 * node_modules (what a registry install would have hoisted there), then `npm install --offline`
 * installs the tarball itself; the links npm prunes as extraneous are made again afterwards.
 */
import { spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { cardOf, type Result, root, tempDir } from "../cli/support.ts"

/** Runs a command with its own temp folder `tmp` (tsx keeps its cache there): removed with the test's. */
const run = (command: string, args: ReadonlyArray<string>, cwd: string, tmp: string): Promise<Result> =>
  new Promise((done, fail) => {
    mkdirSync(tmp, { recursive: true })
    const child = spawn(command, args, {
      cwd,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", TMPDIR: tmp, npm_config_update_notifier: "false" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", fail)
    child.on("close", (code) => done({ code, stdout, stderr }))
  })

/** Links each package of this checkout's node_modules into `modules` where it has none. */
const linkPackages = (modules: string) => {
  const from = join(root, "node_modules")
  const names = readdirSync(from).flatMap((n) =>
    n.startsWith(".") || n === "assay" ? [] : n.startsWith("@") ? readdirSync(join(from, n)).map((s) => `${n}/${s}`) : [n]
  )
  for (const name of names) {
    const to = join(modules, name)
    if (existsSync(to)) continue
    mkdirSync(join(to, ".."), { recursive: true })
    symlinkSync(join(from, name), to)
  }
}

const gold = `import { Effect } from "effect"
import { evaluate } from "assay"
import { Runner } from "assay/experiment"
import { LoopbackServer } from "assay/testkit"
import provider from "./provider.ts"

const program = Effect.gen(function*() {
  const [env] = yield* provider.environments
  if (env === undefined) return yield* Effect.die("no task")
  const attempt = yield* evaluate(env, {
    capabilities: provider.capabilities,
    agentDef: provider.rosterDef("gold"),
    agent: yield* provider.scripted("gold", env),
    repetition: 0
  })
  console.log(JSON.stringify({ task: env.task, verdict: attempt.verdict, testkit: typeof LoopbackServer.start, experiment: typeof Runner.makePlan }))
})
Effect.runPromise(program)
`

const tsconfig = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    lib: ["ES2022"],
    types: ["node"],
    strict: true,
    exactOptionalPropertyTypes: true,
    allowImportingTsExtensions: true,
    noEmit: true
  },
  include: ["*.ts"]
}

describe("the packed library", { timeout: 900_000 }, () => {
  it("installs into another project, where a provider written against \"assay\" type-checks, evaluates gold and runs with the command", async () => {
    const temp = tempDir("assay-package-")
    const tmp = join(temp, "tmp")
    const pack = await run("npm", ["pack", "--json", "--pack-destination", temp], root, tmp)
    expect(pack.code, pack.stderr).toBe(0)
    const [{ filename, files }] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf("["))) as [{ filename: string; files: ReadonlyArray<{ path: string }> }]
    const packed = files.map((f) => f.path)
    expect(packed).toEqual(expect.arrayContaining(["dist/index.js", "dist/index.d.ts", "bin/assay.js", "src/cli/main.ts", "fixtures/registry/models.json"]))
    expect(packed.filter((p) => p.startsWith("test/") || p.startsWith("node_modules/") || p.startsWith("examples/"))).toEqual([])

    const project = join(temp, "project")
    mkdirSync(join(project, "node_modules"), { recursive: true })
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
    linkPackages(join(project, "node_modules"))
    const install = await run("npm", ["install", "--offline", "--no-audit", "--no-fund", "--no-package-lock", "--ignore-scripts", join(temp, filename)], project, tmp)
    expect(install.code, install.stderr).toBe(0)
    linkPackages(join(project, "node_modules"))
    expect(existsSync(join(project, "node_modules", "assay", "dist", "index.js"))).toBe(true)

    copyFileSync(join(root, "examples/counter/index.ts"), join(project, "provider.ts"))
    for (const part of ["tools.ts", "equivalence.ts"]) copyFileSync(join(root, "examples/counter", part), join(project, part))
    copyFileSync(join(root, "examples/counter/oracle.jsonl"), join(project, "oracle.jsonl"))
    writeFileSync(join(project, "gold.ts"), gold)
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(tsconfig, null, 2))

    const tsc = await run(process.execPath, [join(project, "node_modules/typescript/bin/tsc"), "-p", project], project, tmp)
    expect(tsc.code, tsc.stdout + tsc.stderr).toBe(0)

    const evaluated = await run(process.execPath, ["--import", "tsx", "gold.ts"], project, tmp)
    expect(evaluated.code, evaluated.stderr).toBe(0)
    expect(JSON.parse(evaluated.stdout)).toMatchObject({ task: "up-3", verdict: { reward: 1, checks: { reached: true } }, testkit: "function", experiment: "function" })

    const command = join(project, "node_modules/.bin/assay")
    const scored = await run(process.execPath, [command, "run", "--benchmark", "./provider.ts", "--candidate", "gold", "--yes", "--json", "--home", "home"], project, tmp)
    expect(scored.code, scored.stderr).toBe(0)
    expect(cardOf(scored.stdout, "gold")).toMatchObject({ n: 4, meanReward: 1 })
  })
})
