/**
 * tau2-retail through the evaluation path: per-Attempt cost of the gold candidate (fork, setup,
 * the whole conversation with a scripted user through WorldEffects, recording, grading) over the
 * 114 tasks, beside the pure fork + replay + DB check that bench/tau2.ts measures.
 */
import { Effect } from "effect"
import { evaluate } from "../src/evaluation/evaluate.ts"
import { provider } from "../providers/tau2/retail/index.ts"

export const run = async (): Promise<void> => {
  const environments = await Effect.runPromise(provider.environments)
  const once = () =>
    Effect.runPromise(
      Effect.forEach(environments, (env) =>
        Effect.flatMap(provider.scripted("gold", env), (agent) =>
          evaluate(env, { capabilities: provider.capabilities, agentDef: provider.rosterDef("gold"), agent, repetition: 0 })))
    )
  await once() // warm: data load, gold digests cached per task
  const rounds = 3
  const times: Array<number> = []
  let messages = 0
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now()
    const attempts = await once()
    times.push((performance.now() - t0) / attempts.length)
    messages = attempts.reduce((n, a) => n + ((a.output as { result: { messages: ReadonlyArray<unknown> } }).result.messages.length), 0)
  }
  times.sort((a, b) => a - b)
  process.stdout.write(
    `gold Attempt through evaluate (conversation + grade), ${environments.length} tasks: median ${times[1]!.toFixed(2)} ms per task ` +
      `(${(messages / environments.length).toFixed(1)} messages per conversation; best ${times[0]!.toFixed(2)} ms)\n`
  )
}
