/**
 * Grading a contract-review answer against CUAD's spans, with no judge and no network.
 *
 * Per clause type: 0 for the wrong presence, 1 for a correct absence, 1 for a present clause one
 * of whose quotes matches an annotated span, else 0.5. Reward = the mean over the eight types.
 *
 * Matching is done on normalised text (see `normalize`): a quote matches when one of its
 * occurrences in the normalised contract overlaps an annotated span (which covers containing a
 * span and lying inside one). A quote that does not occur in the contract never matches.
 *
 * CUAD's own span rule (word-set Jaccard >= 0.5, `evaluate.py`) is computed beside it as a
 * second figure, so results compare with the literature.
 */
import { Either } from "effect"
import { byClauseType, type Case, type ClauseType, clauseSlug, clauseTypes } from "./data.ts"
import { type Answer, type AnswerContractBroken, parseAnswer } from "./prompt.ts"

// ---------------------------------------------------------------------------------------------
// Normalisation

/**
 * Characters that render as nothing: zero-width space, non-joiner, joiner, word joiner, BOM /
 * zero-width no-break space, soft hyphen, Mongolian vowel separator. They are deleted, so a
 * quote typed without them still matches a span that has one inside a word or beside a space.
 */
const isInvisible = (c: number): boolean =>
  c === 0x200b || c === 0x200c || c === 0x200d || c === 0x2060 || c === 0xfeff || c === 0x00ad || c === 0x180e

/**
 * Unicode White_Space: ASCII whitespace, NEL, no-break space, ogham space, the U+2000..U+200A
 * spaces, line and paragraph separators, narrow no-break, medium mathematical and ideographic
 * space. A run of them (invisible characters inside the run included) becomes one U+0020.
 */
const isSpace = (c: number): boolean =>
  c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0x85 || c === 0xa0 || c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000

/**
 * The normal form quotes are compared in: invisible characters deleted, whitespace runs
 * collapsed to one space, ends trimmed. Case, punctuation and quote marks are kept: a quote
 * must be verbatim up to spacing.
 */
export const normalize = (text: string): string => normalizeWithOrigin(text).normalized.trim()

interface Normalized {
  readonly normalized: string
  /** `origin[i]` = index in the original text of normalised character i. */
  readonly origin: Int32Array
  /** `before[j]` = how many normalised characters come from original characters before j. */
  readonly before: Int32Array
}

const normalizeWithOrigin = (text: string): Normalized => {
  const out = new Uint16Array(text.length)
  const origin = new Int32Array(text.length)
  const before = new Int32Array(text.length + 1)
  let n = 0
  let inSpace = false
  for (let j = 0; j < text.length; j++) {
    before[j] = n
    const c = text.charCodeAt(j)
    if (isInvisible(c)) continue
    if (isSpace(c)) {
      if (inSpace) continue
      inSpace = true
      out[n] = 0x20
    } else {
      inSpace = false
      out[n] = c
    }
    origin[n] = j
    n++
  }
  before[text.length] = n
  // Decode in chunks: String.fromCharCode's argument count is bounded by the stack.
  let normalized = ""
  for (let i = 0; i < n; i += 8192) {
    normalized += String.fromCharCode(...out.subarray(i, Math.min(n, i + 8192)))
  }
  return { normalized, origin: origin.slice(0, n), before }
}

// ---------------------------------------------------------------------------------------------
// A contract prepared for searching

/** A span in normalised coordinates, [start, end), trimmed of the collapsed spaces at its ends. */
export interface NormalizedSpan {
  readonly start: number
  readonly end: number
}

/** A case with its normalised text, offset map and spans, computed once per contract. */
export interface IndexedContract {
  readonly case: Case
  readonly normalized: string
  /** Normalised index -> original index (UTF-16 units of `case.text`). */
  readonly origin: Int32Array
  readonly spans: { readonly [T in ClauseType]: ReadonlyArray<NormalizedSpan> }
}

export const indexContract = (c: Case): IndexedContract => {
  const { before, normalized, origin } = normalizeWithOrigin(c.text)
  const spans = {} as { [T in ClauseType]: ReadonlyArray<NormalizedSpan> }
  for (const type of clauseTypes) {
    spans[type] = c.clauses[type].spans.map((s) => {
      let start = before[s.start] ?? 0
      let end = before[s.end] ?? normalized.length
      while (start < end && normalized.charCodeAt(start) === 0x20) start++
      while (end > start && normalized.charCodeAt(end - 1) === 0x20) end--
      return { start, end }
    })
  }
  return { case: c, normalized, origin, spans }
}

