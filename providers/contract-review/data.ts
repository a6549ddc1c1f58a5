/**
 * The contract-review case set: CUAD contracts and their lawyer-annotated spans for eight clause
 * types (`cuad/contracts/<id>.txt` + `cuad/gold/<id>.json` under the data root, read through the
 * kit's reader by upstream.ts, which derives the gold from CUAD's CSV as
 * `../shared/data/cuad/SOURCE.md` describes). Here: the gold format and its checks.
 */
import { Either, ParseResult, Schema } from "effect"
import { ContentId } from "../../src/index.ts"

// ---------------------------------------------------------------------------------------------
// The eight clause types

/** CUAD's category names (the `master_clauses.csv` column names), in the gold files' order. */
export const clauseTypes = [
  "Governing Law",
  "Anti-Assignment",
  "Cap On Liability",
  "Termination For Convenience",
  "Exclusivity",
  "Change Of Control",
  "Non-Compete",
  "Audit Rights"
] as const

export const ClauseType = Schema.Literal(...clauseTypes)
export type ClauseType = typeof ClauseType.Type

/**
 * CUAD's published category descriptions (`category_descriptions.csv`), as SOURCE.md gives them:
 * curly quotes and double spaces normalised. They are what the candidate is asked.
 */
export const clauseDescriptions: { readonly [T in ClauseType]: string } = {
  "Governing Law": "Which state/country's law governs the interpretation of the contract?",
  "Anti-Assignment": "Is consent or notice required of a party if the contract is assigned to a third party?",
  "Cap On Liability":
    "Does the contract include a cap on liability upon the breach of a party's obligation? This includes time limitation for the counterparty to bring claims or maximum amount for recovery.",
  "Termination For Convenience":
    "Can a party terminate this contract without cause (solely by giving a notice and allowing a waiting period to expire)?",
  "Exclusivity":
    "Is there an exclusive dealing commitment with the counterparty? This includes a commitment to procure all \"requirements\" from one party of certain technology, goods, or services or a prohibition on licensing or selling technology, goods or services to third parties, or a prohibition on collaborating or working with other parties), whether during the contract or after the contract ends (or both).",
  "Change Of Control":
    "Does one party have the right to terminate or is consent or notice required of the counterparty if such party undergoes a change of control, such as a merger, stock sale, transfer of all or substantially all of its assets or business, or assignment by operation of law?",
  "Non-Compete":
    "Is there a restriction on the ability of a party to compete with the counterparty or operate in a certain geography or business or technology sector?",
  "Audit Rights":
    "Does a party have the right to audit the books, records, or physical locations of the counterparty to ensure compliance with the contract?"
}

/** A record with one entry per clause type. */
export const byClauseType = <A>(f: (type: ClauseType) => A): { [T in ClauseType]: A } => {
  const out = {} as { [T in ClauseType]: A }
  for (const type of clauseTypes) out[type] = f(type)
  return out
}

/** Kebab-case form of a type, used in check names (`governing-law:wrong-presence`). */
export const clauseSlug = (type: ClauseType): string => type.toLowerCase().replace(/ /g, "-")

// ---------------------------------------------------------------------------------------------
// The gold file format (SOURCE.md, "Gold JSON format")

export const GoldSpan = Schema.Struct({
  text: Schema.String.pipe(Schema.minLength(1)),
  start: Schema.Int.pipe(Schema.nonNegative()),
  end: Schema.Int.pipe(Schema.nonNegative()),
  normalized: Schema.Boolean,
  /** Present only when `normalized`: the region of the text actually matched. */
  matched_text: Schema.optional(Schema.String)
})
export type GoldSpan = typeof GoldSpan.Type

export const GoldClause = Schema.Struct({
  present: Schema.Boolean,
  answer: Schema.String,
  spans: Schema.Array(GoldSpan)
})
export type GoldClause = typeof GoldClause.Type

export const GoldFile = Schema.Struct({
  id: Schema.String.pipe(Schema.minLength(1)),
  split: Schema.Literal("dev", "heldout"),
  source_file: Schema.String,
  source_csv_filename: Schema.String,
  source: Schema.Struct({
    repo: Schema.String,
    commit: Schema.String,
    text_path: Schema.String,
    csv_path: Schema.String
  }),
  text_file: Schema.String,
  text_sha256: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/)),
  text_bytes: Schema.Int.pipe(Schema.nonNegative()),
  text_chars: Schema.Int.pipe(Schema.nonNegative()),
  offset_unit: Schema.Literal("unicode_code_points"),
  clause_types: Schema.Array(ClauseType),
  clauses: Schema.Struct(byClauseType(() => GoldClause))
})
export type GoldFile = typeof GoldFile.Type

