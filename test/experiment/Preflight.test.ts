import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { provider as ledger } from "../../providers/ledger/index.ts"
import { bound, estimate, pilotOf, renderEstimate, windowPoints } from "../../src/experiment/Preflight.ts"
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

  // A harness cell as the store keeps it: when it started, its bill, and the quota readings it saw.
  const cell = (candidate: string, startedAt: string, costUsd: number | null, readings: ReadonlyArray<readonly [string, number]>) =>
    ({
      candidate,
      startedAt,
      verdict: { reward: 1, checks: {}, notEvaluated: [], trust: "deterministic" },
      usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, calls: 1, retries: 0, costUsd, wallSeconds: 2 },
      readings: readings.map(([window, usedPercent]) => ({ window, usedPercent }))
    }) as unknown as Attempt & { readonly readings: ReadonlyArray<{ window: string; usedPercent: number }> }
  const readingsOf = (a: Attempt) => (a as ReturnType<typeof cell>).readings

  it("a cell's window points are its last reading minus the window's last reading before it, in the order cells started", () => {
    const a = cell("c", "2026-11-30T10:00:02.000Z", null, [["primary", 40], ["primary", 41], ["secondary", 7]])
    const b = cell("c", "2026-11-30T10:00:01.000Z", null, [["primary", 30], ["primary", 33]])
    const c = cell("c", "2026-11-30T10:00:03.000Z", null, [["primary", 2], ["primary", 5]])
    const d = cell("c", "2026-11-30T10:00:04.000Z", null, [])
    const points = windowPoints([a, b, c, d], readingsOf)
    // b ran first: counted from its own first reading (30 -> 33).
    expect(points.get(b)).toEqual({ primary: 3 })
    // a: 41 - 33 (b's last); secondary first read here, from its own first reading.
    expect(points.get(a)).toEqual({ primary: 8, secondary: 0 })
    // c: the window reset (5 < 41), so c counts from its own first reading.
    expect(points.get(c)).toEqual({ primary: 3 })
    expect(points.get(d)).toEqual({})
  })

  it.effect("window points are extrapolated like dollars, and the gate stops a run the allowance cannot cover", () =>
    Effect.gen(function*() {
      const environments = yield* ledger.environments
      const candidates = ["gold"].map((n) => ({ def: ledger.rosterDef(n), registryEntry: null, agentFor: (env: (typeof environments)[number]) => ledger.scripted(n, env) }))
      const plan = yield* makePlan([{ provider: ledger, environments, candidates }], 1)
      const pilot = [
        cell("gold", "2026-11-30T10:00:01.000Z", null, [["primary", 20], ["primary", 22]]),
        cell("gold", "2026-11-30T10:00:02.000Z", null, [["primary", 26]]),
        cell("gold", "2026-11-30T10:00:03.000Z", null, [["primary", 27]])
      ]
      const left = plan.cells.slice(0, 10)
      const points = windowPoints(pilot, readingsOf)
      // Per-cell points 2, 4, 1: mean 7/3, sd sqrt(7/3), t(0.95, 2) = 2.9199855804 (t table):
      // (7/3 + 2.9199855804 * sqrt(7/3) / sqrt(3)) * 10 = 49.0851856 (python3)
      const within = estimate({ pilot, left, budgetUsd: null, parallel: 1, points, allowance: { share: 0.6, pauseAt: 0.8, used: { primary: 7 }, latest: { primary: 27 } } })
      expect(within.total.windows["primary"]!.expected).toBeCloseTo(70 / 3, 10)
      expect(within.total.windows["primary"]!.conservative).toBeCloseTo(49.0851856, 6)
      expect(within.total.windows["primary"]!.worstSeen).toBeCloseTo(40, 10)
      // Cost unknown is no reason to stop when no dollar budget was given.
      expect(within.verdict).toBe("within-budget")
      const over = estimate({ pilot, left, budgetUsd: null, parallel: 1, points, allowance: { share: 0.1, pauseAt: 0.8, used: { primary: 7 }, latest: { primary: 27 } } })
      expect(over.verdict).toBe("over-allowance")
      expect(over.reasons).toEqual([
        "the primary window: 7 points used and 49.1 more needed (conservative), over the allowance of 10"
      ])
      const paused = estimate({ pilot, left, budgetUsd: null, parallel: 1, points, allowance: { share: 0.6, pauseAt: 0.8, used: { primary: 7 }, latest: { primary: 35 } } })
      expect(paused.reasons).toEqual(["the primary window: 35% used and 49.1 more points needed (conservative) would reach the pause at 80%"])
      expect(renderEstimate(over)).toContain("primary window: 23.3 points expected, 49.1 points conservative, 40 points worst seen")
      // A dollar budget with an unknown price is refused before the allowance is looked at.
      expect(estimate({ pilot, left, budgetUsd: 5, parallel: 1, points }).verdict).toBe("cost-unknown")
    }))

  it.effect("a cell's bill includes its judging: the judge is paid too, and an unknown judge price makes the cost unknown", () =>
    Effect.gen(function*() {
      const environments = yield* ledger.environments
      const candidates = ["gold"].map((n) => ({ def: ledger.rosterDef(n), registryEntry: null, agentFor: (env: (typeof environments)[number]) => ledger.scripted(n, env) }))
      const plan = yield* makePlan([{ provider: ledger, environments, candidates }], 1)
      const judged = (costUsd: number | null) =>
        ({ ...cell("gold", "2026-11-30T10:00:01.000Z", 0.01, []), judging: { calls: 1, inputTokens: 50, outputTokens: 5, costUsd } }) as unknown as Attempt
      const known = estimate({ pilot: [judged(0.002)], left: plan.cells.slice(0, 10), budgetUsd: 1, parallel: 1 })
      expect(known.total.usd!.expected).toBeCloseTo(10 * 0.012, 12)
      expect(estimate({ pilot: [judged(null)], left: plan.cells.slice(0, 10), budgetUsd: 1, parallel: 1 }).verdict).toBe("cost-unknown")
    }))
})
