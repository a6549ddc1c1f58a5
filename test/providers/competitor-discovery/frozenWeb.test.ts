/**
 * The frozen web as a world effect: pages read as text with their sentences intact, search and
 * fetch performed as http/request effects through the Attempt's stack (recorded, faulted,
 * refused, replayed like any effect), a search budget per Attempt, and a frozen web rebuilt from
 * a recording of fetches.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import type { RecordedEffect } from "../../../src/schema/Attempt.ts"
import type { EffectsSpec } from "../../../src/schema/EnvironmentDef.ts"
import * as FrozenWeb from "../../../src/world/FrozenWeb.ts"
import * as World from "../../../src/world/World.ts"
import * as WE from "../../../src/world/WorldEffects.ts"

const page = (url: string, title: string, body: string): FrozenWeb.Page => ({
  url,
  title,
  html: `<html><head><title>${title}</title><script>var hidden = "script text";</script><style>p { color: red }</style></head><body><nav><a href="https://a.example/">Home</a></nav>${body}</body></html>`
})

const web = FrozenWeb.make([
  page("https://a.example/", "Acme Widgets", `<h1>Acme widgets</h1><p>Acme&rsquo;s widgets are <strong>forged</strong> in&nbsp;one&nbsp;piece, and they ship   in two days.</p><p><a href="https://b.example/compare">Compare</a></p>`),
  page("https://b.example/compare", "Widget makers compared", `<h2>Widget makers</h2><p>Acme and Bolt both make widgets for factories.</p>`),
  page("https://c.example/", "Bolt", `<p>Bolt makes widgets for factories, in steel.</p>`)
])

/** The Attempt's stack over the frozen web's handler, with its recorder and fault log. */
const stackOf = (spec: EffectsSpec, handlers: WE.Handlers | "replay", recording: ReadonlyArray<RecordedEffect> = []) =>
  Effect.gen(function*() {
    const world: WE.AttemptWorld = { ref: yield* Ref.make(World.empty) }
    const recorder: WE.Recorder = { entries: yield* Ref.make<ReadonlyArray<RecordedEffect>>([]) }
    const faultLog: WE.FaultLog = { entries: yield* Ref.make<WE.FaultLog["entries"] extends Ref.Ref<infer A> ? A : never>([]) }
    const handler = handlers === "replay" ? WE.layerReplay(recording) : WE.layerLive(handlers)
    const stack = WE.attemptStack(spec, "test/frozen-web", handler).pipe(
      Layer.provide(Layer.succeed(WE.AttemptWorld, world)),
      Layer.provide(Layer.succeed(WE.Recorder, recorder)),
      Layer.provide(Layer.succeed(WE.FaultLog, faultLog))
    )
    return { stack, recorder, faultLog }
  })

const noFaults: EffectsSpec = { admission: "all", faults: null }

const calls = (budget: number | null, list: ReadonlyArray<readonly [string, Record<string, string>]>) =>
  Effect.forEach(list, ([name, args]) => FrozenWeb.callWebTool(name, args)).pipe(Effect.provide(FrozenWeb.layerSearchBudget(budget)))

describe("page text", () => {
  it("keeps a sentence as written across entities, inline tags and spacing; drops scripts, styles and navigation", () => {
    const text = FrozenWeb.pageText(FrozenWeb.lookup(web, "https://a.example/")!.html)
    expect(FrozenWeb.containsQuote(text, "Acme's widgets are forged in one piece, and they ship in two days.")).toBe(true)
    // Headings keep their case: a quote copied from a heading is found again.
    expect(text).toContain("Acme widgets")
    expect(text).not.toContain("script text")
    expect(text).not.toContain("color: red")
    expect(text).not.toMatch(/^Home$/m)
    // Links are listed after the text, so a page's neighbours can be fetched.
    expect(text).toContain("- Compare: https://b.example/compare")
  })

  it("a quote is verbatim: another word, or a different case, is not on the page", () => {
    const text = FrozenWeb.pageText(FrozenWeb.lookup(web, "https://a.example/")!.html)
    expect(FrozenWeb.containsQuote(text, "Acme's widgets are cast in one piece")).toBe(false)
    expect(FrozenWeb.containsQuote(text, "acme's widgets are forged in one piece")).toBe(false)
    expect(FrozenWeb.containsQuote(text, "")).toBe(false)
  })

  it("URLs name one page whatever their scheme, www., trailing slash or fragment", () => {
    expect(FrozenWeb.pageKey("http://www.B.example/compare/#top")).toBe(FrozenWeb.pageKey("https://b.example/compare"))
    expect(FrozenWeb.pageKey("b.example/compare")).toBe("b.example/compare")
    expect(FrozenWeb.pageKey("not a url")).toBeUndefined()
  })
})

