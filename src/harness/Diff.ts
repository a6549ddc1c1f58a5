/**
 * The work-folder diff of a run: what the agent changed relative to the task fixture, as text a
 * report or a judge can read, cut at a byte limit.
 */
import * as fs from "node:fs"
import * as path from "node:path"

export const DIFF_LIMIT_BYTES = 20 * 1024

export interface WorkDiff {
  readonly text: string
  readonly truncated: boolean
  /** Paths (relative, `/`-separated) added, removed or changed, sorted. */
  readonly changed: ReadonlyArray<string>
}

/** Cuts a text to at most `limit` UTF-8 bytes (never inside a character), saying so when it does. */
export const cutUtf8 = (text: string, limit: number = DIFF_LIMIT_BYTES): { text: string; truncated: boolean } => {
  const bytes = Buffer.from(text, "utf8")
  if (bytes.length <= limit) return { text, truncated: false }
  const marker = `\n[cut at ${limit} bytes of ${bytes.length}]\n`
  let end = Math.max(0, limit - Buffer.byteLength(marker))
  // Step back over UTF-8 continuation bytes so the cut lands on a character boundary.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--
  return { text: bytes.subarray(0, end).toString("utf8") + marker, truncated: true }
}

const listFiles = (root: string): Map<string, string> => {
  const out = new Map<string, string>()
  if (!fs.existsSync(root)) return out
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(abs)
      else if (entry.isFile() || entry.isSymbolicLink()) out.set(path.relative(root, abs).split(path.sep).join("/"), abs)
    }
  }
  walk(root)
  return out
}

const isBinary = (b: Buffer): boolean => b.subarray(0, 8000).includes(0)

/** Lines of `a` and `b` marked kept / removed / added, from a longest common subsequence. */
const lineDiff = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<string> => {
  // Common head and tail need no table; agents' edits are usually local.
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  return [
    ...a.slice(0, head).map((l) => ` ${l}`),
    ...middleDiff(a.slice(head, a.length - tail), b.slice(head, b.length - tail)),
    ...a.slice(a.length - tail).map((l) => ` ${l}`)
  ]
}

const middleDiff = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<string> => {
  // Quadratic table: fine for corpus-sized files; huge files are shown as a full replacement.
  if (a.length * b.length > 4_000_000) return [...a.map((l) => `-${l}`), ...b.map((l) => `+${l}`)]
  const n = a.length
  const m = b.length
  const table: Array<Uint32Array> = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1))
  for (let i = n - 1; i >= 0; i--) {
    const row = table[i]!
    const next = table[i + 1]!
    for (let j = m - 1; j >= 0; j--) {
      row[j] = a[i] === b[j] ? next[j + 1]! + 1 : Math.max(next[j]!, row[j + 1]!)
    }
  }
  const out: Array<string> = []
  let i = 0
  let j = 0
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push(` ${a[i]}`)
      i++
      j++
    } else if (i < n && (j === m || table[i + 1]![j]! >= table[i]![j + 1]!)) {
      // Removals before additions, as diff(1) prints them.
      out.push(`-${a[i]}`)
      i++
    } else {
      out.push(`+${b[j]}`)
      j++
    }
  }
  return out
}

/** Keeps changed lines with `context` lines around them; gaps become `@@`. */
const withContext = (marked: ReadonlyArray<string>, context = 2): Array<string> => {
  const keep = marked.map(() => false)
  marked.forEach((l, k) => {
    if (l.startsWith(" ")) return
    for (let d = -context; d <= context; d++) if (k + d >= 0 && k + d < marked.length) keep[k + d] = true
  })
  const out: Array<string> = []
  let gap = false
  marked.forEach((l, k) => {
    if (keep[k]) {
      if (gap || (out.length === 0 && k > 0)) out.push("@@")
      out.push(l)
      gap = false
    } else gap = true
  })
  return out
}

const splitLines = (s: string): Array<string> => (s === "" ? [] : s.replace(/\n$/, "").split("\n"))

export const diffTrees = (before: string, after: string, limit: number = DIFF_LIMIT_BYTES): WorkDiff => {
  const a = listFiles(before)
  const b = listFiles(after)
  const names = [...new Set([...a.keys(), ...b.keys()])].sort()
  const parts: Array<string> = []
  const changed: Array<string> = []
  for (const name of names) {
    const pa = a.get(name)
    const pb = b.get(name)
    const ba = pa === undefined ? undefined : fs.readFileSync(pa)
    const bb = pb === undefined ? undefined : fs.readFileSync(pb)
    if (ba !== undefined && bb !== undefined && ba.equals(bb)) continue
    changed.push(name)
    const header = `--- ${ba === undefined ? "/dev/null" : `a/${name}`}\n+++ ${bb === undefined ? "/dev/null" : `b/${name}`}`
    if ((ba !== undefined && isBinary(ba)) || (bb !== undefined && isBinary(bb))) {
      parts.push(`${header}\nBinary files differ`)
      continue
    }
    const lines = lineDiff(splitLines(ba?.toString("utf8") ?? ""), splitLines(bb?.toString("utf8") ?? ""))
    parts.push([header, ...withContext(lines)].join("\n"))
  }
  const cut = cutUtf8(parts.length === 0 ? "" : parts.join("\n") + "\n", limit)
  return { text: cut.text, truncated: cut.truncated, changed }
}
