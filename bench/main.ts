/**
 * `npm run bench`: every section in this folder, in turn; `npm run bench -- NAME...` runs those;
 * `npm run bench -- NAME... --against REF` runs them at commit REF and here, side by side (against.ts).
 * Figures are costs measured end to end in this run (commands the user waits on are timed as
 * child processes); never a ratio to a figure from another machine (those are in docs/performance.md's
 * table of reference figures, with their sources). On a shared machine wall times include
 * waiting for a CPU: each section prints the load average beside its figures, and the machine's
 * speed that minute (support.ts, yardstick).
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { machine, root, yardstick } from "./support.ts"

const sections: Record<string, () => Promise<{ readonly run: () => Promise<void> }>> = {
  world: () => import("./world.ts"),
  runner: () => import("./runner.ts"),
  "nothing-to-run": () => import("./nothing-to-run.ts"),
  slots: () => import("./slots.ts"),
  bfcl: () => import("./bfcl.ts"),
  "bfcl-multi-turn": () => import("./bfcl-multi-turn.ts"),
  tau2: () => import("./tau2.ts"),
  "tau2-conversation": () => import("./tau2-conversation.ts"),
  "tau2-telecom": () => import("./tau2-telecom.ts"),
  "tau2-telecom-provider": () => import("./tau2-telecom-provider.ts"),
  "tau2-banking": () => import("./tau2-banking.ts"),
  "tau2-banking-provider": () => import("./tau2-banking-provider.ts"),
  "contract-review": () => import("./contract-review.ts"),
  "model-loopback": () => import("./model-loopback.ts"),
  harness: () => import("./harness.ts"),
  cluster: () => import("./cluster.ts")
}

// The pinned upstream data of this machine, as tests and .ci/run use it, unless told otherwise.
const shared = join(root, "..", "shared", "data")
if (process.env["ASSAY_DATA_DIR"] === undefined && existsSync(shared)) process.env["ASSAY_DATA_DIR"] = shared

const args = process.argv.slice(2)
const againstAt = args.indexOf("--against")
const against = againstAt >= 0 ? args[againstAt + 1] : undefined
if (againstAt >= 0 && (against === undefined || against.startsWith("-"))) {
  process.stderr.write("bench: --against takes a commit (e.g. --against HEAD~5)\n")
  process.exit(2)
}
const wanted = args.filter((a, i) => !a.startsWith("-") && !(againstAt >= 0 && i === againstAt + 1))
const unknown = wanted.filter((name) => !(name in sections))
if (unknown.length > 0) {
  process.stderr.write(`bench: no section ${unknown.map((n) => `"${n}"`).join(", ")} (have ${Object.keys(sections).join(", ")})\n`)
  process.exit(2)
}
if (globalThis.gc === undefined) process.stderr.write("bench: run with node --expose-gc (npm run bench does) for memory figures\n")
if (against !== undefined) {
  if (wanted.length === 0) {
    process.stderr.write("bench: --against runs the sections named (e.g. npm run bench -- slots nothing-to-run model-loopback --against HEAD~5)\n")
    process.exit(2)
  }
  await (await import("./against.ts")).runAgainst(against, wanted)
  process.exit(0)
}
for (const name of wanted.length > 0 ? wanted : Object.keys(sections)) {
  process.stdout.write(`\n== ${name} (${machine()}; yardstick ${yardstick().toFixed(0)} ms)\n`)
  await (await sections[name]!()).run()
}
