/**
 * `ledger`: a small benchmark of our own (accounts, balances, transfers, holds), the evaluation
 * path's test bed. One agent, a tool loop, graded on the final world against the gold world and,
 * for questions, on the answer.
 */
import { Effect } from "effect"
import { Agent, type AgentDef, Capabilities, type Canonical, ContentId, EnvironmentDef, type Provider, ToolLoop, World } from "../../src/index.ts"
import { type LedgerTask, initialTables, tasks } from "./tasks.ts"
import { tools } from "./tools.ts"

const VERSION = "1"
const MAX_TURNS = 30

const system = [
  "You are a bank operations agent working on a ledger of accounts.",
  "Amounts are integer cents: 12.34 USD is 1234.",
  "Use the tools to do what the user asks, exactly as asked (same memos and reasons).",
  "When you are done, reply with a short final answer and no tool call."
].join("\n")

const initialWorld = World.make(initialTables)
const byId = new Map(tasks.map((t) => [t.id, t]))
const toolsByName = new Map(tools.map((t) => [t.spec.name, t]))

const taskOf = (env: EnvironmentDef.EnvironmentDef): Effect.Effect<LedgerTask, Capabilities.CapabilityError> => {
  const task = byId.get(env.task)
  return task ? Effect.succeed(task) : Effect.fail(new Capabilities.CapabilityError({ capability: "ledger", reason: "data", detail: `no ledger task ${env.task}` }))
}

/** The gold world of a task: its gold actions replayed on a fresh fork, computed once. */
const goldWorlds = new Map<string, World.World>()
export const goldWorld = (task: LedgerTask): World.World => {
  const cacheKey = ContentId.ofUnsafe({ task: task.id, gold: task.gold as unknown as Canonical.Json, initial: World.digest(initialWorld) })
  const cached = goldWorlds.get(cacheKey)
  if (cached) return cached
  const world = World.replay(World.fork(initialWorld), task.gold, (w, action) => {
    const tool = toolsByName.get(action.name)
    return tool ? World.apply(w, tool.run(w, action.arguments).writes) : w
  })
  goldWorlds.set(cacheKey, world)
  return world
}

const environment = (task: LedgerTask): EnvironmentDef.EnvironmentDef => ({
  benchmark: "ledger",
  task: task.id,
  stratum: task.stratum,
  world: { isolation: "fork", settlement: "discard", effects: EnvironmentDef.defaultEffects },
  capabilities: {
    worldSetup: { name: "ledger/setup", version: VERSION },
    protocol: { name: "ledger/tool-loop", version: VERSION },
    evaluator: { name: "ledger/final-world", version: VERSION },
    upstream: null,
    models: {}
  },
  limits: { ...EnvironmentDef.noLimits, turns: MAX_TURNS }
})

const specsDigest = ContentId.ofUnsafe(tools.map((t) => t.spec) as unknown as Canonical.Json)

export const capabilities = {
  worldSetup: Capabilities.makeWorldSetup({
    name: "ledger/setup",
    version: VERSION,
    trust: "deterministic",
    setup: () => Effect.succeed({ world: initialWorld, evidence: { world: World.digest(initialWorld), tools: specsDigest }, tools })
  }),
  protocol: Capabilities.makeProtocol({
    name: "ledger/tool-loop",
    version: VERSION,
    trust: "deterministic",
    inputs: () => Effect.succeed({ system, tools: tools.map((t) => t.spec) }),
    run: (ctx) =>
      Effect.flatMap(taskOf(ctx.env), (task) =>
        ToolLoop.runToolLoop(ctx, { firstMessage: task.instruction, tools, maxTurns: ctx.env.limits.turns ?? MAX_TURNS }))
  }),
  evaluator: Capabilities.makeEvaluator({
    name: "ledger/final-world",
    version: VERSION,
    trust: "deterministic",
    evaluate: (ctx) =>
      Effect.map(taskOf(ctx.env), (task) => {
        const checks: Record<string, boolean> = { world: World.equals(ctx.final, goldWorld(task)) }
        if (task.answer !== undefined) {
          checks["answer"] = (ToolLoop.lastAnswer(ctx.transcript) ?? "").toLowerCase().includes(task.answer.toLowerCase())
        }
        return { reward: Object.values(checks).every(Boolean) ? 1 : 0, checks }
      })
  })
}

const rosterDef = (name: string): AgentDef.AgentDef => Agent.referenceDef(name)

export const provider: Provider.Provider = {
  name: "ledger",
  version: VERSION,
  description: "accounts, balances, transfers and holds: 20 tasks written for assay",
  environments: Effect.succeed(tasks.map(environment)),
  capabilities,
  roster: ["gold", "echo"],
  rosterDef,
  scripted: (name, env) =>
    name === "echo"
      ? Effect.succeed(Agent.echo)
      : Effect.map(taskOf(env), (task) =>
        Agent.scripted(
          "gold",
          task.gold.map((action, i) => ({ text: null, toolCalls: [{ id: `call-${i + 1}`, name: action.name, arguments: action.arguments }] })),
          task.answer ?? "Done."
        ))
}
