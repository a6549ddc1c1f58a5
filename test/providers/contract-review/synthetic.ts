/** Small hand-written contracts for grader and loader tests (no benchmark data copied). */
import { createHash } from "node:crypto"
import { byClauseType, type Case, type ClauseType, clauseTypes, type GoldFile } from "../../../providers/contract-review/data.ts"

/** A gold file for `text` whose spans are the given passages (each must occur in the text once). */
export const goldFileFor = (
  id: string,
  text: string,
  passages: Partial<Record<ClauseType, ReadonlyArray<string>>>
): GoldFile => ({
  id,
  split: "dev",
  source_file: `${id}.txt`,
  source_csv_filename: `${id}.pdf`,
  source: { repo: "example/none", commit: "0".repeat(40), text_path: `${id}.txt`, csv_path: "master_clauses.csv" },
  text_file: `contracts/${id}.txt`,
  text_sha256: createHash("sha256").update(text, "utf8").digest("hex"),
  text_bytes: Buffer.byteLength(text, "utf8"),
  text_chars: [...text].length,
  offset_unit: "unicode_code_points",
  clause_types: [...clauseTypes],
  clauses: byClauseType((t) => {
    const spans = (passages[t] ?? []).map((p) => {
      const start = text.indexOf(p)
      if (start < 0) throw new Error(`test setup: passage not in text: ${p}`)
      // Code-point offsets, as the gold format says.
      const cp = [...text.slice(0, start)].length
      return { text: p, start: cp, end: cp + [...p].length, normalized: false }
    })
    return { present: spans.length > 0, answer: spans.length > 0 ? "Yes" : "No", spans }
  })
})

/** A case built directly (offsets in UTF-16 units), for grader tests. */
export const caseFor = (text: string, passages: Partial<Record<ClauseType, ReadonlyArray<string>>>): Case => ({
  id: "synthetic",
  text,
  file: goldFileFor("synthetic", text, passages),
  clauses: byClauseType((t) => {
    const spans = (passages[t] ?? []).map((p) => {
      const start = text.indexOf(p)
      if (start < 0) throw new Error(`test setup: passage not in text: ${p}`)
      return { text: p, start, end: start + p.length }
    })
    return { present: spans.length > 0, spans }
  })
})
