/**
 * The suite under Deno (`deno task test`): the same projects as vitest.config.ts, run by vitest in
 * Deno (its workers, and every `assay` a test spawns through process.execPath, are Deno too), less
 * the files that cannot run there, each named with why.
 */
import { defineConfig } from "vitest/config"
import base from "../../vitest.config.ts"

/** Files left out under Deno, and why. */
export const notUnderDeno: ReadonlyArray<readonly [string, string]> = [
  // These build their store client from @effect/sql-sqlite-node by name, i.e. better-sqlite3, a
  // native addon on the pre-Node-API interface that Deno cannot load. The store itself is covered
  // under Deno by the command tests (test/cli), which reach it through src/experiment/Sqlite.ts.
  ["test/experiment/Home.test.ts", "imports better-sqlite3 (and bundles the store for Node with it)"],
  ["test/experiment/Runner.test.ts", "imports better-sqlite3 through @effect/sql-sqlite-node"],
  ["test/experiment/NothingToRun.test.ts", "imports better-sqlite3 through @effect/sql-sqlite-node"],
  ["test/cli/replay.test.ts", "imports better-sqlite3 through @effect/sql-sqlite-node"],
  // The fake agent CLI is installed as `exec <process.execPath> fake-harness.mjs` (test/harness/
  // support.ts): under Deno that is `deno run` with no permissions, so the fake CLI cannot read its
  // script. A harness run under Deno is covered by test/deno/commands.test.ts (the fake run by node).
  ["test/cli/harness.test.ts", "starts the fake agent CLI with process.execPath (deno without permissions)"],
  ["test/cli/harnessPreflight.test.ts", "starts the fake agent CLI with process.execPath (deno without permissions)"],
  ["test/cli/harnessSpendCap.test.ts", "starts the fake agent CLI with process.execPath (deno without permissions)"],
  ["test/harness/Run.test.ts", "starts the fake agent CLI with process.execPath (deno without permissions)"],
  ["test/harness/Detect.test.ts", "starts the fake agent CLI with process.execPath (deno without permissions)"],
  ["test/harness/Plan.test.ts", "starts the fake agent CLI with process.execPath (deno without permissions)"],
  // bird grades with better-sqlite3 in a child process of the runtime, which under Deno cannot load it.
  ["test/providers/bird/grade.test.ts", "bird's SQL executor loads better-sqlite3 (not under Deno)"],
  ["test/providers/bird/sqlite340.test.ts", "bird's SQL executor loads better-sqlite3 (not under Deno)"],
  ["test/cli/bird.test.ts", "bird's SQL executor loads better-sqlite3 (not under Deno)"],
  // These make or read a store file with better-sqlite3 in a helper started as process.execPath -e (a Deno under Deno).
  ["test/cli/storeOwnership.test.ts", "makes foreign and older stores with better-sqlite3 through process.execPath"],
  ["test/cli/resultsFile.test.ts", "reads the store with better-sqlite3 through process.execPath"],
  // The real agent CLIs are node programs installed by tools/harnesses, tested under Node.
  ["test/harness/RealCli.test.ts", "the real agent CLIs (node programs), with a PATH that has no node"],
  ["test/cli/harnessClaude.test.ts", "the real Claude Code CLI"],
  ["test/cli/harnessCodex.test.ts", "the real codex CLI"],
  // The bridge's tests run the five real CLIs (minutes of CPU): once, under Node, is their budget in CI.
  ["test/harness/bridge.test.ts", "the five real agent CLIs through the bridge (run under Node)"],
  ["test/harness/bridgeGuarantees.test.ts", "the real Claude Code CLI through the bridge (run under Node)"],
  ["test/harness/bridgeCommand.test.ts", "the real agent CLIs through the bridge, from the command (run under Node)"],
  ["test/harness/bridgeUsage.test.ts", "the five real agent CLIs through the bridge, against the loopback server (run under Node)"],
  ["test/harness/bridgeFolder.test.ts", "the real Claude Code CLI through the bridge on a folder task (run under Node)"],
  ["test/harbor/harness.test.ts", "the real Claude Code CLI inside a task's container (run under Node)"],
  ["test/harness/bridgeSubscription.test.ts", "the real Claude Code CLI through the bridge on a subscription login (run under Node)"],
  // The npm package: packed, installed and type-checked with npm and tsc in a temp project; under
  // Deno its tsc (started through process.execPath) finds no DOM `Crypto` type in @effect/experimental's d.ts.
  ["test/library/package.test.ts", "the packed npm package, installed and type-checked as Node would"],
  // bin/assay.js's build (what `assay` is under npm) makes `import "assay"` in a provider resolve with
  // a module.register hook, which Deno does not apply; `deno task assay run --benchmark ./examples/
  // counter/index.ts` runs from the sources, where Deno resolves "assay" itself.
  ["test/library/byPath.test.ts", "bin/assay.js's loader hook for import \"assay\", which Deno does not apply"],
  ["test/kit/kit.test.ts", "runs providers by path that import \"assay\" (bin/assay.js's loader hook, as byPath.test.ts)"],
  // A child Deno starts for `spawn(process.execPath, [script])` (`deno run -A --unstable-bare-node-builtins
  // --unstable-detect-cjs script`) dies of a SIGINT or SIGTERM by the signal's default action
  // (cause not found); the same run started as `deno run -A bin/assay.js` exits 130 on both.
  ["test/cli/signal.test.ts", "signals to a child Deno starts through process.execPath take the default action"],
  // The same for a worker started that way: under Deno its SIGTERM did not reach the graceful stop within 5 s.
  ["test/cluster/workerOutage.test.ts", "signals to a worker Deno starts through process.execPath (see signal.test.ts)"],
  ["test/harbor/signals.test.ts", "SIGINT to a child Deno starts through process.execPath takes the default action (see signal.test.ts)"],
  ["test/view/signal.test.ts", "SIGINT to a child Deno starts through process.execPath takes the default action (see signal.test.ts)"]
]

const projects = (base.test?.projects ?? []).map((project) => {
  if (typeof project !== "object" || project === null || !("test" in project) || project.test === undefined) return project
  return { ...project, test: { ...project.test, exclude: [...(project.test.exclude ?? []), ...notUnderDeno.map(([file]) => file)] } }
})

export default defineConfig({ test: { ...base.test, projects } })
