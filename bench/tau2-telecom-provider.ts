/**
 * tau2-telecom through the evaluation path: per-Attempt cost of the gold candidate (fork of the
 * task's initial state, the whole conversation with a scripted user whose phone tool calls run
 * through WorldEffects, recording, grading with env assertions) over the 114 tasks, beside the
 * pure fork + replay + check that bench/tau2-telecom.ts measures and upstream's 11.5 ms median.
 */
import { Effect } from "effect"
import { evaluate } from "../src/evaluation/evaluate.ts"
import { provider } from "../providers/tau2/telecom/index.ts"

const UPSTREAM_MEDIAN_MS = 11.5

export const run = async (): Promise<void> => {
  const environments = await Effect.runPromise(provider.environments)
  const once = () =>
    Effect.runPromise(
      Effect.forEach(environments, (env) =>
        Effect.flatMap(provider.scripted("gold", env), (agent) =>
          evaluate(env, { capabilities: provider.capabilities, agentDef: provider.rosterDef("gold"), agent, repetition: 0 })))
    )
  await once() // warm: data load, initial states and gold digests cached per task
  const rounds = 3
  const times: Array<number> = []
  let messages = 0
  let passed = 0
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now()
    const attempts = await once()
    times.push((performance.now() - t0) / attempts.length)
    messages = attempts.reduce((n, a) => n + (a.output as { result: { messages: ReadonlyArray<unknown> } }).result.messages.length, 0)
    passed = attempts.filter((a) => a.verdict.reward === 1).length
  }
  times.sort((a, b) => a - b)
  process.stdout.write(
    `gold Attempt through evaluate (conversation with user tools + grade), ${environments.length} tasks: median ${times[1]!.toFixed(2)} ms per task ` +
      `(${(messages / environments.length).toFixed(1)} messages per conversation; best ${times[0]!.toFixed(2)} ms; reward 1 on ${passed}/${environments.length})\n` +
      `  upstream's fork + gold replay + check alone (no conversation): median ${UPSTREAM_MEDIAN_MS} ms per task; ratio ${(UPSTREAM_MEDIAN_MS / times[1]!).toFixed(1)}x\n`
  )
}
