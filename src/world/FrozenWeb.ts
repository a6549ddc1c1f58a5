/**
 * A frozen web: pages (URL, title, HTML) kept as data and served as `http/request` effects, so
 * admission, faults, recording and replay apply to a search or a fetch as to any effect. The
 * handler answers as a live HTTP handler would (status, URL, content type, body); what the
 * candidate reads is made from the body by `pageText`, so the recording keeps the page as served
 * and a frozen web can be rebuilt from any recording of live fetches (`fromRecording`).
 *
 * A search budget (searches per Attempt) is a scoped resource beside the wallet: a search
 * reserves one before its effect is performed and gives it back when the effect faults, so an
 * infrastructure failure never costs the candidate a search.
 */
import { Context, Effect, Layer, Ref, Schema } from "effect"
import { convert } from "html-to-text"
import type { Json } from "../content/Canonical.ts"
import type { RecordedEffect } from "../schema/Attempt.ts"
import type { ToolSpec } from "./Tool.ts"
import * as WE from "./WorldEffects.ts"

export const Page = Schema.Struct({ url: Schema.String, title: Schema.String, html: Schema.String })
export type Page = typeof Page.Type

export interface FrozenWeb {
  /** By `pageKey` of the page's URL. */
  readonly pages: ReadonlyMap<string, Page>
}

/** The search engine's endpoint: a reserved name (RFC 2606 `.invalid`), never a real host. */
export const SEARCH_URL = "https://search.frozen-web.invalid/search"

/** How many hits a search returns. */
export const SEARCH_HITS = 5

/**
 * The most characters of a page's text a fetch gives. The cut is made on the text, never on the
 * HTML: cutting markup first can drop every sentence of a page behind its scripts and styles.
 */
export const PAGE_TEXT_LIMIT = 50_000

// ---------------------------------------------------------------------------------------------
// URLs

/**
 * A URL as the web keys it: scheme added when missing, host lowercased, fragment and trailing
 * slash dropped, http and https one page. Undefined when it is not a URL at all.
 */
