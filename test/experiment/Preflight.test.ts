import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { provider as ledger } from "../../providers/ledger/index.ts"
import { bound, estimate, pilotOf } from "../../src/experiment/Preflight.ts"
import { makePlan } from "../../src/experiment/Runner.ts"
import type { Attempt } from "../../src/schema/Attempt.ts"

describe("preflight", () => {
  it("the conservative bound is the one-sided 95% Student t upper bound on the mean, times the cells left", () => {
    // mean 0.025, s = sqrt(0.0005 / 3) = 0.0129099..., t(0.95, 3) = 2.3533634348 (t table):
    // (0.025 + 2.3533634348 * 0.0129099445 / 2) * 10 = 0.40190896 (computed by hand / python3 math)
    const b = bound([0.01, 0.02, 0.03, 0.04], 10)
    expect(b.expected).toBeCloseTo(0.25, 12)
    expect(b.conservative).toBeCloseTo(0.4019089565, 8)
    expect(b.worstSeen).toBeCloseTo(0.4, 12)
  })

  it("with one pilot cell the dearest cell stands in for the upper bound", () => {
    expect(bound([0.5], 4)).toEqual({ expected: 2, conservative: 2, worstSeen: 2 })
  })

  it.effect("the pilot is one cell per candidate and stratum, first repetition", () =>
    Effect.gen(function*() {
      const environments = yield* ledger.environments
      const candidates = ["gold", "echo"].map((n) => ({ def: ledger.rosterDef(n), registryEntry: null, agentFor: (env: (typeof environments)[number]) => ledger.scripted(n, env) }))
      const plan = yield* makePlan([{ provider: ledger, environments, candidates }], 3)
      const pilot = pilotOf(plan.cells)
      const strata = new Set(environments.map((e) => e.stratum))
      expect(pilot.size).toBe(2 * strata.size)
      expect([...pilot].every((c) => c.repetition === 0)).toBe(true)
    }))

  it.effect("a candidate whose every pilot cell faulted is unpiloted and the gate refuses", () =>
    Effect.gen(function*() {
      const environments = yield* ledger.environments
      const candidates = ["gold"].map((n) => ({ def: ledger.rosterDef(n), registryEntry: null, agentFor: (env: (typeof environments)[number]) => ledger.scripted(n, env) }))
      const plan = yield* makePlan([{ provider: ledger, environments, candidates }], 1)
      const faulted = {
        candidate: "gold",
        verdict: { reward: 0, checks: {}, notEvaluated: [], trust: "deterministic", ended: { reason: "fault", detail: "server-error" } },
        usage: { inputTokens: 10, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, calls: 1, retries: 3, costUsd: 0.001, wallSeconds: 1 }
      } as unknown as Attempt
      const e = estimate({ pilot: [faulted], left: plan.cells.slice(1), budgetUsd: 100, parallel: 1 })
      expect(e.unpiloted).toEqual(["gold"])
      expect(e.verdict).toBe("unpiloted")
      expect(e.candidates[0]!.faulted).toEqual({ cells: 1, usd: 0.001 })
    }))
})
