/**
 * The scripted candidates: `gold` (CUAD's own annotation as an answer) and `none` (every type
 * claimed absent). Both answer through the same reply text a model would send.
 */
import { byClauseType, type Case } from "./data.ts"
import { type Answer, replyFor } from "./prompt.ts"

/** Each present type quotes all its annotated spans verbatim; each absent type is absent. */
export const goldAnswer = (c: Case): Answer =>
  byClauseType((t) => ({ present: c.clauses[t].present, quotes: c.clauses[t].spans.map((s) => s.text) }))

/** Claims every type absent, whatever the contract. */
export const noneAnswer: Answer = byClauseType(() => ({ present: false, quotes: [] }))

/** The reply text of the gold candidate for a contract. */
export const goldReply = (c: Case): string => replyFor(goldAnswer(c))

/** The reply text of the `none` candidate. */
export const noneReply: string = replyFor(noneAnswer)
