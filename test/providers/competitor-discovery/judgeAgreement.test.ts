/**
 * Two judges through the command (`--judge A --judge B --judge-reps 2`) against the loopback
 * server: the gold candidate's answers on the four tasks list ten entries; the scripted judges
 * disagree on three of them, and judge A answers one entry differently when asked again. The
 * score is judge A's first answers; the report gives the agreement and self-consistency the
 * script fixes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { tasks } from "../../../providers/competitor-discovery/tasks.ts"
import * as LoopbackServer from "../../../src/testkit/LoopbackServer.ts"
import { assay, tempDir } from "../../cli/support.ts"

const A = "openai:gpt-4o-mini"
const B = "openai:gpt-4.1-mini"
// The registry resolves each alias to its dated model: the report names that.
const aResolved = "openai:gpt-4o-mini-2024-07-18"
const bResolved = "openai:gpt-4.1-mini-2025-04-14"

/** Each judge's answer per task, entry by entry, in the order gold lists them (its reference set). */
const answers: Record<string, { readonly a: ReadonlyArray<boolean>; readonly b: ReadonlyArray<boolean> }> = {
  rosterly: { a: [true, true, true], b: [false, true, true] },
  shifthound: { a: [true, true, false], b: [true, true, false] },
  ledgerline: { a: [true, true], b: [true, false] },
  menumuse: { a: [false, true], b: [true, true] }
}

const reply = (competitor: ReadonlyArray<boolean>) =>
  JSON.stringify({ results: competitor.map((c, i) => ({ entry: i + 1, reasoning: "scripted", competitor: c })) })

const productOf = (id: string) => tasks.find((t) => t.id === id)!.product

const judgeTurn = (model: string, task: string, competitor: ReadonlyArray<boolean>, repeat: boolean): LoopbackServer.ScriptTurn => ({
  match: { model, system: "^You check a list of products", lastUser: `^<product>${productOf(task)} ` },
  text: reply(competitor),
  usage: { input: 300, output: 40 },
  ...(repeat ? { repeat: true } : {})
})

const script: ReadonlyArray<LoopbackServer.ScriptTurn> = [
  // Judge A on rosterly: its first answer, then (asked again) one entry the other way. Consumed in order.
  judgeTurn("^gpt-4o-mini", "rosterly", answers["rosterly"]!.a, false),
  judgeTurn("^gpt-4o-mini", "rosterly", [true, true, false], false),
  ...Object.entries(answers).flatMap(([task, { a, b }]) => [
    ...(task === "rosterly" ? [] : [judgeTurn("^gpt-4o-mini", task, a, true)]),
    judgeTurn("^gpt-4\\.1-mini", task, b, true)
  ])
]

describe("two judges on competitor-discovery, through the command", () => {
  it("the report's agreement is the share the scripted judges agree on, kappa as computed by hand, and the score is the first judge's", async () => {
    const home = tempDir()
    const ran = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* LoopbackServer.start(script)
          return yield* Effect.promise(() =>
            assay(
              ["run", "--benchmark", "competitor-discovery", "--candidate", "gold", "--judge", A, "--judge", B, "--judge-reps", "2", "--home", home, "--yes", "--json"],
              { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" }
            )
          )
        })
      )
    )
    expect(ran.code, ran.stderr).toBe(0)
    const report = JSON.parse(ran.stdout) as {
      scorecards: ReadonlyArray<{ stratum: string | null; meanReward: number; judging?: { calls: number } }>
      judges: { agreement: ReadonlyArray<Record<string, unknown>>; consistency: ReadonlyArray<Record<string, unknown>> }
    }
    // 7 of 10 entries alike. A says yes to 8, B to 7: chance 0.8·0.7 + 0.2·0.3 = 0.62; kappa (0.7 − 0.62) / 0.38.
    expect(report.judges.agreement).toEqual([
      expect.objectContaining({ benchmark: "competitor-discovery", judges: [aResolved, bResolved], decisions: 10, tasks: 4, agree: 7, agreement: 0.7 })
    ])
    expect(report.judges.agreement[0]!["kappa"]).toBeCloseTo(0.08 / 0.38, 12)
    // A answered 1 of its 10 inputs differently the second time; B never did.
    expect(report.judges.consistency).toEqual([
      { benchmark: "competitor-discovery", judge: aResolved, repetitions: 2, inputs: 10, unanimous: 0.9, pairwise: 0.9 },
      { benchmark: "competitor-discovery", judge: bResolved, repetitions: 2, inputs: 10, unanimous: 1, pairwise: 1 }
    ])
    // Relevance is A's first answers: 3/3, 2/3, 2/2, 1/2 (B's would give 0.9125, A's second 0.9125 too).
    const whole = report.scorecards.find((c) => c.stratum === null)!
    expect(whole.meanReward).toBeCloseTo((1 + 0.9 + 1 + 0.85) / 4, 12)
    // Every call is judging: 2 judges × 2 asks × 4 cells.
    expect(whole.judging?.calls).toBe(16)

    const text = await assay(["report", "--home", home])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toMatch(/competitor-discovery, judges' agreement/)
    expect(text.stdout).toMatch(new RegExp(`${aResolved}\\s+${bResolved}\\s+10\\s+4\\s+7\\s+70\\.0%\\s+\\[[0-9.]+%, [0-9.]+%\\]\\s+\\+0\\.211`))
    expect(text.stdout).toMatch(new RegExp(`${aResolved}\\s+2×\\s+10\\s+90\\.0%\\s+90\\.0%`))
  }, 240_000)

  it("with one judge the verdicts keep nothing beside it and the report has no judges section", async () => {
    const home = tempDir()
    const ran = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* LoopbackServer.start(Object.entries(answers).map(([task, { a }]) => judgeTurn("^gpt-4o-mini", task, a, true)))
          return yield* Effect.promise(() =>
            assay(["run", "--benchmark", "competitor-discovery", "--candidate", "gold", "--judge", A, "--home", home, "--yes", "--json"], {
              OPENAI_BASE_URL: server.openAiBaseUrl,
              OPENAI_API_KEY: "sk-test"
            })
          )
        })
      )
    )
    expect(ran.code, ran.stderr).toBe(0)
    const report = JSON.parse(ran.stdout) as { judges?: unknown; scorecards: ReadonlyArray<{ stratum: string | null; meanReward: number; judging?: { calls: number } }> }
    expect(report.judges).toBeUndefined()
    const whole = report.scorecards.find((c) => c.stratum === null)!
    expect(whole.meanReward).toBeCloseTo((1 + 0.9 + 1 + 0.85) / 4, 12)
    expect(whole.judging?.calls).toBe(4)
  }, 240_000)
})
