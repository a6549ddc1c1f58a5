import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, FastCheck as fc } from "effect"
import * as AgentDefs from "../../src/schema/AgentDef.ts"
import { decode, InvalidDefinition } from "../../src/schema/Decode.ts"
import * as EnvironmentDefs from "../../src/schema/EnvironmentDef.ts"
import * as ExperimentDefs from "../../src/schema/ExperimentDef.ts"

const env: EnvironmentDefs.EnvironmentDef = {
  benchmark: "ledger",
  task: "ledger-01",
  stratum: "payments",
  world: { isolation: "fork", settlement: "discard", effects: EnvironmentDefs.defaultEffects },
  capabilities: {
    worldSetup: { name: "ledger/setup", version: "1" },
    protocol: { name: "ledger/tool-loop", version: "1" },
    evaluator: { name: "ledger/final-world", version: "1" },
    upstream: null,
    models: { user: "openai:gpt-4o-mini" }
  },
  limits: { ...EnvironmentDefs.noLimits, turns: 30 }
}

const agent: AgentDefs.AgentDef = {
  name: "openai:gpt-4o-mini",
  kind: "llm",
  model: "openai:gpt-4o-mini-2024-07-18",
  actionSpace: "tools",
  prompt: "Be careful.",
  limits: { ...EnvironmentDefs.noLimits, calls: 20 }
}

/** A deep copy with one field replaced, as a malformed file would hold it. */
const withField = (value: unknown, path: ReadonlyArray<string>, replacement: unknown): unknown => {
  const copy = structuredClone(value) as Record<string, unknown>
  let node = copy
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>
  node[path[path.length - 1]!] = replacement
  return copy
}

const decodeEnv = decode(EnvironmentDefs.EnvironmentDef, "EnvironmentDef")
const decodeAgent = decode(AgentDefs.AgentDef, "AgentDef")

const issuesAt = (error: InvalidDefinition, path: string) => error.issues.filter((i) => i.path === path).map((i) => i.message)

describe("decoding a malformed definition", () => {
  it.effect("a well-formed EnvironmentDef and AgentDef decode to themselves", () =>
    Effect.gen(function*() {
      expect(yield* decodeEnv(structuredClone(env))).toEqual(env)
      expect(yield* decodeAgent(structuredClone(agent))).toEqual(agent)
    }))

  it.effect("a fault rate above 1 is named by its path, with the range expected", () =>
    Effect.gen(function*() {
      const bad = withField(env, ["world", "effects", "faults"], { seed: 7, rate: 1.5, only: null, kinds: ["timeout"] })
      const error = yield* Effect.flip(decodeEnv(bad))
      expect(error).toBeInstanceOf(InvalidDefinition)
      expect(error.definition).toBe("EnvironmentDef")
      expect(issuesAt(error, "$.world.effects.faults.rate").join("\n")).toMatch(/between 0 and 1.*1\.5/)
      expect(error.message).toContain("$.world.effects.faults.rate")
    }))

  it.effect("an unknown fault kind is named by its index, with the kinds expected", () =>
    Effect.gen(function*() {
      const bad = withField(env, ["world", "effects", "faults"], { seed: 7, rate: 0.1, only: null, kinds: ["timeout", "meteor"] })
      const error = yield* Effect.flip(decodeEnv(bad))
      const messages = issuesAt(error, "$.world.effects.faults.kinds[1]").join("\n")
      for (const kind of ["rate-limit", "server-error", "timeout"]) expect(messages).toContain(kind)
      expect(messages).toContain("meteor")
    }))

  it.effect("a negative turn limit and a missing task are both reported, each at its path", () =>
    Effect.gen(function*() {
      const bad = withField(withField(env, ["limits", "turns"], -1), ["task"], undefined) as Record<string, unknown>
      delete bad["task"]
      const error = yield* Effect.flip(decodeEnv(bad))
      expect(issuesAt(error, "$.limits.turns").join("\n")).toMatch(/positive/)
      expect(issuesAt(error, "$.task").join("\n")).toMatch(/missing/)
    }))

  it.effect("an unexpected field is refused rather than silently dropped", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(decodeEnv({ ...env, gold: ["transfer"] }))
      expect(issuesAt(error, "$.gold").join("\n")).toMatch(/unexpected/)
    }))

  it.effect("an AgentDef with an unknown kind names the field and the kinds it may be", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(decodeAgent({ ...agent, kind: "robot" }))
      expect(error.definition).toBe("AgentDef")
      const messages = issuesAt(error, "$.kind").join("\n")
      for (const kind of ["llm", "scripted", "echo", "harness"]) expect(messages).toContain(`"${kind}"`)
      expect(messages).toContain("robot")
    }))

  it.effect("an AgentDef whose model is a number and whose call limit is fractional names both paths", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(decodeAgent(withField({ ...agent, model: 3 }, ["limits", "calls"], 2.5)))
      expect(issuesAt(error, "$.model").join("\n")).toMatch(/string/)
      expect(issuesAt(error, "$.limits.calls").join("\n")).toMatch(/integer/)
    }))
})

