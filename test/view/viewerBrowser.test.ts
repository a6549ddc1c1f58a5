/**
 * `assay view` used in headless Chromium as a person uses it, through the DevTools protocol
 * (test/support/browser.ts): clicks, typing and choices, waiting on what the page shows. A home
 * with three runs: gold and echo on ledger, the same with injected faults, and gold against a
 * scripted model on one task (their first tool calls agree, the second differs). Also a page of
 * 10,000 made-up cells, to see that sorting and filtering them in the page completes.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import type { CellRow } from "../../src/view/Data.ts"
import { cellsSection, page as viewerPage } from "../../src/view/Pages.ts"
import { viewScript } from "../../src/view/Script.ts"
import { assay, tempDir } from "../cli/support.ts"
import { type Browser, launch, type Page } from "../support/browser.ts"
import { inkOf, requireChromium } from "../support/chromium.ts"
import { get, startGate, startViewer, stopViewer, type Viewer, writtenReaches } from "./support.ts"

interface RunJson {
  readonly runId: string
  readonly experimentId: string
}

const runOf = (stdout: string) => JSON.parse(stdout) as RunJson

/** A screenshot with something drawn on it: many colours, a share of pixels that are not background. */
const expectDrawn = async (page: Page, what: string) => {
  const image = await page.screenshot()
  const ink = inkOf(image)
  expect(ink.colours, what).toBeGreaterThan(40)
  expect(ink.inked, what).toBeGreaterThan(0.02)
}

const cellsShown = (page: Page) => page.evaluate<string>(`document.querySelector("#cells").dataset.shown`).then(Number)

/** Waits until the cell table has applied what was just chosen: `n` cells shown. */
const waitShown = (page: Page, n: number) => page.waitFor(`document.querySelector("#cells").dataset.shown === "${n}"`)

// ledger-01 is "Move 500.00 USD from ACC-1001 to ACC-1002 with the memo 'savings'": the model
// makes gold's transfer first, then calls gold never makes (a look-up, and a transfer back that
// fails the world check).
const script: ReadonlyArray<LoopbackServer.ScriptTurn> = [
  { toolCalls: [{ name: "transfer", arguments: { from_account: "ACC-1001", to_account: "ACC-1002", amount: 50000, memo: "savings" } }], usage: { input: 100, output: 10 } },
  { toolCalls: [{ name: "find_accounts", arguments: { owner: "Grace Hopper" } }], usage: { input: 120, output: 12 } },
  { toolCalls: [{ name: "transfer", arguments: { from_account: "ACC-1002", to_account: "ACC-1001", amount: 100, memo: "back" } }], usage: { input: 140, output: 12 } },
  { default: true, text: "Done.", usage: { input: 50, output: 5 } }
]

