import { describe, expect, it } from "@effect/vitest"
import { defaultAllowance, emptyMeter, observe, refusal } from "../../src/harness/Allowance.ts"

describe("subscription allowance", () => {
  it("admits until the experiment has used ten points of a window since its first reading", () => {
    const m1 = observe(emptyMeter, [{ window: "primary", usedPercent: 30 }, { window: "primary", usedPercent: 31 }])
    expect(refusal(m1, defaultAllowance)).toBeNull()
    const m2 = observe(m1, [{ window: "primary", usedPercent: 39 }])
    expect(refusal(m2, defaultAllowance)).toBeNull()
    const m3 = observe(m2, [{ window: "primary", usedPercent: 40 }])
    expect(refusal(m3, defaultAllowance)).toBe("quota: this experiment used 10 points of the primary window since it started (allowance 10)")
  })

  it("pauses once any window is 80% used, whoever used it", () => {
    const m = observe(emptyMeter, [{ window: "primary", usedPercent: 10 }, { window: "secondary", usedPercent: 80 }])
    expect(refusal(m, defaultAllowance)).toBe("quota: the secondary window is 80% used (pause at 80%)")
  })

  it("a larger share admits more; no reading admits everything", () => {
    const m = observe(emptyMeter, [{ window: "primary", usedPercent: 20 }, { window: "primary", usedPercent: 45 }])
    expect(refusal(m, { share: 0.5, pauseAt: 0.8 })).toBeNull()
    expect(refusal(m, defaultAllowance)).toMatch(/25 points/)
    expect(refusal(emptyMeter, defaultAllowance)).toBeNull()
  })
})
