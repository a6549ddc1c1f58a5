/**
 * `corpus`: the embedded harness corpus (src/harness/corpus) as a benchmark. A candidate is an
 * agent CLI (`harness:NAME[:MODEL]`); one Attempt is one headless run of it on one task.
 *
 * The run is one `process/spawn` effect keyed by the harness name. Its live handler (built by the
 * command with the binaries it detected) rebuilds the fixture in a fresh temp folder, runs the CLI,
 * grades and removes the folder, and answers portable JSON: so an Attempt is recorded and replays
 * with no CLI installed. The protocol debits the Attempt's wallet with the transcript's calls at
 * registry price, then asks the blind judge (a model call with role `judge` on a wallet of its own,
 * or a harness run keyed `judge:NAME`) when the environment names one in `models.judge`.
 *
 * Not on the benchmark kit (src/kit/Benchmark.ts): the kit offers every benchmark a `gold` and a
 * do-nothing candidate played by assay, and names candidates by Agent.referenceDef. The corpus has
 * no reference run to play (a task is judged on what a CLI did to a folder) and its candidates
 * are agent CLIs, `kind: "harness"`, so its roster is empty and its AgentDefs are its own.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Either, Ref, Schema } from "effect"
import {
  type AgentDef,
  Capabilities,
  ContentId,
  type Conversation,
  Cost,
  EnvironmentDef,
  Model,
  ModelAgent,
  type Provider,
  Registry,
  Wallet,
  World,
  WorldEffects as WE
} from "../../src/index.ts"
import { adapters } from "../../src/harness/adapters/index.ts"
import { type CorpusTask, loadCorpus } from "../../src/harness/Corpus.ts"
import type { Python } from "../../src/harness/Graders.ts"
import { type Endpoint, type HarnessName, isHarnessName } from "../../src/harness/Harness.ts"
import { composite, judgePrompt, parseJudgeScore } from "../../src/harness/Judge.ts"
import { type HarnessRun, runHarness } from "../../src/harness/Run.ts"

const VERSION = "1"
export const BENCHMARK = "corpus"

// ---------------------------------------------------------------------------------------------
// The portable result of one harness run (what the `process/spawn` effect answers)

const Call = Schema.Struct({
  model: Schema.NullOr(Schema.String),
  input: Schema.Number,
  output: Schema.Number,
  cacheRead: Schema.NullOr(Schema.Number),
  cacheWrite: Schema.NullOr(Schema.Number),
  reasoning: Schema.NullOr(Schema.Number)
})

export const QuotaReading = Schema.Struct({
  window: Schema.String,
  usedPercent: Schema.Number,
  windowMinutes: Schema.NullOr(Schema.Number)
})
export type QuotaReading = typeof QuotaReading.Type

export const SpawnResult = Schema.Struct({
  harness: Schema.String,
  task: Schema.String,
  requestedModel: Schema.NullOr(Schema.String),
  outcome: Schema.Literal("completed", "failed", "timeout"),
  exitCode: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String),
  wallMs: Schema.Number,
  finalAnswer: Schema.NullOr(Schema.String),
  transcriptError: Schema.NullOr(Schema.String),
  /** Model names the transcript shows: the report names these for a default-model candidate. */
  models: Schema.Array(Schema.String),
  calls: Schema.Array(Call),
  quota: Schema.Array(QuotaReading),
  diff: Schema.Struct({ text: Schema.String, truncated: Schema.Boolean, changed: Schema.Array(Schema.String) }),
  grades: Schema.Struct({
    verdicts: Schema.Array(
      Schema.Struct({ name: Schema.String, kind: Schema.String, status: Schema.Literal("passed", "failed", "skipped"), reason: Schema.String })
    ),
    passed: Schema.Number,
    evaluated: Schema.Number,
    correctness: Schema.NullOr(Schema.Number)
  }),
  /** The last 2 KB of the CLI's stderr, for a failed run. */
  stderrTail: Schema.String
})
export type SpawnResult = typeof SpawnResult.Type

/** What a failed CLI said last: its answer, else its stderr's last line, on one line and short. */
const cliWords = (result: SpawnResult): string => {
  const said = (result.finalAnswer ?? "").trim() !== "" ? result.finalAnswer! : result.stderrTail.trim().split("\n").at(-1) ?? ""
  const line = said.replace(/\s+/g, " ").trim()
  return line === "" ? "it printed nothing (`assay harnesses` checks that it starts)" : JSON.stringify(line.length > 200 ? `${line.slice(0, 200)}…` : line)
}

