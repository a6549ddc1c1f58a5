/**
 * `competitor-discovery`: find the products that compete with a given one on a frozen web, each
 * with its site, a claim and a verbatim quote from a page fetched in the same Attempt. The web is
 * a world effect: `search` and `fetch` are `http/request` effects answered by the frozen web's
 * handler, so faults, recording, replay and admission apply to them as to any effect. Graded by
 * recall of the reference set, grounding and (with a judge) relevance; see grader.ts and README.md.
 */
import { Effect, Either, Ref, Schema } from "effect"
import { Agent, Benchmark, Capabilities, ContentId, type Conversation, FrozenWeb, JudgePanel, type Provider, Registry, ToolLoop, World } from "../../src/index.ts"
import { type FetchedPage, grade, parseAnswer } from "./grader.ts"
import { judge, type JudgeCall, liveJudge } from "./judge.ts"
import { type DiscoveryTask, tasks } from "./tasks.ts"
import { pages } from "./web.ts"

const BENCHMARK = "competitor-discovery"
const MAX_TURNS = 20

export const web = FrozenWeb.make(pages)
const webDigest = ContentId.ofUnsafe(pages)

export const systemPrompt = (task: DiscoveryTask): string =>
  [
    "You research a software market on the web. Use the search tool to find pages and the fetch tool to read them.",
    `You may make at most ${task.searches} searches in this task; fetches are not limited.`,
    "When you are done, reply with only a JSON object and no tool call, of this form:",
    '{"competitors": [{"name": "...", "site": "the product\'s own website URL", "claim": "one sentence: what it does that makes it a competitor", "quote": "a sentence copied exactly from a page you fetched, supporting the claim", "source": "the URL of that page"}]}',
    "List only products that compete with the given product (the same buyers, for the same job). Every quote must be copied word for word from a page you fetched in this task, and its source must be that page's URL."
  ].join("\n")

export const instruction = (task: DiscoveryTask): string =>
  `Find the products that compete with ${task.product} (${task.productSite}), ${task.market}. For each, give its site, a claim and a verbatim quote from a page you fetched.`

/** A fetched page as the protocol notes it: the tool message that carried its text to the candidate. */
const FetchNote = Schema.Struct({ url: Schema.String, toolCallId: Schema.String })
type FetchNote = typeof FetchNote.Type

/** What the protocol returns beside the transcript; the grade reads it decoded. */
export const Output = Schema.Struct({
  ended: Schema.Literal("answer", "turn-limit"),
  turns: Schema.Number,
  answer: Schema.NullOr(Schema.String),
  fetched: Schema.Array(FetchNote),
  searches: Schema.Number
})
export type Output = typeof Output.Type

/**
 * The interaction: the candidate's tool calls run as `http/request` effects through the
 * Attempt's WorldEffects (callWebTool), under a search budget acquired for this Attempt; the loop
 * ends on a reply without tool calls (the answer) or at the turn limit.
 */
const run = (ctx: Capabilities.ProtocolContext, task: DiscoveryTask) =>
  Effect.gen(function*() {
    const append = (m: Conversation.Message) => Ref.update(ctx.transcript, (ms) => [...ms, m])
    const fetched: Array<FetchNote> = []
    yield* append({ role: "user", content: instruction(task) })
    const maxTurns = ctx.env.limits.turns ?? MAX_TURNS
    const budget = yield* FrozenWeb.SearchBudget
    const result = (ended: Output["ended"], turns: number, answer: string | null) =>
      Effect.map(budget.used, (searches): Output => ({ ended, turns, answer, fetched, searches }))
    for (let turn = 1; turn <= maxTurns; turn++) {
      const messages = yield* Ref.get(ctx.transcript)
      const reply = yield* ctx.agent.reply({ system: ctx.inputs.system, messages, tools: ctx.inputs.tools })
      yield* append({ role: "assistant", content: reply.text, toolCalls: reply.toolCalls })
      if (reply.toolCalls.length === 0) return yield* result("answer", turn, reply.text)
      for (const call of reply.toolCalls) {
        const r = yield* FrozenWeb.callWebTool(call.name, call.arguments)
        if (r.fetched !== undefined) fetched.push({ url: r.fetched, toolCallId: call.id })
        yield* append({ role: "tool", toolCallId: call.id, name: call.name, content: r.content, error: r.error })
      }
    }
    return yield* result("turn-limit", maxTurns, null)
  }).pipe(Effect.provide(FrozenWeb.layerSearchBudget(task.searches)))

