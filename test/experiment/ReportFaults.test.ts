/**
 * Reports say what faults did: the spec (or none) in every format, per candidate the faults
 * injected and the cells that ended in one apart from the candidate's own failures, each cell's
 * faults when asked (`--cells`), and the skipped cells with their reasons.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { provider as ledger } from "../../providers/ledger/index.ts"
import type { Json } from "../../src/content/Canonical.ts"
import { completeReport, encodeJson, renderHtml, renderMarkdown, renderText, type Report } from "../../src/experiment/Report.ts"
import { type Candidate, type Lane, makePlan, run, silent } from "../../src/experiment/Runner.ts"
import * as Store from "../../src/experiment/Store.ts"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import * as Live from "../../src/model/Live.ts"
import * as Model from "../../src/model/Model.ts"
import { modelAgent } from "../../src/model/ModelAgent.ts"
import { modelHandler } from "../../src/model/ModelEffect.ts"
import * as Registry from "../../src/model/Registry.ts"
import { type EffectsSpec, noLimits, withEffects } from "../../src/schema/EnvironmentDef.ts"

const gold: Candidate = { def: ledger.rosterDef("gold"), registryEntry: null, agentFor: (env) => ledger.scripted("gold", env) }

const faults: EffectsSpec = { admission: "all", faults: { seed: 7, rate: 0.3, only: null, kinds: ["rate-limit", "server-error", "timeout"] } }

/** A home for one test, removed whatever the test's outcome. */
const inHome = <A, E, R>(body: (home: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "assay-faults-"))),
    body,
    (home) => Effect.sync(() => rmSync(home, { recursive: true, force: true }))
  )

const runIn = (home: string, lanes: ReadonlyArray<Lane>, extra: Partial<Parameters<typeof run>[1]> = {}) =>
  Effect.gen(function*() {
    const plan = yield* makePlan(lanes, 1)
    // The live model as a handler of the caller's own: its cells hold a slot for their whole Attempt.
    const liveHandler = modelHandler(yield* Model.Model)
    return yield* run(plan, { parallel: 1, maxUsd: null, handlers: { "model/generate": liveHandler }, progress: silent, settings: {}, ...extra })
  }).pipe(Effect.provide(Store.layer(home)), Effect.provide(Live.layerNode))

