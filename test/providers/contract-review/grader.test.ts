import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { byClauseType, type ClauseType } from "../../../providers/contract-review/data.ts"
import {
  checkNames,
  cuadCounts,
  cuadJaccard,
  grade,
  gradeReply,
  indexContract,
  locateQuote,
  normalize
} from "../../../providers/contract-review/grader.ts"
import { type Answer, AnswerContractBroken } from "../../../providers/contract-review/prompt.ts"
import { caseFor } from "./synthetic.ts"

const law = "This Agreement shall be governed by the laws of the\n     State of Texas, without regard to its conflict of laws rules."
// A zero-width space inside a word and one beside a space, as PDF conversions leave them.
const assignment =
  "Neither party may assign this Agreement without the prior\u200B written consent of the other party, which shall not be unreasonably with\u200Bheld."
const convenience = "Either party may terminate this Agreement at any time with thirty (30) days written notice."

const text = [
  "MASTER SERVICES AGREEMENT",
  "",
  `1. Term. This Agreement begins on the Effective Date.   ${convenience}`,
  "",
  `2. Law. ${law}`,
  "",
  `3. Assignment. ${assignment}`,
  "",
  "4. Notices. All notices shall be in writing. The Company may not terminate this Agreement during the first year.",
  ""
].join("\n")

const contract = indexContract(
  caseFor(text, {
    "Governing Law": [law],
    "Anti-Assignment": [assignment],
    "Termination For Convenience": [convenience]
  })
)

const place = (type: ClauseType, quote: string) => locateQuote(contract, type, quote).place

/** An answer claiming exactly the given types present with the given quotes. */
const answer = (claims: Partial<Record<ClauseType, ReadonlyArray<string>>>): Answer =>
  byClauseType((t) => {
    const quotes = claims[t]
    return quotes === undefined ? { present: false, quotes: [] } : { present: true, quotes: [...quotes] }
  })

const gold = answer({ "Governing Law": [law], "Anti-Assignment": [assignment], "Termination For Convenience": [convenience] })

describe("quote matching", () => {
  it("a quote that overlaps the start of a span matches", () => {
    expect(place("Governing Law", "2. Law. This Agreement shall be governed by the laws")).toBe("on-span")
  })

  it("a quote that contains the whole span matches", () => {
    expect(
      place("Governing Law", `2. Law. ${law}\n\n3. Assignment.`)
    ).toBe("on-span")
  })

  it("a quote that lies inside a span matches", () => {
    expect(place("Governing Law", "governed by the laws of the State of Texas")).toBe("on-span")
  })

  it("whitespace differences do not matter: runs, newlines, tabs and no-break spaces collapse", () => {
    expect(place("Governing Law", "laws of the State of Texas")).toBe("on-span")
    expect(place("Governing Law", "  laws of the\tState\u00a0of \n Texas ")).toBe("on-span")
    expect(place("Termination For Convenience", "Effective Date. Either party")).toBe("on-span")
  })

  it("a zero-width space inside a span does not break matching", () => {
    expect(place("Anti-Assignment", "without the prior written consent")).toBe("on-span")
    expect(place("Anti-Assignment", "shall not be unreasonably withheld.")).toBe("on-span")
    expect(place("Anti-Assignment", assignment.replace(/\u200b/g, ""))).toBe("on-span")
    // A quote carrying the zero-width space itself matches too.
    expect(place("Anti-Assignment", "unreasonably with\u200Bheld")).toBe("on-span")
  })

  it("a quote from elsewhere in the contract is beside the span", () => {
    expect(place("Governing Law", "All notices shall be in writing.")).toBe("beside-span")
    // The sentence just before the span touches it but does not overlap it.
    expect(place("Termination For Convenience", "This Agreement begins on the Effective Date.")).toBe("beside-span")
    // A span of another type is elsewhere for this one.
    expect(place("Governing Law", convenience)).toBe("beside-span")
  })

  it("a wording that occurs both on a span and elsewhere matches", () => {
    expect(place("Termination For Convenience", "terminate this Agreement")).toBe("on-span")
  })

  it("a quote that is not in the contract never matches, however close to a span", () => {
    expect(place("Governing Law", "governed by the laws of the State of New York")).toBe("not-in-contract")
    expect(place("Governing Law", "GOVERNED BY THE LAWS OF THE STATE OF TEXAS")).toBe("not-in-contract")
    expect(place("Governing Law", "")).toBe("not-in-contract")
    expect(place("Governing Law", " \u200b\n")).toBe("not-in-contract")
  })

  it.prop(
    "any part of a span, with its spacing changed to any other Unicode spacing, matches",
    [fc.nat(), fc.nat(), fc.array(fc.constantFrom(" ", "\n", "\t", "\u00a0", "\u2003", " \u200b", "\u200b\n", "  \n "), { minLength: 1 })],
    ([a, b, spaces]) => {
      const from = a % law.length
      const to = from + 1 + (b % (law.length - from))
      const part = law.slice(from, to)
      let k = 0
      const respaced = part.replace(/\s+/g, () => spaces[k++ % spaces.length] ?? " ")
      if (respaced.trim() === "" || normalize(respaced) === "") return true
      return place("Governing Law", respaced) === "on-span"
    }
  )

  it("reports where in the original text the quote was found", () => {
    const at = locateQuote(contract, "Governing Law", "laws of the State of Texas").at
    expect(at).not.toBeNull()
    const [start, end] = at ?? [0, 0]
    expect(text.slice(start, end)).toBe("laws of the\n     State of Texas")
  })

  it("normalize deletes invisible characters and collapses Unicode spaces", () => {
    expect(normalize("\u2003a\u200b\u00a0 \u2009b\u00adc\ufeff\n")).toBe("a bc")
  })
})

