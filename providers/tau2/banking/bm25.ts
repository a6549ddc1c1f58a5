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
  // Terms get ids in first-occurrence order (document order, then token order): the order in
  // which rank_bm25 fills its document-frequency dict, hence sums the idf values.
  const termId = new Map<string, number>()
  const terms: Array<string> = []
  const df: Array<number> = []
  const tfScratch: Array<number> = []
  const postTerm: Array<number> = []
  const postDoc: Array<number> = []
  const postTf: Array<number> = []
  let total = 0
  for (let d = 0; d < n; d++) {
    const tokens = tokenize(documents[d]!.content)
    docLen[d] = tokens.length
    total += tokens.length
    const seen: Array<number> = []
    for (const t of tokens) {
      let id = termId.get(t)
      if (id === undefined) {
        id = terms.length
        termId.set(t, id)
        terms.push(t)
        df.push(0)
        tfScratch.push(0)
      }
      if (tfScratch[id] === 0) seen.push(id)
      tfScratch[id]!++
    }
    for (const id of seen) {
      df[id]!++
      postTerm.push(id)
      postDoc.push(d)
      postTf.push(tfScratch[id]!)
      tfScratch[id] = 0
    }
  }
  const avgdl = total / n
  const idfById = new Float64Array(terms.length)
  let idfSum = 0
  const negative: Array<number> = []
  for (let id = 0; id < terms.length; id++) {
    const v = pyLog(n - df[id]! + 0.5) - pyLog(df[id]! + 0.5)
    idfById[id] = v
    idfSum += v
    if (v < 0) negative.push(id)
  }
  const eps = EPSILON * (idfSum / terms.length)
  for (const id of negative) idfById[id] = eps
  // Bucket the (term, doc, tf) triples by term; documents stay in order within a term.
  const start = new Int32Array(terms.length + 1)
  for (const id of postTerm) start[id + 1]!++
  for (let i = 0; i < terms.length; i++) start[i + 1]! += start[i]!
  const fill = start.slice(0, terms.length)
  const docs = new Int32Array(postTerm.length)
  const tfs = new Float64Array(postTerm.length)
  for (let i = 0; i < postTerm.length; i++) {
    const at = fill[postTerm[i]!]!++
    docs[at] = postDoc[i]!
    tfs[at] = postTf[i]!
  }
  const postings = new Map<string, { readonly docs: Int32Array; readonly tfs: Float64Array }>()
  const idf = new Map<string, number>()
  for (let id = 0; id < terms.length; id++) {
    postings.set(terms[id]!, { docs: docs.subarray(start[id]!, start[id + 1]!), tfs: tfs.subarray(start[id]!, start[id + 1]!) })
    idf.set(terms[id]!, idfById[id]!)
  }
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
