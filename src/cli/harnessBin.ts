/** Where the command looks for agent CLIs before PATH. */
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const toolsBin = fileURLToPath(new URL("../../tools/harnesses/node_modules/.bin", import.meta.url))

/** Folders searched before PATH: `ASSAY_HARNESS_BIN_DIRS` when set (empty = none), else the project's tools. */
export const harnessBinDirs = (): ReadonlyArray<string> => {
  const set = process.env["ASSAY_HARNESS_BIN_DIRS"]
  return set === undefined ? [toolsBin] : set.split(path.delimiter).filter((d) => d !== "")
}