// ---------------------------------------------------------------------------------------------
// Locating a quote

/** Where a quote is: on (overlapping) an annotated span of the type, elsewhere in the contract, or nowhere. */
export type QuotePlace = "on-span" | "beside-span" | "not-in-contract"

export interface QuoteLocation {
  readonly place: QuotePlace
  /** Original-text offsets [start, end) of the first occurrence on a span, else of the first occurrence. */
  readonly at: readonly [number, number] | null
}

/**
 * Finds a quote of `type` in the contract. Every occurrence is tried, so a wording that appears
 * both inside a span and elsewhere matches. An empty quote (after normalisation) quotes nothing
 * and counts as not in the contract.
 */
export const locateQuote = (contract: IndexedContract, type: ClauseType, quote: string): QuoteLocation => {
  const q = normalize(quote)
  if (q.length === 0) return { place: "not-in-contract", at: null }
  const spans = contract.spans[type]
  const toOriginal = (p: number): readonly [number, number] => [
    contract.origin[p] ?? 0,
    (contract.origin[p + q.length - 1] ?? 0) + 1
  ]
  let first = -1
  for (let p = contract.normalized.indexOf(q); p >= 0; p = contract.normalized.indexOf(q, p + 1)) {
    if (first < 0) first = p
    const end = p + q.length
    if (spans.some((s) => p < s.end && s.start < end)) return { place: "on-span", at: toOriginal(p) }
  }
  return first < 0 ? { place: "not-in-contract", at: null } : { place: "beside-span", at: toOriginal(first) }
}

// ---------------------------------------------------------------------------------------------
// CUAD's span rule (evaluate.py, get_jaccard and compute_precision_recall)

/**
 * CUAD's word set: delete `.` `,` `;` `:`, lowercase, `/` -> space, split on single spaces (so
 * runs of spaces give an empty word and a newline does not separate words), as evaluate.py does.
 */
