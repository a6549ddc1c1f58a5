import { spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Store from "../../src/experiment/Store.ts"
import { assay, bin, type Card, root, tempDir } from "./support.ts"

const whole = (report: { scorecards: ReadonlyArray<Card> }, candidate: string): Card =>
  report.scorecards.find((s) => s.candidate === candidate && s.stratum === null)!

const withoutTimes = (cards: ReadonlyArray<Card & { wallSeconds?: number }>) => cards.map(({ wallSeconds: _, ...rest }) => rest)

// Each test starts the command several times (a few seconds each on a busy 2-core machine).
describe("assay run on ledger", { timeout: 300_000 }, () => {
  it("gold scores 1 on every task and echo scores below 1, with its failures per check", async () => {
    const home = tempDir()
    const r = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--yes", "--json", "--home", home])
    expect(r.code, r.stderr).toBe(0)
    const report = JSON.parse(r.stdout)
    expect(report.cells).toMatchObject({ total: 40, ran: 40 })
    expect(whole(report, "gold")).toMatchObject({ n: 20, meanReward: 1, failures: {} })
    const echo = whole(report, "echo")
    expect(echo.meanReward).toBeLessThan(1)
    expect(echo.failures["world"]).toBeGreaterThan(0)
    expect(echo.failures["answer"]).toBeGreaterThan(0)

    // report re-renders the same document from the store alone
    const again = await assay(["report", report.runId, "--json", "--home", home])
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout)).toEqual(report)
    const html = join(home, "report.html")
    const rendered = await assay(["report", "--format", "html", "--out", html, "--home", home])
    expect(rendered.code, rendered.stderr).toBe(0)
    expect(readFileSync(html, "utf8")).toContain("<svg")
    // only ids the store generated are accepted
    const bogus = await assay(["report", "../../etc/passwd", "--home", home])
    expect(bogus.code).not.toBe(0)
    expect(bogus.stderr).toMatch(/not a run id/)
  })

  it("without --yes it prints the plan, exits 2 and changes nothing", async () => {
    const home = join(tempDir(), "home")
    const r = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--json", "--home", home])
    expect(r.code).toBe(2)
    expect(JSON.parse(r.stdout)).toMatchObject({ ran: false, cells: { total: 40, new: 40 } })
    expect(existsSync(home)).toBe(false)
  })

  it("--faults makes another experiment, lowers gold's score, and the same seed gives the same score", async () => {
    const plain = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--yes", "--json", "--home", tempDir()])
    const faulted = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--faults", "7:0.3", "--yes", "--json", "--home", tempDir()])
    const again = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--faults", "7:0.3", "--yes", "--json", "--home", tempDir()])
    for (const r of [plain, faulted, again]) expect(r.code, r.stderr).toBe(0)
    const [p, f, a] = [plain, faulted, again].map((r) => JSON.parse(r.stdout))
    expect(f.experimentId).not.toBe(p.experimentId)
    expect(whole(f, "gold").meanReward).toBeLessThan(1)
    expect(a.experimentId).toBe(f.experimentId)
    expect(whole(a, "gold").meanReward).toBe(whole(f, "gold").meanReward)
    const bad = await assay(["run", "--benchmark", "ledger", "--faults", "x:2", "--yes", "--home", tempDir()])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--faults x:2: expected SEED:RATE/)
  })

  it("a run killed with SIGKILL loses no certified Attempt, runs no cell twice, and ends as an uninterrupted run", async () => {
    const args = (home: string) => ["run", "--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--reps", "20", "--parallel", "1", "--yes", "--json", "--home", home]
    const home = tempDir()
    const child = spawn(process.execPath, [bin, ...args(home)], { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env } })
    const exited = new Promise((done) => child.on("close", done))
    // Kill it once some cells have been committed.
    const deadline = Date.now() + 60_000
    let runDir: string | undefined
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100))
      const runs = join(home, "runs")
      if (!existsSync(runs)) continue
      const { readdirSync } = await import("node:fs")
      const [dir] = readdirSync(runs)
      if (!dir) continue
      runDir = join(runs, dir)
      const file = join(runDir, "results.jsonl")
      if (existsSync(file) && readFileSync(file, "utf8").split("\n").length > 60) break
    }
    child.kill("SIGKILL")
    await exited
    expect(runDir).toBeDefined()
    const written = readFileSync(join(runDir!, "results.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(written.length).toBeGreaterThan(0)
    expect(written.length).toBeLessThan(800)

    const resumed = await assay(args(home))
    expect(resumed.code, resumed.stderr).toBe(0)
    const report = JSON.parse(resumed.stdout)

    // Every Attempt the killed run wrote is in the store, and no cell has two Attempts.
    const stored = await Effect.runPromise(
      Effect.gen(function*() {
        const store = yield* Store.Store
        const firstRunId = runDir!.split("/").pop()!
        return { first: yield* store.attemptsOfRun(firstRunId), second: yield* store.attemptsOfRun(report.runId) }
      }).pipe(Effect.provide(Store.layer(home)))
    )
    expect(stored.first.length).toBeGreaterThanOrEqual(written.length)
    const cells = [...stored.first, ...stored.second].map((s) => `${s.attempt.environmentId}|${s.attempt.candidate}|${s.attempt.repetition}`)
    expect(new Set(cells).size).toBe(cells.length)
    expect(cells).toHaveLength(800)
    expect(report.cells).toMatchObject({ total: 800, kept: stored.first.length, ran: 800 - stored.first.length })

    const uninterrupted = await assay(args(tempDir()))
    expect(withoutTimes(report.scorecards)).toEqual(withoutTimes(JSON.parse(uninterrupted.stdout).scorecards))
  })
})
