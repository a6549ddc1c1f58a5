/**
 * The assay command's entry. `assay --version` is answered here, before anything else loads: the
 * command itself (command.ts) brings effect, @effect/cli and every command's modules, ~0.5 s of
 * CPU at each start, which printing a version does not need.
 */
import { VERSION } from "./version.ts"

const args = process.argv.slice(2)
if (args.length === 1 && args[0] === "--version") process.stdout.write(`${VERSION}\n`)
else await import("./command.ts")
