/**
 * `contract-review`: CUAD contracts, eight clause types, one structured answer per contract. The
 * candidate is given the whole contract once and replies once; the reply is graded against the
 * lawyer-annotated spans with no judge and no network (see README.md).
 */
import { Effect, Ref, Schema } from "effect"
import { Agent, Benchmark, type Canonical, type Capabilities, ContentId, type Conversation, EnvironmentDef, World } from "../../src/index.ts"
import { type Case, clauseTypes } from "./data.ts"
import { goldReply, noneReply } from "./gold.ts"
import * as Grader from "./grader.ts"
import { answerJsonSchema, instructions, promptFor } from "./prompt.ts"
import * as upstream from "./upstream.ts"

const BENCHMARK = "contract-review"

/** CC BY 4.0 requires it wherever results derived from CUAD are published (SOURCE.md). */
export const attribution = [
  "Contract Understanding Atticus Dataset (CUAD) v1, by The Atticus Project, Inc.",
  "(https://www.atticusprojectai.org/cuad), licensed under CC BY 4.0",
  "(https://creativecommons.org/licenses/by/4.0/). Changes: 24 of the 510 contracts were selected",
  "and renamed to short ids. Per-clause gold files with character offsets were derived from",
  "`master_clauses.csv` for 8 of the 41 categories. The contract texts are unchanged."
].join(" ")

/** Normalising a contract is the costly part of grading, so it is done once per contract. */
const indexed = new WeakMap<Case, Grader.IndexedContract>()
const indexOf = (c: Case): Grader.IndexedContract => {
  const cached = indexed.get(c)
  if (cached) return cached
  const contract = Grader.indexContract(c)
  indexed.set(c, contract)
  return contract
}

// ---------------------------------------------------------------------------------------------
// Capabilities

const answerContractDigest = ContentId.ofUnsafe(answerJsonSchema)

/** The grader's grade as the evaluation path's: checks as they are, the rest as details. */
export const toGrade = (g: Grader.Grade): Capabilities.Grade => {
  const clauses: Record<string, Canonical.Json> = {}
  for (const type of clauseTypes) {
    const clause = g.clauses[type]
    clauses[type] = {
      goldPresent: clause.goldPresent,
      claimedPresent: clause.claimedPresent,
      score: clause.score,
      lost: clause.lost,
      // The quotes themselves are in the transcript; here only where each was found.
      quotes: clause.quotes.map((q) => ({ place: q.place, at: q.at === null ? null : [q.at[0], q.at[1]] })),
      cuad: { tp: clause.cuad.tp, fp: clause.cuad.fp, fn: clause.cuad.fn }
    }
  }
  return {
    reward: g.reward,
    checks: g.checks,
    details: {
      answerContract: g.answerContract.kept
        ? { kept: true }
        : { kept: false, reason: g.answerContract.reason, detail: g.answerContract.detail },
      cuad: {
        tp: g.cuad.tp,
        fp: g.cuad.fp,
        fn: g.cuad.fn,
        precision: g.cuad.precision,
        recall: g.cuad.recall
      },
      clauses
    }
  }
}

const reply = (name: string, text: string): Agent.Agent => Agent.scripted(name, [{ text, toolCalls: [] }])

export const provider = Benchmark.make({
  name: BENCHMARK,
  version: "1",
  description: "CUAD contracts: find eight clause types and quote them verbatim, graded on lawyer-annotated spans",
  data: upstream.loadCases,
  tasks: (cases) => cases,
  id: (c) => c.id,
  stratum: () => null,
  limits: () => ({ turns: 1 }),
  upstream: `${upstream.UPSTREAM_REPOSITORY}@${upstream.UPSTREAM_COMMIT}`,
  // Nothing in the world changes: the contract is read-only input, so there is nothing to fork.
  world: { isolation: "none", settlement: "discard", effects: EnvironmentDef.defaultEffects },
  setup: {
    name: "contract-review/contract",
    run: (c) => ({
      world: World.empty,
      // The gold file's sha256 of the contract bytes, checked against the file at load.
      evidence: { contract: `sha256:${c.file.text_sha256}`, answerContract: answerContractDigest },
      tools: []
    })
  },
  protocol: {
    name: "contract-review/one-reply",
    // Whatever the text says, it is the output; whether it keeps the answer contract is graded.
    output: Schema.NullOr(Schema.String),
    inputs: () => ({ system: instructions, tools: [] }),
    run: (c, ctx) =>
      Effect.gen(function*() {
        const append = (m: Conversation.Message) => Ref.update(ctx.transcript, (ms) => [...ms, m])
        yield* append({ role: "user", content: promptFor(c.text).user })
        const messages = yield* Ref.get(ctx.transcript)
        const answer = yield* ctx.agent.reply({ system: ctx.inputs.system, messages, tools: ctx.inputs.tools })
        yield* append({ role: "assistant", content: answer.text, toolCalls: answer.toolCalls })
        return answer.text
      })
  },
  grade: {
    name: "contract-review/spans",
    run: (c, ctx) => toGrade(Grader.gradeReply(indexOf(c), ctx.output ?? ""))
  },
  actionSpace: "text",
  gold: (c) => reply("gold", goldReply(c)),
  doNothing: () => reply("echo", noneReply),
  attribution,
  // CUAD's CSV and the eight texts by URL; the gold is derived from the CSV (upstream.ts).
  pinned: { files: upstream.data, derived: upstream.derived }
})