export const SpawnRequest = Schema.Struct({
  harness: Schema.String,
  model: Schema.NullOr(Schema.String),
  /** A corpus task id, or `judge` for a judge run in an empty folder. */
  task: Schema.String,
  prompt: Schema.String
})
export type SpawnRequest = typeof SpawnRequest.Type

const JudgeOutcome = Schema.Struct({
  ref: Schema.String,
  score: Schema.NullOr(Schema.Number),
  reply: Schema.String,
  error: Schema.NullOr(Schema.String),
  tokens: Schema.Struct({ input: Schema.Number, output: Schema.Number }),
  /** List-price dollars of judging this run (paid outside the candidate's wallet); null = unknown. */
  costUsd: Schema.NullOr(Schema.Number)
})

export const Output = Schema.Struct({
  harness: SpawnResult,
  /** List-price dollars of the run's calls; null = unknown (a call without counts or price). */
  costUsd: Schema.NullOr(Schema.Number),
  judge: Schema.NullOr(JudgeOutcome)
})
export type Output = typeof Output.Type

export const toPortable = (run: HarnessRun): SpawnResult => ({
  harness: run.harness,
  task: run.task,
  requestedModel: run.requestedModel ?? null,
  outcome: run.outcome,
  exitCode: run.exitCode,
  signal: run.signal,
  wallMs: run.wallMs,
  finalAnswer: run.transcript?.finalAnswer ?? null,
  transcriptError: run.transcriptError ?? null,
  models: run.transcript?.models ?? [],
  calls: (run.transcript?.calls ?? []).map((c) => ({
    model: c.model ?? null,
    input: c.input,
    output: c.output,
    cacheRead: c.cacheRead ?? null,
    cacheWrite: c.cacheWrite ?? null,
    reasoning: c.reasoning ?? null
  })),
  quota: (run.transcript?.quota ?? []).map((q) => ({ window: q.window, usedPercent: q.usedPercent, windowMinutes: q.windowMinutes ?? null })),
  diff: { text: run.diff.text, truncated: run.diff.truncated, changed: run.diff.changed },
  grades: {
    verdicts: run.grades.verdicts.map((v) => ({ name: v.name, kind: v.kind, status: v.status, reason: v.reason })),
    passed: run.grades.passed,
    evaluated: run.grades.evaluated,
    correctness: run.grades.correctness ?? null
  },
  stderrTail: run.stderr.slice(-2048)
})

// ---------------------------------------------------------------------------------------------
// Names

/** `harness:codex:gpt-5` -> { harness: "codex", model: "gpt-5" }; `harness:codex` -> default model. */
export const parseHarnessCandidate = (name: string): { readonly harness: HarnessName; readonly model: string | undefined } | undefined => {
  if (!name.startsWith("harness:")) return undefined
  const rest = name.slice("harness:".length)
  const i = rest.indexOf(":")
  const harness = i < 0 ? rest : rest.slice(0, i)
  const model = i < 0 ? undefined : rest.slice(i + 1)
  if (!isHarnessName(harness) || model === "" || model === "default") {
    return isHarnessName(harness) ? { harness, model: undefined } : undefined
  }
  return { harness, model }
}

export const harnessCandidateName = (harness: HarnessName, model: string | undefined): string =>
  model === undefined ? `harness:${harness}` : `harness:${harness}:${model}`

// ---------------------------------------------------------------------------------------------
// Prices: the shipped registry, looked up among the harness's vendors (aliases allowed)

/** The shipped registry, read on first use and kept for the process. */
let registryFile: Registry.RegistryFile | undefined
const registry: Effect.Effect<Registry.RegistryFile> = Effect.suspend(() =>
  registryFile !== undefined ? Effect.succeed(registryFile) : Effect.tap(Registry.fixture, (file) => Effect.sync(() => (registryFile = file)))
)

export const priceOf = (prices: Registry.RegistryFile, harness: HarnessName, model: string | null | undefined): Registry.Cost | undefined => {
  if (model === null || model === undefined) return undefined
  for (const vendor of adapters[harness].vendors) {
    const found = Registry.resolveIn(prices, `${vendor}:${model}`)
    if (Either.isRight(found) && found.right.provider === vendor) return found.right.model.cost
  }
  return undefined
}

