/** `Benchmark.declare`: the models an environment names, and capabilities with a spec replaced, over the one dataset load. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { environmentIdOf } from "../../src/evaluation/evaluate.ts"
import { Benchmark, type Canonical, ToolLoop, World } from "../../src/index.ts"

const definition = (models?: { readonly [role: string]: string }, loads = { count: 0 }) => ({
  name: "k",
  version: "1",
  description: "a one-task benchmark",
  data: () => Effect.sync(() => ++loads.count),
  tasks: () => [{ id: "t" }],
  id: (task: { readonly id: string }) => task.id,
  ...(models !== undefined ? { models } : {}),
  setup: { run: () => Effect.die("not run here") },
  protocol: { output: ToolLoop.Outcome, inputs: () => ({ system: "", tools: [] }), run: () => Effect.die("not run here") },
  grade: { run: () => ({ reward: 1, checks: {} }) },
  gold: () => Benchmark.plays("gold", [])
})

const output: Canonical.Json = { ended: "answer", turns: 1, answer: "done" }

describe("a benchmark declared with the kit", () => {
  it("names its models in every EnvironmentDef, part of the content id", () => {
    const plain = Effect.runSync(Benchmark.make(definition()).environments)[0]!
    const withUser = Effect.runSync(Benchmark.make(definition({ user: "openai:gpt-4.1-2025-04-14" })).environments)[0]!
    expect(plain.capabilities.models).toEqual({})
    expect(withUser.capabilities.models).toEqual({ user: "openai:gpt-4.1-2025-04-14" })
    expect(environmentIdOf(withUser)).not.toBe(environmentIdOf(plain))
  })

  it("gives capabilities with a grade replaced, over the dataset the provider loaded once", () =>
    Effect.gen(function*() {
      const loads = { count: 0 }
      const declared = Benchmark.declare(definition(undefined, loads))
      const env = (yield* declared.provider.environments)[0]!
      expect(declared.environment({ id: "t" })).toEqual(env)
      const other = declared.capabilitiesWith({ grade: { version: "2", run: (_, ctx) => ({ reward: 0, checks: { loads: ctx.data === 1 } }) } })
      expect(other.evaluator).toMatchObject({ name: "k/grade", version: "2" })
      expect(declared.provider.capabilities.evaluator).toMatchObject({ name: "k/grade", version: "1" })
      const world = World.make({})
      const graded = yield* other.evaluator.evaluate({ env, evidence: null, output, transcript: [], initial: world, final: world })
      expect(graded).toEqual({ reward: 0, checks: { loads: true } })
      expect(yield* declared.data).toBe(1)
      expect(loads.count).toBe(1)
    }))
})
