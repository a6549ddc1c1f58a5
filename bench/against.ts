/**
 * `npm run bench -- SECTION... --against REF`: the same sections run at another commit (a git
 * worktree of REF sharing this checkout's node_modules) and here, interleaved REF, here, REF, here
 * so that both meet the same load, and every figure printed beside its counterpart with the ratio
 * (here / REF) from this run. A line is paired with the other run's line of the same text once
 * its numbers are set aside; a line that has none there is printed as it is.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { machine, root } from "./support.ts"

const git = (args: ReadonlyArray<string>, cwd = root): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn("git", args, { cwd, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.on("data", (d: Buffer) => (out += d.toString()))
    child.stderr.on("data", (d: Buffer) => (err += d.toString()))
    child.on("close", (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`git ${args.join(" ")}: ${err.trim()}`))))
  })

/** One section's output, run by the bench of the checkout at `dir`. */
const section = (dir: string, name: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", "bench/main.ts", name], { cwd: dir, env: process.env, stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.on("data", (d: Buffer) => (out += d.toString()))
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`bench ${name} in ${dir} exited ${code}`))))
  })

const NUMBER = /-?\d[\d,]*(?:\.\d+)?/g
/** The line with its numbers set aside and its spacing (which the numbers' widths change) ignored. */
const skeleton = (line: string): string => line.replace(NUMBER, "#").replace(/\s+/g, " ").trim()
const numbersOf = (line: string): ReadonlyArray<number> => Array.from(line.matchAll(NUMBER), (m) => Number(m[0].replace(/,/g, "")))

/** The lines of `here`, each figure followed by its counterpart at REF and the ratio. */
export const pair = (ref: string, here: string): ReadonlyArray<string> => {
  const earlier = new Map<string, Array<string>>()
  for (const line of ref.split("\n")) {
    const key = skeleton(line)
    earlier.set(key, [...(earlier.get(key) ?? []), line])
  }
  return here.split("\n").map((line) => {
    const match = earlier.get(skeleton(line))?.shift()
    if (match === undefined || numbersOf(line).length === 0) return line
    const before = numbersOf(match)
    let i = 0
    return line.replace(NUMBER, (text) => {
      const was = before[i++]
      const now = Number(text.replace(/,/g, ""))
      if (was === undefined || was === now) return text
      return `${text} [ref ${was}${was !== 0 ? `, ×${(now / was).toFixed(2)}` : ""}]`
    })
  })
}

export const runAgainst = async (ref: string, names: ReadonlyArray<string>): Promise<void> => {
  const commit = await git(["rev-parse", "--verify", `${ref}^{commit}`])
  const dir = mkdtempSync(join(tmpdir(), "assay-bench-ref-"))
  await git(["worktree", "add", "--detach", dir, commit])
  try {
    if (!existsSync(join(dir, "node_modules"))) symlinkSync(join(root, "node_modules"), join(dir, "node_modules"))
    const lockChanged = (await git(["diff", "--name-only", commit, "--", "package-lock.json"])) !== ""
    for (const name of names) {
      process.stdout.write(`\n== ${name}: ${ref} (${commit.slice(0, 10)}) against this checkout, interleaved twice (${machine()})\n`)
      if (lockChanged) process.stdout.write("   (package-lock.json differs: the reference runs on this checkout's packages)\n")
      for (const round of [1, 2]) {
        const before = await section(dir, name)
        const now = await section(root, name)
        process.stdout.write(`-- round ${round}: this checkout, [ref: the same figure at ${ref}, ×: this checkout / ref]\n`)
        process.stdout.write(pair(before, now).join("\n") + "\n")
      }
    }
  } finally {
    await git(["worktree", "remove", "--force", dir]).catch(() => rmSync(dir, { recursive: true, force: true }))
    await git(["worktree", "prune"]).catch(() => undefined)
  }
}
