/**
 * The per-Attempt cost of a provider's gold candidate through the evaluation path: every task
 * evaluated once to warm the caches, then three timed rounds; the median and best per task, the
 * conversation length and how many passed.
 */
import { Effect } from "effect"
import { evaluate } from "../src/evaluation/evaluate.ts"
import type { Provider } from "../src/evaluation/Provider.ts"

export interface GoldAttempts {
  readonly tasks: number
  /** Milliseconds per task, sorted: [best, median, worst] of three rounds. */
  readonly msPerTask: ReadonlyArray<number>
  readonly messagesPerConversation: number
  readonly passed: number
}

export const measureGold = async (provider: Provider): Promise<GoldAttempts> => {
  const environments = await Effect.runPromise(provider.environments)
  const once = () =>
    Effect.runPromise(
      Effect.forEach(environments, (env) =>
        Effect.flatMap(provider.scripted("gold", env), (agent) =>
          evaluate(env, { capabilities: provider.capabilities, agentDef: provider.rosterDef("gold"), agent, repetition: 0 })))
    )
  await once() // warm: data load, initial worlds, indexes and gold digests cached per task
  const times: Array<number> = []
  let messages = 0
  let passed = 0
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now()
    const attempts = await once()
    times.push((performance.now() - t0) / attempts.length)
    messages = attempts.reduce((n, a) => n + (a.output as { result: { messages: ReadonlyArray<unknown> } }).result.messages.length, 0)
    passed = attempts.filter((a) => a.verdict.reward === 1).length
  }
  times.sort((a, b) => a - b)
  return { tasks: environments.length, msPerTask: times, messagesPerConversation: messages / environments.length, passed }
}

/** The figures as one line: "gold Attempt through evaluate (WHAT), N tasks: median ..." */
export const goldLine = (what: string, g: GoldAttempts, withPassed: boolean): string =>
  `gold Attempt through evaluate (${what}), ${g.tasks} tasks: median ${g.msPerTask[1]!.toFixed(2)} ms per task ` +
  `(${g.messagesPerConversation.toFixed(1)} messages per conversation; best ${g.msPerTask[0]!.toFixed(2)} ms` +
  `${withPassed ? `; reward 1 on ${g.passed}/${g.tasks}` : ""})\n`
