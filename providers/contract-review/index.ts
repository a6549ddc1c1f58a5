/**
 * `contract-review`: CUAD contracts, eight clause types, one structured answer per contract. The
 * candidate is given the whole contract once and replies once; the reply is graded against the
 * lawyer-annotated spans with no judge and no network (see README.md).
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Ref } from "effect"
import { Agent, type AgentDef, type Canonical, Capabilities, ContentId, type Conversation, EnvironmentDef, type Provider, World } from "../../src/index.ts"
import { type Case, clauseTypes, loadCaseSet } from "./data.ts"
import { goldReply, noneReply } from "./gold.ts"
import * as Grader from "./grader.ts"
import { answerJsonSchema, instructions, promptFor } from "./prompt.ts"
import * as upstream from "./upstream.ts"

const VERSION = "1"
const BENCHMARK = "contract-review"

/** CC BY 4.0 requires it wherever results derived from CUAD are published (SOURCE.md). */
export const attribution = [
  "Contract Understanding Atticus Dataset (CUAD) v1, by The Atticus Project, Inc.",
  "(https://www.atticusprojectai.org/cuad), licensed under CC BY 4.0",
  "(https://creativecommons.org/licenses/by/4.0/). Changes: 24 of the 510 contracts were selected",
  "and renamed to short ids. Per-clause gold files with character offsets were derived from",
  "`master_clauses.csv` for 8 of the 41 categories. The contract texts are unchanged."
].join(" ")

// ---------------------------------------------------------------------------------------------
// The case set, loaded once per process

interface Loaded {
  readonly cases: ReadonlyArray<Case>
  readonly byId: ReadonlyMap<string, Case>
}

/**
 * Read and checked on first use, then shared by every environment, setup, protocol and evaluator
 * call. The data on disk does not change within a run, so a failed load is remembered too.
 */
const loaded: Effect.Effect<Loaded, Capabilities.CapabilityError> = Effect.runSync(
  Effect.cached(
    loadCaseSet.pipe(
      Effect.map((set): Loaded => ({ cases: set.cases, byId: new Map(set.cases.map((c) => [c.id, c])) })),
      Effect.mapError((e) => new Capabilities.CapabilityError({ capability: BENCHMARK, reason: "data", detail: e.message })),
      Effect.provide(NodeContext.layer)
    )
  )
)

const caseOf = (env: EnvironmentDef.EnvironmentDef): Effect.Effect<Case, Capabilities.CapabilityError> =>
  Effect.flatMap(loaded, ({ byId }) => {
    const found = byId.get(env.task)
    return found
      ? Effect.succeed(found)
      : Effect.fail(new Capabilities.CapabilityError({ capability: BENCHMARK, reason: "data", detail: `no contract ${env.task} in the case set` }))
  })

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
// Environments

const environment = (c: Case): EnvironmentDef.EnvironmentDef => ({
  benchmark: BENCHMARK,
  task: c.id,
  stratum: null,
  // Nothing in the world changes: the contract is read-only input, so there is nothing to fork.
  world: { isolation: "none", settlement: "discard", effects: EnvironmentDef.defaultEffects },
  capabilities: {
    worldSetup: { name: "contract-review/contract", version: VERSION },
    protocol: { name: "contract-review/one-reply", version: VERSION },
    evaluator: { name: "contract-review/spans", version: VERSION },
    upstream: `${c.file.source.repo}@${c.file.source.commit}`,
    models: {}
  },
  limits: { ...EnvironmentDef.noLimits, turns: 1 }
})

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

export const capabilities = {
  worldSetup: Capabilities.makeWorldSetup({
    name: "contract-review/contract",
    version: VERSION,
    trust: "deterministic",
    setup: (env) =>
      Effect.map(caseOf(env), (c) => ({
        world: World.empty,
        // The gold file's sha256 of the contract bytes, checked against the file at load.
        evidence: { contract: `sha256:${c.file.text_sha256}`, answerContract: answerContractDigest },
        tools: []
      }))
  }),
  protocol: Capabilities.makeProtocol({
    name: "contract-review/one-reply",
    version: VERSION,
    trust: "deterministic",
    inputs: () => Effect.succeed({ system: instructions, tools: [] }),
    run: (ctx) =>
      Effect.gen(function*() {
        const c = yield* caseOf(ctx.env)
        const append = (m: Conversation.Message) => Ref.update(ctx.transcript, (ms) => [...ms, m])
        yield* append({ role: "user", content: promptFor(c.text).user })
        const messages = yield* Ref.get(ctx.transcript)
        const reply = yield* ctx.agent.reply({ system: ctx.inputs.system, messages, tools: ctx.inputs.tools })
        yield* append({ role: "assistant", content: reply.text, toolCalls: reply.toolCalls })
        // Whatever the text says, it is the output; whether it keeps the answer contract is graded.
        return reply.text satisfies Canonical.Json
      })
  }),
  evaluator: Capabilities.makeEvaluator({
    name: "contract-review/spans",
    version: VERSION,
    trust: "deterministic",
    evaluate: (ctx) =>
      Effect.map(caseOf(ctx.env), (c) =>
        toGrade(Grader.gradeReply(indexOf(c), typeof ctx.output === "string" ? ctx.output : "")))
  })
}

// ---------------------------------------------------------------------------------------------
// Roster

const roster = ["gold", "none"] as const

const rosterDef = (name: string): AgentDef.AgentDef => Agent.referenceDef(name, "text")

const scripted = (name: string, env: EnvironmentDef.EnvironmentDef): Effect.Effect<Agent.Agent, Capabilities.CapabilityError> => {
  const replying = (text: string) => Agent.scripted(name, [{ text, toolCalls: [] }])
  switch (name) {
    case "gold":
      return Effect.map(caseOf(env), (c) => replying(goldReply(c)))
    case "none":
      return Effect.succeed(replying(noneReply))
    default:
      return Effect.fail(
        new Capabilities.CapabilityError({ capability: BENCHMARK, reason: "data", detail: `no scripted candidate ${name}: use ${roster.join(" or ")}` })
      )
  }
}

export const provider: Provider.Provider = {
  name: BENCHMARK,
  version: VERSION,
  description: "CUAD contracts: find eight clause types and quote them verbatim, graded on lawyer-annotated spans",
  environments: Effect.map(loaded, ({ cases }) => cases.map(environment)),
  capabilities,
  roster,
  rosterDef,
  scripted,
  attribution,
  // CUAD's CSV and the eight texts by URL; the gold is derived from the CSV (upstream.ts).
  data: upstream.data,
  derived: upstream.derived
}
