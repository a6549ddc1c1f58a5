/**
 * A run's results.jsonl follows the store: a run killed between committing an Attempt and
 * appending its line (SIGKILL) leaves the file behind the store, and the next `assay run` on the
 * home makes it whole again from the store.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assay, root, tempDir } from "./support.ts"

const sqlite = (file: string, script: string, ...args: ReadonlyArray<string>): string =>
  execFileSync(process.execPath, [
    "-e",
    `const D = require("better-sqlite3"); const db = new D(process.argv[1]); const out = (${script})(db, process.argv.slice(2)); db.close(); process.stdout.write(JSON.stringify(out ?? null))`,
    file,
    ...args
  ], { cwd: root, encoding: "utf8" })

const gold = async (home: string) => {
  const ran = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--yes", "--home", home, "--json"])
  expect(ran.code, ran.stderr).toBe(0)
  return (JSON.parse(ran.stdout) as { runId: string }).runId
}

describe("results.jsonl", { timeout: 120_000 }, () => {
  it("of a run killed before its lines were all written is rebuilt from the store by the next run", async () => {
    const home = tempDir("assay-results-")
    const store = join(home, "assay.sqlite")
    const killed = await gold(home)
    const file = join(home, "runs", killed, "results.jsonl")
    const records = JSON.parse(
      sqlite(store, `(db, [run]) => db.prepare("SELECT record FROM attempts WHERE run_id = ? ORDER BY seq").all(run).map((r) => JSON.parse(r.record))`, killed)
    ) as ReadonlyArray<unknown>
    expect(records.length).toBeGreaterThan(1)
    // As SIGKILL leaves it: unfinished in the store, the file one line in and torn in the second.
    sqlite(store, `(db, [run]) => { db.prepare("UPDATE runs SET finished_at = NULL, summary = NULL WHERE id = ?").run(run) }`, killed)
    const lines = readFileSync(file, "utf8").split("\n")
    writeFileSync(file, `${lines[0]}\n${lines[1]!.slice(0, 40)}`)

    await gold(home)
    const rebuilt = readFileSync(file, "utf8")
    expect(rebuilt.endsWith("\n")).toBe(true)
    expect(rebuilt.trimEnd().split("\n").map((l) => JSON.parse(l) as unknown)).toEqual(records)
  })
})
