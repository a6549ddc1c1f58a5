/**
 * Harness runs through the whole command with a fake agent CLI (test/harness/fake-harness.mjs
 * installed as `codex` in a private bin folder): plan, run, report re-rendered with the
 * recommendation, the spend cap, timeouts, skipped rows, the subscription allowance, and a
 * recorded harness Attempt replayed with no CLI at all.
 */
import { spawn } from "node:child_process"
import { existsSync, readFileSync, watch } from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as Corpus from "../../providers/corpus/index.ts"
import { resolveHarnessCandidate } from "../../src/cli/candidates.ts"
import * as Store from "../../src/experiment/Store.ts"
import { evaluate } from "../../src/evaluation/evaluate.ts"
import { costAt } from "../../src/model/Cost.ts"
import * as Registry from "../../src/model/Registry.ts"
import { Attempt } from "../../src/schema/Attempt.ts"
import { idOf as environmentIdOf } from "../../src/schema/EnvironmentDef.ts"
import * as Loopback from "../../src/testkit/LoopbackServer.ts"
import { fakeBin, writeJson } from "../harness/support.ts"
import { assay, bin as assayBin, cleanEnv, exitOf, root, tempDir } from "./support.ts"

const MINI = "gpt-4o-mini-2024-07-18"
const NANO = "gpt-4.1-nano-2025-04-14"
const bin = fakeBin(["codex"])
// /usr/bin holds python3 for the graders; no real agent CLI is reachable.
const baseEnv = { PATH: "/usr/bin:/bin", ASSAY_HARNESS_BIN_DIRS: bin }

const answers = [
  { match: "You are grading", answer: "Right and to the point.\nSCORE: 8", usage: [{ input: 500, cached: 0, output: 20 }] },
  { match: "TCP port", answer: "Port 8443", usage: [{ input: 1000, cached: 0, output: 100 }], rateLimits: [{ primary: 40 }] },
  { match: "TODO", answer: "There are 5.", usage: [{ input: 1000, cached: 0, output: 100 }], rateLimits: [{ primary: 52 }] },
  { match: "change\\.patch", answer: "REJECT\nAn off-by-one skips the first page.", usage: [{ input: 1000, cached: 0, output: 100 }], rateLimits: [{ primary: 51 }] },
  { match: "logs/ folder", answer: "cache\nIt ran out of memory first.", usage: [{ input: 1000, cached: 0, output: 100 }] }
]

const registry = Effect.runSync(Registry.fixture)
const runCost = (id: string) => costAt(registry.providers["openai"]!.models[id]!.cost!, { inputTokens: 1000, outputTokens: 100 })

