/**
 * `npm run bench`: every benchmark script in this folder, in turn. Figures are ratios or
 * per-item costs, never pass/fail thresholds; `npm run bench -- NAME` runs one.
 */
const scripts: Record<string, () => Promise<{ readonly run: () => Promise<void> }>> = {
  world: () => import("./world.ts"),
  runner: () => import("./runner.ts"),
  bfcl: () => import("./bfcl.ts"),
  tau2: () => import("./tau2.ts"),
  "tau2-conversation": () => import("./tau2-conversation.ts"),
  "tau2-telecom": () => import("./tau2-telecom.ts"),
  "tau2-telecom-provider": () => import("./tau2-telecom-provider.ts"),
  "tau2-banking": () => import("./tau2-banking.ts"),
  "tau2-banking-provider": () => import("./tau2-banking-provider.ts"),
  "contract-review": () => import("./contract-review.ts"),
  "model-loopback": () => import("./model-loopback.ts"),
  harness: () => import("./harness.ts")
}

const wanted = process.argv.slice(2).filter((a) => !a.startsWith("-"))
const names = wanted.length > 0 ? wanted : Object.keys(scripts)
for (const name of names) {
  const load = scripts[name]
  if (!load) {
    process.stderr.write(`bench: no script "${name}" (have ${Object.keys(scripts).join(", ")})\n`)
    process.exitCode = 2
    continue
  }
  process.stdout.write(`\n== ${name}\n`)
  await (await load()).run()
}
