/**
 * A benchmark's own code failing (a throw in its setup, protocol or grade, or a bug in an
 * out-of-tree provider) ends only that Attempt, and says so as the provider's failure with the
 * file and line it happened at, never as assay's internal error that ends the run.
 */
import { dirname, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { CapabilityError } from "./Capabilities.ts"

/** assay's own sources (or its built bundle): frames there are not the provider's. */
const ownRoot = dirname(dirname(fileURLToPath(import.meta.url))) + sep

const frame = /\(?((?:file:\/\/)?\/[^()]+?):(\d+):\d+\)?$/

/** "file.ts:LINE" of the first frame of the stack in the provider's code, if any. */
export const where = (defect: unknown): string | undefined => {
  const stack = defect instanceof Error ? defect.stack ?? "" : ""
  for (const line of stack.split("\n").slice(1)) {
    const m = frame.exec(line.trim())
    if (m === null) continue
    const file = m[1]!.startsWith("file://") ? fileURLToPath(m[1]!) : m[1]!
    if (file.startsWith(ownRoot) || file.includes(`${sep}node_modules${sep}`)) continue
    const shown = relative(process.cwd(), file)
    return `${shown.startsWith("..") ? file : shown}:${m[2]}`
  }
  return undefined
}

const messageOf = (defect: unknown): string => (defect instanceof Error ? defect.message : String(defect)).split("\n")[0] ?? ""

/** The capability's effect, a throw in it turned into a CapabilityError of reason "provider". */
export const guard = <A, E, R>(benchmark: string, capability: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | CapabilityError, R> =>
  Effect.catchAllDefect(effect, (defect) => {
    const at = where(defect)
    return Effect.fail(
      new CapabilityError({
        capability,
        reason: "provider",
        detail: `provider ${benchmark} failed: ${messageOf(defect)}${at === undefined ? "" : ` (${at})`}`,
        ...(at !== undefined ? { at } : {})
      })
    )
  })
