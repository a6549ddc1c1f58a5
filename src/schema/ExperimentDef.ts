/**
 * Dataset x candidates x repetitions, and what was fixed before anything ran. Its content id
 * names the experiment: running the same definition again resumes it.
 */
import { Schema } from "effect"
import * as ContentId from "../content/ContentId.ts"
import { AgentDef } from "./AgentDef.ts"

export const ExperimentDef = Schema.Struct({
  dataset: Schema.Array(Schema.String),
  candidates: Schema.Array(AgentDef),
  repetitions: Schema.Int.pipe(Schema.positive()),
  metadata: Schema.Struct({
    benchmarks: Schema.Record({ key: Schema.String, value: Schema.String }),
    library: Schema.String
  })
}).annotations({ identifier: "ExperimentDef" })
export type ExperimentDef = typeof ExperimentDef.Type

export const idOf = (def: ExperimentDef): ContentId.ContentId => ContentId.ofUnsafe(Schema.encodeSync(ExperimentDef)(def))
