import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { loadBankingData } from "/work/main/providers/tau2/banking/data.ts"
import { buildIndex, search } from "/work/main/providers/tau2/banking/bm25.ts"
import { jsonLoads, floatTag } from "/work/main/providers/tau2/banking/pyvalue.ts"
import { Either } from "effect"
const t0 = Date.now()
const data = await Effect.runPromise(loadBankingData("/work/shared/data"))
const t1 = Date.now()
const index = buildIndex(data.documents)
const t2 = Date.now()
console.log("load", t1 - t0, "index", t2 - t1, "tasks", data.tasksJson.length)
const lines = readFileSync("/work/shared/data/tau2/banking_knowledge/oracle/kb-search-dev.jsonl", "utf8").trim().split("\n")
let bad = 0
for (const l of lines) {
  const o = JSON.parse(l)
  const r = search(index, o.query)
  const exp = o.results as Array<[string, number]>
  const same = r.length === exp.length && r.every(([id, s], i) => id === exp[i]![0] && s === exp[i]![1])
  if (!same) { bad++; if (bad < 4) console.log(JSON.stringify(o.query), exp.slice(0,3), r.slice(0,3)) }
}
console.log("bad", bad, "of", lines.length, "ms", Date.now() - t2)
