/**
 * Relevance, judged per entry by a model: is the listed product a competitor of the task's
 * product? One request per Attempt lists every entry (name, site, claim and the quote); the judge
 * answers one verdict per entry, in order (a second judge, and repetitions, are asked the same: see
 * src/evaluation/JudgePanel.ts). Asked as the tau2 judge is: through the run's Model
 * service (the spend cap covers it), outside the Attempt's wallet and never faulted.
 */
import { type Array as Arr, Effect, Schema } from "effect"
import { type Attempt, Capabilities, Cost, JudgePanel, Model, type Registry } from "../../src/index.ts"
import type { Listed } from "./grader.ts"
import type { DiscoveryTask } from "./tasks.ts"

export type JudgeCall = (request: Model.ModelRequest) => Effect.Effect<Model.ModelResponse, { readonly message: string }>

/** The judge through the run's Model service (so the experiment's spend cap covers it). */
export const liveJudge: JudgeCall = Model.generateInContext

const system = [
  "You check a list of products that an analyst says compete with a given product.",
  "A competitor sells to the same buyers for the same job, so that a buyer would choose one or the other.",
  "An adjacent tool (one the same buyer also uses for another job), a company with a similar name in another business, or a product that no longer exists is not a competitor.",
  "Judge each entry on its own, from what it says and what you know; the quote is what the analyst cites.",
  "Answer with one JSON object and nothing else, of the form",
  '{"results": [{"entry": 1, "reasoning": "<one sentence>", "competitor": true}]}',
  "with one result per entry, in the order given."
].join("\n")

export const judgeRequest = (model: Registry.ResolvedModel, task: DiscoveryTask, listed: ReadonlyArray<Listed>): Model.ModelRequest =>
  // Bounded as every request is (Model.boundedRequest): the spend cap reserves what is sent.
  Model.boundedRequest({
    provider: model.provider,
    model: model.model.id,
    system,
    messages: [{
      role: "user",
      content: `<product>${task.product} (${task.productSite}): ${task.market}</product>\n\n<entries>\n${
        listed.map((l, i) =>
          l.ok
            ? `${i + 1}. ${l.entry.name} (${l.entry.site})\n   claim: ${l.entry.claim}\n   quote: "${l.entry.quote}"`
            : `${i + 1}. (not a well-formed entry) ${JSON.stringify(l.raw)}`
        ).join("\n")
      }\n</entries>`
    }],
    tools: []
  }, model.model)

const Reply = Schema.Struct({
  results: Schema.Array(Schema.Struct({ entry: Schema.optional(Schema.Number), competitor: Schema.Boolean }))
})

const evaluatorError = (detail: string) => new Capabilities.CapabilityError({ capability: "competitor-discovery/judge", reason: "evaluator", detail })

/**
 * One verdict per entry: matched by the entry number the judge repeats, else by position. An
 * entry the reply does not judge is not relevant; a malformed entry is never relevant.
 */
export const parseReply = (text: string, listed: ReadonlyArray<Listed>): Effect.Effect<ReadonlyArray<boolean>, Capabilities.CapabilityError> =>
  Effect.gen(function*() {
    const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text)
    const body = fenced ? fenced[1]! : text
    const start = body.indexOf("{")
    const end = body.lastIndexOf("}")
    const reply = yield* Schema.decodeUnknown(Schema.parseJson(Reply))(start >= 0 && end > start ? body.slice(start, end + 1) : body).pipe(
      Effect.mapError((e) => evaluatorError(`the judge's reply is not the expected JSON: ${e.message}`))
    )
    return listed.map((l, i) => {
      if (!l.ok) return false
      const numbered = reply.results.find((r) => r.entry === i + 1)
      return (numbered ?? reply.results[i])?.competitor ?? false
    })
  })

export interface Judged {
  readonly relevant: ReadonlyArray<boolean>
  readonly judging: Attempt.Judging
  /** Every judge's decisions on each well-formed entry (`relevance:<n>`), when more than one call was made. */
  readonly record: JudgePanel.PanelRecord | undefined
}

const askOne = (model: Registry.ResolvedModel, call: JudgeCall, task: DiscoveryTask, listed: ReadonlyArray<Listed>) =>
  Effect.gen(function*() {
    const response = yield* call(judgeRequest(model, task, listed)).pipe(
      Effect.mapError((e) => evaluatorError(`judge ${model.ref} failed: ${e.message}`))
    )
    return {
      decisions: yield* parseReply(response.text ?? "", listed),
      judging: { calls: 1, inputTokens: response.usage.inputTokens, outputTokens: response.usage.outputTokens, costUsd: Cost.costOf(model.model, response.usage) }
    }
  })

/**
 * Relevance by the first judge; with a second judge or repetitions (JudgePanel), each is asked the
 * same request too, and their decisions on the well-formed entries are recorded beside it.
 */
export const judge = (
  panel: { readonly judges: Arr.NonEmptyReadonlyArray<Registry.ResolvedModel>; readonly reps: number },
  call: JudgeCall,
  task: DiscoveryTask,
  listed: ReadonlyArray<Listed>
): Effect.Effect<Judged, Capabilities.CapabilityError> =>
  listed.length === 0
    ? Effect.succeed({ relevant: [], judging: { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 }, record: undefined })
    : Effect.map(
      JudgePanel.ask(
        panel,
        (m) => m.ref,
        listed.flatMap((l, index) => (l.ok ? [{ input: `relevance:${index + 1}`, index }] : [])),
        (model) => askOne(model, call, task, listed)
      ),
      (asked) => ({ relevant: asked.first.decisions, judging: asked.judging, record: asked.record })
    )
