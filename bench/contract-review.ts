/**
 * contract-review grading cost: indexing a contract once, then locating quotes in it, against
 * normalising the contract again for every quote.
 */
import { Effect } from "effect"
import { dataRoot } from "../src/evaluation/DataRoot.ts"
import { byClauseType, type Case, clauseTypes } from "../providers/contract-review/data.ts"
import { goldReply } from "../providers/contract-review/gold.ts"
import { gradeReply, indexContract, locateQuote } from "../providers/contract-review/grader.ts"
import { loadCases, readerAt } from "../providers/contract-review/upstream.ts"

const time = (f: () => void, minMs = 200): number => {
  let n = 0
  const start = performance.now()
  let elapsed = 0
  while (elapsed < minMs) {
    f()
    n++
    elapsed = performance.now() - start
  }
  return elapsed / n
}

/** Every dev contract end to end, followed by `last` whose spans are kept: a long contract. */
const longCase = (others: ReadonlyArray<Case>, last: Case): Case => {
  const text = [...others.map((c) => c.text), last.text].join("\n")
  const offset = text.length - last.text.length
  return {
    ...last,
    id: "long (all dev contracts)",
    text,
    clauses: byClauseType((t) => ({
      present: last.clauses[t].present,
      spans: last.clauses[t].spans.map((s) => ({ ...s, start: s.start + offset, end: s.end + offset }))
    }))
  }
}

export const run = async (): Promise<void> => {
  const dir = dataRoot()
  const cases = await Effect.runPromise(loadCases(readerAt(dir)))
  const withSpans = cases.find((c) => c.id === "dynamex-transportation") ?? cases[0]
  if (withSpans === undefined) throw new Error(`no contracts in ${dir}`)
  const long = longCase(cases.filter((c) => c !== withSpans), withSpans)
  console.log("contract-review grading")
  for (const c of [...cases, long]) {
    const quotes = clauseTypes.flatMap((t) => c.clauses[t].spans.map((s) => ({ t, q: s.text.slice(0, 120) })))
    // Quotes not in the contract cost the most: every occurrence test fails.
    quotes.push({ t: "Governing Law", q: "This Agreement shall be governed by the laws of the Moon." })
    const indexMs = time(() => indexContract(c))
    const index = indexContract(c)
    const indexedMs = time(() => {
      for (const { q, t } of quotes) locateQuote(index, t, q)
    }) / quotes.length
    const naiveMs = time(() => {
      for (const { q, t } of quotes) locateQuote(indexContract(c), t, q)
    }) / quotes.length
    const reply = goldReply(c)
    const gradeMs = time(() => gradeReply(index, reply))
    console.log(
      `  ${c.id.padEnd(32)} ${(c.text.length / 1024).toFixed(0).padStart(4)} KB  index ${indexMs.toFixed(3)} ms` +
        `  per quote ${(indexedMs * 1000).toFixed(1)} us (re-normalising each time: ${(naiveMs * 1000).toFixed(1)} us,` +
        ` ${(naiveMs / indexedMs).toFixed(0)}x)  gold reply graded ${gradeMs.toFixed(3)} ms`
    )
  }
}
