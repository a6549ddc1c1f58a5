import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { assay, cardOf, tempDir } from "./support.ts"

describe("tau2-retail through the command", { timeout: 300_000 }, () => {
  it("gold scores 1 on all 114 tasks without a judge, and the transcription agrees with upstream on 614 of 614 oracle lines", async () => {
    const [run, equivalence] = await Promise.all([
      assay(["run", "--benchmark", "tau2-retail", "--candidate", "gold", "--no-judge", "--yes", "--json", "--home", tempDir()]),
      assay(["equivalence", "tau2-retail", "--json"])
    ])
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout) as { cells: { total: number; ran: number } }
    expect(report.cells).toMatchObject({ total: 114, ran: 114 })
    expect(cardOf(run.stdout, "gold")).toMatchObject({ n: 114, meanReward: 1, failures: {} })

    expect(equivalence.code, equivalence.stderr).toBe(0)
    expect(JSON.parse(equivalence.stdout)).toMatchObject({ benchmark: "tau2-retail", lines: 614, agree: 614, disagree: [] })
  })

  it("a model agent and the simulated user, both played by the loopback server, hold a whole conversation that is graded, the user's tokens paid by the Attempt", async () => {
    const user = { system: "User Simulation Guidelines" }
    const agent = { system: "<policy>" }
    const script = [
      { match: user, text: "Hi, I'd like to exchange the jigsaw puzzle of order #W3947049.", usage: { input: 700, output: 20 } },
      {
        match: agent,
        toolCalls: [{
          name: "exchange_delivered_order_items",
          arguments: { order_id: "#W3947049", item_ids: ["3358616356"], new_item_ids: ["9013366374"], payment_method_id: "credit_card_7901829" }
        }],
        usage: { input: 3000, output: 60 }
      },
      { match: agent, text: "Done. You need to pay $22.55 for the price difference.", usage: { input: 3200, output: 15 } },
      { match: user, text: "Thanks! ###STOP###", usage: { input: 800, output: 5 } }
    ]
    const { run, requests } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* LoopbackServer.start(script)
          const run = yield* Effect.promise(() =>
            assay(["run", "--benchmark", "tau2-retail", "--task", "70", "--model", "openai:gpt-4o-mini", "--yes", "--json", "--home", tempDir()], {
              OPENAI_BASE_URL: server.openAiBaseUrl,
              OPENAI_API_KEY: "sk-test"
            })
          )
          return { run, requests: server.requests() }
        })
      )
    )
    expect(run.code, run.stderr).toBe(0)
    expect(requests.map((r) => r.turn)).toEqual([0, 1, 2, 3])
    const card = cardOf(run.stdout, "openai:gpt-4o-mini")
    // DB as gold; the NL assertion is not evaluated without a judge, never passed.
    expect(card).toMatchObject({ n: 1, meanReward: 1, failures: {} })
    expect(card.tokens).toEqual({ input: 700 + 3000 + 3200 + 800, output: 20 + 60 + 15 + 5 })
  })
})