/** List-price cost of a run's calls; null when any call has no price or the run has no counts. */
export const costOfCalls = (prices: Registry.RegistryFile, harness: HarnessName, result: SpawnResult): number | null => {
  if (result.calls.length === 0) return null
  let total = 0
  for (const c of result.calls) {
    const price = priceOf(prices, harness, c.model ?? result.requestedModel)
    if (price === undefined) return null
    total += Cost.costAt(price, { inputTokens: c.input, outputTokens: c.output, cacheReadTokens: c.cacheRead ?? undefined, cacheWriteTokens: c.cacheWrite ?? undefined })
  }
  return total
}

// ---------------------------------------------------------------------------------------------
// The live `process/spawn` handler

export interface SpawnConfig {
  /** Absolute paths of the detected CLIs. */
  readonly binaries: Partial<Readonly<Record<HarnessName, string>>>
  /** `undefined` = the CLIs' own configuration and login. */
  readonly endpoint: Endpoint | undefined
  readonly python: Python | undefined
  readonly timeoutMs: number
  readonly baseEnv?: Readonly<Record<string, string>>
  /** The corpus folder; default the embedded one. */
  readonly corpusDir?: string
}

/** A task for a judge run: the judge's prompt in an empty folder, no graders. */
const judgeTask = (prompt: string) =>
  Effect.acquireRelease(
    Effect.sync((): CorpusTask => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "assay-judge-"))
      return { id: "judge", title: "judge", role: "both", prompt, graders: [], dir, fixtureDir: dir }
    }),
    (t) => Effect.sync(() => fs.rmSync(t.dir, { recursive: true, force: true }))
  )

export const spawnHandler = (config: SpawnConfig): WE.Handler => {
  let tasks: ReadonlyArray<CorpusTask> | undefined
  return (effect) =>
    Effect.gen(function*() {
      const failed = (detail: string) => new WE.EffectFailed({ kind: effect.kind, key: effect.key, reason: "handler", detail })
      const request = yield* Schema.decodeUnknown(SpawnRequest)(effect.request).pipe(Effect.mapError((e) => failed(e.message)))
      const harness = request.harness
      if (!isHarnessName(harness)) return yield* failed(`unknown harness ${harness}`)
      const binary = config.binaries[harness]
      if (binary === undefined) return yield* failed(`${harness} is not installed here`)
      tasks ??= yield* loadCorpus(config.corpusDir).pipe(Effect.mapError((e) => failed(e.message)))
      const run = yield* Effect.scoped(
        Effect.gen(function*() {
          const task = request.task === "judge" ? yield* judgeTask(request.prompt) : tasks?.find((t) => t.id === request.task)
          if (task === undefined) return yield* failed(`no corpus task ${request.task}`)
          return yield* runHarness({
            adapter: adapters[harness],
            binary,
            task: { ...task, prompt: request.prompt },
            model: request.model ?? undefined,
            endpoint: config.endpoint,
            timeoutMs: config.timeoutMs,
            python: config.python,
            ...(config.baseEnv !== undefined ? { baseEnv: config.baseEnv } : {})
          }).pipe(Effect.mapError((e) => failed(e.message)))
        })
      )
      return yield* Schema.encode(SpawnResult)(toPortable(run)).pipe(Effect.mapError((e) => failed(e.message)))
    })
}

// ---------------------------------------------------------------------------------------------
// Capabilities

const environment = (task: CorpusTask): EnvironmentDef.EnvironmentDef => ({
  benchmark: BENCHMARK,
  task: task.id,
  stratum: task.role,
  world: { isolation: "fork", settlement: "discard", effects: EnvironmentDef.defaultEffects },
  capabilities: {
    worldSetup: { name: "corpus/fixture", version: VERSION },
    protocol: { name: "corpus/headless-run", version: VERSION },
    evaluator: { name: "corpus/graders-judge", version: VERSION },
    upstream: null,
    models: {}
  },
  limits: EnvironmentDef.noLimits
})

const dataError = (detail: string) => new Capabilities.CapabilityError({ capability: BENCHMARK, reason: "data", detail })

let corpusTasks: ReadonlyArray<CorpusTask> | undefined
const allTasks: Effect.Effect<ReadonlyArray<CorpusTask>, Capabilities.CapabilityError> = Effect.suspend(() =>
  corpusTasks !== undefined
    ? Effect.succeed(corpusTasks)
    : loadCorpus().pipe(
      Effect.tap((ts) => Effect.sync(() => (corpusTasks = ts))),
      Effect.mapError((e) => dataError(e.message))
    )
)

