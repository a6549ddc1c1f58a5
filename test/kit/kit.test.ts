/**
 * The benchmark kit, as a provider author relies on it: a benchmark declared once (no capability
 * name or version written twice, no cast) runs by path with gold 1 and the do-nothing candidate 0;
 * a throw in the provider ends only its cells and names the file and line; a syntax error names the
 * file, line and the compiler's message. (declare.test.ts: the content id follows a capability.)
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { assay, cardOf, root, tempDir } from "../cli/support.ts"

const fixture = join(root, "test/kit/fixtures/switches.ts")
const source = readFileSync(fixture, "utf8")

describe("a benchmark declared with the kit", { timeout: 180_000 }, () => {
  it("is under 80 lines with no cast and no capability name, and runs by path: gold 1, none 0", async () => {
    expect(source.split("\n").length).toBeLessThan(80)
    expect(source).not.toMatch(/\bas (unknown|any|[A-Z][\w.]*)\b/)
    expect(source).not.toMatch(/switches\/|worldSetup|evaluator:/)
    const home = join(tempDir("assay-kit-"), "home")
    const run = await assay(["run", "--benchmark", fixture, "--candidate", "gold", "--candidate", "none", "--yes", "--json", "--home", home])
    expect(run.code, run.stderr).toBe(0)
    expect(cardOf(run.stdout, "gold")).toMatchObject({ n: 3, meanReward: 1 })
    expect(cardOf(run.stdout, "echo")).toMatchObject({ n: 3, meanReward: 0, failures: { lit: 3 } })
  })

  it("whose grade throws: the other cells finish, the failing ones name the provider, file and line, exit 1 with one line", async () => {
    const dir = tempDir("assay-kit-")
    const file = join(dir, "p.mts")
    const marker = "      const lit = task.on.every((lamp) => isOn(ctx.final, lamp))"
    expect(source).toContain(marker)
    const broken = source.replace(marker, `      if (task.id === "two") throw new Error("the lamp table is gone")\n${marker}`)
    writeFileSync(file, broken)
    const line = broken.split("\n").findIndex((l) => l.includes("the lamp table is gone")) + 1
    const run = await assay(["run", "--benchmark", file, "--candidate", "gold", "--yes", "--json", "--home", join(dir, "home")])
    expect(run.code, run.stderr).toBe(1)
    const lines = run.stderr.trimEnd().split("\n").filter((l) => !/^assay: (\d+ cells:|\d+\/\d+ )/.test(l))
    expect(lines, run.stderr).toEqual([`assay: provider switches failed: the lamp table is gone (${file}:${line}) (in 1 of 3 cells, not scored; fix what it names and run again)`])
    const report = JSON.parse(run.stdout) as { readonly cells: { readonly ran: number } }
    expect(report.cells.ran).toBe(3)
    // The failed cell runs again next time (the fix need not change the content id); the others are kept.
    writeFileSync(file, source)
    const again = await assay(["run", "--benchmark", file, "--candidate", "gold", "--yes", "--json", "--home", join(dir, "home")])
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ cells: { ran: 1, kept: 2 } })
    expect(cardOf(again.stdout, "gold")).toMatchObject({ n: 3, meanReward: 1 })
  })

  it("whose grade throws only at replay: the replay names the Attempt and the failure, and exits 1", async () => {
    const dir = tempDir("assay-kit-")
    const file = join(dir, "p.mts")
    const home = join(dir, "home")
    writeFileSync(file, source)
    const run = await assay(["run", "--benchmark", file, "--candidate", "gold", "--yes", "--home", home])
    expect(run.code, run.stderr).toBe(0)
    const marker = "      const lit = task.on.every((lamp) => isOn(ctx.final, lamp))"
    writeFileSync(file, source.replace(marker, `      if (task.id === "two") throw new Error("the lamp table is gone")\n${marker}`))
    const replay = await assay(["replay", "--home", home])
    expect(replay.code, replay.stderr).toBe(1)
    expect(replay.stdout).toMatch(/^ {2}benchmark failed: switches two · gold · rep 0: provider switches failed: the lamp table is gone/m)
    expect(replay.stderr).toContain("replay incomplete: the benchmark failed in 1 Attempts")
  })

  it("whose tasks repeat an id, or whose id() gives no string: one line naming it, exit 1, no task silently dropped", async () => {
    const dir = tempDir("assay-kit-")
    const twice = join(dir, "twice.mts")
    writeFileSync(twice, source.replace(`{ id: "two", on: ["hall", "porch"] }`, `{ id: "hall", on: ["hall", "porch"] }`))
    const noId = join(dir, "noid.mts")
    writeFileSync(noId, source.replace("id: (task) => task.id,", "id: (task) => task.on.length as unknown as string,"))
    const noSetup = join(dir, "nosetup.mts")
    writeFileSync(noSetup, source.replace(/^ {2}setup: \{/m, "  setupX: {"))
    const [a, b, c] = await Promise.all([twice, noId, noSetup].map((file) => assay(["tasks", file])))
    // A declaration without a required field is named at load, not met later as "undefined".
    expect(c!.stderr).toContain("Benchmark.make: the declaration of switches has no setup")
    expect(a!.code, a!.stderr).toBe(1)
    expect(a!.stderr.trimEnd().split("\n")).toEqual(["assay: provider switches failed: two of its tasks have the id hall: ids must be unique"])
    expect(b!.code, b!.stderr).toBe(1)
    expect(b!.stderr).toContain("provider switches failed: its id() gave 1 for a task, not a task id")
  })

  it("with a syntax error: one line naming the file, line and the compiler's message, exit 2", async () => {
    const dir = tempDir("assay-kit-")
    const file = join(dir, "p.mts")
    writeFileSync(file, source.replace("const tools = [", "const tools = = ["))
    const line = source.split("\n").findIndex((l) => l.startsWith("const tools = [")) + 1
    const run = await assay(["plan", "--benchmark", file, "--home", join(dir, "home")])
    expect(run.code, run.stderr).toBe(2)
    expect(run.stderr.trimEnd().split("\n")).toEqual([expect.stringMatching(new RegExp(`^assay: cannot load benchmark .*p\\.mts: syntax error at .*p\\.mts:${line}:\\d+: Unexpected "="$`))])
  })
})
