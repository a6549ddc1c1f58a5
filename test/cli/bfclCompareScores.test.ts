/**
 * tools/bfcl-compare-scores.mjs: an imported BFCL run set beside BFCL's own score files says, per
 * category, where the two agree and names every id on which they do not.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { loadAll, UNPASSABLE_TASKS } from "../../providers/bfcl/data.ts"
import { goldAnswer } from "../../providers/bfcl/gold.ts"
import { fcResult, line, writeResultFiles } from "../bfcl/resultFiles.ts"
import { assay, root, tempDir } from "./support.ts"

const script = join(root, "tools", "bfcl-compare-scores.mjs")

const compare = (scoreDir: string, home: string) => spawnSync(process.execPath, [script, scoreDir, "--home", home], { encoding: "utf8" })

/** A score file as BFCL's checker writes it: the counts, then one line per failed entry. */
const writeScore = (dir: string, category: string, correct: number, total: number, failed: ReadonlyArray<readonly [string, string]>) => {
  mkdirSync(dir, { recursive: true })
  const head = JSON.stringify({ accuracy: correct / total, correct_count: correct, total_count: total })
  const lines = failed.map(([id, errorType]) => JSON.stringify({ id, valid: false, error_type: errorType }))
  writeFileSync(join(dir, `BFCL_v4_${category}_score.json`), [head, ...lines].join("\n") + "\n")
}

describe("tools/bfcl-compare-scores.mjs", { timeout: 300_000 }, () => {
  it("agrees with a score file that lists the same failures, and names each id a score file disagrees on", async () => {
    const dir = tempDir()
    const home = join(dir, "home")
    // Three gold answers and a text reply, which a function-calling result fails to decode.
    const [a, b, c, d] = Effect.runSync(loadAll()).filter((t) => t.category === "simple_python" && !UNPASSABLE_TASKS.has(t.id)).slice(0, 4)
    if (a === undefined || b === undefined || c === undefined || d === undefined) throw new Error("fewer than 4 simple_python tasks")
    const results = join(dir, "result", "some-model-FC")
    writeResultFiles(results, new Map([["simple_python", [a, b, c].map((t) => line(t.id, fcResult(goldAnswer(t)))).concat(line(d.id, "I cannot help with that."))]]))
    const imported = await assay(["import", "bfcl", results, "--home", home])
    expect(imported.code, imported.stderr).toBe(0)

    const agreeing = join(dir, "score-agreeing")
    writeScore(agreeing, "simple_python", 3, 4, [[d.id, "ast_decoder:decoder_failed"]])
    const same = compare(agreeing, home)
    expect(same.status, same.stderr).toBe(0)
    expect(same.stdout).toContain("| simple_python | 75.00% (3/4) | 75.00% (3/4) | all 4 | 0 | 0 | 0 |")
    expect(same.stdout).toContain("no disagreement")

    // Upstream failing a line assay passes (and not the one assay fails), with another error type.
    const differing = join(dir, "score-differing")
    writeScore(differing, "simple_python", 3, 4, [[a.id, "value_error:string"]])
    const other = compare(differing, home)
    expect(other.status).toBe(1)
    expect(other.stdout).toContain(`${a.id} fails in BFCL's score file (value_error:string) and passes in assay`)
    expect(other.stdout).toContain(`${d.id} fails in assay (ast_decoder:decoder_failed) and is not among BFCL's failures`)

    const typeOnly = join(dir, "score-type")
    writeScore(typeOnly, "simple_python", 3, 4, [[d.id, "simple_function_checker:wrong_count"]])
    const types = compare(typeOnly, home)
    expect(types.status).toBe(1)
    expect(types.stdout).toContain(`${d.id} fails in both, BFCL simple_function_checker:wrong_count, assay ast_decoder:decoder_failed`)

    const usage = compare(join(dir, "nowhere"), home)
    expect(usage.status).toBe(2)
  })
})