const taskOf = (env: EnvironmentDef.EnvironmentDef) =>
  Effect.flatMap(allTasks, (ts) => {
    const t = ts.find((x) => x.id === env.task)
    return t ? Effect.succeed(t) : Effect.fail(dataError(`no corpus task ${env.task}`))
  })

const emptyWorld = World.make({})

const protocolError = (detail: string) => new Capabilities.CapabilityError({ capability: "corpus/headless-run", reason: "protocol", detail })

/** The blind judge's verdict on one run; a failed judge leaves the score unknown, not the Attempt. */
const judge = (ref: string, task: CorpusTask, result: SpawnResult, prices: Registry.RegistryFile) =>
  Effect.gen(function*() {
    const prompt = judgePrompt({ taskPrompt: task.prompt, finalAnswer: result.finalAnswer ?? "", diff: result.diff.text })
    const asHarness = parseHarnessCandidate(ref)
    if (asHarness !== undefined) {
      const run = yield* WE.perform(
        {
          kind: "process/spawn",
          key: `judge:${asHarness.harness}`,
          request: { harness: asHarness.harness, model: asHarness.model ?? null, task: "judge", prompt }
        },
        SpawnResult
      )
      const reply = run.finalAnswer ?? ""
      return {
        ref,
        score: parseJudgeScore(reply) ?? null,
        reply,
        error: run.finalAnswer === null ? `judge run ${run.outcome}: ${run.transcriptError ?? ""}` : null,
        tokens: { input: run.calls.reduce((a, c) => a + c.input, 0), output: run.calls.reduce((a, c) => a + c.output, 0) },
        costUsd: costOfCalls(prices, asHarness.harness, run)
      }
    }
    const resolved = yield* Effect.mapError(Registry.resolveIn(prices, ref), (e) => protocolError(e.message))
    // The judge's wallet is its own: judging never spends the candidate's budget.
    const wallet = yield* Wallet.make(EnvironmentDef.noLimits)
    const response = yield* ModelAgent.call(
      // Bounded as every request is: the spend cap reserves what is sent.
      Model.boundedRequest({ provider: resolved.provider, model: resolved.model.id, system: "", messages: [{ role: "user", content: prompt }], tools: [] }, resolved.model),
      { role: "judge", model: resolved }
    ).pipe(Effect.provideService(Wallet.Wallet, wallet))
    const reply = response.text ?? ""
    return {
      ref,
      score: parseJudgeScore(reply) ?? null,
      reply,
      error: null,
      tokens: { input: response.usage.inputTokens, output: response.usage.outputTokens },
      costUsd: Cost.costOf(resolved.model, response.usage)
    }
  }).pipe(
    Effect.catchAll((e) =>
      Effect.succeed({ ref, score: null, reply: "", error: e.message, tokens: { input: 0, output: 0 }, costUsd: null })
    )
  )

