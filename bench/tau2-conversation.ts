/**
 * tau2-retail through the evaluation path: per-Attempt cost of the gold candidate (fork, setup,
 * the whole conversation with a scripted user through WorldEffects, recording, grading) over the
 * 114 tasks, beside the pure fork + replay + DB check that bench/tau2.ts measures.
 */
import { provider } from "../providers/tau2/retail/index.ts"
import { goldLine, measureGold } from "./goldAttempts.ts"

export const run = async (): Promise<void> => {
  process.stdout.write(goldLine("conversation + grade", await measureGold(provider), false))
}
