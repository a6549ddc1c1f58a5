/**
 * `bird`: BIRD Mini-Dev (SQLite), 500 text-to-SQL questions over 11 databases, graded by executing
 * the candidate's SQL and the gold SQL and comparing results as upstream does (execution accuracy,
 * and soft F1 beside it). Two protocols, chosen by the candidate's action space, so a paired
 * comparison says which helps a model: `text` is BIRD's own one step (schema, question and
 * evidence in, one SQL statement out); `tools` is a tool loop with a read-only `query` tool and a
 * `submit_sql` final answer. See README.md.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Ref, Schema } from "effect"
import { type AgentDef, Benchmark, type Canonical, Capabilities, ContentId, DataRoot, EnvironmentDef, type Provider, ToolLoop, World } from "../../src/index.ts"
import {
  type Databases,
  databasesIn,
  loadData,
  originNote,
  pinnedFiles,
  type Question,
  REAL_SUMS,
  UPSTREAM_COMMIT,
  UPSTREAM_REPOSITORY
} from "./data.ts"
import { defaultCorpora, runEquivalence } from "./equivalence.ts"
import { gradePair, type PairVerdict, predictedSqlOf } from "./grade.ts"
import { queryTool, SUBMIT, submitTool } from "./tools.ts"

const BENCHMARK = "bird"
const MAX_TURNS = 20

const dataError = (detail: string) => new Capabilities.CapabilityError({ capability: BENCHMARK, reason: "data", detail })

/** Keyed by position: two question ids repeat in Mini-Dev. */
export const taskId = (q: Question): string => `${String(q.idx).padStart(3, "0")}-${q.dbId}`

// ---------------------------------------------------------------------------------------------
// What the candidate is shown

/** BIRD's one-step prompt (llm/src/prompt.py): schema, question and evidence, then the instruction. */
export const oneStepPrompt = (schema: string, q: Question): string => {
  const knowledge = q.evidence !== ""
  const comment = `-- Using valid SQLite${knowledge ? " and understanding External Knowledge" : ""}, answer the following questions for the tables provided above.\n` +
    `-- ${q.question}\n${knowledge ? `-- External Knowledge: ${q.evidence}` : ""}`
  const cot = "\nGenerate the SQLite for the above question after thinking step by step: "
  const instruction = "\n        \nIn your response, you do not need to mention your intermediate steps. \n" +
    "        Do not include any comments in your response.\n        Do not need to start with the symbol ```\n" +
    "        You only need to return the result SQLite SQL code\n        start from SELECT\n        "
  return [schema, comment, cot, instruction].join("\n\n")
}

const TOOL_SYSTEM = [
  "You answer questions about a SQLite database by writing one SQLite query.",
  "Use the `query` tool to look at the data (read-only; results are cut at 50 rows).",
  `When you have the query that answers the question, call \`${SUBMIT}\` with it: the query is graded by running it and comparing its rows with the expected rows (order and duplicates do not matter, column order does).`
].join("\n")

const toolLoopPrompt = (schema: string, q: Question): string =>
  `Database schema:\n\n${schema}\n\nQuestion: ${q.question}\n${q.evidence !== "" ? `External knowledge: ${q.evidence}\n` : ""}`

const toolSpecs = [queryTool("").spec, submitTool.spec]
const specsDigest = ContentId.ofUnsafe(toolSpecs as unknown as Canonical.Json)

const inputsOf = (agent: AgentDef.AgentDef): Capabilities.ProtocolInputs =>
  agent.actionSpace === "text" ? { system: "", tools: [] } : { system: TOOL_SYSTEM, tools: toolSpecs }

// ---------------------------------------------------------------------------------------------
// The databases

const fixtureSums = (): Readonly<Record<string, string>> =>
  Object.fromEntries(pinnedFiles.filter((f) => f.path.startsWith("bird/fixture/")).map((f) => [f.path.split("/")[2]!, f.sha256]))

/** The recorded sha256 of each real database (`SHA256SUMS` of the pull), by db id. */
const realSums = (root: string): Readonly<Record<string, string>> => {
  try {
    return Object.fromEntries(
      readFileSync(join(root, REAL_SUMS), "utf8").split("\n").flatMap((l) => {
        const m = /^([0-9a-f]{64})\s+\*?(\S+)\/\S+\.sqlite$/.exec(l.trim())
        return m === null ? [] : [[m[2]!, m[1]!]]
      })
    )
  } catch {
    return {}
  }
}

const dbDigest = (databases: Databases, root: string, db: string): string | null =>
  (databases.kind === "fixture" ? fixtureSums() : realSums(root))[db] ?? null

// ---------------------------------------------------------------------------------------------
// Output and grade

/** The protocol's output: which protocol ran, and the prediction entry: a string as upstream's prediction file holds it, or null (no answer). */
const Output = Schema.Struct({ protocol: Schema.Literal("one-step", "tool-loop"), sql: Schema.NullOr(Schema.String) })

export const CHECKS = ["result", "executes", "in_time"] as const

const toGrade = (v: PairVerdict, databases: Databases["kind"], sql: string) => ({
  reward: v.ex,
  checks: { result: v.ex === 1, executes: v.error === null || v.errorSide === "gold", in_time: !v.timedOut },
  details: {
    ex: v.ex,
    f1: v.f1,
    sql,
    error: v.error,
    errorSide: v.errorSide,
    timedOut: v.timedOut,
    predRows: v.predRows,
    goldRows: v.goldRows,
    databases
  } satisfies Canonical.Json
})

const equivalence = (corpus: string | null) =>
  runEquivalence(corpus === null ? defaultCorpora() : [corpus]).pipe(Effect.mapError((e) => dataError(e.message)))

