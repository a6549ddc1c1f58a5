/**
 * `ledger`: a small benchmark of our own (accounts, balances, transfers, holds), the evaluation
 * path's test bed. One agent, a tool loop, graded on the final world against the gold world and,
 * for questions, on the answer. Declared with the benchmark kit.
 */
import { Benchmark, type Canonical, ContentId, ToolLoop, World } from "../../src/index.ts"
import { type LedgerTask, initialTables, tasks } from "./tasks.ts"
import { tools } from "./tools.ts"

const MAX_TURNS = 30

const system = [
  "You are a bank operations agent working on a ledger of accounts.",
  "Amounts are integer cents: 12.34 USD is 1234.",
  "Use the tools to do what the user asks, exactly as asked (same memos and reasons).",
  "When you are done, reply with a short final answer and no tool call."
].join("\n")

const initialWorld = World.make(initialTables)
const toolsByName = new Map(tools.map((t) => [t.spec.name, t]))

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

const specsDigest = ContentId.ofUnsafe(tools.map((t) => t.spec) as unknown as Canonical.Json)

export const provider = Benchmark.make({
  name: "ledger",
  version: "1",
  description: "accounts, balances, transfers and holds: 20 tasks written for assay",
  tasks: () => tasks,
  id: (task) => task.id,
  stratum: (task) => task.stratum,
  limits: () => ({ turns: MAX_TURNS }),
  setup: {
    run: () => ({ world: initialWorld, evidence: { world: World.digest(initialWorld), tools: specsDigest }, tools })
  },
  protocol: {
    name: "ledger/tool-loop",
    output: ToolLoop.Outcome,
    inputs: () => ({ system, tools: tools.map((t) => t.spec) }),
    run: (task, ctx) => ToolLoop.runToolLoop(ctx, { firstMessage: task.instruction, tools, maxTurns: ctx.env.limits.turns ?? MAX_TURNS })
  },
  grade: {
    name: "ledger/final-world",
    run: (task, ctx) => {
      const checks: Record<string, boolean> = { world: World.equals(ctx.final, goldWorld(task)) }
      if (task.answer !== undefined) {
        checks["answer"] = (ToolLoop.lastAnswer(ctx.transcript) ?? "").toLowerCase().includes(task.answer.toLowerCase())
      }
      return { reward: Object.values(checks).every(Boolean) ? 1 : 0, checks }
    }
  },
  gold: (task) =>
    Benchmark.plays(
      "gold",
      task.gold.map((action, i) => ({ text: null, toolCalls: [{ id: `call-${i + 1}`, name: action.name, arguments: action.arguments }] })),
      task.answer ?? "Done."
    )
})
