/**
 * The grader's SQL on any engine as on the oracle's SQLite 3.40.1: a function 3.40 lacks fails when
 * the statement is prepared, even where it would never be called; and `equivalence` names the engine.
 * Every expectation here is what Python's sqlite3 3.40.1 (the oracle's) gives for the same SQL.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runEquivalence } from "../../../providers/bird/equivalence.ts"
import { execute, shutdown, type StatementResult } from "../../../providers/bird/executor.ts"
import { dataRoot } from "../../../src/evaluation/DataRoot.ts"

const db = join(dataRoot(), "bird/fixture/debit_card_specializing/debit_card_specializing.sqlite")

const one = (sql: string) => Effect.map(execute(db, [sql], 10_000), (e): StatementResult | undefined => e.results[0])

describe("bird: functions SQLite 3.40 lacks", () => {
  it.effect("fail when prepared, even in a query that returns no rows and so never calls them", () =>
    Effect.gen(function*() {
      expect(yield* one("SELECT CONCAT(CustomerID, Segment) FROM customers WHERE 0")).toMatchObject({ error: "no such function: CONCAT" })
      expect(yield* one("SELECT a FROM (SELECT 1 AS a, timediff('2020-01-01', '2019-01-01') AS b)")).toMatchObject({ error: "no such function: timediff" })
      expect(yield* one("SELECT if(1, 2, 3)")).toMatchObject({ error: "no such function: if" })
      expect(yield* one('SELECT "string_agg"(Segment, \',\') FROM customers WHERE 0')).toMatchObject({ error: "no such function: string_agg" })
      expect(yield* one("SELECT * FROM jsonb_each('[1]')")).toMatchObject({ error: "no such table: jsonb_each" })
    }).pipe(Effect.ensuring(shutdown)), 30_000)

  it.effect("take 3.40's argument counts where a later SQLite widened them (iif, json_valid)", () =>
    Effect.gen(function*() {
      expect(yield* one("SELECT iif(1, 2)")).toMatchObject({ error: "wrong number of arguments to function iif()" })
      expect(yield* one("SELECT json_valid('1', 1)")).toMatchObject({ error: "wrong number of arguments to function json_valid()" })
      expect(yield* one("SELECT iif(1, 2, 3)")).toEqual({ rows: [["i2"]] })
    }).pipe(Effect.ensuring(shutdown)), 30_000)

  it.effect("a name in a string, a comment, a CTE's name or a CTE nobody reads is no call, as on 3.40", () =>
    Effect.gen(function*() {
      expect(yield* one("SELECT 'concat(1)' -- concat(\n")).toEqual({ rows: [["sconcat(1)"]] })
      expect(yield* one("WITH concat(a) AS (SELECT 1) SELECT a FROM concat")).toEqual({ rows: [["i1"]] })
      expect(yield* one("WITH unused AS (SELECT concat(1)) SELECT 1")).toEqual({ rows: [["i1"]] })
      expect(yield* one("SELECT Segment FROM customers WHERE Segment LIKE ('SME') LIMIT 1")).toEqual({ rows: [["sSME"]] })
    }).pipe(Effect.ensuring(shutdown)), 30_000)
})

describe("bird: equivalence names its engine", () => {
  it.effect("one line says which SQLite graded and, when it is not 3.40, how to get the oracle's", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "assay-bird-engine-"))
      const corpus = join(dir, "one.jsonl")
      const line = { db_id: "debit_card_specializing", predicted_sql: "SELECT 1", gold_sql: "SELECT 1", ex: 1, f1: 1, error: null, timed_out: false, idx: 0 }
      writeFileSync(corpus, JSON.stringify(line) + "\n")
      const r = yield* runEquivalence([corpus]).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
      expect(r.agree).toBe(1)
      expect(r.notes).toHaveLength(1)
      expect(r.notes[0]).toContain(`engine: SQLite ${r.engine.sqlite}`)
      if (r.engine.sqlite?.startsWith("3.40.") === true) {
        expect(r.engine.oracle).toBe(true)
        expect(r.notes[0]).toContain("the oracle's")
      } else {
        expect(r.engine.oracle).toBe(false)
        expect(r.notes[0]).toMatch(/not the oracle.s 3\.40\.1.*node \S*tools\/bird-sqlite\/ensure\.mjs/)
      }
    }).pipe(Effect.ensuring(shutdown)), 30_000)
})