const cuadWords = (s: string): Set<string> =>
  new Set(s.replace(/[.,;:]/g, "").toLowerCase().replace(/\//g, " ").split(" "))

/** CUAD's Jaccard index of two strings' word sets. */
export const cuadJaccard = (gold: string, prediction: string): number => {
  const g = cuadWords(gold)
  const p = cuadWords(prediction)
  let inter = 0
  for (const w of p) if (g.has(w)) inter++
  return inter / (g.size + p.size - inter)
}

/** CUAD's match threshold (`IOU_THRESH`). */
export const cuadThreshold = 0.5

export interface CuadCounts {
  readonly tp: number
  readonly fp: number
  readonly fn: number
}

/**
 * CUAD's counting for one question (contract x type): with no gold, every prediction is a false
 * positive; otherwise each gold span is a true positive if some prediction matches it, else a
 * false negative, and each prediction matching no span is a false positive. Empty predictions
 * are dropped and identical ones counted once, as evaluate.py's dict of predictions does.
 */
export const cuadCounts = (gold: ReadonlyArray<string>, predictions: ReadonlyArray<string>): CuadCounts => {
  const preds = [...new Set(predictions.filter((p) => p !== ""))]
  if (gold.length === 0) return { tp: 0, fp: preds.length, fn: 0 }
  const matches = (g: string, p: string) => cuadJaccard(g, p) >= cuadThreshold
  const tp = gold.filter((g) => preds.some((p) => matches(g, p))).length
  const fp = preds.filter((p) => !gold.some((g) => matches(g, p))).length
  return { tp, fp, fn: gold.length - tp }
}

export interface CuadFigure extends CuadCounts {
  /** tp / (tp + fp); null when nothing was predicted. */
  readonly precision: number | null
  /** tp / (tp + fn); null when there is no gold span. */
  readonly recall: number | null
}

/** Sums counts (over types, or over contracts for a micro average) and derives precision and recall. */
export const cuadFigure = (counts: ReadonlyArray<CuadCounts>): CuadFigure => {
  const tp = counts.reduce((a, c) => a + c.tp, 0)
  const fp = counts.reduce((a, c) => a + c.fp, 0)
  const fn = counts.reduce((a, c) => a + c.fn, 0)
  return { tp, fp, fn, precision: tp + fp > 0 ? tp / (tp + fp) : null, recall: tp + fn > 0 ? tp / (tp + fn) : null }
}

// ---------------------------------------------------------------------------------------------
// Grading

/** The ways to lose on one type; each is a check named `<type-slug>:<loss>`. */
export const losses = ["wrong-presence", "quote-not-in-contract", "quote-beside-span"] as const
export type Loss = (typeof losses)[number]

export interface ClauseGrade {
  readonly goldPresent: boolean
  readonly claimedPresent: boolean
  readonly score: 0 | 0.5 | 1
  /** Why the score is below 1; null when it is 1. */
  readonly lost: Loss | null
  readonly quotes: ReadonlyArray<{ readonly quote: string } & QuoteLocation>
  readonly cuad: CuadCounts
}

export interface Grade {
  /** Mean of the eight clause scores, in [0, 1]. */
  readonly reward: number
  /**
   * One check per way to lose, true when it passed: `<type-slug>:wrong-presence`,
   * `<type-slug>:quote-not-in-contract`, `<type-slug>:quote-beside-span` for each type, and
   * `answer-contract`. Every name is always present.
   */
  readonly checks: Readonly<Record<string, boolean>>
  /** Whether the reply kept the answer contract; a broken one was graded as all absent. */
  readonly answerContract:
    | { readonly kept: true }
    | { readonly kept: false; readonly reason: AnswerContractBroken["reason"]; readonly detail: string }
  readonly clauses: { readonly [T in ClauseType]: ClauseGrade }
  /** CUAD's figure for this contract, summed over the eight types. */
  readonly cuad: CuadFigure
}

/** Every check name, in a stable order. */
export const checkNames: ReadonlyArray<string> = [
  ...clauseTypes.flatMap((t) => losses.map((l) => `${clauseSlug(t)}:${l}`)),
  "answer-contract"
]

const allAbsent: Answer = byClauseType(() => ({ present: false, quotes: [] }))

const gradeClause = (contract: IndexedContract, type: ClauseType, claim: Answer[ClauseType]): ClauseGrade => {
  const gold = contract.case.clauses[type]
  const quotes = claim.present ? claim.quotes.map((quote) => ({ quote, ...locateQuote(contract, type, quote) })) : []
  const cuad = cuadCounts(gold.spans.map((s) => s.text), claim.present ? claim.quotes : [])
  const base = { goldPresent: gold.present, claimedPresent: claim.present, quotes, cuad }
  if (gold.present !== claim.present) return { ...base, score: 0, lost: "wrong-presence" }
  if (!gold.present) return { ...base, score: 1, lost: null }
  if (quotes.some((q) => q.place === "on-span")) return { ...base, score: 1, lost: null }
  // No quote at all is graded like a quote that is not in the contract: nothing was located.
  const lost = quotes.some((q) => q.place === "beside-span") ? "quote-beside-span" : "quote-not-in-contract"
  return { ...base, score: 0.5, lost }
}

/** Grades a decoded answer, or a broken one as if every type were claimed absent. */
export const grade = (contract: IndexedContract, answer: Either.Either<Answer, AnswerContractBroken>): Grade => {
  const claims = Either.getOrElse(answer, () => allAbsent)
  const clauses = {} as { [T in ClauseType]: ClauseGrade }
  const checks: Record<string, boolean> = {}
  for (const type of clauseTypes) {
    const g = gradeClause(contract, type, claims[type])
    clauses[type] = g
    for (const loss of losses) checks[`${clauseSlug(type)}:${loss}`] = g.lost !== loss
  }
  checks["answer-contract"] = Either.isRight(answer)
  const reward = clauseTypes.reduce((sum, t) => sum + clauses[t].score, 0) / clauseTypes.length
  return {
    reward,
    checks,
    answerContract: Either.match(answer, {
      onLeft: (e) => ({ kept: false as const, reason: e.reason, detail: e.detail }),
      onRight: () => ({ kept: true as const })
    }),
    clauses,
    cuad: cuadFigure(clauseTypes.map((t) => clauses[t].cuad))
  }
}

/** Parses a model's reply and grades it. */
export const gradeReply = (contract: IndexedContract, reply: string): Grade => grade(contract, parseAnswer(reply))
