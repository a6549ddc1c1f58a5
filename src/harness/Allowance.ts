/**
 * A subscription allowance: an experiment on a user's subscription must leave their quota alone.
 * Quota windows (codex's primary and secondary, in whole percent used by anyone on the account)
 * are metered from each harness run's readings; no new cell starts once the experiment has used
 * `share` of any window since it started, or once any window is `pauseAt` used.
 * Pure: the command keeps a Meter and asks `refusal` before each cell.
 */
import type { AllowanceState, Reading } from "../experiment/Preflight.ts"

export interface Allowance {
  /** Fraction of a window the experiment may use, e.g. 0.10 = ten points. */
  readonly share: number
  /** Fraction used (by anyone) at which no new cell starts, e.g. 0.80. */
  readonly pauseAt: number
}

export const defaultAllowance: Allowance = { share: 0.1, pauseAt: 0.8 }

export type { Reading } from "../experiment/Preflight.ts"

export interface Meter {
  /** Each window's first reading since the experiment started: "before". */
  readonly baseline: ReadonlyMap<string, number>
  /** Each window's newest reading: "after". */
  readonly latest: ReadonlyMap<string, number>
}

export const emptyMeter: Meter = { baseline: new Map(), latest: new Map() }

/** The meter after a cell's readings, in the order the CLI reported them. */
export const observe = (meter: Meter, readings: ReadonlyArray<Reading>): Meter => {
  const baseline = new Map(meter.baseline)
  const latest = new Map(meter.latest)
  for (const r of readings) {
    if (!baseline.has(r.window)) baseline.set(r.window, r.usedPercent)
    latest.set(r.window, r.usedPercent)
  }
  return { baseline, latest }
}

/** Why no new cell may start, or null. Checked per window, in window-name order. */
export const refusal = (meter: Meter, allowance: Allowance): string | null => {
  const share = allowance.share * 100
  const pause = allowance.pauseAt * 100
  for (const window of [...meter.latest.keys()].sort()) {
    const now = meter.latest.get(window) ?? 0
    if (now >= pause) return `quota: the ${window} window is ${now}% used (pause at ${pause}%)`
    const used = now - (meter.baseline.get(window) ?? now)
    if (used >= share) {
      return `quota: this experiment used ${used} points of the ${window} window since it started (allowance ${share})`
    }
  }
  return null
}

/** Where the experiment stands: each window's points used since its first reading, and its newest reading. */
export const standing = (meter: Meter, allowance: Allowance): AllowanceState => {
  const used: Record<string, number> = {}
  const latest: Record<string, number> = {}
  for (const [window, now] of meter.latest) {
    latest[window] = now
    used[window] = Math.max(0, now - (meter.baseline.get(window) ?? now))
  }
  return { share: allowance.share, pauseAt: allowance.pauseAt, used, latest }
}
