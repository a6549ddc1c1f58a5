/**
 * `counter`: a benchmark provider written outside assay, against its public surface alone
 * (`import … from "assay"`). Each task asks to bring a counter from a start value to a target
 * with two tools; the grade is the final world. Run it without changing assay:
 *
 *   assay plan --benchmark ./examples/counter/index.ts
 *   assay run --benchmark ./examples/counter/index.ts --candidate gold --yes
 *   assay equivalence ./examples/counter/index.ts
 *
 * The module's default export is the Provider.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { Agent, Capabilities, type Canonical, type Conversation, EnvironmentDef, type Provider, Tool, ToolLoop, World } from "assay"

const VERSION = "1"

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
const byId = new Map(tasks.map((t) => [t.id, t]))

const valueOf = (world: World.World): number => (World.get(world, "counter", "value") as number | undefined) ?? 0

/** A tool is pure: it returns the writes, the effect service applies them. */
const step = (name: "increment" | "decrement", sign: 1 | -1): Tool.Tool => ({
  spec: {
    name,
    description: `${sign > 0 ? "Add" : "Subtract"} \`by\` (a positive integer) ${sign > 0 ? "to" : "from"} the counter; returns the new value.`,
    parameters: { type: "object", properties: { by: { type: "integer" } }, required: ["by"] }
  },
  access: "write",
  run: (world, args) => {
    const by = args["by"]
    if (typeof by !== "number" || !Number.isInteger(by) || by <= 0) return Tool.fail("Error: by must be a positive integer")
    const next = valueOf(world) + sign * by
    return Tool.ok(String(next), [{ table: "counter", key: "value", value: next }])
  }
})

const read: Tool.Tool = {
  spec: { name: "read", description: "The counter's current value.", parameters: { type: "object", properties: {}, required: [] } },
  access: "read",
  run: (world) => Tool.ok(String(valueOf(world)))
}

const tools = [read, step("increment", 1), step("decrement", -1)]
const toolsByName = new Map(tools.map((t) => [t.spec.name, t]))

const taskOf = (env: EnvironmentDef.EnvironmentDef): Effect.Effect<Task, Capabilities.CapabilityError> => {
  const task = byId.get(env.task)
  return task
    ? Effect.succeed(task)
    : Effect.fail(new Capabilities.CapabilityError({ capability: "counter", reason: "data", detail: `no counter task ${env.task}` }))
}

const environment = (task: Task): EnvironmentDef.EnvironmentDef => ({
  benchmark: "counter",
  task: task.id,
  stratum: task.target >= task.start ? "up" : "down",
  world: { isolation: "fork", settlement: "discard", effects: EnvironmentDef.defaultEffects },
  capabilities: {
    worldSetup: { name: "counter/setup", version: VERSION },
    protocol: { name: "counter/tool-loop", version: VERSION },
    evaluator: { name: "counter/final", version: VERSION },
    upstream: null,
    models: {}
  },
  limits: { ...EnvironmentDef.noLimits, turns: 10 }
})

/** The gold actions of a task: one call that closes the gap, none when there is none. */
const goldCalls = (task: Task): ReadonlyArray<Conversation.ToolCall> => {
  const gap = task.target - task.start
  if (gap === 0) return []
  return [{ id: "call-1", name: gap > 0 ? "increment" : "decrement", arguments: { by: Math.abs(gap) } }]
}

/**
 * Equivalence with an "upstream": each line of the oracle corpus is a start value, the calls
 * made and the final value upstream's own code computed. The tools must agree on every line.
 */
const ownCorpus = fileURLToPath(new URL("./oracle.jsonl", import.meta.url))

interface OracleLine {
  readonly start: number
  readonly calls: ReadonlyArray<{ readonly name: string; readonly by: number }>
  readonly final: number
}

const equivalence = (corpus: string | null): Effect.Effect<Provider.EquivalenceResult, Capabilities.CapabilityError> =>
  Effect.try({
    try: () => {
      const path = corpus ?? ownCorpus
      const lines = readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "")
      const disagree: Array<Canonical.Json> = []
      lines.forEach((text, i) => {
        const line = JSON.parse(text) as OracleLine
        const final = line.calls.reduce((w, call) => {
          const tool = toolsByName.get(call.name)
          return tool ? World.apply(w, tool.run(w, { by: call.by }).writes) : w
        }, World.make({ counter: { value: line.start } }))
        if (valueOf(final) !== line.final) disagree.push({ line: i + 1, upstream: line.final, ours: valueOf(final) })
      })
      return { benchmark: "counter", corpus: path, lines: lines.length, agree: lines.length - disagree.length, disagree }
    },
    catch: (e) => new Capabilities.CapabilityError({ capability: "counter", reason: "data", detail: `oracle corpus: ${e instanceof Error ? e.message : String(e)}` })
  })

const provider: Provider.Provider = {
  name: "counter",
  version: VERSION,
  description: "bring a counter to a target with increment and decrement: 4 tasks, an example provider outside assay",
  environments: Effect.succeed(tasks.map(environment)),
  capabilities: {
    worldSetup: Capabilities.makeWorldSetup({
      name: "counter/setup",
      version: VERSION,
      trust: "deterministic",
      setup: (env) =>
        Effect.map(taskOf(env), (task) => {
          const world = World.make({ counter: { value: task.start } })
          return { world, evidence: { world: World.digest(world) }, tools }
        })
    }),
    protocol: Capabilities.makeProtocol({
      name: "counter/tool-loop",
      version: VERSION,
      trust: "deterministic",
      inputs: () => Effect.succeed({ system: "Bring the counter to the target with the tools, then say done.", tools: tools.map((t) => t.spec) }),
      run: (ctx) =>
        Effect.flatMap(taskOf(ctx.env), (task) =>
          ToolLoop.runToolLoop(ctx, { firstMessage: `Bring the counter to ${task.target}.`, tools, maxTurns: ctx.env.limits.turns ?? 10 }))
    }),
    evaluator: Capabilities.makeEvaluator({
      name: "counter/final",
      version: VERSION,
      trust: "deterministic",
      evaluate: (ctx) =>
        Effect.map(taskOf(ctx.env), (task) => {
          const reached = valueOf(ctx.final) === task.target
          return { reward: reached ? 1 : 0, checks: { reached } }
        })
    })
  },
  roster: ["gold", "echo"],
  rosterDef: (name) => Agent.referenceDef(name),
  scripted: (name, env) =>
    name === "echo"
      ? Effect.succeed(Agent.echo)
      : Effect.map(taskOf(env), (task) => {
        const calls = goldCalls(task)
        return Agent.scripted("gold", calls.length === 0 ? [] : [{ text: null, toolCalls: calls }], "Done.")
      }),
  equivalence
}

export default provider
