/**
 * `--parallel N` slots (README, "Parallel slots"): a slot is one model call in flight. A run keeps
 * N calls in flight and never more, and a cell gives its slot back as soon as its call is
 * answered: its grading and its store write happen while the next cells' calls are out.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { provider as ledger } from "../../providers/ledger/index.ts"
import type { Json } from "../../src/content/Canonical.ts"
import { type Candidate, makePlan, run, silent } from "../../src/experiment/Runner.ts"
import * as Store from "../../src/experiment/Store.ts"
import * as Model from "../../src/model/Model.ts"
import { modelAgent } from "../../src/model/ModelAgent.ts"
import * as Registry from "../../src/model/Registry.ts"
import { noLimits } from "../../src/schema/EnvironmentDef.ts"
import { tempDir } from "../support/tempDirs.ts"

const ANSWER_MS = 150
const WRITE_MS = 40

/** A model answering every call after ANSWER_MS, counting the calls in flight. */
const slowModel = () => {
  const scripted = Model.scripted(() => ({ text: "done", usage: { inputTokens: 100, outputTokens: 10 } }))
  const seen = { inFlight: 0, most: 0, calls: 0 }
  const model: Model.Model = {
    generate: (request) =>
      Effect.sync(() => {
        seen.inFlight++
        seen.calls++
        seen.most = Math.max(seen.most, seen.inFlight)
      }).pipe(
        Effect.zipRight(Effect.sleep(ANSWER_MS)),
        Effect.zipRight(scripted.generate(request)),
        Effect.ensuring(Effect.sync(() => seen.inFlight--))
      )
  }
  return { model, seen }
}

/**
 * The store, each batched write taking WRITE_MS more, noting the calls in flight while it
 * writes: a cell that held its slot through its write would leave that slot empty meanwhile.
 */
const slowStore = (home: string, inFlight: () => number, during: Array<number>) =>
  Layer.effect(
    Store.Store,
    Effect.map(Store.Store, (store): Store.Store => ({
      ...store,
      putBatch: (batch) =>
        Effect.sync(() => during.push(inFlight())).pipe(
          Effect.zipRight(Effect.sleep(WRITE_MS)),
          Effect.zipRight(Effect.sync(() => during.push(inFlight()))),
          Effect.zipRight(store.putBatch(batch))
        )
    }))
  ).pipe(Layer.provide(Store.layer(home)))

const modelCells = (reps: number) =>
  Effect.gen(function*() {
    const entry = yield* Registry.resolve("openai:gpt-4o-mini").pipe(Effect.provide(Registry.layer))
    const candidate: Candidate = {
      def: { name: "openai:gpt-4o-mini", kind: "llm", model: entry.ref, actionSpace: "tools", prompt: "", limits: noLimits },
      registryEntry: entry as unknown as Json,
      agentFor: () => Effect.succeed(modelAgent("openai:gpt-4o-mini", entry))
    }
    const environments = (yield* ledger.environments).slice(0, 10)
    return yield* makePlan([{ provider: ledger, environments, candidates: [candidate] }], reps)
  })

describe("--parallel slots", () => {
  it.live("N model calls in flight, never more, and a cell's slot is free before its store write", () =>
    Effect.gen(function*() {
      const parallel = 4
      const plan = yield* modelCells(4)
      const { model, seen } = slowModel()
      const during: Array<number> = []
      const outcome = yield* run(plan, { parallel, maxUsd: null, handlers: {}, progress: silent, settings: {} }).pipe(
        Effect.provide(slowStore(tempDir("assay-test-slots-"), () => seen.inFlight, during)),
        Effect.provideService(Model.Model, model)
      )
      expect(outcome.report.cells).toMatchObject({ total: 40, ran: 40, skipped: 0 })
      // One call per cell (the model answers with text, no tool call).
      expect(seen.calls).toBe(40)
      expect(seen.most).toBe(parallel)
      // While finished cells are written, all N slots are taken by the next cells' calls.
      expect(during.length).toBeGreaterThan(0)
      expect(Math.max(...during)).toBe(parallel)
    }))
})
