/**
 * tau2-banking through the evaluation path: per-Attempt cost of the gold candidate (the task's
 * initial world forked, the whole conversation with a scripted user whose own tool calls run
 * through WorldEffects, recording, the DB / action grading) over the 97 tasks, beside upstream's
 * 0.234 s median for fork + gold replay + hashes alone (banking oracle README).
 */
import { provider } from "../providers/tau2/banking/index.ts"
import { goldLine, measureGold } from "./goldAttempts.ts"

const UPSTREAM_MEDIAN_MS = 234

export const run = async (): Promise<void> => {
  const g = await measureGold(provider)
  process.stdout.write(
    goldLine("conversation with user tools + grade", g, true) +
      `  upstream's fresh environment + gold replay + hashes alone (no conversation): median ${UPSTREAM_MEDIAN_MS} ms per task; ratio ${(UPSTREAM_MEDIAN_MS / g.msPerTask[1]!).toFixed(0)}x\n`
  )
}