describe("grading", () => {
  it("the gold answer scores 1 and passes every check", () => {
    const g = grade(contract, Either.right(gold))
    expect(g.reward).toBe(1)
    expect(Object.keys(g.checks)).toEqual(checkNames)
    expect(Object.values(g.checks).every((v) => v)).toBe(true)
  })

  it("a present clause whose quote matches scores 1, also beside other quotes that do not", () => {
    const g = grade(contract, Either.right(answer({ ...claimsOf(gold), "Governing Law": ["laws of Ohio", "State of Texas"] })))
    expect(g.clauses["Governing Law"].score).toBe(1)
    expect(g.checks["governing-law:quote-not-in-contract"]).toBe(true)
  })

  it("a quote beside the span scores 0.5 and fails quote-beside-span", () => {
    const g = grade(contract, Either.right(answer({ ...claimsOf(gold), "Governing Law": ["All notices shall be in writing."] })))
    expect(g.clauses["Governing Law"]).toMatchObject({ score: 0.5, lost: "quote-beside-span" })
    expect(g.reward).toBe(7.5 / 8)
    expect(failed(g.checks)).toEqual(["governing-law:quote-beside-span"])
  })

  it("a quote not in the contract scores 0.5 and fails quote-not-in-contract", () => {
    const g = grade(contract, Either.right(answer({ ...claimsOf(gold), "Anti-Assignment": ["Neither party may assign."] })))
    expect(g.clauses["Anti-Assignment"]).toMatchObject({ score: 0.5, lost: "quote-not-in-contract" })
    expect(failed(g.checks)).toEqual(["anti-assignment:quote-not-in-contract"])
  })

  it("claiming a present clause without quoting anything scores 0.5 as not in the contract", () => {
    const g = grade(contract, Either.right(answer({ ...claimsOf(gold), "Anti-Assignment": [] })))
    expect(g.clauses["Anti-Assignment"]).toMatchObject({ score: 0.5, lost: "quote-not-in-contract" })
  })

  it("the wrong presence scores 0 either way", () => {
    const claims = claimsOf(gold)
    delete claims["Governing Law"]
    const g = grade(contract, Either.right(answer({ ...claims, "Audit Rights": ["All notices shall be in writing."] })))
    expect(g.clauses["Governing Law"]).toMatchObject({ score: 0, lost: "wrong-presence" })
    expect(g.clauses["Audit Rights"]).toMatchObject({ score: 0, lost: "wrong-presence" })
    expect(g.reward).toBe(6 / 8)
    expect(failed(g.checks)).toEqual(["governing-law:wrong-presence", "audit-rights:wrong-presence"])
  })

  it("a broken answer contract is graded as all absent and says so", () => {
    const g = gradeReply(contract, "I could not find anything relevant.")
    expect(g.answerContract).toMatchObject({ kept: false, reason: "no-json" })
    expect(g.checks["answer-contract"]).toBe(false)
    // Three present types lost, five absent types right.
    expect(g.reward).toBe(5 / 8)
    expect(failed(g.checks)).toEqual([
      "governing-law:wrong-presence",
      "anti-assignment:wrong-presence",
      "termination-for-convenience:wrong-presence",
      "answer-contract"
    ])
    const broken = grade(contract, Either.left(new AnswerContractBroken({ reason: "wrong-shape", detail: "x" })))
    expect(broken.reward).toBe(5 / 8)
  })

  it("the reply text of a gold answer grades like the answer", () => {
    expect(gradeReply(contract, "```json\n" + JSON.stringify(gold) + "\n```").reward).toBe(1)
  })
})

describe("CUAD's Jaccard matching", () => {
  it("compares word sets after deleting . , ; : and lowercasing", () => {
    expect(cuadJaccard("the State of Texas.", "STATE OF TEXAS, the")).toBe(1)
    expect(cuadJaccard("a b c d", "a b")).toBe(0.5)
    expect(cuadJaccard("a b", "c d")).toBe(0)
  })

  it("splits on single spaces as evaluate.py does: runs give an empty word, / separates", () => {
    expect(cuadJaccard("a  b", "a b")).toBeCloseTo(2 / 3)
    expect(cuadJaccard("and/or", "and or")).toBe(1)
    expect(cuadJaccard("a\nb", "a b")).toBe(0)
  })

  it("counts per question like compute_precision_recall", () => {
    expect(cuadCounts([], ["x", "y"])).toEqual({ tp: 0, fp: 2, fn: 0 })
    expect(cuadCounts(["a b c", "d e f"], ["a b c", "a b c", "", "zzz"])).toEqual({ tp: 1, fp: 1, fn: 1 })
    expect(cuadCounts(["a b c"], [])).toEqual({ tp: 0, fp: 0, fn: 1 })
  })

  it("is reported beside the reward", () => {
    const g = grade(contract, Either.right(gold))
    expect(g.cuad).toEqual({ tp: 3, fp: 0, fn: 0, precision: 1, recall: 1 })
    const none = gradeReply(contract, JSON.stringify(answer({})))
    expect(none.cuad).toEqual({ tp: 0, fp: 0, fn: 3, precision: null, recall: 0 })
  })
})

function claimsOf(a: Answer): Partial<Record<ClauseType, ReadonlyArray<string>>> {
  const out: Partial<Record<ClauseType, ReadonlyArray<string>>> = {}
  for (const [t, c] of Object.entries(a) as Array<[ClauseType, Answer[ClauseType]]>) if (c.present) out[t] = c.quotes
  return out
}

function failed(checks: Readonly<Record<string, boolean>>): Array<string> {
  return Object.entries(checks).filter(([, ok]) => !ok).map(([name]) => name)
}