describe("search and fetch as http/request effects", () => {
  it.effect("a search finds the pages with the query's words, best first, as a pure function of the web", () =>
    Effect.sync(() => {
      const hits = FrozenWeb.search(web, "widgets factories")
      expect(hits.map((h) => h.url).sort()).toEqual(["https://a.example/", "https://b.example/compare", "https://c.example/"])
      expect(FrozenWeb.search(web, "widgets factories")).toEqual(hits)
      expect(FrozenWeb.search(web, "the of")).toEqual([])
    }))

  it.effect("every search and fetch is recorded with its request and the response as served (HTML, not text)", () =>
    Effect.gen(function*() {
      const { stack, recorder } = yield* stackOf(noFaults, FrozenWeb.handlers(web))
      const results = yield* calls(5, [["search", { query: "Bolt steel" }], ["fetch", { url: "https://c.example" }], ["fetch", { url: "https://nowhere.example/" }]]).pipe(Effect.provide(stack))
      expect(results[0]!.content).toContain("https://c.example/")
      expect(results[1]).toMatchObject({ error: false, fetched: "https://c.example/" })
      expect(results[1]!.content).toContain("Bolt makes widgets for factories, in steel.")
      expect(results[2]).toMatchObject({ error: true, content: "Error: HTTP 404 for https://nowhere.example/" })
      const recorded = yield* Ref.get(recorder.entries)
      expect(recorded.map((r) => [r.kind, r.key])).toEqual([
        ["http/request", FrozenWeb.SEARCH_URL],
        ["http/request", "c.example"],
        ["http/request", "nowhere.example"]
      ])
      expect(recorded[1]!.outcome).toMatchObject({ ok: { status: 200, contentType: "text/html; charset=utf-8" } })
      expect(JSON.stringify(recorded[1]!.outcome)).toContain("<p>Bolt makes widgets")
    }))

  it.effect("a replay answers from the recording with no web at all, and the candidate reads the same", () =>
    Effect.gen(function*() {
      const script = [["search", { query: "widgets" }], ["fetch", { url: "https://a.example/" }]] as const
      const live = yield* stackOf(noFaults, FrozenWeb.handlers(web))
      const first = yield* calls(5, script).pipe(Effect.provide(live.stack))
      const replay = yield* stackOf(noFaults, "replay", yield* Ref.get(live.recorder.entries))
      expect(yield* calls(5, script).pipe(Effect.provide(replay.stack))).toEqual(first)
    }))

  it.effect("injected faults fail fetches as tool errors the candidate sees, and are logged as injected", () =>
    Effect.gen(function*() {
      const spec: EffectsSpec = { admission: "all", faults: { seed: 1, rate: 1, only: ["http/request"], kinds: ["timeout"] } }
      const { stack, faultLog, recorder } = yield* stackOf(spec, FrozenWeb.handlers(web))
      const [result] = yield* calls(5, [["fetch", { url: "https://a.example/" }]]).pipe(Effect.provide(stack))
      expect(result).toEqual({ content: "Error: timeout injected on http/request a.example #1", error: true })
      expect(yield* Ref.get(faultLog.entries)).toEqual([{ key: "http/request:a.example", occurrence: 1, reason: "timeout" }])
      // Faults sit above recording: the handler never saw it.
      expect(yield* Ref.get(recorder.entries)).toEqual([])
    }))

  it.effect("admission applies: a world that admits no http/request refuses every fetch", () =>
    Effect.gen(function*() {
      const { stack } = yield* stackOf({ admission: { admit: ["tool/read"] }, faults: null }, FrozenWeb.handlers(web))
      const [result] = yield* calls(5, [["fetch", { url: "https://a.example/" }]]).pipe(Effect.provide(stack))
      expect(result).toEqual({ content: "Error: http/request a.example refused (not-admitted)", error: true })
    }))
})

