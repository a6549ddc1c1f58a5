/**
 * The knowledge-base search of the bm25 variant: upstream's `BM25Indexer` (rank_bm25
 * `BM25Okapi`, k1 = 1.5, b = 0.75, epsilon = 0.25) over `text.lower().split()` of each
 * document's content, and `BM25Retriever.retrieve` (top 10, stable sort by score descending, so
 * ties keep corpus order). Every float operation is the one numpy performs, in its order, so
 * scores agree to the last bit.
 */
import type { KbDocument } from "./data.ts"
import { formatFixed } from "./pyvalue.ts"

// Python's str.split() separators: the Unicode White_Space characters plus \x1c-\x1f
// (which Python counts as whitespace); U+200B and U+FEFF are not among them.
const PY_WHITESPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/

/** `s.lower().split()`. */
export const tokenize = (s: string): ReadonlyArray<string> => pyLower(s).split(PY_WHITESPACE).filter((t) => t.length > 0)

/** Python's `str.lower()`: JS `toLowerCase` is the same full mapping (`İ` -> `i̇`, final sigma). */
const pyLower = (s: string): string => s.toLowerCase()

// -- correctly rounded natural log ------------------------------------------------------------------
// rank_bm25 calls Python's math.log (the C library's, correctly rounded in practice); V8's
// Math.log misses by one ulp on some arguments (17 of the 700 values k + 0.5 below 700), which
// changes idf values in their last bit. So log is computed in 256-bit fixed point and rounded once.

const PREC = 256n
const ONE = 1n << PREC

/** 2 * atanh(z) for z = num/den in (-1, 1), fixed point. */
const twoAtanh = (num: bigint, den: bigint): bigint => {
  const z = (num << PREC) / den
  const z2 = (z * z) >> PREC
  let term = z
  let sum = 0n
  for (let k = 1n; term !== 0n; k += 2n) {
    sum += term / k
    term = (term * z2) >> PREC
  }
  return 2n * sum
}

const LN2 = twoAtanh(1n, 3n)

const logCache = new Map<number, number>()

/** `math.log(x)` for a positive finite double, correctly rounded. */
export const pyLog = (x: number): number => {
  let v = logCache.get(x)
  if (v !== undefined) return v
  // x = m / 2^s exactly, m an integer (x is a double).
  let s = 0
  let m = x
  while (!Number.isInteger(m)) {
    m *= 2
    s++
  }
  let mi = BigInt(m)
  // ln x = e ln2 + ln(mi / 2^(bits-1)) with the ratio in [1, 2)
  const bits = mi.toString(2).length
  const e = BigInt(bits - 1 - s)
  const denom = 1n << BigInt(bits - 1)
  const fixed = e * LN2 + twoAtanh(mi - denom, mi + denom)
  v = Number(fixed) / Number(ONE)
  logCache.set(x, v)
  return v
}

const K1 = 1.5
const B = 0.75
const EPSILON = 0.25

export interface Bm25Index {
  readonly ids: ReadonlyArray<string>
  readonly documents: ReadonlyMap<string, KbDocument>
  /** term -> [document index, term frequency] postings, document order. */
  readonly postings: ReadonlyMap<string, { readonly docs: Int32Array; readonly tfs: Float64Array }>
  readonly idf: ReadonlyMap<string, number>
  /** Per document: the `1.5 * (0.25 + 0.75 * len / avgdl)` denominator part. */
  readonly norm: Float64Array
}