const results = (home: string, runId: string) =>
  readFileSync(join(home, "runs", runId, "results.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => Schema.decodeUnknownSync(Attempt)(JSON.parse(l)))

const skippedRows = (home: string, runId: string) =>
  Effect.runPromise(Effect.flatMap(Store.Store, (s) => s.skippedOfRun(runId)).pipe(Effect.provide(Store.layer(home))))

describe("assay plan|run|report --harness with a fake agent CLI", { timeout: 300_000 }, () => {
  it("plan --json on a machine with no harness lists each as absent with the reason, and exits 0", async () => {
    const plan = await assay(["plan", "--harness", "all", "--json", "--home", tempDir()], { PATH: "/usr/bin:/bin", ASSAY_HARNESS_BIN_DIRS: "" })
    expect(plan.code, plan.stderr).toBe(0)
    const doc = JSON.parse(plan.stdout)
    expect(doc.harnesses.map((h: { name: string }) => h.name)).toEqual(["codex", "claude", "qwen", "gemini", "opencode", "pi"])
    for (const h of doc.harnesses) {
      expect(h.liveness).toBe("absent")
      expect(h.reason).toMatch(/no `\w+` binary in PATH/)
    }
    expect(doc).toMatchObject({ candidates: [], agentRuns: 0, judgeCalls: 0, spendCapUsd: 10, timeoutSecs: 600 })
    expect(doc.tasks.length).toBeGreaterThanOrEqual(12)
  })

  it("plans, runs two discovered candidates with the default judge, re-renders the recommendation; the recorded Attempt replays with no CLI", async () => {
    const home = tempDir()
    const env = { ...baseEnv, FAKE_HARNESS_SCRIPT: writeJson({ byPrompt: answers }) }
    const selection = ["--harness", "codex", "--model", `codex:${MINI}`, "--model", `codex:${NANO}`, "--task", "config-port", "--task", "count-todos", "--task", "review-patch"]
    const plan = await assay(["plan", ...selection, "--json", "--home", home], env)
    expect(plan.code, plan.stderr).toBe(0)
    const doc = JSON.parse(plan.stdout)
    expect(doc.harnesses).toEqual([expect.objectContaining({ name: "codex", liveness: "live", version: "1.2.3" })])
    expect(doc.candidates.map((c: { name: string }) => c.name)).toEqual([`harness:codex:${MINI}`, `harness:codex:${NANO}`])
    // The default judge is the candidate with the highest output price, and the plan says it is one.
    expect(doc.judge).toEqual({ ref: `harness:codex:${MINI}`, alsoCandidate: true })
    expect(doc).toMatchObject({ agentRuns: 6, judgeCalls: 6, cells: { total: 6, new: 6 } })

    const run = await assay(["run", ...selection, "--yes", "--json", "--home", home], env)
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    const whole = (c: string) => report.scorecards.find((s: { candidate: string; stratum: string | null }) => s.candidate === c && s.stratum === null)
    // correctness 1 and judge 8/10: composite 0.9.
    expect(whole(`harness:codex:${MINI}`).meanReward).toBeCloseTo(0.9, 10)
    expect(whole(`harness:codex:${MINI}`).tokens).toEqual({ input: 3000, output: 300 })
    expect(whole(`harness:codex:${MINI}`).costUsd).toBeCloseTo(3 * runCost(MINI), 12)
    expect(whole(`harness:codex:${NANO}`).costUsd).toBeCloseTo(3 * runCost(NANO), 12)
    const rec = report.recommendation
    // Tied scores go to the lower median cost.
    expect(rec.orchestrator.candidate).toBe(`harness:codex:${NANO}`)
    expect(rec.worker.candidate).toBe(`harness:codex:${NANO}`)
    expect(rec.smallestSample).toBe(1)
    expect(rec.warnings.join(" ")).toMatch(/below 3/)
    expect(rec.judge).toEqual({ ref: `harness:codex:${MINI}`, alsoCandidate: true })

    const md = await assay(["report", report.runId, "--format", "md", "--home", home], env)
    expect(md.code, md.stderr).toBe(0)
    expect(md.stdout).toContain("## Recommendation")
    expect(md.stdout).toContain(`orchestrator: harness:codex:${NANO}`)
    expect(md.stdout).toContain("smallest sample per cell: 1")

    // Replay: the recorded process/spawn effects answer everything; no handler, no binary.
    const attempt = results(home, report.runId)[0]!
    expect(attempt.recording.map((r) => `${r.kind} ${r.key}`)).toEqual(["process/spawn codex", "process/spawn judge:codex"])
    const provider = Corpus.provider
    const envs = await Effect.runPromise(provider.environments)
    const base = envs.find((e) => e.task === attempt.task)!
    const replayEnv = { ...base, capabilities: { ...base.capabilities, models: { judge: `harness:codex:${MINI}` } } }
    expect(environmentIdOf(replayEnv)).toBe(attempt.environmentId)
    const candidate = await Effect.runPromise(resolveHarnessCandidate(provider, attempt.candidate).pipe(Effect.provide(Registry.layer)))
    const replayed = await Effect.runPromise(
      evaluate(replayEnv, {
        capabilities: provider.capabilities,
        agentDef: candidate.def,
        agent: await Effect.runPromise(candidate.agentFor(replayEnv)),
        repetition: attempt.repetition,
        replay: attempt.recording,
        registryEntry: candidate.registryEntry
      })
    )
    expect(replayed.verdict).toEqual(attempt.verdict)
    expect(replayed.usage.costUsd).toBe(attempt.usage.costUsd)
    expect(replayed.inputsId).toBe(attempt.inputsId)
  })

  it("a run killed at --timeout-secs ends in a timeout at unknown cost, which does not count against --max-usd; the spend cap skips the rest", async () => {
    const home = tempDir()
    const script = writeJson({ byPrompt: [{ match: "TCP port", sleepMs: 20_000 }, ...answers] })
    const run = await assay(
      ["run", "--harness", "codex", "--model", `codex:${MINI}`, "--task", "config-port", "--task", "count-todos", "--reps", "2", "--no-judge",
        "--timeout-secs", "2", "--max-usd", String(runCost(MINI) / 2), "--yes", "--json", "--home", home],
      { ...baseEnv, FAKE_HARNESS_SCRIPT: script }
    )
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    expect(report.cells).toMatchObject({ total: 4, ran: 3, skipped: 1 })
    const attempts = results(home, report.runId)
    expect(attempts.map((a) => [a.task, a.verdict.ended?.reason ?? "graded", a.usage.costUsd])).toEqual([
      ["config-port", "timeout", null],
      ["config-port", "timeout", null],
      ["count-todos", "graded", runCost(MINI)]
    ])
    expect((await skippedRows(home, report.runId)).map((r) => r.reason)).toEqual([expect.stringMatching(/^spend cap/)])
    expect(report.recommendation.judge).toBeNull()
  })

  it("a CLI that fails before any model call (no login) is an outage in its own words: not scored, not recommended, run again next time", async () => {
    const home = tempDir()
    const args = ["run", "--harness", "codex", "--model", `codex:${MINI}`, "--task", "config-port", "--no-judge", "--yes", "--json", "--home", home]
    const loggedOut = writeJson({ answer: "Not logged in · Please run /login", usage: [], exitCode: 1 })
    const run = await assay(args, { ...baseEnv, FAKE_HARNESS_SCRIPT: loggedOut })
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    expect(report.cells).toMatchObject({ total: 1, ran: 1, faulted: 1 })
    expect(report.scorecards).toEqual([])
    expect(report.recommendation.worker).toBeNull()
    expect(run.stderr).toContain('codex exited 1 before any model call: "Not logged in · Please run /login"); they are not scored as the candidates\' failures, and the next run retries them')
    // Logged in, the next run runs the cell again and scores it.
    const again = await assay(args, { ...baseEnv, FAKE_HARNESS_SCRIPT: writeJson({ byPrompt: answers }) })
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout).cells).toMatchObject({ total: 1, ran: 1, faulted: 0 })
    expect(JSON.parse(again.stdout).recommendation.worker).toMatchObject({ candidate: `harness:codex:${MINI}`, score: 1 })
  })

  it("Ctrl-C during a harness run: exit 130 and the one line every run prints, the cells kept and the command that resumes", async () => {
    const home = tempDir()
    const started = join(tempDir(), "started.json")
    // The second task's CLI signals that it started, then works for a minute.
    const script = writeJson({ byPrompt: [{ match: "TCP port", sleepMs: 60_000, envFile: started }, ...answers] })
    const args = ["run", "--harness", "codex", "--model", `codex:${MINI}`, "--task", "count-todos", "--task", "config-port", "--no-judge", "--parallel", "1", "--yes", "--home", home]
    const child = spawn(process.execPath, [assayBin, ...args], { cwd: root, env: cleanEnv({ ...baseEnv, FAKE_HARNESS_SCRIPT: script }), stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    const exited = exitOf(child)
    // Waits for the CLI's own sign of life (the file it writes, seen by a watch of its folder), or the run's end.
    await new Promise<void>((ok) => {
      const watcher = watch(dirname(started), () => existsSync(started) && done())
      const done = () => {
        watcher.close()
        ok()
      }
      void exited.then(done)
      if (existsSync(started)) done()
    })
    expect(existsSync(started), stderr).toBe(true)
    child.kill("SIGINT")
    expect(await exited, stderr).toBe(130)
    const said = stderr.split("\n").filter((l) => l.startsWith("assay: stopped"))
    // The other task's cell is kept when it ran first (the plan's order, not --task's).
    expect(said, stderr).toHaveLength(1)
    expect(said[0]).toMatch(/^assay: stopped: [01] of 2 cells are kept in /)
    expect(said[0]).toContain(` cells are kept in ${home}; resume with: assay ${args.join(" ")}`)
  })

  it("the subscription allowance refuses cells once the experiment used ten points of a window since it started, keeps no Scorecard, and a later run resumes", async () => {
    const home = tempDir()
    // On the user's own login (no endpoint), codex keeps its rollout, where the quota readings
    // are, in the user's CODEX_HOME: this run's file is found there by its thread id.
    const env = { ...baseEnv, FAKE_HARNESS_SCRIPT: writeJson({ byPrompt: answers }), CODEX_HOME: tempDir() }
    const args = ["run", "--harness", "codex", "--model", `codex:${MINI}`, "--task", "config-port", "--task", "count-todos", "--task", "review-patch", "--task", "triage-logs", "--no-judge", "--yes", "--json", "--home", home]
    const first = await assay(args, env)
    // config-port reads 40% used, count-todos 52%: twelve points since the start, review-patch is refused.
    expect(first.code, first.stderr).toBe(3)
    const stopped = JSON.parse(first.stdout)
    expect(stopped.scorecards).toEqual([])
    expect(stopped.cells).toMatchObject({ ran: 2, skipped: 2 })
    expect(stopped.warnings.join(" ")).toMatch(/subscription allowance: quota: this experiment used 12 points of the primary window/)
    expect((await skippedRows(home, stopped.runId)).map((r) => r.reason)).toEqual([expect.stringMatching(/^quota: /), expect.stringMatching(/^quota: /)])

    // Resumed: review-patch runs and reads 51%, eleven points since the experiment's first reading
    // (40%, kept in the store), so triage-logs is refused again.
    const second = await assay(args, env)
    expect(second.code, second.stderr).toBe(3)
    const secondReport = JSON.parse(second.stdout)
    expect(secondReport.cells).toMatchObject({ kept: 2, ran: 1, skipped: 1 })
    expect(secondReport.warnings.join(" ")).toMatch(/used 11 points of the primary window/)

    const third = await assay([...args, "--preflight-share", "0.5"], env)
    expect(third.code, third.stderr).toBe(0)
    const resumed = JSON.parse(third.stdout)
    expect(resumed.cells).toMatchObject({ total: 4, kept: 3, ran: 1 })
    expect(resumed.scorecards.find((s: { stratum: string | null }) => s.stratum === null).n).toBe(4)
  })

  it("--benchmark corpus --candidate harness:NAME:MODEL with a PROVIDER:MODEL judge: the judge is a recorded model call off the candidate's wallet, counted by the spend cap", async () => {
    const home = tempDir()
    const run = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* Loopback.start([{ default: true, text: "Mostly right.\nSCORE: 6", usage: { input: 50, output: 5 } }])
          return yield* Effect.promise(() =>
            assay(
              // Above the first run's own cost, below it plus its judging: the second cell is not started.
              ["run", "--benchmark", "corpus", "--candidate", `harness:codex:${MINI}`, "--task", "config-port", "--task", "count-todos", "--judge", `openai:${MINI}`,
                "--max-usd", String(runCost(MINI) * 1.02), "--yes", "--json", "--home", home],
              { ...baseEnv, FAKE_HARNESS_SCRIPT: writeJson({ byPrompt: answers }), OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" }
            )
          )
        })
      )
    )
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    const [attempt] = results(home, report.runId)
    expect(attempt!.recording.map((r) => `${r.kind} ${r.key}`)).toEqual(["process/spawn codex", "model/generate judge"])
    // correctness 1, judge 6/10.
    expect(attempt!.verdict.reward).toBeCloseTo(0.8, 10)
    expect(attempt!.verdict.checks).toEqual({ "answers 8443": true, judge: false })
    expect(attempt!.usage).toMatchObject({ calls: 1, inputTokens: 1000, outputTokens: 100 })
    const judged = (attempt!.output as { result: { judge: { score: number; costUsd: number } } }).result.judge
    expect(judged.score).toBe(6)
    expect(judged.costUsd).toBeCloseTo(costAt(registry.providers["openai"]!.models[MINI]!.cost!, { inputTokens: 50, outputTokens: 5 }), 12)
    expect(report.recommendation.judge).toEqual({ ref: `openai:${MINI}`, alsoCandidate: false })
    // What judging cost is kept beside the candidate's own bill, not in it.
    expect(attempt!.judging).toEqual({ calls: 1, inputTokens: 50, outputTokens: 5, costUsd: judged.costUsd })
    const card = report.scorecards.find((c: { stratum: string | null }) => c.stratum === null)
    expect(card.judging).toEqual({ calls: 1, tokens: { input: 50, output: 5 }, costUsd: judged.costUsd })
    expect(card.costUsd).toBeCloseTo(runCost(MINI), 12)
    expect((await skippedRows(home, report.runId)).map((r) => r.reason)).toEqual([expect.stringMatching(/^spend cap: .* \(runs and their judging\)$/)])
  })
})
