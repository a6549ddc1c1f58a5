/**
 * The noise floor and the power plan of a real experiment: the ledger's five question tasks, two
 * loopback models whose answer to some tasks changes from one repetition to the next (the script
 * gives each such task right and wrong answers in turn), so the share of tasks that flip is known.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { assay, tempDir } from "./support.ts"

const questions = {
  "ledger-06": { ask: "ACC-1003", right: "67500" },
  "ledger-07": { ask: "Donald Knuth", right: "EUR" },
  "ledger-12": { ask: "Ada Lovelace hold", right: "2" },
  "ledger-16": { ask: "ACC-1008", right: "314159" },
  "ledger-19": { ask: "ACC-1006", right: "Edsger Dijkstra" }
} as const
type Task = keyof typeof questions

/** Each task's answers over three repetitions: "r" right, "w" wrong (a mixed one flips). */
const answers: Record<string, Record<Task, string>> = {
  "gpt-4o-mini": { "ledger-06": "rrr", "ledger-07": "rrr", "ledger-12": "rwr", "ledger-16": "www", "ledger-19": "wrw" },
  "gpt-4o(?!-mini)": { "ledger-06": "rrr", "ledger-07": "wrr", "ledger-12": "rrr", "ledger-16": "rrr", "ledger-19": "www" }
}

const script = Object.entries(answers).flatMap(([model, byTask]) =>
  Object.entries(byTask).flatMap(([task, pattern]) =>
    [...pattern].map((a) => ({
      match: { model, lastUser: questions[task as Task].ask },
      text: a === "r" ? questions[task as Task].right : "I do not know.",
      usage: { input: 100, output: 5 }
    }))
  )
)

describe("assay noise and plan --detect on a run with repetitions", () => {
  it("prints each candidate's flip rate and within-task share, and the tasks × repetitions needed to detect 0.05", async () => {
    const home = tempDir()
    const selection = [
      "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--model", "openai:gpt-4o",
      ...Object.keys(questions).flatMap((t) => ["--task", t]), "--reps", "3", "--home", home
    ]
    const run = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* LoopbackServer.start(script)
          return yield* Effect.promise(() =>
            assay(["run", ...selection, "--parallel", "1", "--yes", "--json"], { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" })
          )
        })
      )
    )
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    const whole = (candidate: string) => report.scorecards.find((c: { candidate: string; stratum: string | null }) => c.candidate === candidate && c.stratum === null)
    expect(whole("openai:gpt-4o-mini")).toMatchObject({ n: 15, tasks: 5 })
    // Task means 1, 1, 2/3, 0, 1/3: the mean over tasks is 0.6.
    expect(whole("openai:gpt-4o-mini").meanReward).toBeCloseTo(0.6, 12)

    const noise = await assay(["noise", report.runId, "--home", home, "--json"])
    expect(noise.code, noise.stderr).toBe(0)
    const rows = JSON.parse(noise.stdout).noise as ReadonlyArray<{ candidate: string; flipRate: number; withinShare: number; repetitionSd: number | null }>
    const of = (candidate: string) => rows.find((r) => r.candidate === candidate)
    expect(of("openai:gpt-4o-mini")?.flipRate).toBeCloseTo(2 / 5, 12)
    expect(of("openai:gpt-4o")?.flipRate).toBeCloseTo(1 / 5, 12)
    for (const r of rows) {
      expect(r.withinShare).toBeGreaterThan(0)
      expect(r.withinShare).toBeLessThan(1)
      expect(r.repetitionSd).not.toBeNull()
    }
    // The report carries the same figures.
    expect(whole("openai:gpt-4o-mini").noise.flipRate).toBeCloseTo(2 / 5, 12)
    const text = await assay(["noise", "--home", home])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toMatch(/flip rate/)
    expect(text.stdout).toMatch(/within-task share/)
    expect(text.stdout).toContain("40.0%")

    const plan = await assay(["plan", ...selection, "--detect", "0.05", "--json"])
    expect(plan.code, plan.stderr).toBe(0)
    const power = JSON.parse(plan.stdout).power
    expect(power.detect).toBe(0.05)
    expect(power.plans).toHaveLength(1)
    const p = power.plans[0]
    expect(p.pilot).toEqual({ tasks: 5, repetitions: 3 })
    expect(p.available).toBe(20)
    // Five pilot tasks: no p of the report's test can reach 5%, so nothing is detectable now, as in the report.
    expect(p.minimumDetectable).toBeNull()
    // More repetitions never need more tasks; tasks needed never fall below the task-sampling
    // floor, nor below the 6 tasks a significant difference needs.
    const needed = p.needed.map((n: { tasks: number }) => n.tasks)
    expect([...needed].sort((x, y) => y - x)).toEqual(needed)
    for (const n of needed) expect(n).toBeGreaterThanOrEqual(Math.max(6, p.floorTasks))
    const planText = await assay(["plan", ...selection, "--detect", "0.05"])
    expect(planText.code, planText.stderr).toBe(0)
    expect(planText.stdout).toContain("detect a difference of 0.05")
    if (p.tooFewTasks) expect(planText.stdout).toContain("it cannot detect 0.05")

    // A run without repetitions has no noise floor, and says why.
    const once = await assay(["noise", "--home", tempDir()])
    expect(once.code).not.toBe(0)
  }, 180_000)

  it("a pilot whose differences do not vary sizes no plan; --like sizes only the plan's own benchmarks and candidates", async () => {
    const home = tempDir()
    const pilot = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--home", home, "--yes", "--json"])
    expect(pilot.code, pilot.stderr).toBe(0)
    // gold 1 and echo 0 on every task: a difference of exactly 1 each time, no variance.
    const same = await assay(["plan", "--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--home", home, "--detect", "0.2", "--json"])
    expect(same.code, same.stderr).toBe(0)
    const [p] = JSON.parse(same.stdout).power.plans
    expect(p).toMatchObject({ pilot: { tasks: 20, repetitions: 1 }, minimumDetectable: null, floorTasks: null })
    expect(p.needed.every((n: { tasks: number | null }) => n.tasks === null)).toBe(true)
    const text = await assay(["plan", "--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--home", home, "--detect", "0.2"])
    expect(text.stdout).toContain("the pilot's per-task differences do not vary at all")
    // Another benchmark's plan from this run: nothing of it to size from, and no ledger row.
    const like = await assay(["plan", "--benchmark", "bfcl", "--candidate", "gold", "--candidate", "echo", "--home", home, "--detect", "0.2", "--like", JSON.parse(pilot.stdout).runId])
    expect(like.code, like.stderr).toBe(0)
    expect(like.stdout).toContain("no two candidates have graded cells on the same tasks yet")
    expect(like.stdout).not.toMatch(/^\s+ledger\s/m)
    // A run of one repetition has no noise floor: said in one line, exit 1 (the command line was right).
    const noNoise = await assay(["noise", "--home", home])
    expect(noNoise.code, noNoise.stderr).toBe(1)
    expect(noNoise.stderr).toContain("the noise floor needs a run made with --reps 2 or more")
  }, 120_000)
})
