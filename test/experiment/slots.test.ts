/**
 * `--parallel N` slots (docs/running.md, "Parallel slots"): a slot is one model call in flight. A run keeps
 * N calls in flight and never more, and a cell gives its slot back as soon as its call is
 * answered: its grading and its store write happen while the next cells' calls are out.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, TestClock } from "effect"
import { provider as ledger } from "../../providers/ledger/index.ts"
import type { Json } from "../../src/content/Canonical.ts"
import { type Candidate, cellScheduler, FINISHING, makePlan, run, silent } from "../../src/experiment/Runner.ts"
import * as Slots from "../../src/experiment/Slots.ts"
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
const slowStore = (home: string, inFlight: () => number, during: Array<number>, writeMs = WRITE_MS) =>
  Layer.effect(
    Store.Store,
    Effect.map(Store.Store, (store): Store.Store => ({
      ...store,
      putBatch: (batch) =>
        Effect.sync(() => during.push(inFlight())).pipe(
          Effect.zipRight(Effect.sleep(writeMs)),
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

  // Each write is a transaction whose commit costs what a thousand cells' commits cost the slots:
  // the writer woken by each finishing cell wrote one Attempt per transaction.
  it.live("cells finishing together share a store write: Attempts are written in batches, not one a transaction", () =>
    Effect.gen(function*() {
      const parallel = 20
      const plan = yield* modelCells(4)
      const { model } = slowModel()
      const batches: Array<number> = []
      const counting = Layer.effect(
        Store.Store,
        Effect.map(Store.Store, (store): Store.Store => ({
          ...store,
          putBatch: (batch) => Effect.zipRight(Effect.sync(() => batch.attempts.length > 0 && batches.push(batch.attempts.length)), store.putBatch(batch))
        }))
      ).pipe(Layer.provide(Store.layer(tempDir("assay-test-slots-"))))
      const outcome = yield* run(plan, { parallel, maxUsd: null, handlers: {}, progress: silent, settings: {} }).pipe(
        Effect.provide(counting),
        Effect.provideService(Model.Model, model)
      )
      expect(outcome.report.cells).toMatchObject({ total: 40, ran: 40 })
      expect(batches.reduce((a, b) => a + b, 0)).toBe(40)
      // Two waves of 20 answers, each answer due at its own tick: at most one write for two cells
      // (15 of them here), not 40.
      expect(batches.length).toBeLessThanOrEqual(20)
    }))

  it.live("a cell being graded holds no place among the conversing cells: with slow grading the slots stay busy", () =>
    Effect.gen(function*() {
      const parallel = 2
      const plan = yield* modelCells(3)
      // Grading takes 400 ms, nearly three answers' time. Were a cell's place among the N + N
      // open cells held until it is graded, the slots would be busy ~4 x 150 / (2 x 550) = 0.55
      // of the time; given back when its conversation ends, the next cells' calls go on.
      const slowGrading = (lane: (typeof plan.cells)[number]["lane"]) => ({
        ...lane,
        provider: {
          ...lane.provider,
          capabilities: {
            ...lane.provider.capabilities,
            evaluator: {
              ...lane.provider.capabilities.evaluator,
              evaluate: (input: Parameters<typeof lane.provider.capabilities.evaluator.evaluate>[0]) =>
                Effect.zipRight(Effect.sleep(400), lane.provider.capabilities.evaluator.evaluate(input))
            }
          }
        }
      })
      const lane = slowGrading(plan.cells[0]!.lane)
      const slowPlan = { ...plan, cells: plan.cells.map((c) => ({ ...c, lane })) }
      const { model, seen } = slowModel()
      const calls: Array<{ start: number; end: number }> = []
      const timed: Model.Model = {
        generate: (request) =>
          Effect.suspend(() => {
            const start = performance.now()
            return Effect.ensuring(model.generate(request), Effect.sync(() => calls.push({ start, end: performance.now() })))
          })
      }
      const outcome = yield* run(slowPlan, { parallel, maxUsd: null, handlers: {}, progress: silent, settings: {} }).pipe(
        Effect.provide(Store.layer(tempDir("assay-test-slots-"))),
        Effect.provideService(Model.Model, timed)
      )
      expect(outcome.report.cells).toMatchObject({ total: 30, ran: 30, skipped: 0 })
      expect(seen.most).toBe(parallel)
      const first = Math.min(...calls.map((c) => c.start))
      const last = Math.max(...calls.map((c) => c.end))
      const busy = calls.reduce((sum, c) => sum + (c.end - c.start), 0) / (parallel * (last - first))
      expect(busy).toBeGreaterThan(0.75)
    }))
})

// ---------------------------------------------------------------------------------------------
// The semaphore under the slots (src/experiment/Slots.ts): at most N holders, a freed permit goes
// to the longest waiter, and no permit is lost to a failure or an interruption.

/** Lets every fiber that can run, run. */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

