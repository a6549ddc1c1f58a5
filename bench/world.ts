/**
 * Worlds: fork + one write must cost the same whatever the world's size, and 1,000 live forks
 * with one write each must cost a small fraction of 1,000 copies. Compared with copy-on-write
 * of a plain object (what immer/mutative do to the container a write touches), measured here too.
 */
import type { Json } from "../src/content/Canonical.ts"
import * as World from "../src/world/World.ts"
import { mib, retainedBytes } from "./support.ts"

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
  console.log("fork + one write (µs per operation, both measured here):")
  console.log("  records   assay world   copy-on-write object   build per record")
  for (const c of costs) {
    console.log(`  ${String(c.size).padStart(7)}   ${c.world.toFixed(2).padStart(11)}   ${c.cow.toFixed(1).padStart(20)}   ${c.make.toFixed(2).padStart(16)}`)
  }
  const first = costs[0]!
  const last = costs[costs.length - 1]!
  console.log(`  growth from ${first.size} to ${last.size} records: world x${(last.world / first.world).toFixed(2)}, copy-on-write x${(last.cow / first.cow).toFixed(0)}`)

  if (globalThis.gc === undefined) {
    console.log("memory: not measured (run node with --expose-gc, as npm run bench does)")
    return
  }
  // Retained sizes: the heap with the value held less the heap once it is dropped, after full GCs.
  const oneBytes = retainedBytes(() => World.make({ accounts: records(100_000) }))
  const world = World.make({ accounts: records(100_000) })
  const forksBytes = retainedBytes(() => {
    const forks: Array<World.World> = []
    for (let i = 0; i < 1000; i++) forks.push(World.set(World.fork(world), "accounts", `acc-${i}`, { id: `acc-${i}`, owner: "fork", balance: i, frozen: false }))
    return forks
  }, (forks) => {
    if (forks.length !== 1000) throw new Error("unreachable")
  })
  console.log(`memory retained after GC: one world of 100,000 records ${mib(oneBytes)}; 1,000 live forks of it with one write each ${mib(forksBytes)} beyond it`)
  console.log(`  = ${(forksBytes / 1000 / 1024).toFixed(1)} KiB per fork; all 1,000 are ${((forksBytes / oneBytes) * 100).toFixed(1)}% of one world (1,000 copies: 100,000%)`)
  if (World.size(world, "accounts") !== 100_000) throw new Error("unreachable")
}