describe("assay view driven in headless Chromium", { timeout: 300_000 }, () => {
  let home = ""
  let viewer: Viewer | undefined
  let browser: Browser | undefined
  let plain: RunJson
  let faulted: RunJson
  let paired: RunJson

  beforeAll(async () => {
    requireChromium()
    home = tempDir("assay-viewer-browser-")
    const ran = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--yes", "--json", "--home", home])
    expect(ran.code, ran.stderr).toBe(0)
    plain = runOf(ran.stdout)
    const withFaults = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--faults", "7:0.3", "--yes", "--json", "--home", home])
    expect(withFaults.code, withFaults.stderr).toBe(0)
    faulted = runOf(withFaults.stdout)
    const modelRun = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const server = yield* LoopbackServer.start(script)
      return yield* Effect.promise(() =>
        assay(
          ["run", "--benchmark", "ledger", "--task", "ledger-01", "--candidate", "gold", "--model", "openai:gpt-4o-mini", "--yes", "--json", "--home", home, "--parallel", "1"],
          { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "sk-test-not-a-key" }
        )
      )
    })))
    expect(modelRun.code, modelRun.stderr).toBe(0)
    paired = runOf(modelRun.stdout)
    viewer = await startViewer(home)
    browser = await launch()
  }, 240_000)

  afterAll(async () => {
    await browser?.close()
    await stopViewer(viewer)
  })

  it("a run page shows its facts once and its Cells heading above the table", async () => {
    const page = await browser!.newPage()
    await page.goto(`${viewer!.url}/runs/${plain.runId}`)
    await page.waitFor(`document.querySelector("#cells[data-ready]")`)
    const seen = await page.evaluate<{ text: string; heading: { top: number; left: number }; table: { top: number; left: number } }>(`(() => {
      const box = (el) => { const r = el.getBoundingClientRect(); return { top: r.top, left: r.left }; };
      return { text: document.body.innerText, heading: box(document.querySelector("#cells h2")), table: box(document.querySelector("#cells table")) };
    })()`)
    // The run's id and experiment are read once on the screen (the report's own header is not repeated).
    expect(seen.text.split(plain.experimentId).length - 1).toBe(1)
    expect(seen.text.split(plain.runId).length - 1).toBeLessThanOrEqual(2) // the title, and the `assay report RUN --json` hint
    expect(seen.text.match(/^Scorecards$/gm)?.length).toBe(1)
    // The heading sits above its table, in the same column (it floated beside it before).
    expect(seen.heading.top).toBeLessThan(seen.table.top)
    expect(Math.abs(seen.heading.left - seen.table.left)).toBeLessThan(4)
    expect(page.errors()).toEqual([])
    await expectDrawn(page, "run page")

    await page.close()
  })

  it("cells filter by candidate and verdict, sort by a heading, search, and keep the filters in the address", async () => {
    const page = await browser!.newPage()
    await page.goto(`${viewer!.url}/runs/${plain.runId}`)
    await page.waitFor(`document.querySelector("#cells[data-ready]")`)
    expect(await cellsShown(page)).toBe(40)
    await page.choose(`#cells select[name=candidate]`, "echo")
    await waitShown(page, 20)
    await page.choose(`#cells select[name=verdict]`, "fail")
    await waitShown(page, 20)
    expect(await page.evaluate(`[...document.querySelectorAll("#cells tbody tr")].every((tr) => tr.dataset.candidate === "echo" && tr.classList.contains("fail"))`)).toBe(true)
    await page.choose(`#cells select[name=verdict]`, "pass")
    await waitShown(page, 0)
    expect(await page.evaluate(`document.querySelector("#cells tbody").innerText`)).toContain("No cell matches")
    await page.choose(`#cells select[name=candidate]`, "gold")
    await waitShown(page, 20)
    // Which checks failed is a filter too: echo fails `answer` on the question tasks only.
    await page.choose(`#cells select[name=candidate]`, "")
    await page.choose(`#cells select[name=verdict]`, "")
    await page.choose(`#cells select[name=check]`, "answer")
    const answers = await cellsShown(page)
    expect(answers).toBeGreaterThan(0)
    expect(answers).toBeLessThan(20)
    await page.choose(`#cells select[name=check]`, "")
    await waitShown(page, 40)
    // A click on a heading sorts by it; a second click reverses.
    await page.click(`#cells th[data-sort=task]`)
    await page.waitFor(`document.querySelector("#cells th[data-sort=task]").getAttribute("aria-sort") === "ascending"`)
    expect(await page.evaluate(`document.querySelector("#cells tbody tr").dataset.task`)).toBe("ledger-01")
    await page.click(`#cells th[data-sort=task]`)
    await page.waitFor(`document.querySelector("#cells th[data-sort=task]").getAttribute("aria-sort") === "descending"`)
    expect(await page.evaluate(`document.querySelector("#cells tbody tr").dataset.task`)).toBe("ledger-20")
    // Typing in the search narrows as it goes: tasks ledger-10 to ledger-19, both candidates.
    await page.type(`#cells input[name=q]`, "ledger-1")
    await waitShown(page, 20)
    await page.type(`#cells input[name=q]`, " echo")
    await waitShown(page, 10)
    const address = await page.evaluate<string>(`location.search`)
    expect(new URLSearchParams(address).get("q")).toBe("ledger-1 echo")
    expect(new URLSearchParams(address).get("sort")).toBe("-task")
    // The address brings the same view back.
    const again = await browser!.newPage()
    await again.goto(`${viewer!.url}/runs/${plain.runId}${address}`)
    await again.waitFor(`document.querySelector("#cells[data-ready]")`)
    expect(await cellsShown(again)).toBe(10)
    expect(again.errors()).toEqual([])
    await again.close()
    await page.click(`#cells button[type=reset]`)
    await waitShown(page, 40)
    expect(page.errors()).toEqual([])
    await page.close()
  })

  it("a failing Attempt opens from its cell; its folded tool result expands as a JSON tree, and its failed check is marked", async () => {
    const page = await browser!.newPage()
    await page.goto(`${viewer!.url}/runs/${paired.runId}?verdict=fail`)
    await page.waitFor(`document.querySelector("#cells[data-ready]")`)
    expect(await cellsShown(page)).toBe(1)
    await page.click(`#cells tbody a.attempt`)
    await page.waitFor(`document.querySelector("h1") && document.querySelector("h1").textContent === "Attempt: openai:gpt-4o-mini on ledger-01#0"`)
    // "collapse all" below is the deferred script's: the page can show before it has run.
    await page.waitFor(`document.documentElement.dataset.script === "ready"`)
    expect(await page.evaluate(`[...document.querySelectorAll("tr.check.failed")].map((tr) => tr.dataset.check)`)).toEqual(["world"])
    // The tool result of find_accounts is JSON: folded at first, a tree once opened.
    const result = `[...document.querySelectorAll("details.msg.tool")].find((d) => d.querySelector("summary").textContent.includes("find_accounts"))`
    expect(await page.evaluate(`${result}.open`)).toBe(false)
    await page.evaluate(`${result}.setAttribute("data-probe", "")`)
    await page.click(`details.msg.tool[data-probe] > summary`)
    await page.waitFor(`document.querySelector("details.msg.tool[data-probe]").open`)
    expect(await page.evaluate(`document.querySelector("details.msg.tool[data-probe] .json .j-str").offsetParent !== null`)).toBe(true)
    expect(await page.evaluate(`document.querySelector("details.msg.tool[data-probe] .json").innerText`)).toContain("ACC-1004")
    // Collapse all, then expand all.
    await page.click(`button[data-fold=close]`)
    await page.waitFor(`[...document.querySelectorAll("#transcript details")].every((d) => !d.open)`)
    await page.click(`button[data-fold=open]`)
    await page.waitFor(`[...document.querySelectorAll("#transcript details")].every((d) => d.open)`)
    expect(page.errors()).toEqual([])
    await expectDrawn(page, "Attempt page")

    await page.close()
  })

  it("an injected fault is on the timeline as injected, not sent, with what came next (never as an ok outcome)", async () => {
    const cells = JSON.parse((await get(`${viewer!.url}/api/runs/${faulted.runId}/cells`)).text) as { cells: ReadonlyArray<CellRow> }
    const hit = cells.cells.find((c) => c.injected > 0 && c.attempt !== null)
    expect(hit, "a cell that met an injected fault").toBeDefined()
    const page = await browser!.newPage()
    await page.goto(`${viewer!.url}/runs/${faulted.runId}?fault=injected`)
    await page.waitFor(`document.querySelector("#cells[data-ready]")`)
    expect(await cellsShown(page)).toBe(cells.cells.filter((c) => c.injected > 0).length)
    await page.click(`#cells tbody a.attempt`)
    await page.waitFor(`document.querySelector("table.timeline")`)
    const rows = await page.evaluate<ReadonlyArray<{ fault: string; outcome: string }>>(
      `[...document.querySelectorAll("table.timeline tr.fault.injected")].map((tr) => ({ fault: tr.cells[4].innerText, outcome: tr.cells[6].innerText }))`
    )
    expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) {
      expect(row.fault).toMatch(/^injected (rate-limit|server-error|timeout) → (retried|the next call|the Attempt ended|not called again)/)
      expect(row.outcome).toContain("(injected)")
      expect(row.outcome).not.toMatch(/^ok/)
    }
    expect(page.errors()).toEqual([])
    await page.close()
  })

  it("a paired comparison opens two candidates' transcripts side by side, the first tool call that differs marked", async () => {
    const page = await browser!.newPage()
    // From the run's paired comparison (gold − the model) to the tasks that split them, then one task side by side.
    await page.goto(`${viewer!.url}/runs/${paired.runId}`)
    await page.click(`#scorecards a.paired`)
    await page.waitFor(`location.pathname === "/compare" && document.querySelector("a.pair")`)
    expect(new URLSearchParams(await page.evaluate<string>(`location.search`)).getAll("candidate")).toEqual(["gold", "openai:gpt-4o-mini"])
    await page.click(`a.pair`)
    await page.waitFor(`document.querySelector("h1") && document.querySelector("h1").textContent.startsWith("Side by side")`)
    // Both made the same transfer first; the model's second call is one gold never makes.
    expect(await page.evaluate(`document.querySelector(".divergence").dataset.firstDifference`)).toBe("1")
    expect(await page.evaluate(`document.querySelector(".divergence").innerText`)).toContain("call 2 differs")
    expect(await page.evaluate(`[...document.querySelectorAll(".side-head h2")].map((h) => h.textContent)`)).toEqual(["gold", "openai:gpt-4o-mini"])
    expect(await page.evaluate(`document.querySelectorAll(".side.a .call.same").length`)).toBe(1)
    expect(await page.evaluate(`document.querySelectorAll(".side.b .call.same").length`)).toBe(1)
    expect(await page.evaluate(`document.querySelector("#diverge-a")`)).toBeNull() // gold made no second call
    expect(await page.evaluate(`document.querySelector("#diverge-b b").textContent`)).toBe("find_accounts")
    // The two columns stand side by side.
    const [a, b] = await page.evaluate<ReadonlyArray<{ left: number; top: number }>>(
      `[...document.querySelectorAll(".grid2 > .side")].map((el) => ({ left: el.getBoundingClientRect().left, top: el.getBoundingClientRect().top }))`
    )
    expect(b!.left).toBeGreaterThan(a!.left + 300)
    expect(b!.top).toBe(a!.top)
    expect(page.errors()).toEqual([])
    await expectDrawn(page, "side by side")

    await page.close()
  })

  it("a running run's page shows its cell count and interim scorecards rising, then its report", async () => {
    const gate = await startGate()
    try {
      await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const server = yield* LoopbackServer.start([{ default: true, text: "Done.", usage: { input: 50, output: 5 } }])
        gate.target(server.url)
        const running = assay(
          ["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--yes", "--json", "--home", home, "--parallel", "1"],
          { OPENAI_BASE_URL: `${gate.url}/v1`, OPENAI_API_KEY: "sk-test-not-a-key" }
        )
        let ended: string | null = null
        void running.then((r) => (ended = `the run exited (${r.code}) early: ${r.stderr}`))
        gate.release(2)
        const runId = yield* Effect.promise(() => writtenReaches(viewer!.url, 2, () => ended))
        const page = yield* Effect.promise(() => browser!.newPage())
        yield* Effect.promise(() => page.goto(`${viewer!.url}/runs/${runId}`))
        const written = () => page.evaluate<string>(`document.querySelector("#progress .written").dataset.written`).then(Number)
        const before = yield* Effect.promise(written)
        expect(before).toBeGreaterThanOrEqual(2)
        gate.release(3)
        // The page follows the run by itself: no reload, the count and the cell table grow.
        yield* Effect.promise(() => page.waitFor(`Number(document.querySelector("#progress .written").dataset.written) >= ${before + 3}`, 120_000))
        yield* Effect.promise(() => page.waitFor(`Number(document.querySelector("#cells").dataset.total) >= ${before + 3}`, 120_000))
        expect(yield* Effect.promise(() => page.evaluate(`Number(document.querySelector("tr.interim").dataset.n)`))).toBeGreaterThanOrEqual(before + 3)
        expect(yield* Effect.promise(() => page.evaluate(`Number(document.body.dataset.polls) >= 1`))).toBe(true)
        gate.release(1000)
        const ran = yield* Effect.promise(() => running)
        expect(ran.code, ran.stderr).toBe(0)
        // Finished: the page loads itself again and shows the run's scorecards.
        yield* Effect.promise(() => page.waitFor(`document.querySelector("#scorecards tr.scorecard")`, 120_000))
        expect(yield* Effect.promise(() => page.evaluate(`document.querySelector(".state").textContent`))).toBe("finished")
        expect(page.errors()).toEqual([])
        yield* Effect.promise(() => page.close())
      })))
    } finally {
      await gate.close()
    }
  })
})

