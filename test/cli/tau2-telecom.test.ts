import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { assay, cardOf, tempDir } from "./support.ts"

describe("tau2-telecom through the command", { timeout: 300_000 }, () => {
  it("gold scores 1 on all 114 tasks without a judge, echo 0 on its env assertions; the transcription agrees with upstream on 314 of 314 oracle lines", async () => {
    const [run, equivalence] = await Promise.all([
      assay(["run", "--benchmark", "tau2-telecom", "--candidate", "gold", "--candidate", "echo", "--no-judge", "--yes", "--json", "--home", tempDir()]),
      assay(["equivalence", "tau2-telecom", "--json"])
    ])
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout) as { cells: { total: number; ran: number } }
    expect(report.cells).toMatchObject({ total: 228, ran: 228 })
    expect(cardOf(run.stdout, "gold")).toMatchObject({ n: 114, meanReward: 1, failures: {} })
    const echo = cardOf(run.stdout, "echo")
    expect(echo).toMatchObject({ n: 114, meanReward: 0 })
    // Every task has a first env assertion, and doing nothing never meets them all.
    expect(Object.keys(echo.failures).some((k) => k.startsWith("env:"))).toBe(true)

    expect(equivalence.code, equivalence.stderr).toBe(0)
    expect(JSON.parse(equivalence.stdout)).toMatchObject({ benchmark: "tau2-telecom", lines: 314, agree: 314, disagree: [] })
  })

  it("a model agent and a simulated user with phone tools, both played by the loopback server: the user's calls fix the phone and its tokens are paid by the Attempt", async () => {
    // The user's prompt has the tools variant of the guidelines; the agent's the telecom policy.
    const user = { system: "You have some tools to perform the actions on your end" }
    const agent = { system: "<tech_support_policy>" }
    const script = [
      { match: user, text: "My mobile data is not working.", usage: { input: 900, output: 10 } },
      { match: agent, text: "Please turn airplane mode off and mobile data on.", usage: { input: 5000, output: 15 } },
      { match: user, toolCalls: [{ id: "u1", name: "toggle_airplane_mode", arguments: {} }], usage: { input: 950, output: 8 } },
      { match: user, toolCalls: [{ id: "u2", name: "toggle_data", arguments: {} }], usage: { input: 1000, output: 8 } },
      { match: user, text: "It works now. ###STOP###", usage: { input: 1050, output: 6 } }
    ]
    const task = "[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]"
    const { run, requests } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* LoopbackServer.start(script)
          const run = yield* Effect.promise(() =>
            assay(["run", "--benchmark", "tau2-telecom", "--task", task, "--model", "openai:gpt-4o-mini", "--yes", "--json", "--home", tempDir()], {
              OPENAI_BASE_URL: server.openAiBaseUrl,
              OPENAI_API_KEY: "sk-test"
            })
          )
          return { run, requests: server.requests() }
        })
      )
    )
    expect(run.code, run.stderr).toBe(0)
    expect(requests.map((r) => r.turn)).toEqual([0, 1, 2, 3, 4])
    const card = cardOf(run.stdout, "openai:gpt-4o-mini")
    // Both env assertions (mobile data on, excellent speed) hold after the user's own tool calls.
    expect(card).toMatchObject({ n: 1, meanReward: 1, failures: {} })
    expect(card.tokens).toEqual({ input: 900 + 5000 + 950 + 1000 + 1050, output: 10 + 15 + 8 + 8 + 6 })
  })
})
