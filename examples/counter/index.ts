/**
 * `counter`: a benchmark written outside assay, against its public surface alone (`import … from
 * "assay"`), with the benchmark kit. Each task asks to bring a counter from a start value to a
 * target with two tools; the grade is the final world. Run it without changing assay:
 *
 *   assay run --benchmark ./examples/counter/index.ts --candidate gold --candidate none --yes
 *   assay equivalence ./examples/counter/index.ts
 */
import { Benchmark, ToolLoop, World } from "assay"
import { equivalence } from "./equivalence.ts"
import { tools, valueOf } from "./tools.ts"

interface Task {
  readonly id: string
  readonly start: number
  readonly target: number
}

const tasks: ReadonlyArray<Task> = [
  { id: "up-3", start: 0, target: 3 },
  { id: "up-10", start: 4, target: 10 },
  { id: "down-2", start: 7, target: 5 },
  { id: "stay", start: 2, target: 2 }
]

export default Benchmark.make({
  name: "counter",
  version: "1",
  description: "bring a counter to a target with increment and decrement: 4 tasks, an example provider outside assay",
  tasks: () => tasks,
  id: (task) => task.id,
  stratum: (task) => (task.target >= task.start ? "up" : "down"),
  limits: () => ({ turns: 10 }),
  setup: {
    run: (task) => {
      const world = World.make({ counter: { value: task.start } })
      return { world, evidence: { world: World.digest(world) }, tools }
    }
  },
  protocol: {
    output: ToolLoop.Outcome,
    inputs: () => ({ system: "Bring the counter to the target with the tools, then say done.", tools: tools.map((t) => t.spec) }),
    run: (task, ctx) => ToolLoop.runToolLoop(ctx, { firstMessage: `Bring the counter to ${task.target}.`, tools, maxTurns: ctx.env.limits.turns ?? 10 })
  },
  grade: {
    run: (task, ctx) => {
      const reached = valueOf(ctx.final) === task.target
      return { reward: reached ? 1 : 0, checks: { reached }, details: { turns: ctx.output.turns } }
    }
  },
  gold: (task) => {
    const gap = task.target - task.start
    const call = { id: "call-1", name: gap > 0 ? "increment" : "decrement", arguments: { by: Math.abs(gap) } }
    return Benchmark.plays("gold", gap === 0 ? [] : [{ text: null, toolCalls: [call] }])
  },
  equivalence
})
