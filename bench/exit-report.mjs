// Preloaded into a command the bench times (NODE_OPTIONS=--import=<this file>): at exit, writes
// what the process itself used, which a parent cannot read of a child in Node (no rusage of
// children): CPU time of all its threads, peak resident set, and its own uptime.
import { writeFileSync } from "node:fs"

const file = process.env["ASSAY_BENCH_EXIT_REPORT"]
if (file) {
  process.on("exit", () => {
    const cpu = process.cpuUsage()
    const usage = process.resourceUsage()
    writeFileSync(file, JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, maxRssKiB: usage.maxRSS, uptimeMs: process.uptime() * 1000 }))
  })
}
