/**
 * A model that searches, fetches and answers, run through the command against the loopback
 * server: the run is recorded and `assay replay` of it, with the server gone and no key, gives
 * the same verdict; with `--faults`, fetches fail as injected faults (tool errors the model sees),
 * the quotes of the pages it could not read are ungrounded, and the replay agrees again.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { tasks } from "../../../providers/competitor-discovery/tasks.ts"
import * as LoopbackServer from "../../../src/model/LoopbackServer.ts"
import { fetchEffect, searchEffect } from "../../../src/world/FrozenWeb.ts"
import { drawFault } from "../../../src/world/WorldEffects.ts"
import { assay, tempDir } from "../../cli/support.ts"

const task = tasks.find((t) => t.id === "ledgerline")!
const sources = task.references.map((r) => r.gold.source)
const answer = {
  competitors: task.references.map((r) => ({ name: r.name, site: r.site, claim: r.gold.claim, quote: r.gold.quote, source: r.gold.source }))
}

/** Search, fetch both sources in one turn, answer: what a model that does the task well replies. */
const script: ReadonlyArray<LoopbackServer.ScriptTurn> = [
  { toolCalls: [{ name: "search", arguments: { query: task.goldQuery } }], usage: { input: 400, output: 20 } },
  { toolCalls: sources.map((url) => ({ name: "fetch", arguments: { url } })), usage: { input: 900, output: 30 } },
  { text: JSON.stringify(answer), usage: { input: 1500, output: 200 } }
]

const ALL_KINDS = ["rate-limit", "server-error", "timeout"] as const
const site = (e: { kind: string; key: string }) => `${e.kind}:${e.key}`
const webSites = [site(searchEffect(task.goldQuery)), ...sources.map((u) => site(fetchEffect(u)))]

/**
 * A seed at rate 0.5 under which the model's three calls meet no fault (so no retry waits) and
 * exactly one of the two fetches does: found by the same pure draw the faults layer makes.
 */
const seed = (() => {
  for (let s = 1; s < 10_000; s++) {
    const spec = { seed: s, rate: 0.5, kinds: ALL_KINDS }
    const model = [1, 2, 3].some((n) => drawFault(spec, "model/generate:agent", n, `competitor-discovery/${task.id}`) !== null)
    const web = webSites.map((w) => drawFault(spec, w, 1, `competitor-discovery/${task.id}`))
    if (!model && web[0] === null && web.slice(1).filter((f) => f !== null).length === 1) return { seed: s, faultedFetch: web.findIndex((f) => f !== null) - 1 }
  }
  throw new Error("no seed found")
})()

interface CellResult {
  readonly task: string
  readonly reward: number
  readonly ended: string | null
  readonly faults: ReadonlyArray<{ readonly effect: string; readonly reason: string; readonly injected: boolean }>
}

const runAgainstLoopback = (args: ReadonlyArray<string>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* LoopbackServer.start(script)
        return yield* Effect.promise(() => assay(args, { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" }))
      })
    )
  )

const cellsOf = async (home: string): Promise<ReadonlyArray<CellResult>> => {
  const report = await assay(["report", "--home", home, "--json", "--cells"])
  expect(report.code, report.stderr).toBe(0)
  return (JSON.parse(report.stdout) as { cellResults: ReadonlyArray<CellResult> }).cellResults
}

describe("competitor-discovery with a model, through the command", () => {
  it("a loopback model that searches, fetches and answers scores 1; the replay with no server agrees, at $0", async () => {
    const home = tempDir()
    const ran = await runAgainstLoopback(["run", "--benchmark", "competitor-discovery", "--task", task.id, "--model", "openai:gpt-4o-mini", "--no-judge", "--home", home, "--yes", "--json"])
    expect(ran.code, ran.stderr).toBe(0)
    const [cell] = await cellsOf(home)
    expect(cell).toMatchObject({ task: task.id, reward: 1, ended: null, faults: [] })
    const replay = await assay(["replay", "--home", home, "--json"])
    expect(replay.code, replay.stderr).toBe(0)
    expect(JSON.parse(replay.stdout)).toMatchObject({ replayedFrom: JSON.parse(ran.stdout).runId, replayed: 1, same: 1, differ: [], missing: [], spendUsd: 0 })
  }, 120_000)

  it("with --faults, a fetch fails as an injected fault: its quote is ungrounded, the rest stands, and the replay agrees", async () => {
    const home = tempDir()
    const ran = await runAgainstLoopback([
      "run", "--benchmark", "competitor-discovery", "--task", task.id, "--model", "openai:gpt-4o-mini", "--no-judge",
      "--faults", `${seed.seed}:0.5`, "--home", home, "--yes", "--json"
    ])
    expect(ran.code, ran.stderr).toBe(0)
    const [cell] = await cellsOf(home)
    const faulted = fetchEffect(sources[seed.faultedFetch]!).key
    expect(cell!.faults.map((f) => [f.effect, f.injected])).toEqual([[`http/request:${faulted}`, true]])
    // The Attempt went on: recall 1, one of two quotes grounded, renormalised without a judge.
    expect(cell).toMatchObject({ ended: null })
    expect(cell!.reward).toBeCloseTo((0.4 * 1 + 0.3 * 0.5) / 0.7, 12)
    const replay = await assay(["replay", "--home", home, "--json"])
    expect(replay.code, replay.stderr).toBe(0)
    expect(JSON.parse(replay.stdout)).toMatchObject({ replayed: 1, same: 1, differ: [], missing: [] })
  }, 120_000)
})
