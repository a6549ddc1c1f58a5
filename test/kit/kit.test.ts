/**
 * The benchmark kit, as a provider author relies on it: a benchmark declared once (no capability
 * name or version written twice, no cast) runs by path with gold 1 and the do-nothing candidate 0;
 * the content id follows a capability's declaration; a throw in the provider ends only its cells
 * and names the file and line; a syntax error names the file, line and the compiler's message.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { environmentIdOf } from "../../src/evaluation/evaluate.ts"
import { Benchmark, ContentId, ToolLoop, type Provider } from "../../src/index.ts"
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

  it("derives the capability references from the capabilities: a changed grade changes the content id, and only the grade's reference", () => {
    const declare = (gradeVersion?: string): Provider.Provider =>
      Benchmark.make({
        name: "k",
        version: "1",
        description: "a one-task benchmark",
        tasks: () => [{ id: "t" }],
        id: (task) => task.id,
        setup: { run: () => Effect.die("not run here") },
        protocol: { output: ToolLoop.Outcome, inputs: () => ({ system: "", tools: [] }), run: () => Effect.die("not run here") },
        grade: { ...(gradeVersion !== undefined ? { version: gradeVersion } : {}), run: (_, ctx) => ({ reward: ctx.output.turns > 0 ? 1 : 0, checks: {} }) },
        gold: () => Benchmark.plays("gold", [])
      })
    const envOf = (p: Provider.Provider) => Effect.runSync(p.environments)[0]!
    const before = envOf(declare())
    const same = envOf(declare())
    const after = envOf(declare("2"))
    expect(environmentIdOf(same)).toBe(environmentIdOf(before))
    expect(environmentIdOf(after)).not.toBe(environmentIdOf(before))
    expect(before.capabilities).toMatchObject({ worldSetup: { name: "k/setup", version: "1" }, protocol: { name: "k/protocol", version: "1" }, evaluator: { name: "k/grade", version: "1" } })
    expect(after.capabilities.evaluator).toEqual({ name: "k/grade", version: "2" })
    expect(after.capabilities.worldSetup).toEqual(before.capabilities.worldSetup)
    expect(after.capabilities.protocol).toEqual(before.capabilities.protocol)
    expect(ContentId.ofUnsafe(Schema.encodeSync(ToolLoop.Outcome)({ ended: "answer", turns: 1, answer: null }))).toMatch(/^sha256:/)
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
    expect(lines, run.stderr).toEqual([`assay: provider switches failed: the lamp table is gone (${file}:${line}) (in 1 of 3 cells; fix the benchmark and run again)`])
    const report = JSON.parse(run.stdout) as { readonly cells: { readonly ran: number } }
    expect(report.cells.ran).toBe(3)
    // The failed cell runs again next time (the fix need not change the content id); the others are kept.
    writeFileSync(file, source)
    const again = await assay(["run", "--benchmark", file, "--candidate", "gold", "--yes", "--json", "--home", join(dir, "home")])
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ cells: { ran: 1, kept: 2 } })
    expect(cardOf(again.stdout, "gold")).toMatchObject({ n: 3, meanReward: 1 })
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