describe("long pages", () => {
  it.effect("a page whose markup runs far past the limit still gives its sentences: the cut is made on the text", () =>
    Effect.gen(function*() {
      const script = `<script>${"x = 1;".repeat(20_000)}</script>`
      const long = FrozenWeb.make([{
        url: "https://long.example/",
        title: "Long",
        html: `<html><head><title>Long</title>${script}</head><body><p>The quoted sentence is after a large script.</p><p>${"filler words ".repeat(5_000)}</p><p>This sentence is past the cut.</p></body></html>`
      }])
      expect(FrozenWeb.lookup(long, "https://long.example/")!.html.length).toBeGreaterThan(FrozenWeb.PAGE_TEXT_LIMIT)
      const { stack } = yield* stackOf(noFaults, FrozenWeb.handlers(long))
      const [result] = yield* calls(5, [["fetch", { url: "https://long.example/" }]]).pipe(Effect.provide(stack))
      expect(result!.content).toContain("The quoted sentence is after a large script.")
      expect(result!.content).not.toContain("This sentence is past the cut.")
      expect(result!.content).toMatch(/\[cut: the page's text goes on for \d+ more characters\]$/)
    }))
})

describe("the search budget", () => {
  it.effect("an Attempt makes at most its budget of searches; the next is refused before any effect", () =>
    Effect.gen(function*() {
      const { stack, recorder } = yield* stackOf(noFaults, FrozenWeb.handlers(web))
      const results = yield* calls(2, [["search", { query: "widgets" }], ["search", { query: "Bolt" }], ["search", { query: "Acme" }], ["fetch", { url: "https://a.example/" }]]).pipe(
        Effect.provide(stack)
      )
      expect(results.map((r) => r.error)).toEqual([false, false, true, false])
      expect(results[1]!.content).toContain("(0 searches left)")
      expect(results[2]!.content).toBe("Error: search budget exhausted: 2 of 2 searches used")
      expect((yield* Ref.get(recorder.entries)).filter((r) => r.key === FrozenWeb.SEARCH_URL)).toHaveLength(2)
    }))

  it.effect("a search that faulted is given back: infrastructure never costs the candidate a search", () =>
    Effect.gen(function*() {
      const spec: EffectsSpec = { admission: "all", faults: { seed: 1, rate: 1, only: ["http/request"], kinds: ["server-error"] } }
      const { stack } = yield* stackOf(spec, FrozenWeb.handlers(web))
      const used = yield* Effect.gen(function*() {
        yield* FrozenWeb.callWebTool("search", { query: "widgets" })
        return yield* Effect.flatMap(FrozenWeb.SearchBudget, (b) => b.used)
      }).pipe(Effect.provide(FrozenWeb.layerSearchBudget(1)), Effect.provide(stack))
      expect(used).toBe(0)
    }))

  it.effect("each Attempt acquires its own budget", () =>
    Effect.gen(function*() {
      const { stack } = yield* stackOf(noFaults, FrozenWeb.handlers(web))
      const once = calls(1, [["search", { query: "widgets" }]]).pipe(Effect.provide(stack))
      expect((yield* once)[0]!.error).toBe(false)
      expect((yield* once)[0]!.error).toBe(false)
    }))
})

describe("freezing a live run", () => {
  it.effect("a recording's fetched pages become a frozen web that serves them again; searches and failures are left out", () =>
    Effect.gen(function*() {
      // A "live" run: its http/request effects are recorded as any run's are.
      const live = yield* stackOf(noFaults, FrozenWeb.handlers(web))
      const script = [["search", { query: "widgets" }], ["fetch", { url: "https://a.example/" }], ["fetch", { url: "http://www.b.example/compare" }], [
        "fetch",
        { url: "https://missing.example/" }
      ]] as const
      const first = yield* calls(5, script).pipe(Effect.provide(live.stack))
      const frozen = FrozenWeb.fromRecording(yield* Ref.get(live.recorder.entries))
      expect([...frozen.pages.keys()].sort()).toEqual(["a.example", "b.example/compare"])
      expect(FrozenWeb.lookup(frozen, "https://b.example/compare")).toEqual({
        url: "https://b.example/compare",
        title: "Widget makers compared",
        html: FrozenWeb.lookup(web, "https://b.example/compare")!.html
      })
      // The frozen copy answers the same fetches with the same text.
      const again = yield* stackOf(noFaults, FrozenWeb.handlers(frozen))
      const second = yield* calls(5, script.slice(1)).pipe(Effect.provide(again.stack))
      expect(second).toEqual(first.slice(1))
    }))
})
