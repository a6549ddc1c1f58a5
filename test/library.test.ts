/**
 * A provider written against the library's public surface alone (src/index.ts), as a provider
 * author would: a counter benchmark with one write tool, run as an experiment in a fresh home.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Runner, Store } from "../src/experiment/index.ts"
import { Agent, Capabilities, type Canonical, EnvironmentDef, evaluate, type Provider, Tool, ToolLoop, World } from "../src/index.ts"
import { tempDir } from "./support/tempDirs.ts"

const VERSION = "1"
const targets = [1, 3, 5]

const increment: Tool.Tool = {
  spec: {
    name: "increment",
    description: "Add `by` to the counter.",
    parameters: { type: "object", properties: { by: { type: "integer" } }, required: ["by"] }
  },
  access: "write",
  run: (world, args) => {
    const by = args["by"]
    if (typeof by !== "number" || !Number.isInteger(by)) return Tool.fail("Error: by must be an integer")
    const now = (World.get(world, "counter", "value") as number | undefined) ?? 0
    return Tool.ok(String(now + by), [{ table: "counter", key: "value", value: now + by }])
  }
}

const environment = (target: number): EnvironmentDef.EnvironmentDef => ({
  benchmark: "counter",
  task: `reach-${target}`,
  stratum: null,
  world: { isolation: "fork", settlement: "discard", effects: EnvironmentDef.defaultEffects },
  capabilities: {
    worldSetup: { name: "counter/setup", version: VERSION },
    protocol: { name: "counter/tool-loop", version: VERSION },
    evaluator: { name: "counter/final", version: VERSION },
    upstream: null,
    models: {}
  },
  limits: EnvironmentDef.noLimits
})

const targetOf = (env: EnvironmentDef.EnvironmentDef): number => Number(env.task.slice("reach-".length))

const counter: Provider.Provider = {
  name: "counter",
  version: VERSION,
  description: "bring a counter to a target with one tool",
  environments: Effect.succeed(targets.map(environment)),
  capabilities: {
    worldSetup: Capabilities.makeWorldSetup({
      name: "counter/setup",
      version: VERSION,
      trust: "deterministic",
      setup: () => Effect.succeed({ world: World.make({ counter: { value: 0 } }), evidence: { start: 0 }, tools: [increment] })
    }),
    protocol: Capabilities.makeProtocol({
      name: "counter/tool-loop",
      version: VERSION,
      trust: "deterministic",
      inputs: () => Effect.succeed({ system: "Bring the counter to the target.", tools: [increment.spec] }),
      run: (ctx) => ToolLoop.runToolLoop(ctx, { firstMessage: `Target: ${targetOf(ctx.env)}`, tools: [increment], maxTurns: 5 })
    }),
    evaluator: Capabilities.makeEvaluator({
      name: "counter/final",
      version: VERSION,
      trust: "deterministic",
      evaluate: (ctx) => {
        const reached = World.get(ctx.final, "counter", "value") === targetOf(ctx.env)
        return Effect.succeed({ reward: reached ? 1 : 0, checks: { reached } })
      }
    })
  },
  roster: ["gold", "echo"],
  rosterDef: (name) => Agent.referenceDef(name),
  scripted: (name, env) =>
    Effect.succeed(
      name === "echo"
        ? Agent.echo
        : Agent.scripted("gold", [{ text: null, toolCalls: [{ id: "c1", name: "increment", arguments: { by: targetOf(env) } as { [k: string]: Canonical.Json } }] }], "Done.")
    )
}

describe("the library's public surface", () => {
  it.effect("is enough to write a provider, evaluate it and run it as an experiment with scorecards", () =>
    Effect.gen(function*() {
      const environments = yield* counter.environments
      const gold = yield* evaluate(environments[1]!, {
        capabilities: counter.capabilities,
        agentDef: counter.rosterDef("gold"),
        agent: yield* counter.scripted("gold", environments[1]!),
        repetition: 0
      })
      expect(gold.verdict).toMatchObject({ reward: 1, checks: { reached: true } })

      const home = tempDir("assay-library-")
      const candidates = ["gold", "echo"].map((name): Runner.Candidate => ({
        def: counter.rosterDef(name),
        registryEntry: null,
        agentFor: (env) => counter.scripted(name, env)
      }))
      const plan = yield* Runner.makePlan([{ provider: counter, environments, candidates }], 2)
      const outcome = yield* Runner.run(plan, { parallel: 2, maxUsd: null, handlers: {}, progress: Runner.silent, settings: {} }).pipe(
        Effect.provide(Store.layer(home))
      )
      expect(outcome.report.cells).toMatchObject({ total: 12, ran: 12 })
      const whole = (name: string) => outcome.report.scorecards.find((c) => c.candidate === name && c.stratum === null)
      expect(whole("gold")).toMatchObject({ n: 6, meanReward: 1 })
      expect(whole("echo")).toMatchObject({ n: 6, meanReward: 0, failures: { reached: 6 } })
    }))
})
