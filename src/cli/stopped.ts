/**
 * The line a run interrupted by Ctrl-C or SIGTERM prints: how many of its cells are kept, where,
 * and the command that resumes it (this process's own command line, quoted for a POSIX shell).
 */
import { Console, Effect } from "effect"
import { classify } from "../experiment/Runner.ts"
import type { Plan } from "../experiment/Runner.ts"
import type { Store } from "../experiment/Store.ts"

/** A word as a POSIX shell reads it back. */
const shellWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

/** The command line this process was started with, to type again. */
export const resumeCommand = (): string => ["assay", ...process.argv.slice(2)].map(shellWord).join(" ")

/** Said on stderr when the run is interrupted; `where` names the store as people read it. */
export const stoppedLine = (plan: Plan, where: string): Effect.Effect<void, never, Store> =>
  Effect.gen(function*() {
    const kept = (yield* classify(plan)).filter((s) => s.state === "kept").length
    yield* Console.error(`assay: stopped: ${kept} of ${plan.cells.length} cells are kept in ${where}; resume with: ${resumeCommand()}`)
  }).pipe(Effect.catchAll((e) => Console.error(`assay: stopped (the kept cells cannot be counted: ${e.message}); resume with: ${resumeCommand()}`)))
