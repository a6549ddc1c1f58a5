import { describe, expect, it } from "@effect/vitest"
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Effect, Either } from "effect"
import { LONG_CONTEXT_FILE, LONG_CONTEXT_PATH } from "../../../../providers/bfcl/data.ts"
import { canonDump } from "../../../../providers/bfcl/multiturn/canon.ts"
import { LONG_CONTEXT_ENV, loadLongContext, parseModuleConstants } from "../../../../providers/bfcl/multiturn/longContext.ts"
import { PyDict, PyOpaque, pyRepr } from "../../../../providers/bfcl/multiturn/py.ts"
import { tempDir } from "../../../support/tempDirs.ts"

const dataDir = resolve(process.env["ASSAY_DATA_DIR"] ?? "../shared/data")
const pinnedFile = join(dataDir, "bfcl", LONG_CONTEXT_PATH)
const hasPinned = existsSync(pinnedFile)

const constants = (text: string): PyDict => {
  const r = parseModuleConstants(text)
  if (Either.isLeft(r)) throw new Error(r.left.message)
  return r.right
}

describe("reading a module of literal assignments", () => {
  it("reads str in every quote form (escapes, adjacent literals, triple quotes), numbers, constants, Ellipsis and containers", () => {
    const c = constants(
      [
        "# a comment",
        `A = ['x',  "it's", ...]`,
        `B = {"k": 5000.00, 'n': -3, "e": 1e-07, 'big': 12345678901234567890, 't': (1,), 's': {2, 1}, 'none': None, 'yes': True}`,
        `C = """line one`,
        `line 'two'""" 'and' "\\tthree\\x41\\u00e9"`,
        "D=[",
        "  1,",
        "  2,  # trailing comma",
        "]",
        `E = r'a\\nb'`
      ].join("\n")
    )
    expect(c.keys()).toEqual(["A", "B", "C", "D", "E"])
    expect(pyRepr(c.get("A") ?? null)).toBe(`['x', "it's", Ellipsis]`)
    expect(c.get("A")).toContainEqual(new PyOpaque("Ellipsis", "ellipsis"))
    expect(canonDump(c.get("B") ?? null)).toBe(
      '{"k":5000.0,"n":-3,"e":1e-07,"big":12345678901234567890,"t":{"__tuple__":[1]},"s":{"__set__":[1,2]},"none":null,"yes":true}'
    )
    expect(c.get("C")).toBe("line one\nline 'two'and\tthreeAé")
    expect(c.get("D")).toEqual([1, 2])
    expect(c.get("E")).toBe("a\\nb")
  })

  it("refuses what is not a literal assignment, saying where", () => {
    const r = parseModuleConstants("A = [1, 2]\nB = len(A)\n")
    expect(Either.isLeft(r) && r.left.offset).toBe(15)
    expect(Either.isLeft(r) && r.left.message).toContain("name len is not a literal")
    expect(Either.isLeft(parseModuleConstants("A = 'open"))).toBe(true)
    expect(Either.isLeft(parseModuleConstants("import os"))).toBe(true)
  })
})

describe("loading upstream's long_context.py", () => {
  const temp = () => tempDir("assay-bfcl-lc-")
  // A data folder whose bfcl/v4 is the real one and whose long_context.py is the given text
  const dataWith = (text: string) => {
    const d = temp()
    mkdirSync(join(d, "bfcl", "func_source_code"), { recursive: true })
    symlinkSync(join(dataDir, "bfcl", "v4"), join(d, "bfcl", "v4"))
    writeFileSync(join(d, "bfcl", LONG_CONTEXT_PATH), text)
    return d
  }

  it("is pinned by upstream URL at the data's commit, with its sha256", () => {
    expect(LONG_CONTEXT_FILE.url).toBe(
      "https://raw.githubusercontent.com/ShishirPatil/gorilla/6ea57973c7a6097fd7c5915698c54c17c5b1b6c8/berkeley-function-call-leaderboard/bfcl_eval/eval_checker/multi_turn_eval/func_source_code/long_context.py"
    )
    expect(LONG_CONTEXT_FILE.sha256).toMatch(/^[0-9a-f]{64}$/)
  })

  it.effect("a file in the data folder whose sha256 is not the pinned one is refused; the override is read as it is", () =>
    Effect.gen(function*() {
      const d = dataWith("X = 1\n")
      const refused = yield* Effect.flip(loadLongContext({ dataDir: d, override: "" }))
      expect(refused.reason).toBe("hash-mismatch")
      const missing = yield* Effect.flip(loadLongContext({ dataDir: temp(), override: "" }))
      expect(missing.reason).toBe("missing")
      const own = join(temp(), "long_context.py")
      writeFileSync(own, "X = [1, ...]\n")
      const read = yield* loadLongContext({ dataDir: d, override: own })
      expect(pyRepr(read.get("X") ?? null)).toBe("[1, Ellipsis]")
      writeFileSync(own, "X = f(1)\n")
      const invalid = yield* Effect.flip(loadLongContext({ dataDir: d, override: own }))
      expect(invalid.reason).toBe("invalid")
    }))

  it.runIf(hasPinned || process.env[LONG_CONTEXT_ENV] !== undefined)(
    `the pinned file reads as its sixteen constants (else skipped: needs ${pinnedFile} or ${LONG_CONTEXT_ENV})`,
    () =>
      Effect.runPromise(
        Effect.gen(function*() {
          const lc = yield* loadLongContext({ dataDir })
          expect(lc.keys()).toEqual([
            "WATCH_LIST_EXTENSION",
            "TRANSACTION_HISTORY_EXTENSION",
            "MA_5_EXTENSION",
            "MA_20_EXTENSION",
            "TECHNOLOGY_EXTENSION",
            "AUTOMOBILE_EXTENSION",
            "ORDER_DETAIL_EXTENSION",
            "FILE_CONTENT_EXTENSION",
            "POPULATE_FILE_EXTENSION",
            "CAR_STATUS_METADATA_EXTENSION",
            "LONG_WEATHER_EXTENSION",
            "PARKING_BRAKE_INSTRUCTION",
            "INTERMEDIARY_CITIES",
            "CREDIT_CARD_EXTENSION",
            "BOOKING_RECORD_EXTENSION",
            "FILES_TAIL_USED"
          ])
          // upstream's watch list ends with a literal `...`
          const watch = lc.get("WATCH_LIST_EXTENSION")
          expect(Array.isArray(watch) && watch[watch.length - 1]).toEqual(new PyOpaque("Ellipsis", "ellipsis"))
          const card = (lc.get("CREDIT_CARD_EXTENSION") as PyDict).get("1234567812345678") as PyDict
          expect(canonDump(card.get("balance") ?? null)).toBe("5000.0")
        })
      )
  )
})