/** The pages this Attempt fetched, with the text each tool message gave the candidate. */
const fetchedPages = (notes: ReadonlyArray<FetchNote>, transcript: ReadonlyArray<Conversation.Message>): ReadonlyArray<FetchedPage> => {
  const byCall = new Map<string, string>()
  for (const m of transcript) if (m.role === "tool" && !m.error) byCall.set(m.toolCallId, m.content)
  return notes.flatMap((n) => {
    const text = byCall.get(n.toolCallId)
    return text === undefined ? [] : [{ url: n.url, text }]
  })
}

const resolveJudge = (ref: string) =>
  Effect.flatMap(Registry.fixture, (file) =>
    Either.match(Registry.resolveIn(file, ref), {
      onLeft: (e) => Effect.fail(new Capabilities.CapabilityError({ capability: BENCHMARK, reason: "evaluator", detail: e.message })),
      onRight: Effect.succeed
    }))

/** The gold candidate: one search, a fetch of every cited page, then the reference entries. */
export const goldAgent = (task: DiscoveryTask): Agent.Agent => {
  const sources = [...new Set(task.references.map((r) => r.gold.source))]
  const answer = {
    competitors: task.references.map((r) => ({ name: r.name, site: r.site, claim: r.gold.claim, quote: r.gold.quote, source: r.gold.source }))
  }
  return Benchmark.plays("gold", [
    { text: null, toolCalls: [{ id: "call-1", name: "search", arguments: { query: task.goldQuery } }] },
    { text: null, toolCalls: sources.map((url, i) => ({ id: `call-${i + 2}`, name: "fetch", arguments: { url } })) }
  ], JSON.stringify(answer, null, 2))
}

export interface Options {
  /** How the judge model is called (default: the run's Model service); tests script it. */
  readonly judge?: JudgeCall
}

/** The benchmark; `options` only change how the judge is reached, never an environment. */
export const makeProvider = (options: Options = {}): Provider.Provider =>
  Benchmark.make({
    name: BENCHMARK,
    version: "1",
    description: `find a product's competitors on a frozen web of ${pages.length} pages, with verbatim quotes: ${tasks.length} tasks written for assay`,
    tasks: () => tasks,
    id: (task) => task.id,
    stratum: (task) => task.stratum,
    limits: () => ({ turns: MAX_TURNS }),
    setup: {
      name: `${BENCHMARK}/frozen-web`,
      // The world itself is empty: the web is read-only data served by the http/request handler.
      run: () => ({ world: World.empty, evidence: { web: webDigest, pages: pages.length }, tools: [], handlers: FrozenWeb.handlers(web) })
    },
    protocol: {
      name: `${BENCHMARK}/search-fetch-answer`,
      output: Output,
      inputs: (task) => ({ system: systemPrompt(task), tools: FrozenWeb.toolSpecs }),
      run: (task, ctx) => run(ctx, task)
    },
    grade: {
      name: `${BENCHMARK}/recall-grounding-relevance`,
      // Deterministic without a judge; a judged grade says "judge" itself.
      run: (task, ctx) =>
        Effect.gen(function*() {
          const listed = parseAnswer(ToolLoop.lastAnswer(ctx.transcript))
          const fetched = fetchedPages(ctx.output.fetched, ctx.transcript)
          const panel = JudgePanel.panelOf(ctx.env)
          if (panel === null || listed === undefined) return grade(task, listed, fetched, null)
          const judges = yield* Effect.forEach(panel.judges, resolveJudge)
          const judged = yield* judge({ judges: [judges[0]!, ...judges.slice(1)], reps: panel.reps }, options.judge ?? liveJudge, task, listed)
          const graded = grade(task, listed, fetched, judged.relevant)
          // The other judges' decisions go beside the grade, never into it (the first judge decides).
          const d = graded.details
          const details = judged.record === undefined || d === null || typeof d !== "object" || Array.isArray(d) ? d : { ...d, judges: judged.record }
          return { ...graded, details, trust: "judge" as const, judging: judged.judging }
        })
    },
    gold: goldAgent,
    judged: true
  })

export const provider = makeProvider()

export default provider