describe("Slots", () => {
  it.effect("never more than N holders, and waiters are served first come, first served", () =>
    Effect.gen(function*() {
      const slots = Slots.make(2)
      const order: Array<number> = []
      let holding = 0
      let most = 0
      const job = (i: number) =>
        slots.withPermit(Effect.gen(function*() {
          order.push(i)
          holding++
          most = Math.max(most, holding)
          yield* Effect.sleep(10)
          holding--
        }))
      const fibers: Array<Fiber.RuntimeFiber<void>> = []
      // Forked one at a time, so each queues behind the ones before it.
      for (let i = 0; i < 8; i++) {
        fibers.push(yield* Effect.fork(job(i)))
        yield* settle
      }
      expect(slots.waiting()).toBe(6)
      yield* TestClock.adjust(100)
      yield* Fiber.joinAll(fibers)
      expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
      expect(most).toBe(2)
      expect(slots.free()).toBe(2)
      expect(slots.waiting()).toBe(0)
    }))

  it.effect("a failing or dying holder gives its permit back", () =>
    Effect.gen(function*() {
      const slots = Slots.make(1)
      expect(Exit.isFailure(yield* Effect.exit(slots.withPermit(Effect.fail("no"))))).toBe(true)
      expect(Exit.isFailure(yield* Effect.exit(slots.withPermit(Effect.die("boom"))))).toBe(true)
      expect(slots.free()).toBe(1)
      expect(yield* slots.withPermit(Effect.succeed(7))).toBe(7)
    }))

  it.effect("an interrupted waiter leaves the queue, and the next one gets the permit", () =>
    Effect.gen(function*() {
      const slots = Slots.make(1)
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(slots.withPermit(Deferred.await(release)))
      yield* settle
      const ran: Array<string> = []
      const a = yield* Effect.fork(slots.withPermit(Effect.sync(() => ran.push("a"))))
      yield* settle
      const b = yield* Effect.fork(slots.withPermit(Effect.sync(() => ran.push("b"))))
      yield* settle
      expect(slots.waiting()).toBe(2)
      yield* Fiber.interrupt(a)
      expect(slots.waiting()).toBe(1)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      yield* Fiber.join(b)
      expect(ran).toEqual(["b"])
      expect(slots.free()).toBe(1)
    }))

  it.effect("a waiter interrupted in the step its permit frees: the permit goes to the next waiter", () =>
    Effect.gen(function*() {
      const slots = Slots.make(1)
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(slots.withPermit(Deferred.await(release)))
      yield* settle
      const a = yield* Effect.fork(slots.withPermit(Effect.never))
      yield* settle
      const ran: Array<string> = []
      const b = yield* Effect.fork(slots.withPermit(Effect.sync(() => ran.push("b"))))
      yield* settle
      // The holder finishes in the same step as the waiter `a` is interrupted.
      yield* Effect.sync(() => {
        Effect.runFork(Fiber.interrupt(a))
      }).pipe(Effect.zipRight(Deferred.succeed(release, undefined)))
      yield* Fiber.join(holder)
      yield* Fiber.await(a)
      yield* Fiber.join(b)
      expect(ran).toEqual(["b"])
      expect(slots.free()).toBe(1)
      expect(slots.waiting()).toBe(0)
    }))

  it.effect("many holders and waiters under random interruption end with every permit free", () =>
    Effect.gen(function*() {
      const slots = Slots.make(3)
      let holding = 0
      let most = 0
      const fibers: Array<Fiber.RuntimeFiber<void>> = []
      for (let i = 0; i < 90; i++) {
        fibers.push(yield* Effect.fork(slots.withPermit(Effect.gen(function*() {
          holding++
          most = Math.max(most, holding)
          yield* Effect.sleep(1 + (i % 5))
        }).pipe(Effect.ensuring(Effect.sync(() => holding--))))))
      }
      yield* settle
      // Every third fiber is interrupted, waiting or holding.
      for (let i = 0; i < fibers.length; i += 3) yield* Fiber.interruptFork(fibers[i]!)
      for (let t = 0; t < 200; t++) {
        yield* TestClock.adjust(1)
        yield* settle
      }
      // Checked before awaiting the fibers: a lost permit would leave some waiting for ever.
      expect(slots.waiting()).toBe(0)
      expect(slots.free()).toBe(3)
      expect(holding).toBe(0)
      expect(most).toBe(3)
      yield* Effect.forEach(fibers, Fiber.await, { discard: true })
    }))

  it.effect("withPermitUntil: the permit given back early goes to the next waiter at once, and is given back only once", () =>
    Effect.gen(function*() {
      const slots = Slots.make(1)
      const gate = yield* Deferred.make<void>()
      const order: Array<string> = []
      const first = yield* Effect.fork(slots.withPermitUntil((release) =>
        Effect.gen(function*() {
          order.push("first talks")
          yield* release
          yield* release
          yield* Deferred.await(gate)
          order.push("first graded")
        })
      ))
      yield* settle
      const second = yield* Effect.fork(slots.withPermit(Effect.sync(() => order.push("second talks"))))
      yield* settle
      expect(order).toEqual(["first talks", "second talks"])
      expect(slots.free()).toBe(1)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      expect(slots.free()).toBe(1)
    }))
})

describe("the cell scheduler", () => {
  it("runs every urgent task before any FINISHING one, each kind in order", async () => {
    const scheduler = cellScheduler()
    const ran: Array<string> = []
    scheduler.scheduleTask(() => ran.push("finish a"), FINISHING)
    scheduler.scheduleTask(() => ran.push("talk a"), 0)
    scheduler.scheduleTask(() => {
      ran.push("finish b")
      // Urgent work that arrives while finishing runs goes ahead of the finishing left.
      scheduler.scheduleTask(() => ran.push("talk c"), 0)
    }, FINISHING)
    scheduler.scheduleTask(() => ran.push("finish c"), FINISHING)
    scheduler.scheduleTask(() => ran.push("talk b"), 0)
    for (let i = 0; i < 5 && ran.length < 6; i++) await new Promise((r) => setImmediate(r))
    expect(ran).toEqual(["talk a", "talk b", "finish a", "finish b", "talk c", "finish c"])
  })
})