export const capabilities: Capabilities.Capabilities = {
  worldSetup: Capabilities.makeWorldSetup({
    name: "corpus/fixture",
    version: VERSION,
    trust: "deterministic",
    setup: (env) =>
      Effect.map(taskOf(env), (task) => ({
        world: emptyWorld,
        evidence: { task: task.id, spec: ContentId.ofUnsafe({ prompt: task.prompt, role: task.role, graders: task.graders }) },
        tools: []
      }))
  }),
  protocol: Capabilities.makeProtocol({
    name: "corpus/headless-run",
    version: VERSION,
    trust: "deterministic",
    inputs: (env) => Effect.map(taskOf(env), (task) => ({ system: task.prompt, tools: [] })),
    run: (ctx) =>
      Effect.gen(function*() {
        const task = yield* taskOf(ctx.env)
        const who = parseHarnessCandidate(ctx.agent.name)
        if (who === undefined) return yield* protocolError(`${ctx.agent.name} is not a harness candidate (harness:NAME[:MODEL])`)
        const prompt = ctx.inputs.system
        yield* Ref.set(ctx.transcript, [{ role: "user", content: prompt }])
        const result = yield* WE.perform(
          { kind: "process/spawn", key: who.harness, request: { harness: who.harness, model: who.model ?? null, task: task.id, prompt } },
          SpawnResult
        )
        yield* Ref.update(ctx.transcript, (ms): ReadonlyArray<Conversation.Message> => [...ms, { role: "assistant", content: result.finalAnswer, toolCalls: [] }])
        // The calls already happened: settle them on the wallet (no reservation to refuse).
        const wallet = yield* Wallet.Wallet
        const prices = yield* registry
        const costUsd = costOfCalls(prices, who.harness, result)
        if (result.calls.length === 0) {
          // No token counts: the run's cost is unknown, never $0.
          yield* wallet.settle({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null, retries: 0 })
        }
        for (const c of result.calls) {
          const price = priceOf(prices, who.harness, c.model ?? result.requestedModel)
          const usage = { inputTokens: c.input, outputTokens: c.output, cacheReadTokens: c.cacheRead ?? 0, cacheWriteTokens: c.cacheWrite ?? 0 }
          yield* wallet.settle({ ...usage, costUsd: price === undefined ? null : Cost.costAt(price, usage), retries: 0 })
        }
        // Refused by the subscription's quota (a window read at 100%): an outage of the account,
        // not the candidate's failure; ended as a fault, the cell runs again on resume.
        if (result.outcome === "failed" && result.quota.some((q) => q.usedPercent >= 100)) {
          return yield* new WE.EffectFault({ kind: "process/spawn", key: who.harness, occurrence: 0, reason: "rate-limit", injected: false })
        }
        // Failed without one model token reported: the CLI never reached its model (no login or
        // key, its endpoint down, an install that does not start). That measures neither the CLI
        // nor the model: an outage, in the CLI's own words, and the cell runs again next time.
        if (result.outcome === "failed" && result.calls.every((c) => c.input === 0 && c.output === 0)) {
          return yield* new WE.EffectFault({
            kind: "process/spawn",
            key: who.harness,
            occurrence: 0,
            reason: "unreachable",
            injected: false,
            detail: `${who.harness} exited ${result.exitCode ?? result.signal ?? "abnormally"} before any model call: ${cliWords(result)}`
          })
        }
        if (result.outcome === "timeout") {
          const seconds = result.wallMs / 1000
          return yield* new Wallet.BudgetExceeded({ limit: "wall-seconds", allowed: seconds, spent: seconds })
        }
        const judgeRef = ctx.env.capabilities.models["judge"]
        const judged = judgeRef === undefined ? null : yield* judge(judgeRef, task, result, prices)
        return yield* Schema.encode(Output)({ harness: result, costUsd, judge: judged }).pipe(
          Effect.mapError((e) => protocolError(`its output is not what it declares: ${e.message}`))
        )
      })
  }),
  evaluator: Capabilities.makeEvaluator({
    name: "corpus/graders-judge",
    version: VERSION,
    trust: "deterministic",
    evaluate: (ctx) =>
      Effect.gen(function*() {
        const output = yield* Schema.decodeUnknown(Output)(ctx.output).pipe(
          Effect.mapError((e) => new Capabilities.CapabilityError({ capability: "corpus/graders-judge", reason: "evaluator", detail: e.message }))
        )
        const checks: Record<string, boolean> = {}
        const notEvaluated: Array<string> = []
        for (const v of output.harness.grades.verdicts) {
          if (v.status === "skipped") notEvaluated.push(v.name)
          else checks[v.name] = v.status === "passed"
        }
        const judgeScore = output.judge?.score ?? undefined
        if (output.judge !== null) {
          if (judgeScore === undefined) notEvaluated.push("judge")
          else checks["judge"] = judgeScore >= 7
        }
        const correctness = output.harness.grades.correctness ?? undefined
        const judge = output.judge
        return {
          ...(judge !== null
            ? { judging: { calls: 1, inputTokens: judge.tokens.input, outputTokens: judge.tokens.output, costUsd: judge.costUsd } }
            : {}),
          reward: composite(correctness, judgeScore) ?? 0,
          checks,
          notEvaluated,
          details: {
            correctness: correctness ?? null,
            judgeScore: judgeScore ?? null,
            outcome: output.harness.outcome,
            models: output.harness.models,
            wallMs: output.harness.wallMs,
            costUsd: output.costUsd
          }
        }
      })
  })
}

const rosterDef = (name: string): AgentDef.AgentDef => ({
  name,
  kind: "harness",
  model: name.startsWith("harness:") ? name.slice("harness:".length) : null,
  actionSpace: "text",
  prompt: "",
  limits: EnvironmentDef.noLimits
})

export const provider: Provider.Provider = {
  name: BENCHMARK,
  version: VERSION,
  description: "agent CLIs (harnesses) on 13 small tasks written for assay: fixtures, graders and a blind judge",
  environments: Effect.map(allTasks, (ts) => ts.map(environment)),
  capabilities,
  roster: [],
  rosterDef,
  scripted: (name) => Effect.fail(protocolError(`the corpus has no scripted candidate ${name}: use harness:NAME[:MODEL]`))
}
