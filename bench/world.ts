/**
 * Worlds: fork + one write must cost the same whatever the world's size, and 1,000 live forks
 * with one write each must cost a small fraction of 1,000 copies. Compared with copy-on-write
 * of a plain object (what immer/mutative do to the container a write touches).
 */
import type { Json } from "../src/content/Canonical.ts"
import * as World from "../src/world/World.ts"

const records = (n: number): Record<string, Json> => {
  const out: Record<string, Json> = {}
  for (let i = 0; i < n; i++) out[`acc-${i}`] = { id: `acc-${i}`, owner: `owner ${i % 997}`, balance: i * 100, frozen: false }
  return out
}

const perOp = (n: number, f: (i: number) => unknown): number => {
  for (let i = 0; i < Math.min(n, 1000); i++) f(i)
  const t = process.hrtime.bigint()
  for (let i = 0; i < n; i++) f(i)
  return Number(process.hrtime.bigint() - t) / n / 1000
}

const heap = (): number => {
  // Twice: the first pass may leave finalized objects for the second.
  globalThis.gc?.()
  globalThis.gc?.()
  return process.memoryUsage().heapUsed
}

export const run = async (): Promise<void> => {
  const sizes = [1_000, 10_000, 100_000]
  const costs: Array<{ size: number; world: number; cow: number; make: number }> = []
  for (const size of sizes) {
    const plain = records(size)
    const t = process.hrtime.bigint()
    const world = World.make({ accounts: plain })
    const make = Number(process.hrtime.bigint() - t) / size / 1000
    const value = { id: "x", owner: "x", balance: 1, frozen: true }
    const w = perOp(20_000, (i) => World.set(World.fork(world), "accounts", `acc-${i % size}`, value))
    const cow = perOp(size >= 100_000 ? 50 : 500, (i) => ({ ...plain, [`acc-${i % size}`]: value }))
    costs.push({ size, world: w, cow, make })
  }
  console.log("fork + one write (µs per operation):")
  console.log("  records   assay world   copy-on-write object   build per record")
  for (const c of costs) {
    console.log(`  ${String(c.size).padStart(7)}   ${c.world.toFixed(2).padStart(11)}   ${c.cow.toFixed(1).padStart(20)}   ${c.make.toFixed(2).padStart(16)}`)
  }
  const first = costs[0]!
  const last = costs[costs.length - 1]!
  console.log(`  growth from ${first.size} to ${last.size} records: world x${(last.world / first.world).toFixed(2)}, copy-on-write x${(last.cow / first.cow).toFixed(0)}`)

  const base0 = heap()
  const world = World.make({ accounts: records(100_000) })
  const one = heap() - base0
  const forks: Array<World.World> = []
  const base1 = heap()
  for (let i = 0; i < 1000; i++) forks.push(World.set(World.fork(world), "accounts", `acc-${i}`, { id: `acc-${i}`, owner: "fork", balance: i, frozen: false }))
  const thousand = heap() - base1
  console.log(`memory: one world of 100,000 records ${(one / 2 ** 20).toFixed(1)} MiB; 1,000 live forks with one write each ${(thousand / 2 ** 20).toFixed(2)} MiB in all`)
  console.log(`  = ${((thousand / 1000) / 1024).toFixed(1)} KiB per fork, ${(thousand / one).toFixed(3)} of one world for all 1,000 (copies would be 1000)${globalThis.gc ? "" : " (run node with --expose-gc for exact figures)"}`)
  if (forks.length !== 1000) throw new Error("unreachable")
}