// ---------------------------------------------------------------------------------------------
// The loaded case set

/** One annotated span, with offsets into the JavaScript string (UTF-16 code units). */
export interface Span {
  readonly text: string
  readonly start: number
  readonly end: number
}

export interface ClauseGold {
  readonly present: boolean
  readonly spans: ReadonlyArray<Span>
}

/** One contract with its gold; the unit an environment names. */
export interface Case {
  readonly id: string
  readonly text: string
  readonly clauses: { readonly [T in ClauseType]: ClauseGold }
  /** The gold file as decoded (code-point offsets, provenance). */
  readonly file: GoldFile
}

/** Why a gold file or its contract cannot be used: the detail of the reader's `invalid` error. */
const reject = (detail: string): Either.Either<never, string> => Either.left(detail)

/** Code-point offsets -> UTF-16 offsets; the identity unless the text has astral characters. */
const codePointToUtf16 = (text: string): ((cp: number) => number) => {
  if (!/[\uD800-\uDFFF]/.test(text)) return (cp) => cp
  const map: Array<number> = []
  let unit = 0
  for (const ch of text) {
    map.push(unit)
    unit += ch.length
  }
  map.push(unit)
  return (cp) => map[cp] ?? -1
}

/**
 * Checks what the schema cannot: the file names its own id, the eight types in order, presence
 * agrees with the spans, and every span is where its offsets say. Left: what is wrong.
 */
export const checkGold = (gold: GoldFile, id: string, text: string, bytes: Uint8Array): Either.Either<Case, string> => {
  if (gold.id !== id) return reject(`id is "${gold.id}", the file name says "${id}"`)
  if (gold.clause_types.join("|") !== clauseTypes.join("|")) {
    return reject(`clause_types must be the eight types in order: ${clauseTypes.join(", ")}`)
  }
  const hash = ContentId.sha256Hex(bytes)
  if (hash !== gold.text_sha256) return reject(`contracts/${id}.txt has sha256 ${hash}, the gold says ${gold.text_sha256}`)
  const toUnit = codePointToUtf16(text)
  const clauses = {} as { [T in ClauseType]: ClauseGold }
  for (const type of clauseTypes) {
    const clause = gold.clauses[type]
    if (clause.present !== clause.spans.length > 0) {
      return reject(`${type}: present is ${clause.present} but it has ${clause.spans.length} spans`)
    }
    const spans: Array<Span> = []
    for (const [i, span] of clause.spans.entries()) {
      const start = toUnit(span.start)
      const end = toUnit(span.end)
      const expected = span.normalized ? span.matched_text : span.text
      if (start < 0 || end < start || end > text.length || expected === undefined || text.slice(start, end) !== expected) {
        return reject(`${type} span ${i} [${span.start}, ${span.end}) is not its text in contracts/${id}.txt`)
      }
      spans.push({ text: text.slice(start, end), start, end })
    }
    clauses[type] = { present: clause.present, spans }
  }
  return Either.right({ id, text, clauses, file: gold })
}

const decodeGold = Schema.decodeUnknownEither(Schema.parseJson(GoldFile), { errors: "all", onExcessProperty: "ignore" })

/**
 * One case from its gold file's text and its contract's bytes. Left: what is wrong with the gold
 * file (not JSON, not the format, not agreeing with the contract).
 */
export const caseOf = (id: string, goldText: string, textBytes: Uint8Array): Either.Either<Case, string> =>
  Either.gen(function*() {
    const gold = yield* Either.mapLeft(decodeGold(goldText), (e) => ParseResult.TreeFormatter.formatErrorSync(e))
    const text = yield* Either.try({
      // ignoreBOM keeps a leading U+FEFF in the text, so offsets count it as Python's str does.
      try: () => new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(textBytes),
      catch: () => `contracts/${id}.txt is not valid UTF-8`
    })
    return yield* checkGold(gold, id, text, textBytes)
  })
