/**
 * A benchmark outside assay runs with the command, unchanged: `--benchmark PATH` names a module
 * whose default export is a Provider (examples/counter, written against `import … from "assay"`).
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { assay, cardOf, type Result, root, tempDir } from "../cli/support.ts"

const example = "./examples/counter/index.ts"

/** Exit 2 and one line on stderr that starts with `assay: `, nothing on stdout. */
const expectUsageError = (r: Result, ...mentions: ReadonlyArray<string>) => {
  expect(r.code, r.stderr).toBe(2)
  expect(r.stdout).toBe("")
  const lines = r.stderr.trimEnd().split("\n")
  expect(lines, r.stderr).toHaveLength(1)
  expect(lines[0]).toMatch(/^assay: /)
  for (const m of mentions) expect(r.stderr).toContain(m)
}

describe("a provider given by path", { timeout: 180_000 }, () => {
  it("is planned, run (gold scores 1 on every task, echo only where there is nothing to do) and its equivalence checked", async () => {
    const home = join(tempDir("assay-bypath-"), "home")
    const plan = await assay(["plan", "--benchmark", example, "--home", home])
    expect(plan.code, plan.stderr).toBe(0)
    expect(plan.stdout).toContain("benchmark counter (v1): 4 tasks")
    expect(plan.stdout).toContain("candidates: gold, echo")

    const run = await assay(["run", "--benchmark", example, "--candidate", "gold", "--candidate", "echo", "--yes", "--json", "--home", home])
    expect(run.code, run.stderr).toBe(0)
    expect(cardOf(run.stdout, "gold")).toMatchObject({ n: 4, meanReward: 1 })
    expect(cardOf(run.stdout, "echo")).toMatchObject({ n: 4, meanReward: 0.25, failures: { reached: 3 } })

    // The same run again keeps every cell: the provider's environments are the same content.
    const again = await assay(["run", "--benchmark", example, "--candidate", "gold", "--yes", "--json", "--home", home])
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ cells: { total: 4, ran: 0, kept: 4 } })

    // A folder names its index.ts.
    const own = await assay(["equivalence", "./examples/counter", "--json"])
    expect(own.code, own.stderr).toBe(0)
    expect(JSON.parse(own.stdout)).toMatchObject({ benchmark: "counter", lines: 6, agree: 6, disagree: [] })

    const corpus = join(tempDir("assay-bypath-"), "corpus.jsonl")
    writeFileSync(corpus, `${readFileSync(join(root, "examples/counter/oracle.jsonl"), "utf8")}{"start":1,"calls":[{"name":"increment","by":1}],"final":3}\n`)
    const other = await assay(["equivalence", example, "--corpus", corpus])
    expect(other.code, other.stderr).toBe(1)
    expect(other.stdout).toContain("counter: 6 of 7 lines agree with upstream")
    expect(other.stdout).toContain(`disagree: {"line":7,"upstream":3,"ours":2}`)
  })

  it("runs from a folder with no assay and no effect installed (.mts, outside any package)", async () => {
    const dir = tempDir("assay-bypath-")
    const file = join(dir, "counter.mts")
    // Its modules as .mts, so that none is CommonJS in a folder without a package.json.
    const asMts = (text: string) => text.replace(/"\.\/(tools|equivalence)\.ts"/g, `"./$1.mts"`)
    writeFileSync(file, asMts(readFileSync(join(root, "examples/counter/index.ts"), "utf8")))
    for (const part of ["tools", "equivalence"]) writeFileSync(join(dir, `${part}.mts`), asMts(readFileSync(join(root, `examples/counter/${part}.ts`), "utf8")))
    writeFileSync(join(dir, "oracle.jsonl"), readFileSync(join(root, "examples/counter/oracle.jsonl"), "utf8"))
    const run = await assay(["run", "--benchmark", file, "--candidate", "gold", "--yes", "--json", "--home", join(dir, "home")])
    expect(run.code, run.stderr).toBe(0)
    expect(cardOf(run.stdout, "gold")).toMatchObject({ n: 4, meanReward: 1 })
  })

  it("runs from the sources too (npm run assay: tsx src/cli/main.ts), where \"assay\" is src/index.ts", () => {
    const home = join(tempDir("assay-bypath-"), "home")
    const r = spawnSync(process.execPath, [join(root, "node_modules/tsx/dist/cli.mjs"), "src/cli/main.ts", "run", "--benchmark", example, "--candidate", "gold", "--yes", "--json", "--home", home], {
      cwd: root,
      encoding: "utf8",
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp" }
    })
    expect(r.status, r.stderr).toBe(0)
    expect(cardOf(r.stdout, "gold")).toMatchObject({ n: 4, meanReward: 1 })
  })

  it("that is missing, or whose module is not a Provider, is one line and exit 2, and creates no home", async () => {
    const dir = tempDir("assay-bypath-")
    const home = join(dir, "never")
    mkdirSync(join(dir, "empty"))
    writeFileSync(join(dir, "package.json"), `{ "type": "module" }\n`)
    writeFileSync(join(dir, "named.js"), "export const provider = {}\n")
    writeFileSync(join(dir, "half.ts"), `export default { name: "half", version: "1", roster: ["gold"] }\n`)
    writeFileSync(join(dir, "number.mjs"), "export default 42\n")
    writeFileSync(join(dir, "throws.ts"), `throw new Error("no data here")\nexport default {}\n`)
    const run = (path: string) => assay(["run", "--benchmark", path, "--candidate", "gold", "--yes", "--home", home])
    // Three at a time: the machine is small and shared.
    const [missing, empty, named] = await Promise.all([run("./examples/nope/index.ts"), run(join(dir, "empty")), run(join(dir, "named.js"))])
    const [half, number, throws] = await Promise.all([run(join(dir, "half.ts")), run(join(dir, "number.mjs")), run(join(dir, "throws.ts"))])
    expectUsageError(missing!, "benchmark ./examples/nope/index.ts: no such file", join(root, "examples/nope/index.ts"))
    expectUsageError(empty!, "the folder has no index.ts")
    expectUsageError(named!, "named.js: it has no default export")
    expectUsageError(half!, "half.ts: its default export is not a Provider (no environments, capabilities, rosterDef, scripted)")
    expectUsageError(number!, "number.mjs: its default export is a number, not a Provider")
    expectUsageError(throws!, "cannot load benchmark", "throws.ts: no data here")
    expect(existsSync(home)).toBe(false)
  })
})
