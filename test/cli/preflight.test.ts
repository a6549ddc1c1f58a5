import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { assay, tempDir } from "./support.ts"

const args = (home: string, budget: string) =>
  ["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--preflight-usd", budget, "--parallel", "2", "--yes", "--json", "--home", home]

/** The model calls a server answered (a liveness probe is not one). */
const calls = (server: LoopbackServer.LoopbackServer) => server.requests().filter((r) => r.method === "POST")

describe("preflight through the command", { timeout: 300_000 }, () => {
  it("a budget far below the pilot's bills stops after the pilot with exit 3; a larger one resumes and pays no pilot cell twice", async () => {
    const home = tempDir()
    const { low, high, requests } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          // Each cell: one call of 1,000 + 1,000 tokens = $0.00075 at gpt-4o-mini's list price.
          const server = yield* LoopbackServer.start([{ repeat: true, text: "done", usage: { input: 1000, output: 1000 } }])
          const env = { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" }
          // A budget that cannot pay one call's worst case: not even the pilot is sent.
          const none = yield* Effect.promise(() => assay(args(home, "0.0001"), env))
          expect(none.code, none.stderr).toBe(3)
          expect(JSON.parse(none.stdout)).toMatchObject({ stopped: "over-budget" })
          expect(JSON.parse(none.stdout).estimate.reasons[0]).toContain("the pilot alone would pass the budget")
          expect(calls(server)).toHaveLength(0)
          // Each pilot call reserves its worst case (~$0.006: the request's bytes and 8,192 output
          // tokens) and settles at $0.00075: the four pilot cells fit in $0.009, the rest does not.
          const low = yield* Effect.promise(() => assay(args(home, "0.009"), env))
          const afterPilot = calls(server).length
          const plan = yield* Effect.promise(() => assay(["plan", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--json", "--home", home], env))
          expect(JSON.parse(plan.stdout).estimate).toMatchObject({ verdict: "over-budget", budgetUsd: 0.009 })
          const high = yield* Effect.promise(() => assay(args(home, "5"), env))
          return { low, high, requests: { afterPilot, total: calls(server).length } }
        })
      )
    )
    expect(low.code, low.stderr).toBe(3)
    const stopped = JSON.parse(low.stdout)
    expect(stopped.stopped).toBe("over-budget")
    // 4 strata -> 4 pilot cells; 16 left at $0.00075 each.
    expect(requests.afterPilot).toBe(4)
    expect(stopped.estimate.candidates[0]).toMatchObject({ candidate: "openai:gpt-4o-mini", pilotCells: 4, cellsLeft: 16 })
    expect(stopped.estimate.total.usd.expected).toBeCloseTo(16 * 0.00075, 10)
    expect(high.code, high.stderr).toBe(0)
    const report = JSON.parse(high.stdout)
    expect(report.cells).toMatchObject({ total: 20, kept: 4, ran: 16 })
    expect(requests.total).toBe(20)
  })

  it("a pilot whose every cell faults leaves the candidate unpiloted and the gate refuses; once the server is back, the faulted cells run again", async () => {
    const home = tempDir()
    const withServer = (turns: ReadonlyArray<LoopbackServer.ScriptTurn>, argv: ReadonlyArray<string>) =>
      Effect.runPromise(
        Effect.scoped(
          Effect.gen(function*() {
            const server = yield* LoopbackServer.start(turns)
            const run = yield* Effect.promise(() => assay(argv, { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" }))
            return { run, requests: calls(server).length }
          })
        )
      )
    const { run } = await withServer([{ repeat: true, status: 500, text: "down" }], args(home, "5"))
    expect(run.code, run.stderr).toBe(3)
    const stopped = JSON.parse(run.stdout)
    expect(stopped.stopped).toBe("unpiloted")
    expect(stopped.estimate.unpiloted).toEqual(["openai:gpt-4o-mini"])
    expect(stopped.estimate.candidates[0].faulted.cells).toBe(4)

    const healthy = [{ repeat: true, text: "done", usage: { input: 1000, output: 1000 } }]
    const plan = await withServer(healthy, ["plan", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--json", "--home", home])
    expect(JSON.parse(plan.run.stdout).cells).toMatchObject({ total: 20, new: 16, kept: 0, faulted: 4 })
    // An outage says nothing of the candidate: the four faulted pilot cells run again, then the rest.
    const again = await withServer(healthy, args(home, "5"))
    expect(again.run.code, again.run.stderr).toBe(0)
    expect(again.requests).toBe(20)
    const report = JSON.parse(again.run.stdout)
    expect(report.cells).toMatchObject({ total: 20, kept: 4, ran: 16, faulted: 0 })
    expect(report.scorecards.find((s: { stratum: string | null }) => s.stratum === null).n).toBe(20)
  })

  it("--preflight-share is refused for model runs, with the flag that applies", async () => {
    const run = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--preflight-share", "0.2", "--yes", "--home", tempDir()], {})
    expect(run.code).toBe(2)
    expect(run.stderr).toContain("--preflight-share is for harness runs on a subscription (--harness); model runs are billed per token: use --preflight-usd")
  })
})
