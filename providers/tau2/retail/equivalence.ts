/**
 * Equivalence with upstream: every line of an oracle corpus (retail/oracle/gold.jsonl,
 * fuzz-dev.jsonl: 614 lines, or any file in that format) is replayed from a fresh fork of the
 * initial DB through the TypeScript tools; each call's content string and error flag, and the
 * final DB's two hashes, must equal upstream's byte for byte (../common/equivalence.ts).
 */
import { dbEquivalence, lineChecker } from "../common/equivalence.ts"
import { loadRetailData } from "./data.ts"
import { finalDbSha256, upstreamDbHash } from "./hash.ts"
import { step } from "./tools.ts"

export { CorpusError, type Disagreement, OracleLine } from "../common/equivalence.ts"

export const { checkLine, defaultCorpora, runCorpus, runEquivalence } = dbEquivalence({
  benchmark: "tau2-retail",
  lineKind: "an oracle line",
  oracleFolder: "tau2/retail/oracle",
  load: loadRetailData,
  checkLine: lineChecker(step, finalDbSha256, upstreamDbHash)
})
