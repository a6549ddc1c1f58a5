/**
 * Grading a competitor-discovery answer. Three parts, weighted as the seed's room workflow has
 * them: recall of the reference set (0.4), grounding (0.3: the share of entries whose quote is,
 * verbatim, on the page the entry cites, and that page was fetched by THIS Attempt, never merely
 * somewhere on the web) and relevance (0.3: the share of entries a judge model holds to be
 * competitors). Without a judge, relevance is not evaluated and the reward is the other two
 * renormalised to [0, 1]: (0.4 recall + 0.3 grounding) / 0.7.
 */
import { Schema } from "effect"
import { type Canonical, FrozenWeb } from "../../src/index.ts"
import type { DiscoveryTask } from "./tasks.ts"

export const WEIGHTS = { recall: 0.4, grounding: 0.3, relevance: 0.3 } as const

/** A quote shorter than this (after whitespace is collapsed) grounds nothing: "restaurants" is on every page. */
export const MIN_QUOTE_CHARS = 20

export const Entry = Schema.Struct({
  name: Schema.String,
  site: Schema.String,
  claim: Schema.String,
  quote: Schema.String,
  source: Schema.String
})
export type Entry = typeof Entry.Type

/** The answer's shape: a `competitors` list, each element read as an Entry on its own. */
const Answer = Schema.Struct({ competitors: Schema.Array(Schema.Unknown) })

/** One element of the answer's list: an entry, or what could not be read as one (it counts, and fails). */
export type Listed = { readonly ok: true; readonly entry: Entry } | { readonly ok: false; readonly raw: unknown }

/**
 * The answer's entries, from the last reply's text: the JSON object in it (bare, or in a ```json
 * fence) with a `competitors` list. Undefined when there is none.
 */
export const parseAnswer = (text: string | null): ReadonlyArray<Listed> | undefined => {
  if (text === null) return undefined
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text)
  const body = fenced ? fenced[1]! : text
  const start = body.indexOf("{")
  const end = body.lastIndexOf("}")
  if (start < 0 || end <= start) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(body.slice(start, end + 1))
  } catch {
    return undefined
  }
  const answer = Schema.decodeUnknownOption(Answer)(parsed)
  if (answer._tag === "None") return undefined
  return answer.value.competitors.map((raw): Listed => {
    const decoded = Schema.decodeUnknownOption(Entry)(raw)
    return decoded._tag === "Some" ? { ok: true, entry: decoded.value } : { ok: false, raw }
  })
}

/** A page this Attempt fetched, with the text the candidate was given. */
export interface FetchedPage {
  readonly url: string
  readonly text: string
}

export type Grounding =
  | { readonly grounded: true }
  | { readonly grounded: false; readonly why: "not-an-entry" | "quote-too-short" | "source-not-fetched" | "quote-not-on-source" }

export const groundingOf = (listed: Listed, fetched: ReadonlyArray<FetchedPage>): Grounding => {
  if (!listed.ok) return { grounded: false, why: "not-an-entry" }
  const { quote, source } = listed.entry
  if (FrozenWeb.normalizeText(quote).length < MIN_QUOTE_CHARS) return { grounded: false, why: "quote-too-short" }
  const key = FrozenWeb.pageKey(source)
  const pages = fetched.filter((p) => key !== undefined && FrozenWeb.pageKey(p.url) === key)
  if (pages.length === 0) return { grounded: false, why: "source-not-fetched" }
  return pages.some((p) => FrozenWeb.containsQuote(p.text, quote)) ? { grounded: true } : { grounded: false, why: "quote-not-on-source" }
}

export interface Graded {
  readonly reward: number
  readonly checks: Readonly<Record<string, boolean>>
  readonly notEvaluated: ReadonlyArray<string>
  readonly details: Canonical.Json
}

const entryHost = (l: Listed): string | undefined => (l.ok ? FrozenWeb.hostOf(l.entry.site) : undefined)

/**
 * The grade of an answer: `listed` undefined when the reply held no answer; `relevant` one
 * verdict per listed element (in order) when a judge was asked, null when not.
 */
export const grade = (
  task: DiscoveryTask,
  listed: ReadonlyArray<Listed> | undefined,
  fetched: ReadonlyArray<FetchedPage>,
  relevant: ReadonlyArray<boolean> | null
): Graded => {
  const notEvaluated = relevant === null ? ["relevance"] : []
  if (listed === undefined) {
    return {
      reward: 0,
      checks: { answer: false, recall: false, grounding: false, ...(relevant === null ? {} : { relevance: false }) },
      notEvaluated,
      details: { answer: "no JSON object with a competitors list in the final reply" }
    }
  }
  const hosts = new Set(listed.map(entryHost).filter((h): h is string => h !== undefined))
  const found = task.references.filter((r) => r.hosts.some((h) => hosts.has(h)))
  const recall = found.length / task.references.length
  const groundings = listed.map((l) => groundingOf(l, fetched))
  const grounding = listed.length === 0 ? 0 : groundings.filter((g) => g.grounded).length / listed.length
  const relevance = relevant === null ? null : listed.length === 0 ? 0 : relevant.filter(Boolean).length / listed.length
  const reward = relevance === null
    ? (WEIGHTS.recall * recall + WEIGHTS.grounding * grounding) / (WEIGHTS.recall + WEIGHTS.grounding)
    : WEIGHTS.recall * recall + WEIGHTS.grounding * grounding + WEIGHTS.relevance * relevance
  const nonCompetitors = task.nonCompetitors.filter((n) => n.hosts.some((h) => hosts.has(h))).map((n) => n.name)
  return {
    reward,
    checks: {
      answer: true,
      recall: recall === 1,
      grounding: listed.length > 0 && grounding === 1,
      ...(relevance === null ? {} : { relevance: listed.length > 0 && relevance === 1 })
    },
    notEvaluated,
    details: {
      recall,
      grounding,
      relevance,
      weights: relevance === null ? { recall: 0.4 / 0.7, grounding: 0.3 / 0.7 } : { ...WEIGHTS },
      found: found.map((r) => r.name),
      missed: task.references.filter((r) => !found.includes(r)).map((r) => r.name),
      nonCompetitorsListed: nonCompetitors,
      entries: listed.map((l, i) => ({
        name: l.ok ? l.entry.name : null,
        site: l.ok ? l.entry.site : null,
        ...groundings[i]!,
        ...(relevant === null ? {} : { relevant: relevant[i] ?? false })
      }))
    }
  }
}