describe("a run with injected faults", () => {
  it.scopedLive("states the fault spec and each candidate's faults in text, Markdown, HTML and JSON; --cells lists each cell's faults", () =>
    inHome((home) =>
      Effect.gen(function*() {
        // The model answers at once with no tool call: its cells fail on the world, its own failure.
        const server = yield* LoopbackServer.start([{ repeat: true, text: "Done.", usage: { input: 100, output: 10 } }])
        const model = yield* Registry.resolve("openai:gpt-4o-mini").pipe(Effect.provide(Registry.layer))
        const modelCandidate: Candidate = {
          def: { name: "openai:gpt-4o-mini", kind: "llm", model: model.ref, actionSpace: "tools", prompt: "", limits: noLimits },
          registryEntry: model as unknown as Json,
          agentFor: () => Effect.succeed(modelAgent("openai:gpt-4o-mini", model))
        }
        const environments = (yield* ledger.environments).map((e) => withEffects(e, faults))
        const outcome = yield* runIn(home, [{ provider: ledger, environments, candidates: [gold, modelCandidate] }]).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["OPENAI_BASE_URL", server.openAiBaseUrl], ["OPENAI_API_KEY", "sk-test"]])))
        )
        const report = outcome.report
        const injected = outcome.attempts.reduce((n, a) => n + a.faults.length, 0)
        expect(injected).toBeGreaterThan(0)
        expect(report.faults?.spec).toEqual(faults.faults)
        const byCandidate = new Map((report.faults?.candidates ?? []).map((c) => [c.candidate, c]))
        for (const name of ["gold", "openai:gpt-4o-mini"]) {
          const mine = outcome.attempts.filter((a) => a.candidate === name)
          const endedInFault = mine.filter((a) => a.verdict.ended?.reason === "fault").length
          expect(byCandidate.get(name)).toEqual({
            candidate: name,
            benchmark: "ledger",
            cells: 20,
            injected: mine.reduce((n, a) => n + a.faults.length, 0),
            cellsWithFaults: mine.filter((a) => a.faults.length > 0).length,
            endedInFault,
            failedAfterFault: mine.filter((a) => a.verdict.reward < 1 && a.verdict.ended?.reason !== "fault" && a.faults.length > 0).length,
            failedWithoutFault: mine.filter((a) => a.verdict.reward < 1 && a.verdict.ended?.reason !== "fault" && a.faults.length === 0).length
          })
        }
        // Gold fails only where a fault got in its way: none of its failures is its own.
        const g = byCandidate.get("gold")!
        expect(g.failedWithoutFault).toBe(0)
        expect(g.injected).toBeGreaterThan(0)
        expect(g.endedInFault + g.failedAfterFault).toBeGreaterThan(0)

        const spec = "seed 7 · rate 0.3 · kinds rate-limit, server-error, timeout · the same draws in every repetition"
        const text = renderText(report)
        expect(text).toMatch(new RegExp(`^faults +${spec}$`, "m"))
        expect(text).toContain("faults per candidate\ncandidate ")
        const goldRow = text.slice(text.indexOf("faults per candidate")).split("\n").find((l) => l.startsWith("gold "))
        expect(goldRow?.split(/ {2,}/)).toEqual(["gold", "ledger", "20", `${g.injected}`, `${g.cellsWithFaults}`, `${g.endedInFault}`, `${g.failedAfterFault}`, "0"])
        const markdown = renderMarkdown(report)
        expect(markdown).toContain(`- faults: ${spec}`)
        expect(markdown).toContain("## Faults per candidate")
        expect(markdown).toContain(`| gold | ledger | 20 | ${g.injected} | ${g.cellsWithFaults} | ${g.endedInFault} | ${g.failedAfterFault} | 0 |`)
        const html = renderHtml(report)
        expect(html).toContain(`<dt>faults</dt><dd>${spec}</dd>`)
        expect(html).toContain("<h2>Faults per candidate</h2>")

        const json = JSON.parse(yield* encodeJson(report)) as { faults: NonNullable<Report["faults"]>; cellResults?: unknown }
        expect(json.faults.spec).toEqual({ seed: 7, rate: 0.3, only: null, kinds: ["rate-limit", "server-error", "timeout"] })
        expect(json.faults.candidates.map((c) => c.injected)).toEqual([g.injected, byCandidate.get("openai:gpt-4o-mini")!.injected])
        // The per-cell list only when asked for.
        expect(json.cellResults).toBeUndefined()
        const withCells = JSON.parse(yield* encodeJson(report, { cells: true })) as { cellResults: NonNullable<Report["cellResults"]> }
        expect(withCells.cellResults).toHaveLength(40)
        const listed = withCells.cellResults.flatMap((c) => c.faults.map((f) => ({ ...f, candidate: c.candidate })))
        expect(listed.filter((f) => f.injected)).toHaveLength(injected)
        const effects = new Set(listed.map((f) => f.effect))
        expect([...effects].every((e) => /^(tool\/(read|write)|model\/generate):/.test(e))).toBe(true)
        // Effects are named by kind and role or tool, never by model.
        expect([...effects].some((e) => e.includes("gpt"))).toBe(false)
        expect(effects.has("model/generate:agent")).toBe(true)
        const cell = withCells.cellResults.find((c) => c.faults.length > 0)!
        expect(Object.keys(cell).sort()).toEqual(["benchmark", "candidate", "ended", "faults", "repetition", "reward", "task"])
        expect(Object.keys(cell.faults[0]!).sort()).toEqual(["effect", "injected", "occurrence", "reason"])
        // What the run printed is what the store keeps.
        const stored = yield* Effect.flatMap(Store.Store, (s) => s.getRun(report.runId)).pipe(Effect.provide(Store.layer(home)))
        expect((stored.summary as Report).cellResults).toHaveLength(40)
      })
    ), 120_000)

  it.effect("a run without faults says none, in every format", () =>
    inHome((home) =>
      Effect.gen(function*() {
        const environments = (yield* ledger.environments).slice(0, 2)
        const { report } = yield* runIn(home, [{ provider: ledger, environments, candidates: [gold] }])
        expect(report.faults).toEqual({ spec: null, candidates: [{ candidate: "gold", benchmark: "ledger", cells: 2, injected: 0, cellsWithFaults: 0, endedInFault: 0, failedAfterFault: 0, failedWithoutFault: 0 }] })
        expect(renderText(report)).toMatch(/^faults +none$/m)
        expect(renderText(report)).not.toContain("faults per candidate")
        expect(renderMarkdown(report)).toContain("- faults: none")
        expect(renderHtml(report)).toContain("<dt>faults</dt><dd>none</dd>")
      })
    ))
})

describe("skipped cells", () => {
  it.effect("are listed with their reasons in text and JSON, and filled in from the store for a report stored without them", () =>
    inHome((home) =>
      Effect.gen(function*() {
        const environments = (yield* ledger.environments).slice(0, 3)
        const { report } = yield* runIn(home, [{ provider: ledger, environments, candidates: [gold] }], {
          admit: (cell) => Effect.succeed(cell.env.task === "ledger-02" ? "not admitted in this test" : null)
        })
        const skipped = [{ environmentId: expect.any(String), task: "ledger-02", candidate: "gold", repetition: 0, reason: "not admitted in this test" }]
        expect(report.skipped).toEqual(skipped)
        const text = renderText(report)
        expect(text).toContain("skipped cells\ntask")
        expect(text).toMatch(/^ledger-02 +gold +0 +not admitted in this test$/m)
        const json = JSON.parse(yield* encodeJson(report)) as Report
        expect(json.skipped).toEqual(skipped)

        // A report stored before it kept these: the store still knows them.
        const { skipped: _, cellResults: __, ...older } = report
        const completed = yield* completeReport(older, { cells: true }).pipe(Effect.provide(Store.layer(home)))
        // The store knows the environment by id only; no Attempt of the run says which task it was.
        expect(completed.skipped).toEqual([{ ...skipped[0], task: null }])
        expect(renderText(completed)).toMatch(/^sha256:\S+ +gold +0 +not admitted in this test$/m)
        expect(completed.cellResults?.map((c) => c.task)).toEqual(["ledger-01", "ledger-03"])
        // Without --cells the list is not read.
        expect((yield* completeReport(older).pipe(Effect.provide(Store.layer(home)))).cellResults).toBeUndefined()
      })
    ))
})
