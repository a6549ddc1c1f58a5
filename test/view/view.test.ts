/**
 * `assay view` started as a user starts it, on a home with a finished run of two candidates
 * (ledger, gold and echo), driven by headless Chromium: the pages show what `report --json`
 * says, a failing cell's link opens its transcript, every page draws something, and a run that
 * is writing is followed without restarting the viewer.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { assay, tempDir } from "../cli/support.ts"
import { dumpDom, inkOf, requireChromium, screenshot } from "../support/chromium.ts"
import { attr, get, startGate, startViewer, stopViewer, type Viewer, writtenReaches } from "./support.ts"

interface Card {
  readonly candidate: string
  readonly benchmark: string
  readonly stratum: string | null
  readonly meanReward: number
  readonly interval: readonly [number, number]
}

interface RunJson {
  readonly runId: string
  readonly scorecards: ReadonlyArray<Card>
}

const SECRET = "sk-test-VIEWSECRET42"

describe("assay view in headless Chromium", { timeout: 240_000 }, () => {
  let home = ""
  let viewer: Viewer | undefined
  let report: RunJson
  let reportText = ""

  beforeAll(async () => {
    requireChromium()
    home = tempDir("assay-view-")
    const ran = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--yes", "--json", "--home", home])
    expect(ran.code, ran.stderr).toBe(0)
    report = JSON.parse(ran.stdout) as RunJson
    const reported = await assay(["report", report.runId, "--json", "--home", home])
    expect(reported.code, reported.stderr).toBe(0)
    reportText = reported.stdout
    viewer = await startViewer(home)
  }, 180_000)

  afterAll(() => stopViewer(viewer))

  // The run page as Chromium built it, loaded once for the tests that read it.
  let runPage: Promise<{ readonly dom: string; readonly errors: ReadonlyArray<string> }> | undefined
  const runPageDom = () => (runPage ??= dumpDom(`${viewer!.url}/runs/${report.runId}`))

  it("the runs page lists the run, finished, with its candidates", async () => {
    const { dom, errors } = await dumpDom(`${viewer!.url}/`)
    expect(errors).toEqual([])
    const row = new RegExp(`<tr data-run="${report.runId}">.*?</tr>`, "s").exec(dom)?.[0] ?? ""
    expect(row).toContain(`href="/runs/${report.runId}"`)
    expect(row).toContain("finished")
    expect(row).toContain("gold, echo")
    expect(row).toContain("40 of 40")
  })

  it("the run page shows each candidate's mean and interval as report --json has them", async () => {
    const { dom, errors } = await runPageDom()
    expect(errors).toEqual([])
    const whole = report.scorecards.filter((s) => s.stratum === null)
    expect(whole.map((s) => s.candidate).sort()).toEqual(["echo", "gold"])
    for (const card of whole) {
      const row = new RegExp(`<tr class="scorecard" data-candidate="${card.candidate}"[^>]*>.*?</tr>`, "s").exec(dom)?.[0] ?? ""
      expect(Number(attr(row, "data-mean")), card.candidate).toBe(card.meanReward)
      expect([Number(attr(row, "data-lo")), Number(attr(row, "data-hi"))]).toEqual(card.interval)
      expect(row).toContain(card.meanReward.toFixed(3))
      expect(row).toContain(`[${card.interval[0].toFixed(3)}, ${card.interval[1].toFixed(3)}]`)
    }
    // The report's own plots, drawn on the server: no script needed to see them.
    expect(dom.match(/<svg /g)?.length ?? 0).toBeGreaterThanOrEqual(3)
  })

  it("following the link of a failing cell opens that Attempt's transcript, checks and inputs id", async () => {
    const { dom } = await runPageDom()
    const cell = /<tr class="cell-row fail" data-candidate="echo" data-task="([^"]+)">.*?<a class="attempt" href="([^"]+)"/.exec(dom)
    expect(cell, "a failing echo cell with a link").not.toBeNull()
    const [, task, href] = cell!
    const page = await dumpDom(`${viewer!.url}${href!.replace(/&amp;/g, "&")}`)
    expect(page.errors).toEqual([])
    expect(page.dom).toContain(`Attempt: echo on ${task}#0`)
    expect(page.dom).toContain('class="msg user"')
    expect(page.dom).toContain('class="msg assistant"')
    expect(page.dom).toMatch(/<td class="left">world<\/td><td class="left"><span class="bad">failed<\/span>/)
    // The same Attempt through the API: the page shows its inputs id and its first message.
    const api = await get(`${viewer!.url}/api${href!}`)
    expect(api.status).toBe(200)
    const stored = JSON.parse(api.text) as { attempt: { inputsId: string; task: string; output: { transcript: ReadonlyArray<{ content: string }> } } }
    expect(stored.attempt.task).toBe(task)
    expect(page.dom).toContain(stored.attempt.inputsId)
    const first = stored.attempt.output.transcript[0]!.content
    expect(page.dom).toContain(first.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"))
  })

  it("a screenshot of each page has content: the runs, the run, a comparison and an Attempt", async () => {
    const { dom } = await runPageDom()
    const href = /<a class="attempt" href="([^"]+)"/.exec(dom)![1]!
    const pages = [
      { url: `${viewer!.url}/`, colours: 40, inked: 0.01 },
      { url: `${viewer!.url}/runs/${report.runId}`, colours: 150, inked: 0.03 },
      { url: `${viewer!.url}/compare?run=${report.runId}`, colours: 60, inked: 0.03 },
      { url: `${viewer!.url}${href}`, colours: 40, inked: 0.01 }
    ]
    for (const p of pages) {
      const { image, errors } = await screenshot(p.url)
      expect(errors, p.url).toEqual([])
      expect([image.width, image.height]).toEqual([1200, 1400])
      const ink = inkOf(image)
      expect(ink.colours, p.url).toBeGreaterThan(p.colours)
      expect(ink.inked, p.url).toBeGreaterThan(p.inked)
    }
  })

  it("the comparison page tells which tasks gold passes and echo fails", async () => {
    const { dom, errors } = await dumpDom(`${viewer!.url}/compare?run=${report.runId}`)
    expect(errors).toEqual([])
    const api = JSON.parse((await get(`${viewer!.url}/api/compare?run=${report.runId}`)).text) as {
      columns: ReadonlyArray<{ candidate: string }>
      rows: ReadonlyArray<{ task: string; differs: boolean; cells: ReadonlyArray<{ reward: number } | null> }>
      pairs: ReadonlyArray<{ a: number; b: number; aOnly: number; bOnly: number }>
    }
    expect(api.columns.map((c) => c.candidate)).toEqual(["gold", "echo"])
    expect(api.rows).toHaveLength(20)
    // gold passes all 20 ledger tasks; echo passes none of them.
    expect(api.pairs).toEqual([expect.objectContaining({ a: 0, b: 1, aOnly: 20, bOnly: 0 })])
    expect(dom).toMatch(/<td class="left">gold<\/td><td class="left">echo<\/td><td class="right">20<\/td><td class="right">0<\/td>/)
  })

  it("the JSON API gives a run's Scorecards: the document report --json prints, byte for byte", async () => {
    const api = await get(`${viewer!.url}/api/runs/${report.runId}`)
    expect(api.status).toBe(200)
    expect(api.text).toBe(reportText)
    const body = JSON.parse(api.text) as RunJson
    expect(body.scorecards.filter((s) => s.stratum === null).map((s) => [s.candidate, s.meanReward])).toEqual([["gold", 1], ["echo", 0]])
    expect((await get(`${viewer!.url}/api/runs/r-0000000000000000`)).status).toBe(404)
  })

  it("the same experiment run again keeps its cells, and the comparison across the two runs links each kept cell to the Attempt it kept", async () => {
    const again = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--yes", "--json", "--home", home])
    expect(again.code, again.stderr).toBe(0)
    const second = JSON.parse(again.stdout) as RunJson & { cells: { kept: number } }
    expect(second.cells.kept).toBe(40)
    const api = JSON.parse((await get(`${viewer!.url}/api/compare?run=${report.runId}&run=${second.runId}&candidate=gold&candidate=echo`)).text) as {
      columns: ReadonlyArray<{ runId: string; candidate: string }>
      rows: ReadonlyArray<{ cells: ReadonlyArray<{ reward: number; attempt: { runId: string } | null } | null> }>
      pairs: ReadonlyArray<{ a: number; b: number; aOnly: number; bOnly: number; both: number; neither: number }>
    }
    expect(api.columns).toEqual([
      { runId: report.runId, candidate: "gold" },
      { runId: report.runId, candidate: "echo" },
      { runId: second.runId, candidate: "gold" },
      { runId: second.runId, candidate: "echo" }
    ])
    expect(api.rows).toHaveLength(20)
    // Kept cells stand on the first run's Attempts.
    expect(api.rows.every((r) => r.cells.every((c) => c?.attempt?.runId === report.runId))).toBe(true)
    // gold against itself across the runs: the same 20 passes; gold against the second run's echo: 20 apart.
    expect(api.pairs.find((p) => p.a === 0 && p.b === 2)).toMatchObject({ both: 20, aOnly: 0, bOnly: 0 })
    expect(api.pairs.find((p) => p.a === 0 && p.b === 3)).toMatchObject({ aOnly: 20, bOnly: 0 })
  })

  it("while a run writes, the run page shows its progress, refreshed by the page itself, and the same viewer then shows its report", async () => {
    const pid = viewer!.child.pid
    const gate = await startGate()
    try {
      const result = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const server = yield* LoopbackServer.start([{ default: true, text: "Done.", usage: { input: 50, output: 5 } }])
        gate.target(server.url)
        const env = { OPENAI_BASE_URL: `${gate.url}/v1`, OPENAI_API_KEY: SECRET }
        // One model call per cell, one cell at a time: the gate lets the test say how far it gets.
        const running = assay(["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--yes", "--json", "--home", home, "--parallel", "1"], env)
        // A run that ends before the test lets it (it failed to start) is told at once, with its stderr.
        let ended: string | null = null
        void running.then((r) => (ended = `the run exited (${r.code}) early: ${r.stderr}`))
        const written = (n: number) => Effect.promise(() => writtenReaches(viewer!.url, n, () => ended))
        gate.release(3)
        const runId = yield* written(3)
        // Three cells written, the fourth held: the page as served, then refreshed by its own script.
        const atThree = yield* Effect.promise(() => dumpDom(`${viewer!.url}/runs/${runId}`, 2500))
        gate.release(3)
        yield* written(6)
        const atSix = yield* Effect.promise(() => dumpDom(`${viewer!.url}/runs/${runId}`))
        gate.release(1000)
        const ran = yield* Effect.promise(() => running)
        const after = yield* Effect.promise(() => dumpDom(`${viewer!.url}/runs/${runId}`))
        const api = yield* Effect.promise(() => get(`${viewer!.url}/api/runs/${runId}`))
        const list = yield* Effect.promise(() => get(`${viewer!.url}/`))
        return { runId, atThree, atSix, ran, after, api, list }
      })))
      expect(result.ran.code, result.ran.stderr).toBe(0)
      const writtenOf = (dom: string) => Number(/class="written" data-written="(\d+)" data-total="20"/.exec(dom)?.[1] ?? -1)
      for (const view of [result.atThree, result.atSix]) {
        expect(view.errors).toEqual([])
        expect(view.dom).toContain("data-running")
      }
      expect(writtenOf(result.atThree.dom)).toBe(3)
      // The page's script fetched the page again and put the fresh progress in place.
      expect(Number(/data-polls="(\d+)"/.exec(result.atThree.dom)?.[1] ?? 0)).toBeGreaterThanOrEqual(1)
      expect(writtenOf(result.atSix.dom)).toBe(6)
      // Finished: the same viewer process shows the run's report.
      expect(viewer!.child.pid).toBe(pid)
      expect(viewer!.child.exitCode).toBeNull()
      const card = (JSON.parse(result.ran.stdout) as RunJson).scorecards.find((s) => s.candidate === "openai:gpt-4o-mini" && s.stratum === null)!
      const row = /<tr class="scorecard" data-candidate="openai:gpt-4o-mini"[^>]*>/.exec(result.after.dom)?.[0] ?? ""
      expect(Number(attr(row, "data-mean"))).toBe(card.meanReward)
      expect(result.after.dom).not.toContain("data-running")
      expect(result.api.status).toBe(200)
      expect(result.list.text).toMatch(new RegExp(`<tr data-run="${result.runId}">.*?finished`, "s"))
      // The model's key reaches no page and no answer of the API.
      for (const text of [result.atThree.dom, result.atSix.dom, result.after.dom, result.api.text, result.list.text, viewer!.stderr()]) {
        expect(text).not.toContain(SECRET)
      }
    } finally {
      await gate.close()
    }
  })
})
