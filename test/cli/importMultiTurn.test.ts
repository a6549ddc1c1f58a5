/**
 * `assay import bfcl DIR` on multi-turn result files: each line's recorded steps replayed step by
 * step through bfcl-multi-turn's protocol (each step answers one model call, the calls run in
 * assay's worlds) and graded by its checker: the gold answers score 1 per line, and the answers of
 * upstream's multi-turn verdict corpus, written as the runner writes them, get upstream's verdicts.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { loadTasks, type MultiTurnTask } from "../../providers/bfcl/multiturn/tasks.ts"
import { line, multiTurnGoldResult, multiTurnResult, writeResultFiles } from "../bfcl/resultFiles.ts"
import { assay, type Card, tempDir } from "./support.ts"

const dataDir = process.env["ASSAY_DATA_DIR"] ?? ""
const tasks: ReadonlyArray<MultiTurnTask> = Effect.runSync(loadTasks())
const byId = new Map(tasks.map((t) => [t.id, t]))
// The long-context tasks need upstream's long_context.py in the data folder (assay data pull bfcl).
const longContext = existsSync(join(dataDir, "bfcl", "func_source_code", "long_context.py"))
const usable = (t: MultiTurnTask) => longContext || t.category !== "multi_turn_long_context"

interface OracleVerdict {
  readonly id: string
  readonly variant: string
  readonly answer: unknown
  readonly valid: boolean
  readonly error_type: string | null
}

const oracle: ReadonlyArray<OracleVerdict> = readFileSync(join(dataDir, "bfcl", "oracle", "multi-turn", "verdicts-dev.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l !== "")
  .map((l) => JSON.parse(l) as OracleVerdict)
  .filter((o) => byId.has(o.id) && usable(byId.get(o.id)!))

/** Writes `lines` (task id → result) as one model's files, by category. */
const write = (dir: string, results: ReadonlyArray<readonly [string, unknown]>) => {
  const byCategory = new Map<string, Array<string>>()
  for (const [id, result] of results) {
    const category = byId.get(id)!.category
    byCategory.set(category, [...(byCategory.get(category) ?? []), line(id, result)])
  }
  writeResultFiles(dir, byCategory)
}

interface Graded {
  readonly reward: number
  readonly ended: { readonly reason: string; readonly detail: string } | null
  readonly details?: { readonly errorType: string | null }
}

const verdicts = (home: string, runId: string): ReadonlyMap<string, Graded> =>
  new Map(readFileSync(join(home, "runs", runId, "results.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).map((a) => [a.task, a.verdict]))

describe("assay import bfcl, multi-turn", { timeout: 600_000 }, () => {
  it("the gold answers in function-calling and prompt format score 1 per line, beside gold; replay gives the same verdicts", async () => {
    const root = tempDir()
    const home = join(root, "home")
    const chosen = ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"].flatMap((c) =>
      tasks.filter((t) => t.category === c && usable(t)).slice(0, 4)
    )
    for (const format of ["fc", "prompt"] as const) {
      const dir = join(root, `gold-${format}`)
      write(dir, chosen.map((t) => [t.id, multiTurnGoldResult(t, format)] as const))
      const r = await assay(["import", "bfcl", dir, "--home", home, "--candidate", "gold", "--json"])
      expect(r.code, r.stderr).toBe(0)
      const report = JSON.parse(r.stdout)
      expect(report.import).toMatchObject({ format })
      const card = report.scorecards.find((c: Card) => c.candidate === report.import.candidate && c.stratum === null)
      expect(card).toMatchObject({ n: chosen.length, meanReward: 1 })
      const replayed = await assay(["replay", report.runId, "--home", home, "--json"])
      // gold's cells of the second import are kept from the first: the run replays those it ran.
      expect(JSON.parse(replayed.stdout)).toMatchObject({ replayed: report.cells.ran, differ: [], missing: [], notReplayable: [] })
    }
  })

  it("the verdict corpus's answers, stored as the runner stores them, get upstream's verdicts in both formats", async () => {
    const root = tempDir()
    const home = join(root, "home")
    // Per task, its variants the runner could have written; one import per format, each one variant
    // of 120 tasks (in turn, so every kind of variant is met), the prompt format's others than the FC one's.
    const variants = new Map<string, Array<OracleVerdict>>()
    for (const o of oracle) variants.set(o.id, [...(variants.get(o.id) ?? []), o])
    for (const id of [...variants.keys()].slice(120)) variants.delete(id)
    const kinds = new Set<string>()
    let compared = 0
    for (const format of ["fc", "prompt"] as const) {
      for (const shift of [format === "fc" ? 0 : 4]) {
        const picked: Array<readonly [OracleVerdict, unknown]> = []
        for (const [i, [id, all]] of [...variants].entries()) {
          const writable = all.map((o) => [o, multiTurnResult(byId.get(id)!, o.answer, format)] as const).filter(([, r]) => r !== undefined)
          const pick = writable[(i + shift) % Math.max(1, writable.length)]
          if (pick !== undefined) picked.push(pick)
        }
        const dir = join(root, `corpus-${format}-${shift}`)
        write(dir, picked.map(([o, result]) => [o.id, result] as const))
        const r = await assay(["import", "bfcl", dir, "--format", format, "--home", home, "--json"])
        expect(r.code, r.stderr).toBe(0)
        const got = verdicts(home, JSON.parse(r.stdout).runId)
        const differ = picked.flatMap(([o]) => {
          const v = got.get(o.id)!
          // A line upstream fails before grading (an inference error, another number of turns) ends its Attempt failed.
          const same = o.error_type === "multi_turn:inference_error" || o.error_type === "multi_turn:force_terminated"
            ? v.reward === 0 && v.ended?.reason === "protocol-failed"
            : v.reward === (o.valid ? 1 : 0) && v.ended === null && (v.details?.errorType ?? null) === o.error_type
          return same ? [] : [{ id: o.id, variant: o.variant, upstream: o.error_type, assay: v.details?.errorType ?? v.ended?.detail }]
        })
        expect(differ, `${format} shift ${shift}`).toEqual([])
        compared += picked.length
        for (const [o] of picked) kinds.add(o.variant)
      }
    }
    // Nearly every task in both formats (a variant the runner could not write is left out), and every kind of answer.
    expect(compared).toBeGreaterThan(1.8 * variants.size)
    // (empty_steps, an empty step before a step with calls, is no answer the runner writes: it ends the turn there.)
    expect(kinds).toEqual(new Set(oracle.filter((o) => multiTurnResult(byId.get(o.id)!, o.answer, "fc") !== undefined).map((o) => o.variant)))
  })
})
