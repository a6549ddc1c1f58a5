import { Effect, Either } from "effect"
import { loadBankingData, applyAgentData } from "../data.ts"
import { initialAgentData } from "../equivalence.ts"
const d = await Effect.runPromise(loadBankingData("/work/shared/data"))
const t = d.tasksJson.find((t: any) => t.id === "task_026") as any
const ad = initialAgentData(t)
console.log(JSON.stringify(ad).slice(0, 300))
console.log(applyAgentData(d.initialWorld, ad!))
import { makeReplayer } from "../equivalence.ts"
import * as World from "../../../../src/world/World.ts"
const r = makeReplayer(d)
const w = r.initialOf("task_026")!
console.log(World.entries(w, "task_config"))
import { step, Ctx } from "../tools.ts"
const c = new Ctx(w, r.env)
console.log("size", c.size("task_config"), c.entries("task_config"))
import { checkLine } from "../equivalence.ts"
import { jsonLoads } from "../pyvalue.ts"
import { readFileSync } from "node:fs"
const line = readFileSync("/work/shared/data/tau2/banking_knowledge/oracle/gold.jsonl", "utf8").split("\n")[22]!
const parsed = (jsonLoads(line) as any).right
console.log("init" , "init_task_id" in parsed, parsed.task_id)
console.log(JSON.stringify(checkLine(r, parsed, 23)).slice(0, 300))