describe("content ids of definitions", () => {
  it("an EnvironmentDef's id is the same for an equal definition built apart, and after a JSON round trip", () => {
    const rebuilt = JSON.parse(JSON.stringify({ limits: env.limits, capabilities: env.capabilities, world: env.world, stratum: env.stratum, task: env.task, benchmark: env.benchmark })) as EnvironmentDefs.EnvironmentDef
    expect(EnvironmentDefs.idOf(rebuilt)).toBe(EnvironmentDefs.idOf(env))
    expect(EnvironmentDefs.idOf(env)).toMatch(/^sha256:[0-9a-f]{64}$/)
  })

  // idOf writes the canonical text field by field; the schema's encode + Canonical is the reference.
  it("an EnvironmentDef's id is the schema's, pinned, and stays so with faults, admission and models", () => {
    expect(EnvironmentDefs.idOf({ ...env })).toBe(PINNED_LEDGER_ENV_ID)
    expect(EnvironmentDefs.schemaIdOf(env)).toBe(PINNED_LEDGER_ENV_ID)
    for (const [, changed] of envChanges) expect(EnvironmentDefs.idOf({ ...changed })).toBe(EnvironmentDefs.schemaIdOf(changed))
  })
  it.prop(
    "for any EnvironmentDef the schema admits, idOf is the id of its encoded canonical JSON",
    [Arbitrary.make(EnvironmentDefs.EnvironmentDef)],
    ([any]) => {
      // A value JSON cannot hold (an infinite limit) is a defect on both paths.
      const outcome = (f: () => string) => {
        try {
          return f()
        } catch (e) {
          return `defect: ${String(e)}`
        }
      }
      expect(outcome(() => EnvironmentDefs.idOf(any))).toBe(outcome(() => EnvironmentDefs.schemaIdOf(any)))
    },
    { fastCheck: { numRuns: 500 } }
  )

  it("an AgentDef's id is the same for an equal definition built apart", () => {
    expect(AgentDefs.idOf(structuredClone(agent))).toBe(AgentDefs.idOf(agent))
  })

  // Pinned (and checked with Python's sorted-key JSON + sha256): stores find experiments by these ids.
  it("ids do not drift between library versions", () => {
    expect(AgentDefs.idOf({ name: "gold", kind: "scripted", model: null, actionSpace: "tools", prompt: "", limits: EnvironmentDefs.noLimits }))
      .toBe(PINNED_GOLD_AGENT_ID)
  })

  const envChanges: ReadonlyArray<readonly [string, EnvironmentDefs.EnvironmentDef]> = [
    ["the task", { ...env, task: "ledger-02" }],
    ["the stratum", { ...env, stratum: null }],
    ["the faults", EnvironmentDefs.withEffects(env, { admission: "all", faults: { seed: 7, rate: 0.3, only: null, kinds: ["rate-limit"] } })],
    ["the admission", EnvironmentDefs.withEffects(env, { admission: "read-only", faults: null })],
    ["a capability version", { ...env, capabilities: { ...env.capabilities, evaluator: { name: "ledger/final-world", version: "2" } } }],
    ["a model that takes part", { ...env, capabilities: { ...env.capabilities, models: { user: "openai:gpt-4o" } } }],
    ["a limit", { ...env, limits: { ...env.limits, turns: 31 } }]
  ]
  it.each(envChanges)("an EnvironmentDef's id changes with %s", (_, changed) => {
    expect(EnvironmentDefs.idOf(changed)).not.toBe(EnvironmentDefs.idOf(env))
  })

  it.prop(
    "two fault seeds give two environments",
    [fc.integer(), fc.integer()],
    ([a, b]) => {
      fc.pre(a !== b)
      const faulty = (seed: number) => EnvironmentDefs.withEffects(env, { admission: "all", faults: { seed, rate: 0.1, only: null, kinds: ["timeout"] } })
      expect(EnvironmentDefs.idOf(faulty(a))).not.toBe(EnvironmentDefs.idOf(faulty(b)))
    }
  )

  it("faults injected by --faults keep the environment's admission: a read-only world stays read-only", () => {
    const readOnly = EnvironmentDefs.withEffects(env, { admission: "read-only", faults: null })
    const faults: EnvironmentDefs.FaultSpec = { seed: 7, rate: 0.3, only: null, kinds: ["rate-limit"] }
    expect(EnvironmentDefs.withFaults(readOnly, faults).world.effects).toEqual({ admission: "read-only", faults })
    expect(EnvironmentDefs.withFaults(EnvironmentDefs.withFaults(readOnly, faults), null).world.effects).toEqual(readOnly.world.effects)
  })

  const agentChanges: ReadonlyArray<readonly [string, AgentDefs.AgentDef]> = [
    ["its name", { ...agent, name: "openai:gpt-4o" }],
    ["its model", { ...agent, model: "openai:gpt-4o-2024-08-06" }],
    ["its prompt", { ...agent, prompt: "Be careful!" }],
    ["its action space", { ...agent, actionSpace: "text" }],
    ["its limits", { ...agent, limits: { ...agent.limits, calls: 21 } }]
  ]
  it.each(agentChanges)("an AgentDef's id changes with %s", (_, changed) => {
    expect(AgentDefs.idOf(changed)).not.toBe(AgentDefs.idOf(agent))
  })

  it("an ExperimentDef's id changes with its candidates and repetitions", () => {
    const def: ExperimentDefs.ExperimentDef = {
      dataset: [EnvironmentDefs.idOf(env)],
      candidates: [agent],
      repetitions: 1,
      metadata: { benchmarks: { ledger: "1" }, library: "assay/0.1.0" }
    }
    const id = ExperimentDefs.idOf(def)
    expect(ExperimentDefs.idOf(structuredClone(def))).toBe(id)
    expect(ExperimentDefs.idOf({ ...def, repetitions: 2 })).not.toBe(id)
    expect(ExperimentDefs.idOf({ ...def, candidates: [{ ...agent, prompt: "" }] })).not.toBe(id)
  })
})

const PINNED_LEDGER_ENV_ID = "sha256:40d963fbee74840496d6512d774311edbab3f5b75bf4e03b34b7882e3e81fb8e"
const PINNED_GOLD_AGENT_ID = "sha256:c1b1f90bd629081c7f484b1199a06ea7a18f15e19fe86f3bb2542a29ae15ccc4"
