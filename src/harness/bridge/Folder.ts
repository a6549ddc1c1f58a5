/**
 * A task that is a folder (coding-repair): the world's table of files (path -> text) is written
 * out as the CLI's work folder, the CLI works there with its own file and shell tools, and what
 * it changed is read back to be written into the world through the protocol's own write tool.
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** Where a folder task's files are in the world, and the protocol's tool that writes one (`{path, content}`). */
export interface FolderTask {
  readonly table: string
  readonly write: string
}

/** Folders a CLI's writes in are not read back: caches, installed packages, a CLI's own state. */
const SKIPPED = new Set(["node_modules", "__pycache__", ".git", ".cache", ".claude", ".codex", ".gemini", ".qwen", ".opencode"])
/** A file larger than this, or not UTF-8 text, is not read back (the world holds text). */
const MAX_BYTES = 256 * 1024

/** Writes the files under `dir` (existing), readable and writable by the CLI's own user in the sandbox. */
export const writeFiles = (dir: string, files: ReadonlyMap<string, string>): void => {
  for (const [p, text] of files) {
    const full = path.join(dir, ...p.split("/"))
    fs.mkdirSync(path.dirname(full), { recursive: true, mode: 0o777 })
    fs.writeFileSync(full, text, { mode: 0o666 })
  }
}

/** The text files under `dir`, by their path relative to it with `/`. */
export const readFiles = (dir: string): Map<string, string> => {
  const files = new Map<string, string>()
  const decoder = new TextDecoder("utf-8", { fatal: true })
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const p = rel === "" ? e.name : `${rel}/${e.name}`
      if (e.isDirectory()) {
        if (!SKIPPED.has(e.name)) walk(p)
        continue
      }
      if (!e.isFile()) continue
      const bytes = fs.readFileSync(path.join(dir, p))
      if (bytes.length > MAX_BYTES) continue
      try {
        files.set(p, decoder.decode(bytes))
      } catch {
        // Not UTF-8 text: the world holds text only, so it stays in the folder.
        continue
      }
    }
  }
  walk("")
  return files
}
