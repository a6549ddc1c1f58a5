/**
 * `assay replay` as the command runs it: the environments rebuilt from a run's settings (here a
 * faulted ledger run), every verdict the same at $0, and a recording with an effect removed
 * named (Attempt, effect, occurrence) with a failure the command exits 1 on.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Command } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import * as Sqlite from "../../src/experiment/Sqlite.ts"
import { afterEach, describe, expect, it, vi } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { provider as ledger } from "../../providers/ledger/index.ts"
import { UsageError } from "../../src/cli/benchmarks.ts"
import { ReplayIncomplete, replayCommand } from "../../src/cli/replay.ts"
import { makePlan, run, silent } from "../../src/experiment/Runner.ts"
import * as Store from "../../src/experiment/Store.ts"
import * as Registry from "../../src/model/Registry.ts"
import { withEffects } from "../../src/schema/EnvironmentDef.ts"

const tasks = ["ledger-01", "ledger-02", "ledger-05"]

/** A finished run as `assay run --benchmark ledger --candidate gold --task ... --faults 7:0.3 --yes` stores it. */
const recordRun = (home: string) =>
  Effect.gen(function*() {
    // The spec `--faults 7:0.3` parses to: every kind, in their declared order.
    const faults = { admission: "all", faults: { seed: 7, rate: 0.3, only: null, kinds: ["rate-limit", "server-error", "timeout"] } } as const
    const environments = (yield* ledger.environments).filter((e) => tasks.includes(e.task)).map((e) => withEffects(e, faults))
    const gold = { def: ledger.rosterDef("gold"), registryEntry: null, agentFor: (env: Parameters<typeof ledger.scripted>[1]) => ledger.scripted("gold", env) }
    const plan = yield* makePlan([{ provider: ledger, environments, candidates: [gold] }], 1)
    const settings = { benchmarks: ["ledger"], candidates: ["gold"], tasks, reps: 1, parallel: 4, maxUsd: null, timeoutSecs: null, faults: "7:0.3", judge: null, preflightUsd: null, pilot: false }
    return yield* run(plan, { parallel: 1, maxUsd: null, handlers: {}, progress: silent, settings })
  }).pipe(Effect.provide(Store.layer(home)))

const replay = (args: ReadonlyArray<string>) =>
  Command.run(replayCommand, { name: "assay", version: "test" })(["node", "assay", ...args]).pipe(
    Effect.provide(Layer.mergeAll(NodeContext.layer, Registry.layer))
  )

const homes: Array<string> = []
const tempHome = () => {
  const home = mkdtempSync(join(tmpdir(), "assay-cli-replay-"))
  homes.push(home)
  return home
}
afterEach(() => {
  vi.restoreAllMocks()
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true })
})

/** What the command printed with console.log while `effect` ran. */
const printed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => void lines.push(args.map(String).join(" ")))
    const exit = yield* Effect.exit(effect)
    vi.restoreAllMocks()
    return { exit, stdout: lines.join("\n") }
  })

describe("assay replay", () => {
  it.live("replays the latest run from the store: every verdict the same, $0, nothing stored", () =>
    Effect.gen(function*() {
      const home = tempHome()
      const recorded = yield* recordRun(home)
      expect(recorded.attempts.reduce((n, a) => n + a.faults.length, 0)).toBeGreaterThan(0)
      const { exit, stdout } = yield* printed(replay(["--home", home, "--json"]))
      expect(Exit.isSuccess(exit), Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "").toBe(true)
      expect(JSON.parse(stdout)).toEqual({
        runId: null,
        replayedFrom: recorded.report.runId,
        replayed: 3,
        same: 3,
        differ: [],
        missing: [],
        notReplayable: [],
        recordedCostUsd: 0,
        spendUsd: 0
      })
      const text = yield* printed(replay([recorded.report.runId, "--home", home]))
      expect(text.stdout).toContain(`replay of ${recorded.report.runId}: 3 Attempts re-evaluated from their recordings, 3 verdicts the same, 0 differ`)
      expect(text.stdout).toContain("spent $0")
    }), 60_000)

  it.live("a run that kept every cell from an earlier one says so: its report's cells are replayed with the run that made them", () =>
    Effect.gen(function*() {
      const home = tempHome()
      const first = yield* recordRun(home)
      const second = yield* recordRun(home)
      expect(second.report.cells).toMatchObject({ ran: 0, kept: 3 })
      const { stdout } = yield* printed(replay([second.report.runId, "--home", home, "--json"]))
      expect(JSON.parse(stdout)).toMatchObject({ replayedFrom: second.report.runId, replayed: 0, kept: 3 })
      const text = yield* printed(replay([second.report.runId, "--home", home]))
      expect(text.stdout).toContain("3 cells of its report were kept from earlier runs: their Attempts are replayed with those runs (`assay runs` lists them)")
      // The earlier run replays them, and says nothing of kept cells.
      const earlier = yield* printed(replay([first.report.runId, "--home", home, "--json"]))
      expect(JSON.parse(earlier.stdout)).toMatchObject({ replayed: 3, same: 3 })
      expect(JSON.parse(earlier.stdout).kept).toBeUndefined()
    }), 60_000)

  it.live("names a recording that lacks an effect (Attempt, effect, occurrence) and fails, which the command exits 1 on", () =>
    Effect.gen(function*() {
      const home = tempHome()
      const recorded = yield* recordRun(home)
      // ledger-01's gold Attempt without its first recorded effect.
      const first = recorded.attempts.find((a) => a.task === "ledger-01")!
      const removed = first.recording[0]!
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE attempts SET record = json_remove(record, '$.recording[0]') WHERE json_extract(record, '$.task') = 'ledger-01'`
      }).pipe(Effect.provide(Sqlite.layer({ filename: join(home, "assay.sqlite") })), Effect.orDie, Effect.scoped)

      const { exit, stdout } = yield* printed(replay(["--home", home, "--json"]))
      const result = JSON.parse(stdout) as { missing: ReadonlyArray<unknown>; same: number; runId: string | null }
      expect(result.missing).toEqual([
        { benchmark: "ledger", task: "ledger-01", candidate: "gold", repetition: 0, effect: `${removed.kind}:${removed.key}`, occurrence: removed.occurrence, reason: "replay-missing" }
      ])
      expect(result.same).toBe(2)
      expect(result.runId).toBeNull()
      // A typed failure that is not a usage error: the command's handler prints it and exits 1.
      expect(Exit.isFailure(exit)).toBe(true)
      const failure = Exit.isFailure(exit) ? Option.getOrNull(Cause.failureOption(exit.cause)) : null
      expect(failure).toBeInstanceOf(ReplayIncomplete)
      expect(failure).not.toBeInstanceOf(UsageError)
      expect((failure as ReplayIncomplete).message).toBe("replay incomplete: 1 recorded effects are missing (each is named above)")

      const text = yield* printed(replay(["--home", home]))
      expect(text.stdout).toContain(`missing: ledger ledger-01 · gold · rep 0: the recording lacks ${removed.kind}:${removed.key} #${removed.occurrence}`)
    }), 60_000)

  it.live("refuses a home with no store as a usage error", () =>
    Effect.gen(function*() {
      const { exit } = yield* printed(replay(["--home", join(tempHome(), "nowhere")]))
      const failure = Exit.isFailure(exit) ? Option.getOrNull(Cause.failureOption(exit.cause)) : null
      expect(failure).toBeInstanceOf(UsageError)
    }))
})
