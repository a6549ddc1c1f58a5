import { Effect } from "effect"
import { runEquivalence, defaultCorpora } from "../equivalence.ts"
const which = process.argv[2]
const cs = defaultCorpora("/work/shared/data")
const corpus = which === "gold" ? cs[0]! : which === "fuzz" ? cs[1]! : which === "kb" ? cs[2]! : null
const t = Date.now()
const r = await Effect.runPromise(runEquivalence(corpus, "/work/shared/data"))
console.log(r.lines, r.agree, Date.now() - t, "ms")
const byField = new Map<string, number>()
for (const d of r.disagree) {
  const key = d.field.startsWith("actions") ? d.expected.slice(0, 40) : d.field
  byField.set(key, (byField.get(key) ?? 0) + 1)
}
console.log([...byField].sort((a, b) => b[1] - a[1]).slice(0, 40))
if (process.argv[3]) for (const d of r.disagree.slice(0, Number(process.argv[3]))) console.log(JSON.stringify(d).slice(0, 1500))