describe("10,000 cells in the page", { timeout: 180_000 }, () => {
  let server: Server | undefined
  let browser: Browser | undefined
  const candidates = ["alpha", "beta", "gamma", "delta"]
  const ends = [null, null, null, null, null, null, null, "fault", "timeout", "budget-exceeded"]
  const rows: ReadonlyArray<CellRow> = Array.from({ length: 10_000 }, (_, i): CellRow => {
    const ended = ends[i % ends.length] ?? null
    const reward = ended !== null ? 0 : i % 3 === 0 ? 1 : i % 3 === 1 ? 0 : 0.5
    return {
      benchmark: "made-up",
      task: `task-${String(Math.floor(i / 4)).padStart(4, "0")}`,
      stratum: ["one", "two", "three"][i % 3] ?? null,
      candidate: candidates[i % 4]!,
      repetition: 0,
      reward,
      ended,
      failed: reward === 1 ? [] : i % 2 === 0 ? ["world"] : ["answer", "world"],
      faults: i % 7 === 0 ? 1 : 0,
      injected: i % 7 === 0 ? 1 : 0,
      live: 0,
      attempt: { runId: "r-made-up", id: `sha256:${i}` }
    }
  })

  beforeAll(async () => {
    requireChromium()
    const html = viewerPage("10,000 cells", cellsSection(rows))
    server = createServer((req, res) => {
      if (req.url === "/static/view.js") return res.writeHead(200, { "content-type": "text/javascript" }).end(viewScript)
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html)
    })
    await new Promise<void>((done) => server!.listen(0, "127.0.0.1", done))
    browser = await launch()
  })

  afterAll(async () => {
    await browser?.close()
    await new Promise<void>((done) => (server === undefined ? done() : server.close(() => done())))
  })

  it("filtering, searching, sorting and paging 10,000 cells complete in the page (the time is printed, not asserted)", async () => {
    const { port } = server!.address() as AddressInfo
    const page = await browser!.newPage()
    await page.goto(`http://127.0.0.1:${port}/cells`)
    await page.waitFor(`document.querySelector("#cells[data-ready]")`)
    expect(await cellsShown(page)).toBe(10_000)
    expect(await page.evaluate(`document.querySelectorAll("#cells tbody tr").length`)).toBe(100)
    const timings: Array<string> = []
    const took = async (what: string) => timings.push(`${what}: ${await page.evaluate<string>(`document.querySelector("#cells").dataset.filterMs`)} ms`)

    await page.choose(`#cells select[name=candidate]`, "gamma")
    await waitShown(page, rows.filter((r) => r.candidate === "gamma").length)
    await took("candidate")
    await page.choose(`#cells select[name=verdict]`, "partial")
    const partial = rows.filter((r) => r.candidate === "gamma" && r.ended === null && r.reward > 0 && r.reward < 1)
    await waitShown(page, partial.length)
    await took("candidate and verdict")
    await page.choose(`#cells select[name=fault]`, "injected")
    await waitShown(page, partial.filter((r) => r.injected > 0).length)
    await page.click(`#cells button[type=reset]`)
    await waitShown(page, 10_000)
    await page.type(`#cells input[name=task]`, "*-01*")
    await waitShown(page, rows.filter((r) => /^task-01/.test(r.task)).length)
    await took("task glob")
    await page.click(`#cells button[type=reset]`)
    await waitShown(page, 10_000)
    await page.type(`#cells input[name=q]`, "timeout")
    await waitShown(page, rows.filter((r) => r.ended === "timeout").length)
    await took("search")
    await page.click(`#cells button[type=reset]`)
    await waitShown(page, 10_000)
    await page.click(`#cells th[data-sort=reward]`)
    await page.click(`#cells th[data-sort=reward]`)
    await page.waitFor(`document.querySelector("#cells th[data-sort=reward]").getAttribute("aria-sort") === "descending"`)
    await took("sort by reward")
    expect(await page.evaluate(`[...document.querySelectorAll("#cells tbody tr")].every((tr) => tr.classList.contains("pass"))`)).toBe(true)
    await page.click(`#cells .pager [data-page=next]`)
    await page.waitFor(`document.querySelector("#cells .pager .range").textContent.startsWith("rows 101–200")`)
    console.info(`10,000 cells, time to filter and draw the first page: ${timings.join("; ")}`)
    expect(page.errors()).toEqual([])
    await expectDrawn(page, "10,000 cells")

    await page.close()
  })
})
