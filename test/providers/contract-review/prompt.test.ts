import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { clauseDescriptions, clauseTypes } from "../../../providers/contract-review/data.ts"
import { noneAnswer } from "../../../providers/contract-review/gold.ts"
import { instructions, parseAnswer, promptFor } from "../../../providers/contract-review/prompt.ts"

const valid = JSON.stringify(noneAnswer)

const brokenReason = (reply: string) =>
  Either.match(parseAnswer(reply), { onLeft: (e) => e.reason, onRight: () => "kept" as const })

describe("the prompt", () => {
  it("gives the contract text unchanged, spacing and invisible characters included", () => {
    const text = "1.  Term.\n     Either party\u200b may terminate."
    expect(promptFor(text).user).toContain(text)
  })

  it("names the eight types with CUAD's descriptions, the same for every contract", () => {
    for (const t of clauseTypes) expect(instructions).toContain(`${t}: ${clauseDescriptions[t]}`)
    expect(promptFor("a").system).toBe(promptFor("b").system)
  })
})

describe("parseAnswer", () => {
  it("reads a bare JSON answer", () => {
    expect(parseAnswer(valid)).toEqual(Either.right(noneAnswer))
    expect(parseAnswer(`\n  ${valid}  \n`)).toEqual(Either.right(noneAnswer))
  })

  it("reads an answer inside a ```json fence, with prose around it", () => {
    expect(parseAnswer(`Here is my review.\n\n\`\`\`json\n${valid}\n\`\`\`\nLet me know.`)).toEqual(Either.right(noneAnswer))
    expect(parseAnswer(`\`\`\`\n${valid}\n\`\`\``)).toEqual(Either.right(noneAnswer))
  })

  it("reads an object wrapped in a sentence", () => {
    expect(parseAnswer(`My answer: ${valid} (done)`)).toEqual(Either.right(noneAnswer))
  })

  it("ignores keys beyond the eight types", () => {
    expect(parseAnswer(JSON.stringify({ ...noneAnswer, Parties: { present: true, quotes: [] } }))).toEqual(
      Either.right(noneAnswer)
    )
  })

  it("says how a reply breaks the contract instead of throwing", () => {
    expect(brokenReason("No clauses found.")).toBe("no-json")
    expect(brokenReason("```json\n{ \"Governing Law\": \n```")).toBe("invalid-json")
    expect(brokenReason("{ not json }")).toBe("invalid-json")
    expect(brokenReason(JSON.stringify({ "Governing Law": { present: true, quotes: ["x"] } }))).toBe("wrong-shape")
    expect(brokenReason(JSON.stringify({ ...noneAnswer, Exclusivity: { present: "yes", quotes: [] } }))).toBe(
      "wrong-shape"
    )
    expect(brokenReason("[]")).toBe("no-json")
  })

  it("names the offending field when the shape is wrong", () => {
    const result = parseAnswer(JSON.stringify({ ...noneAnswer, Exclusivity: { present: "yes", quotes: [] } }))
    expect(Either.isLeft(result) && result.left.detail).toContain("Exclusivity")
  })
})
