/**
 * tau2-telecom through the evaluation path: per-Attempt cost of the gold candidate (fork of the
 * task's initial state, the whole conversation with a scripted user whose phone tool calls run
 * through WorldEffects, recording, grading with env assertions) over the 114 tasks, beside the
 * pure fork + replay + check that bench/tau2-telecom.ts measures.
 */
import { provider } from "../providers/tau2/telecom/index.ts"
import { goldLine, measureGold } from "./goldAttempts.ts"

export const run = async (): Promise<void> => {
  const g = await measureGold(provider)
  process.stdout.write(goldLine("conversation with user tools + grade", g, true))
}
