/** The kit derives each capability's reference from its declaration: the content id follows it. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { environmentIdOf } from "../../src/evaluation/evaluate.ts"
import { Benchmark, ContentId, type Provider, ToolLoop } from "../../src/index.ts"

describe("a benchmark declared with the kit", () => {
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

})
