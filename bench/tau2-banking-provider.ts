/**
 * tau2-banking through the evaluation path: per-Attempt cost of the gold candidate (the task's
 * initial world forked, the whole conversation with a scripted user whose own tool calls run
 * through WorldEffects, recording, the DB / action grading) over the 97 tasks, beside upstream's
 * 0.234 s median for fork + gold replay + hashes alone (banking oracle README).
 */
import { Effect } from "effect"
import { evaluate } from "../src/evaluation/evaluate.ts"
import { provider } from "../providers/tau2/banking/index.ts"

const UPSTREAM_MEDIAN_MS = 234

export const run = async (): Promise<void> => {
  const environments = await Effect.runPromise(provider.environments)
  const once = () =>
    Effect.runPromise(
      Effect.forEach(environments, (env) =>
        Effect.flatMap(provider.scripted("gold", env), (agent) =>
          evaluate(env, { capabilities: provider.capabilities, agentDef: provider.rosterDef("gold"), agent, repetition: 0 })))
    )
  await once() // warm: data load, BM25 index, initial worlds and gold digests cached per task
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
      `  upstream's fresh environment + gold replay + hashes alone (no conversation): median ${UPSTREAM_MEDIAN_MS} ms per task; ratio ${(UPSTREAM_MEDIAN_MS / times[1]!).toFixed(0)}x\n`
  )
}
