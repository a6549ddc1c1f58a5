/**
 * Outages apart from scores (issue 39.2): cells that could not reach the model are counted and
 * listed, never scored as the candidate's zero, and a run with the endpoint up scores them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { closedPort } from "../model/servers.ts"
import { assay, tempDir } from "./support.ts"

interface Card {
  readonly candidate: string
  readonly stratum: string | null
  readonly n: number
  readonly meanReward: number
  readonly outages?: number
}

const model = "openai:gpt-4o-mini"

describe("an endpoint that cannot be reached", () => {
  it("leaves the unreachable cells out of n, the mean, the interval and the comparisons, lists them, and a rerun with the server up scores them", async () => {
    const home = tempDir()
    const port = await Effect.runPromise(closedPort)
    const args = ["run", "--benchmark", "ledger", "--candidate", "gold", "--model", model, "--task", "ledger-01", "--task", "ledger-02", "--reps", "2", "--home", home, "--yes"]
    const down = await assay([...args, "--json"], { OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, OPENAI_API_KEY: "sk-test" })
    expect(down.code, down.stderr).toBe(0)
    const report = JSON.parse(down.stdout)
    expect(report.cells).toMatchObject({ total: 8, ran: 8, faulted: 4 })
    const cards: ReadonlyArray<Card> = report.scorecards
    // No mean over cells that never reached the model: the model has no scorecard at all.
    expect(cards.filter((c) => c.candidate === model)).toEqual([])
    const gold = cards.find((c) => c.candidate === "gold" && c.stratum === null)
    expect(gold).toMatchObject({ n: 4, meanReward: 1 })
    expect(report.comparisons).toEqual([])
    expect(report.outages).toHaveLength(4)
    expect(report.outages.every((o: { candidate: string; reasons: ReadonlyArray<string> }) => o.candidate === model && o.reasons.includes("unreachable"))).toBe(true)
    expect(report.notes.join("\n")).toContain("4 cells ended in an outage")

    // The stored report says the same in text.
    const text = await assay(["report", report.runId, "--home", home])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toContain("outages: 4 cells ended in an outage (unreachable)")
    expect(text.stdout).toContain("running the experiment again runs them")

    const up = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* LoopbackServer.start([{ repeat: true, text: "done", usage: { input: 100, output: 10 } }])
          return yield* Effect.promise(() =>
            assay([...args, "--json"], { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" })
          )
        })
      )
    )
    expect(up.code, up.stderr).toBe(0)
    const again = JSON.parse(up.stdout)
    expect(again.cells).toMatchObject({ total: 8, ran: 4, kept: 4, faulted: 0 })
    expect(again.outages).toBeUndefined()
    const scored = (again.scorecards as ReadonlyArray<Card>).find((c) => c.candidate === model && c.stratum === null)
    expect(scored?.n).toBe(4)
    expect(scored?.outages).toBeUndefined()
    expect(again.comparisons).toHaveLength(1)
    expect(again.comparisons[0].n).toBe(2)
  }, 180_000)
})