/** Build the index over documents in corpus order (documents-order.json). */
export const buildIndex = (documents: ReadonlyArray<KbDocument>): Bm25Index => {
  const n = documents.length
  const docLen = new Float64Array(n)
  const freqs: Array<Map<string, number>> = []
  // Document frequency per term, in first-occurrence order (document order, then token order).
  const nd = new Map<string, number>()
  let total = 0
  documents.forEach((doc, d) => {
    const tokens = tokenize(doc.content)
    docLen[d] = tokens.length
    total += tokens.length
    const f = new Map<string, number>()
    for (const t of tokens) f.set(t, (f.get(t) ?? 0) + 1)
    freqs.push(f)
    for (const t of f.keys()) nd.set(t, (nd.get(t) ?? 0) + 1)
  })
  const avgdl = total / n
  const idf = new Map<string, number>()
  let idfSum = 0
  const negative: Array<string> = []
  for (const [word, df] of nd) {
    const v = pyLog(n - df + 0.5) - pyLog(df + 0.5)
    idf.set(word, v)
    idfSum += v
    if (v < 0) negative.push(word)
  }
  const eps = EPSILON * (idfSum / idf.size)
  for (const w of negative) idf.set(w, eps)
  const lists = new Map<string, { docs: Array<number>; tfs: Array<number> }>()
  freqs.forEach((f, d) => {
    for (const [t, tf] of f) {
      let l = lists.get(t)
      if (l === undefined) lists.set(t, (l = { docs: [], tfs: [] }))
      l.docs.push(d)
      l.tfs.push(tf)
    }
  })
  const postings = new Map<string, { readonly docs: Int32Array; readonly tfs: Float64Array }>()
  for (const [t, l] of lists) postings.set(t, { docs: Int32Array.from(l.docs), tfs: Float64Array.from(l.tfs) })
  const norm = new Float64Array(n)
  for (let d = 0; d < n; d++) norm[d] = K1 * (1 - B + (B * docLen[d]!) / avgdl)
  return { ids: documents.map((d) => d.id), documents: new Map(documents.map((d) => [d.id, d])), postings, idf, norm }
}

/**
 * `BM25Okapi.get_scores`: for each query token (repeats count), in order, every document's
 * score += idf * (tf * 2.5 / (tf + norm)). A document without the term adds idf * 0 = 0 (a
 * no-op on a float sum), so only the postings are visited.
 */
export const scores = (index: Bm25Index, query: ReadonlyArray<string>): Float64Array => {
  const out = new Float64Array(index.ids.length)
  for (const q of query) {
    const p = index.postings.get(q)
    if (p === undefined) continue
    const idf = index.idf.get(q)!
    for (let i = 0; i < p.docs.length; i++) {
      const d = p.docs[i]!
      const tf = p.tfs[i]!
      out[d] = out[d]! + idf * ((tf * (K1 + 1)) / (tf + index.norm[d]!))
    }
  }
  return out
}

/** `RetrievalPipeline.retrieve(query)`: top `k` (id, score), ties in corpus order; none for a blank query. */
export const search = (index: Bm25Index, query: string, k = 10): ReadonlyArray<readonly [string, number]> => {
  // `not query.strip()` holds exactly when the split finds no token.
  const tokens = tokenize(query)
  if (tokens.length === 0) return []
  const s = scores(index, tokens)
  const n = s.length
  const top = Math.min(k, n)
  // Partial selection: keep the best `top` by (score desc, index asc).
  const best: Array<number> = []
  for (let d = 0; d < n; d++) {
    const v = s[d]!
    if (best.length === top) {
      const last = best[top - 1]!
      if (!(v > s[last]!)) continue
      best.pop()
    }
    let j = best.length
    while (j > 0 && s[best[j - 1]!]! < v) j--
    best.splice(j, 0, d)
  }
  return best.map((d) => [index.ids[d]!, s[d]!] as const)
}

/** KB_search's text (the timing trailer as upstream prints it with a frozen clock). */
export const formatResults = (index: Bm25Index, results: ReadonlyArray<readonly [string, number]>): string => {
  const trailer = "\n\n[Timing: retrieval=0ms, total=0ms]"
  if (results.length === 0) return "No relevant documents found." + trailer
  const parts = results.map(([id, score], i) => {
    const doc = index.documents.get(id)
    const title = doc?.title || "Untitled"
    const content = doc?.content || ""
    return `${i + 1}. ${title}\n   ID: ${id}\n   Score: ${formatFixed(score, 4)}\n   Content: ${content}\n`
  })
  return parts.join("\n") + trailer
}
