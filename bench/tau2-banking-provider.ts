/**
 * tau2-banking through the evaluation path: per-Attempt cost of the gold candidate (the task's
 * initial world forked, the whole conversation with a scripted user whose own tool calls run
 * through WorldEffects, recording, the DB / action grading) over the 97 tasks.
 */
import { provider } from "../providers/tau2/banking/index.ts"
import { goldLine, measureGold } from "./goldAttempts.ts"

export const run = async (): Promise<void> => {
  const g = await measureGold(provider)
  process.stdout.write(goldLine("conversation with user tools + grade", g, true))
}
