import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { caseOf, clauseTypes, type GoldFile } from "../../../providers/contract-review/data.ts"
import { goldPath, loadCases, readerAt, textPath } from "../../../providers/contract-review/upstream.ts"
import { goldFileFor } from "./synthetic.ts"

const shared = process.env["ASSAY_DATA_DIR"] ?? "../shared/data"

const made: Array<string> = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

const text = "SUPPLY AGREEMENT\n\n9. This Agreement is governed by the laws of Delaware.\n10. Supplier shall not sell to others.\n"
const bytesOf = (s: string) => new TextEncoder().encode(s)
const passages = { "Governing Law": ["This Agreement is governed by the laws of Delaware."] }

/** What is wrong with a gold file (as text) and its contract, or "" when they make a case. */
const problemOf = (id: string, gold: GoldFile | string, contract: string = text): string =>
  Either.match(caseOf(id, typeof gold === "string" ? gold : JSON.stringify(gold, null, 2), bytesOf(contract)), { onLeft: (e) => e, onRight: () => "" })

describe("loading the case set", () => {
  it.effect("loads the 8 dev contracts from the data folder with their spans in place", () =>
    Effect.gen(function*() {
      const cases = yield* loadCases(readerAt(shared))
      expect(cases.map((c) => c.id)).toEqual([
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
      for (const c of cases) {
        for (const t of clauseTypes) {
          for (const s of c.clauses[t].spans) {
            expect(c.text.slice(s.start, s.end)).toBe(s.text)
            spans++
          }
        }
      }
      // SOURCE.md: 56 dev spans.
      expect(spans).toBe(56)
    }))

  it("a gold file and its contract make a case, whatever the contract", () => {
    const made = caseOf("supply", JSON.stringify(goldFileFor("supply", text, passages)), bytesOf(text))
    expect(Either.isRight(made)).toBe(true)
    if (Either.isLeft(made)) return
    expect(made.right.clauses["Governing Law"].spans[0]?.text).toBe(passages["Governing Law"][0])
    expect(made.right.clauses["Exclusivity"].present).toBe(false)
  })

  it("code-point offsets are turned into string offsets when a contract has astral characters", () => {
    const astral = `\u{1F4DC} ${text}`
    const made = caseOf("scroll", JSON.stringify(goldFileFor("scroll", astral, passages)), bytesOf(astral))
    const span = Either.isRight(made) ? made.right.clauses["Governing Law"].spans[0] : undefined
    expect(span && astral.slice(span.start, span.end)).toBe(passages["Governing Law"][0])
  })

  it("a malformed gold file says what is wrong", () => {
    const good = goldFileFor("supply", text, passages)
    expect(problemOf("supply", "{ oops")).toMatch(/JSON/)
    const { split: _split, ...noSplit } = good
    expect(problemOf("supply", JSON.stringify(noSplit))).toContain("split")
    expect(problemOf("supply", { ...good, clauses: { ...good.clauses, "Audit Rights": { present: true, answer: "Yes", spans: [] } } })).toContain("Audit Rights")
    expect(problemOf("supply", { ...good, id: "demand" })).toContain(`id is "demand"`)
  })

  it("a contract that differs from its gold says so", () => {
    const good = goldFileFor("supply", text, passages)
    expect(problemOf("supply", good, text + " ")).toContain(good.text_sha256)
    const gl = good.clauses["Governing Law"]
    const moved = { ...good, clauses: { ...good.clauses, "Governing Law": { ...gl, spans: gl.spans.map((s) => ({ ...s, start: s.start + 1, end: s.end + 1 })) } } }
    expect(problemOf("supply", moved)).toMatch(/^Governing Law span 0 .* is not its text/)
  })

  it.effect("a missing gold file names the file and the pull; a changed one its sha256 and the pull", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "contract-review-"))
      made.push(root)
      const missing = yield* Effect.flip(loadCases(readerAt(root)))
      expect(missing.reason).toBe("missing")
      expect(missing.message).toContain(`${join(root, goldPath("americasshoppingmall-hosting"))} is missing from the data folder ${root}`)
      expect(missing.message).toContain("`assay data pull contract-review`")

      mkdirSync(join(root, "cuad", "gold"), { recursive: true })
      mkdirSync(join(root, "cuad", "contracts"), { recursive: true })
      copyFileSync(join(shared, textPath("americasshoppingmall-hosting")), join(root, textPath("americasshoppingmall-hosting")))
      writeFileSync(join(root, goldPath("americasshoppingmall-hosting")), "{}\n")
      const changed = yield* Effect.flip(loadCases(readerAt(root)))
      expect(changed.reason).toBe("hash-mismatch")
      expect(changed.message).toContain("4930d502bd4449831f6a705bbe73ef19d39734c1bc5c80a6093128f68c15c6aa")
      expect(changed.message).toContain("assay data pull contract-review")
    }))
})
