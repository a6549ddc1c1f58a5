/**
 * Equivalence with an "upstream": each line of the oracle corpus is a start value, the calls made
 * and the final value upstream's own code computed. The tools must agree on every line.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Effect, Schema } from "effect"
import { Capabilities, type Canonical, type Provider, World } from "assay"
import { tools, valueOf } from "./tools.ts"

const ownCorpus = fileURLToPath(new URL("./oracle.jsonl", import.meta.url))
const toolsByName = new Map(tools.map((t) => [t.spec.name, t]))

const OracleLine = Schema.parseJson(Schema.Struct({
  start: Schema.Number,
  calls: Schema.Array(Schema.Struct({ name: Schema.String, by: Schema.Number })),
  final: Schema.Number
}))
const decodeLine = Schema.decodeUnknownSync(OracleLine)

export const equivalence = (corpus: string | null): Effect.Effect<Provider.EquivalenceResult, Capabilities.CapabilityError> =>
  Effect.try({
    try: () => {
      const path = corpus ?? ownCorpus
      const lines = readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "")
      const disagree: Array<Canonical.Json> = []
      lines.forEach((text, i) => {
        const line = decodeLine(text)
        const final = line.calls.reduce((w, call) => {
          const tool = toolsByName.get(call.name)
          return tool ? World.apply(w, tool.run(w, { by: call.by }).writes) : w
        }, World.make({ counter: { value: line.start } }))
        if (valueOf(final) !== line.final) disagree.push({ line: i + 1, upstream: line.final, ours: valueOf(final) })
      })
      return { benchmark: "counter", corpus: path, lines: lines.length, agree: lines.length - disagree.length, disagree }
    },
    catch: (e) => new Capabilities.CapabilityError({ capability: "counter", reason: "data", detail: `oracle corpus: ${e instanceof Error ? e.message : String(e)}` })
  })
