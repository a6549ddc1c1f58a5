import { NodeContext } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  clauseTypes,
  type GoldFile,
  loadCaseSet,
  loadCaseSetFrom
} from "../../../providers/contract-review/data.ts"
import { goldFileFor } from "./synthetic.ts"

const made: Array<string> = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** Writes a case folder in the cuad layout; each entry is a contract text and its gold file. */
const caseFolder = (entries: ReadonlyArray<{ id: string; text?: string; gold?: GoldFile | string }>): string => {
  const dir = mkdtempSync(join(tmpdir(), "contract-review-"))
  made.push(dir)
  mkdirSync(join(dir, "contracts"))
  mkdirSync(join(dir, "gold"))
  for (const e of entries) {
    if (e.text !== undefined) writeFileSync(join(dir, "contracts", `${e.id}.txt`), e.text)
    if (e.gold !== undefined) {
      writeFileSync(join(dir, "gold", `${e.id}.json`), typeof e.gold === "string" ? e.gold : JSON.stringify(e.gold, null, 2))
    }
  }
  return dir
}

const text = "SUPPLY AGREEMENT\n\n9. This Agreement is governed by the laws of Delaware.\n10. Supplier shall not sell to others.\n"
const passages = { "Governing Law": ["This Agreement is governed by the laws of Delaware."] }

const failureOf = (dir: string) =>
  loadCaseSetFrom(dir).pipe(
    Effect.flip,
    Effect.map((e) => ({ reason: e.reason, file: e.file, message: e.message }))
  )

describe("loading the case set", () => {
  it.effect("loads the 8 dev contracts from $ASSAY_DATA_DIR/cuad with their spans in place", () =>
    Effect.gen(function* () {
      const set = yield* loadCaseSet
      expect(set.cases.map((c) => c.id)).toEqual([
        "americasshoppingmall-hosting",
        "dynamex-transportation",
        "glumobile-content-license-2",
        "healthcentral-cobranding",
        "hfenterprises-development",
        "orbsat-strategic-alliance",
        "virtuososurgical-license",
        "zondwind-maintenance-amendment"
      ])
      let spans = 0
      for (const c of set.cases) {
        for (const t of clauseTypes) {
          for (const s of c.clauses[t].spans) {
            expect(c.text.slice(s.start, s.end)).toBe(s.text)
            spans++
          }
        }
      }
      // SOURCE.md: 56 dev spans.
      expect(spans).toBe(56)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("any folder in the same layout is a case set, whatever its contracts", () =>
    Effect.gen(function* () {
      const dir = caseFolder([{ id: "supply", text, gold: goldFileFor("supply", text, passages) }])
      const set = yield* loadCaseSetFrom(dir)
      expect(set.cases).toHaveLength(1)
      expect(set.cases[0]?.clauses["Governing Law"].spans[0]?.text).toBe(passages["Governing Law"][0])
      expect(set.cases[0]?.clauses["Exclusivity"].present).toBe(false)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("code-point offsets are turned into string offsets when a contract has astral characters", () =>
    Effect.gen(function* () {
      const astral = `\u{1F4DC} ${text}`
      const dir = caseFolder([{ id: "scroll", text: astral, gold: goldFileFor("scroll", astral, passages) }])
      const set = yield* loadCaseSetFrom(dir)
      const span = set.cases[0]?.clauses["Governing Law"].spans[0]
      expect(span && astral.slice(span.start, span.end)).toBe(passages["Governing Law"][0])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a malformed gold file is an error naming the file and what is wrong", () =>
    Effect.gen(function* () {
      const good = goldFileFor("supply", text, passages)

      const notJson = yield* failureOf(caseFolder([{ id: "supply", text, gold: "{ oops" }]))
      expect(notJson).toMatchObject({ reason: "invalid-json" })
      expect(notJson.file).toMatch(/gold[/\\]supply\.json$/)

      const { split: _split, ...noSplit } = good
      const missingField = yield* failureOf(caseFolder([{ id: "supply", text, gold: JSON.stringify(noSplit) }]))
      expect(missingField).toMatchObject({ reason: "invalid-gold" })
      expect(missingField.message).toContain("split")

      const wrongPresence = yield* failureOf(
        caseFolder([{
          id: "supply",
          text,
          gold: { ...good, clauses: { ...good.clauses, "Audit Rights": { present: true, answer: "Yes", spans: [] } } }
        }])
      )
      expect(wrongPresence).toMatchObject({ reason: "invalid-gold" })
      expect(wrongPresence.message).toContain("Audit Rights")

      const otherId = yield* failureOf(caseFolder([{ id: "supply", text, gold: { ...good, id: "demand" } }]))
      expect(otherId).toMatchObject({ reason: "invalid-gold" })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a contract that differs from its gold is an error naming the file", () =>
    Effect.gen(function* () {
      const good = goldFileFor("supply", text, passages)
      const changed = yield* failureOf(caseFolder([{ id: "supply", text: text + " ", gold: good }]))
      expect(changed).toMatchObject({ reason: "hash-mismatch" })
      expect(changed.message).toContain(good.text_sha256)

      const gl = good.clauses["Governing Law"]
      const moved = {
        ...good,
        clauses: { ...good.clauses, "Governing Law": { ...gl, spans: gl.spans.map((s) => ({ ...s, start: s.start + 1, end: s.end + 1 })) } }
      }
      const mismatch = yield* failureOf(caseFolder([{ id: "supply", text, gold: moved }]))
      expect(mismatch).toMatchObject({ reason: "span-mismatch" })
      expect(mismatch.message).toContain("Governing Law")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a gold file without its contract, a contract without gold, or no gold at all are errors", () =>
    Effect.gen(function* () {
      const noText = yield* failureOf(caseFolder([{ id: "supply", gold: goldFileFor("supply", text, passages) }]))
      expect(noText).toMatchObject({ reason: "missing-contract" })
      const noGold = yield* failureOf(
        caseFolder([{ id: "supply", text, gold: goldFileFor("supply", text, passages) }, { id: "extra", text }])
      )
      expect(noGold).toMatchObject({ reason: "missing-gold" })
      expect(noGold.file).toMatch(/extra\.txt$/)
      expect(yield* failureOf(caseFolder([]))).toMatchObject({ reason: "empty" })
      expect(yield* failureOf(join(tmpdir(), "no-such-contract-review-dir"))).toMatchObject({ reason: "unreadable" })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("without ASSAY_DATA_DIR it reads the default data folder, and a missing case set names the folder and the pull", () => {
    const cache = mkdtempSync(join(tmpdir(), "contract-review-cache-"))
    made.push(cache)
    return Effect.gen(function* () {
      const result = yield* Effect.either(loadCaseSet)
      expect(Either.isLeft(result) && result.left.reason).toBe("no-data-dir")
      const message = Either.isLeft(result) ? result.left.message : ""
      expect(message).toContain(`${join(cache, "assay", "data")} (the default; ASSAY_DATA_DIR is not set)`)
      expect(message).toContain("`assay data pull contract-review`")
    }).pipe(
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["XDG_CACHE_HOME", cache]]))),
      Effect.provide(NodeContext.layer)
    )
  })
})
