/**
 * What a candidate is given (the contract and the eight clause types with CUAD's descriptions)
 * and the JSON answer contract it must reply in. A reply that breaks the contract is a value,
 * so it can be graded (as all absent) rather than crash the Attempt.
 */
import { Either, JSONSchema, ParseResult, Schema } from "effect"
import { byClauseType, clauseDescriptions, clauseTypes } from "./data.ts"

// ---------------------------------------------------------------------------------------------
// The answer contract

export const ClauseAnswer = Schema.Struct({
  present: Schema.Boolean,
  quotes: Schema.Array(Schema.String)
}).annotations({ identifier: "ClauseAnswer" })
export type ClauseAnswer = typeof ClauseAnswer.Type

/** One `{ present, quotes }` per clause type, keyed by CUAD's category name. Extra keys are ignored. */
export const Answer = Schema.Struct(byClauseType(() => ClauseAnswer)).annotations({ identifier: "ContractReviewAnswer" })
export type Answer = typeof Answer.Type

/** Why a reply is not an answer: nothing that looks like JSON, JSON that does not parse, or the wrong shape. */
export class AnswerContractBroken extends Schema.TaggedError<AnswerContractBroken>()("AnswerContractBroken", {
  reason: Schema.Literal("no-json", "invalid-json", "wrong-shape"),
  detail: Schema.String
}) {
  override get message(): string {
    return `answer contract broken (${this.reason}): ${this.detail}`
  }
}

/** The answer contract as JSON Schema, as shown to the candidate. */
export const answerJsonSchema: JSONSchema.JsonSchema7Root = JSONSchema.make(Answer)

// ---------------------------------------------------------------------------------------------
// The prompt

/** The fixed part of the prompt (no contract text), so its digest names the task wording. */
export const instructions: string = [
  "You are reviewing a commercial contract, as a lawyer would.",
  "For each clause type below, say whether the contract contains such a clause and, if it does,",
  "quote the passage(s) of the contract that make up the clause, copied verbatim from the contract",
  "(whole sentences; do not paraphrase, abbreviate or add ellipses).",
  "",
  "Clause types (CUAD categories):",
  ...clauseTypes.map((t) => `- ${t}: ${clauseDescriptions[t]}`),
  "",
  "Answer with one JSON object and nothing else (a ```json fenced block is also accepted).",
  "It has exactly one key per clause type, spelled as above, each with the value",
  "{ \"present\": boolean, \"quotes\": [string, ...] }. When present is false, quotes is [].",
  "Example shape:",
  JSON.stringify(
    byClauseType((t) =>
      t === clauseTypes[0] ? { present: true, quotes: ["<verbatim passage>"] } : { present: false, quotes: [] }
    )
  ),
  "",
  "The answer must satisfy this JSON Schema:",
  JSON.stringify(answerJsonSchema)
].join("\n")

export interface Prompt {
  /** Constant across contracts. */
  readonly system: string
  /** The contract itself. */
  readonly user: string
}

/** The prompt for one contract; the contract text is passed unchanged (spacing included). */
export const promptFor = (contractText: string): Prompt => ({
  system: instructions,
  user: `<contract>\n${contractText}\n</contract>`
})

// ---------------------------------------------------------------------------------------------
// Reading a reply

const fence = /```[ \t]*([A-Za-z0-9_-]*)[^\n]*\n([\s\S]*?)```/g

/**
 * The JSON text in a reply: the first ```json fenced block (else the first fenced block of any
 * language), else the reply itself when it starts with `{`, else the span from the first `{` to
 * the last `}` (models often wrap a bare object in a sentence).
 */
export const extractJson = (reply: string): string | undefined => {
  const blocks = [...reply.matchAll(fence)]
  const json = blocks.find((m) => (m[1] ?? "").toLowerCase() === "json") ?? blocks[0]
  if (json !== undefined) return (json[2] ?? "").trim()
  const trimmed = reply.trim()
  if (trimmed.startsWith("{")) return trimmed
  const open = trimmed.indexOf("{")
  const close = trimmed.lastIndexOf("}")
  return open >= 0 && close > open ? trimmed.slice(open, close + 1) : undefined
}

const decodeAnswer = Schema.decodeUnknownEither(Answer, { errors: "all", onExcessProperty: "ignore" })

/** Decodes a model's reply; never throws. */
export const parseAnswer = (reply: string): Either.Either<Answer, AnswerContractBroken> => {
  const text = extractJson(reply)
  if (text === undefined) {
    return Either.left(new AnswerContractBroken({ reason: "no-json", detail: "the reply holds no JSON object" }))
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    // JSON.parse reports malformed input only by throwing; it becomes the broken-contract value.
    return Either.left(
      new AnswerContractBroken({ reason: "invalid-json", detail: e instanceof Error ? e.message : String(e) })
    )
  }
  return Either.mapLeft(
    decodeAnswer(json),
    (e) => new AnswerContractBroken({ reason: "wrong-shape", detail: ParseResult.TreeFormatter.formatErrorSync(e) })
  )
}

/** The reply a scripted candidate sends for an answer (plain JSON). */
export const replyFor = (answer: Answer): string => JSON.stringify(answer)