export const pageKey = (raw: string): string | undefined => {
  const text = raw.trim()
  if (text.length === 0) return undefined
  let url: URL
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`)
  } catch {
    return undefined
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
  const path = url.pathname.replace(/\/+$/, "")
  return `${url.hostname.replace(/^www\./, "")}${path}${url.search}`
}

/** The host a URL names, without `www.`; undefined when it is not a URL. */
export const hostOf = (raw: string): string | undefined => pageKey(raw)?.split(/[/?]/)[0]

export const make = (pages: ReadonlyArray<Page>): FrozenWeb => {
  const byKey = new Map<string, Page>()
  for (const page of pages) {
    const key = pageKey(page.url)
    if (key !== undefined) byKey.set(key, page)
  }
  return { pages: byKey }
}

export const lookup = (web: FrozenWeb, url: string): Page | undefined => {
  const key = pageKey(url)
  return key === undefined ? undefined : web.pages.get(key)
}

// ---------------------------------------------------------------------------------------------
// Text

/**
 * A page's readable text, as the candidate is given it: html-to-text with no line wrapping, no
 * upper-casing of headings and no link targets inline, so a sentence reads as written and a quote
 * copied from it is found on the page again. Links are listed after the text, one a line.
 */
export const pageText = (html: string): string => {
  const text = convert(html, {
    wordwrap: false,
    selectors: [
      { selector: "a", options: { ignoreHref: true } },
      { selector: "img", format: "skip" },
      { selector: "nav", format: "skip" },
      ...["h1", "h2", "h3", "h4", "h5", "h6"].map((h) => ({ selector: h, options: { uppercase: false } })),
      // A table as rows of cells; columns wide enough that a cell's sentence is never wrapped.
      { selector: "table", format: "dataTable", options: { uppercaseHeaderCells: false, maxColumnWidth: 10_000 } }
    ]
  })
  const links = linksOf(html)
  return links.length === 0 ? text : `${text}\n\nLinks:\n${links.map((l) => `- ${l.text}: ${l.href}`).join("\n")}`
}

/** The links of a page (text and target), in order, each target once. */
export const linksOf = (html: string): ReadonlyArray<{ readonly text: string; readonly href: string }> => {
  const seen = new Set<string>()
  const links: Array<{ text: string; href: string }> = []
  for (const m of html.matchAll(/<a\s[^>]*href\s*=\s*"([^"]+)"[^>]*>([\s\S]*?)<\/a>/gi)) {
    const href = m[1]!
    if (seen.has(href) || !/^https?:\/\//i.test(href)) continue
    seen.add(href)
    links.push({ href, text: convert(m[2]!, { wordwrap: false }).trim() })
  }
  return links
}

/** The text of a page's `<title>`, entities decoded; "" when it has none. */
export const titleOf = (html: string): string => {
  const m = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)
  return m ? convert(m[1]!, { wordwrap: false }).trim() : ""
}

/**
 * Text as a quote is matched against it: Unicode compatibility forms folded (NFKC), typographic
 * quotes and dashes made plain, every run of whitespace one space. Case is kept: a quote is verbatim.
 */
export const normalizeText = (text: string): string =>
  text
    .normalize("NFKC")
    .replace(/[\u2018\u2019\u201B\u2032]/g, "'")
    .replace(/[\u201C\u201D\u201F\u2033]/g, "\"")
    .replace(/[\u2010-\u2015\u2212]/g, "-")
    .replace(/\s+/g, " ")
    .trim()

/** Whether `quote` appears, as written (up to `normalizeText`), in `text`. */
export const containsQuote = (text: string, quote: string): boolean => {
  const q = normalizeText(quote)
  return q.length > 0 && normalizeText(text).includes(q)
}

// ---------------------------------------------------------------------------------------------
// Search

export const SearchHit = Schema.Struct({ url: Schema.String, title: Schema.String, snippet: Schema.String })
export type SearchHit = typeof SearchHit.Type

/** A search response's body: its hits as JSON. */
const SearchHits = Schema.parseJson(Schema.Array(SearchHit))

const STOPWORDS = new Set(
  "a an and are as at be by for from how in is it of on or that the this to vs was what which who why with".split(" ")
)

const termsOf = (text: string): ReadonlyArray<string> =>
  text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((t) => t.length > 1 && !STOPWORDS.has(t))

interface Indexed {
  readonly page: Page
  readonly text: string
  readonly title: ReadonlyArray<string>
  readonly body: ReadonlyMap<string, number>
  readonly length: number
}

const indexes = new WeakMap<FrozenWeb, ReadonlyArray<Indexed>>()

const indexOf = (web: FrozenWeb): ReadonlyArray<Indexed> => {
  const cached = indexes.get(web)
  if (cached) return cached
  const built = [...web.pages.values()].map((page): Indexed => {
    const text = convert(page.html, { wordwrap: false, selectors: [{ selector: "a", options: { ignoreHref: true } }, { selector: "img", format: "skip" }] })
    const terms = termsOf(text)
    const body = new Map<string, number>()
    for (const t of terms) body.set(t, (body.get(t) ?? 0) + 1)
    return { page, text, title: termsOf(page.title), body, length: terms.length }
  })
  indexes.set(web, built)
  return built
}

const snippetOf = (text: string, terms: ReadonlyArray<string>): string => {
  const flat = normalizeText(text)
  const lower = flat.toLowerCase()
  const at = terms.map((t) => lower.indexOf(t)).filter((i) => i >= 0).sort((a, b) => a - b)[0] ?? 0
  const start = Math.max(0, at - 60)
  return `${start > 0 ? "…" : ""}${flat.slice(start, start + 200).trim()}${start + 200 < flat.length ? "…" : ""}`
}

/**
 * The pages a query finds, best first: BM25 over the page text, a title term counting as three
 * body terms; ties broken by URL so a search is a pure function of the web and the query.
 */
export const search = (web: FrozenWeb, query: string, limit = SEARCH_HITS): ReadonlyArray<SearchHit> => {
  const terms = [...new Set(termsOf(query))]
  if (terms.length === 0) return []
  const docs = indexOf(web)
  const avg = docs.reduce((n, d) => n + d.length, 0) / Math.max(1, docs.length)
  const k1 = 1.2
  const b = 0.75
  const idfs = new Map(terms.map((t) => {
    const df = docs.filter((x) => x.body.has(t) || x.title.includes(t)).length
    return [t, Math.log(1 + (docs.length - df + 0.5) / (df + 0.5))] as const
  }))
  const scored = docs.map((d) => {
    let score = 0
    for (const t of terms) {
      const tf = (d.body.get(t) ?? 0) + 3 * d.title.filter((x) => x === t).length
      if (tf === 0) continue
      const idf = idfs.get(t) ?? 0
      score += idf * (tf * (k1 + 1)) / (tf + k1 * (1 - b + b * d.length / avg))
    }
    return { d, score }
  })
  return scored
    .filter((s) => s.score > 0)
    .sort((x, y) => y.score - x.score || (x.d.page.url < y.d.page.url ? -1 : 1))
    .slice(0, limit)
    .map(({ d }) => ({ url: d.page.url, title: d.page.title, snippet: snippetOf(d.text, terms) }))
}

// ---------------------------------------------------------------------------------------------
// The effect: requests and responses as a live HTTP handler has them

export const HttpRequest = Schema.Struct({ method: Schema.Literal("GET"), url: Schema.String })
export type HttpRequest = typeof HttpRequest.Type

export const HttpResponse = Schema.Struct({
  status: Schema.Int,
  url: Schema.String,
  contentType: Schema.String,
  body: Schema.String
})
export type HttpResponse = typeof HttpResponse.Type

/** The effect of a search: keyed by the engine's endpoint, the query in the request's URL. */
export const searchEffect = (query: string): WE.EffectRequest => {
  const url = `${SEARCH_URL}?q=${encodeURIComponent(query)}`
  return { kind: "http/request", key: SEARCH_URL, request: { method: "GET", url } }
}

/** The effect of a fetch: keyed by the page's URL as the web keys it (a bad URL by its text). */
export const fetchEffect = (url: string): WE.EffectRequest => ({
  kind: "http/request",
  key: pageKey(url) ?? url.trim(),
  request: { method: "GET", url: url.trim() }
})

const response = (r: HttpResponse): Json => r as unknown as Json

/** The live handler of `http/request` served from a frozen web: every other host is a 404. */
export const handler = (web: FrozenWeb): WE.Handler => (effect) =>
  Effect.gen(function*() {
    const request = yield* Schema.decodeUnknown(HttpRequest)(effect.request).pipe(
      Effect.mapError((e) => new WE.EffectFailed({ kind: effect.kind, key: effect.key, reason: "handler", detail: e.message }))
    )
    if (request.url.startsWith(`${SEARCH_URL}?`)) {
      const query = new URL(request.url).searchParams.get("q") ?? ""
      return response({ status: 200, url: request.url, contentType: "application/json", body: JSON.stringify(search(web, query)) })
    }
    const page = lookup(web, request.url)
    return page === undefined
      ? response({ status: 404, url: request.url, contentType: "text/plain", body: "Not Found" })
      : response({ status: 200, url: page.url, contentType: "text/html; charset=utf-8", body: page.html })
  })

export const handlers = (web: FrozenWeb): WE.Handlers => ({ "http/request": handler(web) })

// ---------------------------------------------------------------------------------------------
// Freezing a live run

/**
 * A frozen web made from a recording's `http/request` effects: every successful HTML response
 * (2xx, an HTML or unstated content type) is a page, at the URL it was served from, titled by
 * its `<title>`; searches, failures and other kinds are left out. The last response for a URL wins.
 */
export const fromRecording = (recording: ReadonlyArray<RecordedEffect>): FrozenWeb => {
  const pages: Array<Page> = []
  for (const r of recording) {
    if (r.kind !== "http/request" || !("ok" in r.outcome)) continue
    const ok = Schema.decodeUnknownOption(HttpResponse)(r.outcome.ok)
    if (ok._tag === "None") continue
    const res = ok.value
    if (res.status < 200 || res.status > 299 || res.url.startsWith(SEARCH_URL)) continue
    if (res.contentType !== "" && !/html/i.test(res.contentType)) continue
    pages.push({ url: res.url, title: titleOf(res.body), html: res.body })
  }
  return make(pages)
}

// ---------------------------------------------------------------------------------------------
// The search budget

export class SearchBudgetExhausted extends Schema.TaggedError<SearchBudgetExhausted>()("SearchBudgetExhausted", {
  allowed: Schema.Int
}) {
  override get message() {
    return `search budget exhausted: ${this.allowed} of ${this.allowed} searches used`
  }
}

export interface SearchBudget {
  /** Take one search; fails when the Attempt has used all it may. */
  readonly reserve: Effect.Effect<void, SearchBudgetExhausted>
  /** Give back a search whose effect did not happen (refused or faulted). */
  readonly release: Effect.Effect<void>
  readonly used: Effect.Effect<number>
  /** null: no limit. */
  readonly allowed: number | null
}
export const SearchBudget = Context.GenericTag<SearchBudget>("assay/SearchBudget")

export const makeSearchBudget = (allowed: number | null): Effect.Effect<SearchBudget> =>
  Effect.map(Ref.make(0), (used) => ({
    allowed,
    // One atomic update: searches on other fibers can never overspend it.
    reserve: Ref.modify(used, (n): [boolean, number] => (allowed !== null && n >= allowed ? [false, n] : [true, n + 1])).pipe(
      Effect.flatMap((ok) => (ok ? Effect.void : Effect.fail(new SearchBudgetExhausted({ allowed: allowed ?? 0 }))))
    ),
    release: Ref.update(used, (n) => Math.max(0, n - 1)),
    used: Ref.get(used)
  }))

/** A search budget for one Attempt; the scope that acquires it is the Attempt's. */
export const layerSearchBudget = (allowed: number | null): Layer.Layer<SearchBudget> => Layer.scoped(SearchBudget, makeSearchBudget(allowed))

// ---------------------------------------------------------------------------------------------
// The tools a candidate is offered

export const searchSpec: ToolSpec = {
  name: "search",
  description: "Search the web. Returns up to 5 results, each with its URL, title and a snippet. Searches are limited per task.",
  parameters: { type: "object", properties: { query: { type: "string", description: "What to search for." } }, required: ["query"] }
}

export const fetchSpec: ToolSpec = {
  name: "fetch",
  description: "Fetch a web page by URL and read its text (links are listed after the text).",
  parameters: { type: "object", properties: { url: { type: "string", description: "The page's full URL." } }, required: ["url"] }
}

export const toolSpecs: ReadonlyArray<ToolSpec> = [searchSpec, fetchSpec]

export interface WebToolResult {
  readonly content: string
  readonly error: boolean
  /** The URL of the page read, when the call was a fetch that returned a page. */
  readonly fetched?: string
}

const argument = (args: { readonly [k: string]: Json }, name: string): string | undefined => {
  const v = args[name]
  return typeof v === "string" && v.trim().length > 0 ? v : undefined
}

const decodeResponse = (effect: WE.EffectRequest, json: Json) =>
  Schema.decodeUnknown(HttpResponse)(json).pipe(
    Effect.mapError((e) => new WE.EffectFailed({ kind: effect.kind, key: effect.key, reason: "handler", detail: e.message }))
  )

/**
 * Runs a `search` or `fetch` call as an `http/request` effect through the Attempt's WorldEffects.
 * Refusals, faults and an exhausted budget reach the candidate as tool errors (the Attempt goes
 * on, as with any tool); a fetched page is given as its title, URL and `pageText`.
 */
export const callWebTool = (
  name: string,
  args: { readonly [k: string]: Json }
): Effect.Effect<WebToolResult, WE.EffectFailed, WE.WorldEffects | SearchBudget> =>
  Effect.gen(function*() {
    if (name === "search") {
      const query = argument(args, "query")
      if (query === undefined) return { content: "Error: search needs a non-empty query", error: true }
      const budget = yield* SearchBudget
      const reserved = yield* Effect.either(budget.reserve)
      if (reserved._tag === "Left") return { content: `Error: ${reserved.left.message}`, error: true }
      const effect = searchEffect(query)
      const json = yield* Effect.flatMap(WE.WorldEffects, (w) => w.perform(effect)).pipe(Effect.tapError(() => budget.release))
      const res = yield* decodeResponse(effect, json)
      if (res.status !== 200) return { content: `Error: search answered HTTP ${res.status}`, error: true }
      const decoded = Schema.decodeUnknownEither(SearchHits)(res.body)
      if (decoded._tag === "Left") return { content: "Error: the search answered something that is not a list of results", error: true }
      const hits = decoded.right
      const left = budget.allowed === null ? "" : `\n(${budget.allowed - (yield* budget.used)} searches left)`
      return {
        content: hits.length === 0
          ? `No results.${left}`
          : hits.map((h, i) => `${i + 1}. ${h.title}\n   ${h.url}\n   ${h.snippet}`).join("\n") + left,
        error: false
      }
    }
    if (name === "fetch") {
      const url = argument(args, "url")
      if (url === undefined) return { content: "Error: fetch needs a url", error: true }
      const effect = fetchEffect(url)
      const json = yield* Effect.flatMap(WE.WorldEffects, (w) => w.perform(effect))
      const res = yield* decodeResponse(effect, json)
      if (res.status !== 200) return { content: `Error: HTTP ${res.status} for ${url}`, error: true }
      const title = titleOf(res.body)
      const text = pageText(res.body)
      const shown = text.length <= PAGE_TEXT_LIMIT ? text : `${text.slice(0, PAGE_TEXT_LIMIT)}\n[cut: the page's text goes on for ${text.length - PAGE_TEXT_LIMIT} more characters]`
      return { content: `${title}\nURL: ${res.url}\n\n${shown}`, error: false, fetched: res.url }
    }
    return { content: `Error: Tool '${name}' not found.`, error: true }
  }).pipe(
    Effect.catchTags({
      EffectRefused: (e) => Effect.succeed({ content: `Error: ${e.message}`, error: true }),
      EffectFault: (e) => Effect.succeed({ content: `Error: ${e.message}`, error: true })
    })
  )