const ORACLE_SHA256: Readonly<Record<string, string>> = {
  "verdicts-dev.jsonl": "f6ca8427114b97981914105048db1f851be8ff66b5b877ff237483e542b66d6b",
  "probes.jsonl": "9afe1c6926324b23b198cc1d693451551fbd696639a400ae584d29b1988d1592",
  "probes-predictions.json": "fb5731b2dfd379b3dea2bc51feff04148e16c63a2a235d263d50956458f104ad",
  "probes-gold.sql": "fd38b5ed0538ff27b3ddad3c91f43d76c0d0c14a09b68f58bfffcb429712cb84"
}

const ATTRIBUTION = "BIRD Mini-Dev (bird-bench/mini_dev), CC BY-SA 4.0."

const benchmark = Benchmark.make({
  name: BENCHMARK,
  version: "1",
  description: "BIRD Mini-Dev (SQLite): 500 text-to-SQL questions over 11 databases, graded by execution as upstream grades them",
  data: (read) => loadData(read),
  tasks: (data) => data.questions,
  id: taskId,
  // Upstream reports by difficulty; the database is in the task id.
  stratum: (q) => q.difficulty,
  limits: () => ({ turns: MAX_TURNS }),
  upstream: `${UPSTREAM_REPOSITORY}@${UPSTREAM_COMMIT}`,
  // The database never changes (it opens read-only): there is nothing to fork.
  world: { isolation: "none", settlement: "discard", effects: EnvironmentDef.defaultEffects },
  setup: {
    name: "bird/database",
    run: (q, { data }) => ({
      world: World.empty,
      evidence: {
        db: q.dbId,
        databases: data.databases.kind,
        sha256: dbDigest(data.databases, data.root, q.dbId),
        tools: specsDigest
      },
      tools: [queryTool(data.databases.path(q.dbId)), submitTool]
    })
  },
  protocol: {
    name: "bird/sql",
    output: Output,
    inputs: (_q, { agent }) => inputsOf(agent),
    run: (q, ctx) =>
      Effect.gen(function*() {
        const { data } = ctx
        const schema = data.schemas.get(q.dbId) ?? ""
        const tools = [queryTool(data.databases.path(q.dbId)), submitTool]
        const byName = new Map(tools.map((t) => [t.spec.name, t]))
        if (ctx.inputs.tools.length === 0) {
          // One step, as BIRD's harness: the reply is the prediction; submitting it is the recorded effect.
          const messages = [{ role: "user" as const, content: oneStepPrompt(schema, q) }]
          yield* Ref.set(ctx.transcript, messages)
          const reply = yield* ctx.agent.reply({ system: ctx.inputs.system, messages, tools: [] })
          yield* Ref.update(ctx.transcript, (ms) => [...ms, { role: "assistant" as const, content: reply.text, toolCalls: reply.toolCalls }])
          const sql = reply.text ?? ""
          // A submission refused or faulted is no answer (a prediction file without the entry).
          const submitted = yield* ToolLoop.callTool(byName, { id: "submit", name: SUBMIT, arguments: { sql } })
          return { protocol: "one-step" as const, sql: submitted.error ? null : sql }
        }
        const ended = yield* ToolLoop.runToolLoop(ctx, { firstMessage: toolLoopPrompt(schema, q), tools, maxTurns: ctx.env.limits.turns ?? MAX_TURNS, stopTool: SUBMIT })
        // The last SQL whose submission went through (a faulted or refused one is no answer); with
        // no submission at all, the final text, as a prediction file would hold it.
        const transcript = yield* Ref.get(ctx.transcript)
        const failed = new Set(transcript.flatMap((m) => (m.role === "tool" && m.error ? [m.toolCallId] : [])))
        let sql: string | null = ended.ended === "stop-tool" ? null : ended.answer
        for (const m of transcript) {
          if (m.role !== "assistant") continue
          for (const call of m.toolCalls) {
            if (call.name === SUBMIT && typeof call.arguments["sql"] === "string" && !failed.has(call.id)) sql = call.arguments["sql"]
          }
        }
        return { protocol: "tool-loop" as const, sql }
      })
  },
  grade: {
    name: "bird/execution",
    run: (q, { data, output }) => {
      const sql = predictedSqlOf(output.sql)
      return gradePair(data.databases.path(q.dbId), sql, q.goldSql).pipe(
        Effect.map((verdict) => toGrade(verdict, data.databases.kind, sql)),
        Effect.mapError((e) => new Capabilities.CapabilityError({ capability: BENCHMARK, reason: "evaluator", detail: e.message }))
      )
    }
  },
  gold: (q) => Benchmark.plays("gold", [{ text: null, toolCalls: [{ id: "call-1", name: SUBMIT, arguments: { sql: q.goldSql } }] }], "Submitted."),
  pinned: {
    files: [
      ...pinnedFiles,
      ...["verdicts-dev.jsonl", "probes.jsonl", "probes-predictions.json", "probes-gold.sql"].map((f) => ({
        path: `bird/oracle/${f}`,
        url: "",
        sha256: ORACLE_SHA256[f]!,
        oracle: true
      }))
    ]
  },
  equivalence
})

export const provider: Provider.Provider = {
  ...benchmark,
  // Which databases this run reads is decided by the data folder, when the report asks: it must say so.
  get attribution() {
    return databasesIn(DataRoot.dataRoot()).kind === "real"
      ? `${ATTRIBUTION} Ran on the real Mini-Dev databases (${REAL_SUMS}${originNote(DataRoot.dataRoot())}).`
      : `${ATTRIBUTION} Ran on the synthetic fixture databases: this measures the path, not a model's BIRD score.`
  }
}
