/** The session files an agent CLI leaves in its folders, read back for its own account of a run. */
import * as fs from "node:fs"
import * as path from "node:path"

/** The contents of every `*.jsonl` file under the folders (recursively), in the order of their paths. */
export const jsonlFilesUnder = (dirs: ReadonlyArray<string>): ReadonlyArray<string> => {
  const files: Array<string> = []
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, e.name)
      if (e.isDirectory()) walk(abs)
      else if (e.isFile() && e.name.endsWith(".jsonl")) files.push(abs)
    }
  }
  dirs.forEach(walk)
  return files.sort().map((f) => fs.readFileSync(f, "utf8"))
}
