/**
 * The line a run interrupted by Ctrl-C or SIGTERM prints: how many of its cells are kept, where,
 * and the command that resumes it (this process's own command line, quoted for a POSIX shell).
 */
import { Console, Effect } from "effect"
import { classify } from "../experiment/Runner.ts"
import type { Plan } from "../experiment/Runner.ts"
import { rebuildUnfinished } from "../experiment/Results.ts"
import { redactUrl, type Store } from "../experiment/Store.ts"

/** A word as a POSIX shell reads it back. */
const shellWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

/**
 * The command line this process was started with, to type again: said on stderr and kept in the
 * run's settings (`report` of a stopped run prints it), so a password in a store URL is hidden.
 */
export const resumeCommand = (): string => ["assay", ...process.argv.slice(2)].map((w) => shellWord(withoutPassword(w))).join(" ")

/** A word with a URL's password hidden, the URL alone or as `--flag=URL`. */
const withoutPassword = (word: string): string => {
  const at = word.startsWith("--") ? word.indexOf("=") + 1 : 0
  const value = word.slice(at)
  return /^\w+:\/\/[^/]*@/.test(value) ? word.slice(0, at) + redactUrl(value) : word
}

/**
 * Said on stderr when the run is interrupted; `where` names the store as people read it. First the
 * run's results.jsonl is made whole from the store (a cell committed as the signal came may not
 * have had its line yet): the process still holds the home's lock, so no other run writes it.
 */
export const stoppedLine = (plan: Plan, where: string): Effect.Effect<void, never, Store> =>
  Effect.gen(function*() {
    said = true
    const whole = yield* Effect.either(rebuildUnfinished)
    const kept = (yield* classify(plan)).filter((s) => s.state === "kept").length
    const results = whole._tag === "Left" ? ` (${whole.left.message}: the next run rebuilds it)` : ""
    yield* Console.error(`assay: stopped: ${kept} of ${plan.cells.length} cells are kept in ${where}${results}; resume with: ${resumeCommand()}`)
  }).pipe(Effect.catchAll((e) => Console.error(`assay: stopped (the kept cells cannot be counted: ${e.message}); resume with: ${resumeCommand()}`)))

// Whether this process has said its stopped line: one process runs one command.
let said = false

/** Said when a run is stopped before its cells started (loading its benchmarks, waiting for its lock). */
export const stoppedBeforeCells: Effect.Effect<void> = Effect.suspend(() =>
  said ? Effect.void : Console.error("assay: stopped before any cell ran: nothing was run or written; run the same command to start it")
)
