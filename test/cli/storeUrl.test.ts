/**
 * `--store postgres://…` as a user runs it: run, plan, report and replay read and write the same
 * experiment in Postgres (a real server of this file's own), whatever the home; ASSAY_STORE does
 * the same; a value that is not a Postgres URL is refused with one line and exit 2.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as Postgres from "../support/postgres.ts"
import { assay, tempDir } from "./support.ts"

let scope: Scope.CloseableScope
let server: Postgres.PgServer

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  server = await Effect.runPromise(Scope.extend(Postgres.start, scope))
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const selection = ["--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--task", "ledger-01", "--task", "ledger-02", "--task", "ledger-03"]

interface RunJson {
  readonly runId: string
  readonly cells: Record<string, number>
  readonly scorecards: ReadonlyArray<{ readonly candidate: string; readonly meanReward: number; readonly n: number }>
}

describe("--store postgres://", () => {
  it("run, plan, report and replay work on one experiment in Postgres, from any home", async () => {
    const url = server.database("cli")
    const first = await assay(["run", ...selection, "--home", tempDir(), "--store", url, "--yes", "--json"])
    expect(first.stderr).not.toContain("Error")
    expect(first.code).toBe(0)
    const ran = JSON.parse(first.stdout) as RunJson
    expect(ran.cells).toMatchObject({ total: 6, ran: 6, kept: 0 })

    // Another home, the store named by ASSAY_STORE: the cells are kept, since they live in Postgres.
    const again = await assay(["run", ...selection, "--home", tempDir(), "--yes", "--json"], { ASSAY_STORE: url })
    expect(again.code).toBe(0)
    expect((JSON.parse(again.stdout) as RunJson).cells).toMatchObject({ total: 6, ran: 0, kept: 6 })

    const plan = await assay(["plan", ...selection, "--home", tempDir(), "--store", url, "--json"])
    expect(plan.code).toBe(0)
    expect((JSON.parse(plan.stdout) as { cells: Record<string, number> }).cells).toMatchObject({ total: 6, kept: 6, new: 0 })

    const report = await assay(["report", ran.runId, "--home", tempDir(), "--store", url, "--json"])
    expect(report.code).toBe(0)
    const reported = JSON.parse(report.stdout) as RunJson
    expect(reported.runId).toBe(ran.runId)
    expect(reported.scorecards.map((s) => [s.candidate, s.n, s.meanReward])).toEqual(ran.scorecards.map((s) => [s.candidate, s.n, s.meanReward]))

    const replay = await assay(["replay", ran.runId, "--home", tempDir(), "--store", url, "--json"])
    expect(replay.stderr).toBe("")
    expect(replay.code).toBe(0)
    expect(JSON.parse(replay.stdout)).toMatchObject({ replayed: 6, same: 6, differ: [] })
  })

  it("a --store that is not a Postgres URL is refused with one line, exit 2, and the password never shown", async () => {
    const bad = await assay(["plan", ...selection, "--home", tempDir(), "--store", "store.sqlite"])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--store store.sqlite: expected a Postgres URL")
    const env = await assay(["plan", ...selection, "--home", tempDir()], { ASSAY_STORE: "mysql://u:sekrit@h/db" })
    expect(env.code).toBe(2)
    expect(env.stderr).toContain("ASSAY_STORE=")
    expect(env.stderr).not.toContain("sekrit")
  })

  it("a store that cannot be reached is one line naming it, exit 1", async () => {
    const down = await assay(["report", "--home", tempDir(), "--store", `postgres://assay:sekrit@127.0.0.1:${server.port}/absent_db`])
    expect(down.code).toBe(1)
    expect(down.stderr).toContain("absent_db")
    expect(down.stderr).not.toContain("sekrit")
    expect(down.stderr.trim().split("\n")).toHaveLength(1)
  })
})
