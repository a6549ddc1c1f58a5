/**
 * `bird` through the command: gold scores EX 1 and echo 0 on the fixtures, and a model in each
 * protocol (one step, tool loop) against the loopback server leaves its SQL in the recording and
 * replays to the same verdicts with the server gone.
 */
import { copyFileSync, mkdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LoopbackServer from "../../src/model/LoopbackServer.ts"
import { assay, cardOf, tempDir } from "./support.ts"

const TASKS = ["000-debit_card_specializing", "001-debit_card_specializing", "484-financial", "487-financial"]
const GOLD_0 = "SELECT CAST(SUM(IIF(Currency = 'EUR', 1, 0)) AS FLOAT) / SUM(IIF(Currency = 'CZK', 1, 0)) AS ratio FROM customers"

interface Recorded {
  readonly candidate: string
  readonly recording: ReadonlyArray<{ readonly kind: string; readonly key: string; readonly request: { readonly args: { readonly sql?: string } } }>
  readonly verdict: { readonly reward: number; readonly details?: { readonly f1?: number } }
  readonly evidence: { readonly databases: string; readonly sha256: string | null }
}

/** The attempts' records in a home's store (read-only). */
const records = (home: string): ReadonlyArray<Recorded> => {
  type Db = { prepare(sql: string): { all(): ReadonlyArray<{ readonly record: string }> } }
  const Database = createRequire(import.meta.url)("better-sqlite3") as new (path: string, o: { readonly readonly: boolean }) => Db
  return new Database(join(home, "assay.sqlite"), { readonly: true }).prepare("SELECT record FROM attempts ORDER BY seq").all().map((r) =>
    JSON.parse(r.record) as Recorded
  )
}

const runWithModel = (home: string, candidate: string, turns: ReadonlyArray<LoopbackServer.ScriptTurn>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* LoopbackServer.start(turns)
        return yield* Effect.promise(() =>
          assay(["run", "--benchmark", "bird", "--candidate", candidate, "--task", TASKS[0]!, "--home", home, "--yes", "--json"], {
            OPENAI_BASE_URL: server.openAiBaseUrl,
            OPENAI_API_KEY: "sk-test"
          })
        )
      })
    )
  )

describe("bird through the command", () => {
  it("gold scores EX 1 and echo 0, keyed by position (question ids 137 and 138 repeat)", async () => {
    const home = tempDir()
    const ran = await assay(["run", "--benchmark", "bird", "--candidate", "gold", "--candidate", "echo", ...TASKS.flatMap((t) => ["--task", t]), "--home", home, "--yes", "--json"])
    expect(ran.code, ran.stderr).toBe(0)
    expect(cardOf(ran.stdout, "gold")).toMatchObject({ n: 4, meanReward: 1 })
    expect(cardOf(ran.stdout, "echo")).toMatchObject({ n: 4, meanReward: 0 })
  }, 120_000)

  it("a faulted submission is no answer: gold under faults at rate 1 (its submit_sql faulted) scores 0", async () => {
    const home = tempDir()
    const ran = await assay(["run", "--benchmark", "bird", "--candidate", "gold", "--task", TASKS[0]!, "--faults", "7:1", "--home", home, "--yes", "--json"])
    expect(ran.code, ran.stderr).toBe(0)
    expect(cardOf(ran.stdout, "gold")).toMatchObject({ n: 1, meanReward: 0 })
  }, 120_000)

  it("a model in the tool loop: its query and its submitted SQL are in the recording, and replay gives the same verdict with no server", async () => {
    const home = tempDir()
    const ran = await runWithModel(home, "openai:gpt-4o-mini", [
      { toolCalls: [{ name: "query", arguments: { sql: "SELECT Currency, COUNT(*) FROM customers GROUP BY Currency" } }], usage: { input: 900, output: 20 } },
      { toolCalls: [{ name: "submit_sql", arguments: { sql: GOLD_0 } }], usage: { input: 950, output: 30 } },
      { repeat: true, text: "done", usage: { input: 10, output: 1 } }
    ])
    expect(ran.code, ran.stderr).toBe(0)
    expect(cardOf(ran.stdout, "openai:gpt-4o-mini")).toMatchObject({ n: 1, meanReward: 1 })
    const [attempt] = records(home)
    const tools = attempt!.recording.filter((e) => e.kind === "tool/read").map((e) => [e.key, e.request.args.sql])
    expect(tools).toEqual([["query", "SELECT Currency, COUNT(*) FROM customers GROUP BY Currency"], ["submit_sql", GOLD_0]])
    const replay = await assay(["replay", "--home", home, "--json"])
    expect(replay.code, replay.stderr).toBe(0)
    expect(JSON.parse(replay.stdout)).toMatchObject({ replayed: 1, same: 1, differ: [], missing: [], spendUsd: 0 })
  }, 120_000)

  it("a model in one step (BIRD's prompt, one SQL out): the reply is the prediction, recorded as its submission, and replays the same", async () => {
    const home = tempDir()
    const ran = await runWithModel(home, "openai:gpt-4o-mini+text", [
      { match: { lastUser: "External Knowledge: ratio of customers" }, repeat: true, text: "SELECT COUNT(*) FROM customers", usage: { input: 900, output: 10 } }
    ])
    expect(ran.code, ran.stderr).toBe(0)
    expect(cardOf(ran.stdout, "openai:gpt-4o-mini+text")).toMatchObject({ n: 1, meanReward: 0 })
    const [attempt] = records(home)
    expect(attempt!.recording.filter((e) => e.kind === "tool/read").map((e) => [e.key, e.request.args.sql])).toEqual([
      ["submit_sql", "SELECT COUNT(*) FROM customers"]
    ])
    expect(attempt!.recording.some((e) => e.kind === "model/generate")).toBe(true)
    const replay = await assay(["replay", "--home", home, "--json"])
    expect(replay.code, replay.stderr).toBe(0)
    expect(JSON.parse(replay.stdout)).toMatchObject({ replayed: 1, same: 1, differ: [], missing: [], spendUsd: 0 })
  }, 120_000)

  it("a pull --from a folder of databases (an unzipped minidev.zip) records their sha256, and the run then reads them, saying so", async () => {
    const data = tempDir("assay-bird-data-")
    const pulled = await assay(["data", "pull", "bird", "--from", process.env["ASSAY_DATA_DIR"]!], { ASSAY_DATA_DIR: data })
    expect(pulled.code, pulled.stderr).toBe(0)
    // Stand-ins for the real databases, laid out as minidev.zip unpacks (MINIDEV/dev_databases/<db>/<db>.sqlite).
    const zip = tempDir("assay-bird-minidev-")
    const ids = ["california_schools", "card_games", "codebase_community", "debit_card_specializing", "european_football_2", "financial", "formula_1", "student_club", "superhero", "thrombosis_prediction", "toxicology"]
    for (const id of ids) {
      mkdirSync(join(zip, "MINIDEV", "dev_databases", id), { recursive: true })
      copyFileSync(join(data, "bird", "fixture", id, `${id}.sqlite`), join(zip, "MINIDEV", "dev_databases", id, `${id}.sqlite`))
    }
    const real = await assay(["data", "pull", "bird", "--from", zip], { ASSAY_DATA_DIR: data })
    expect(real.code, real.stderr).toBe(0)
    const sums = readFileSync(join(data, "bird", "databases", "SHA256SUMS"), "utf8")
    expect(sums.split("\n").filter((l) => l !== "")).toHaveLength(11)
    expect(real.stdout).toContain("recorded (no published checksum)")
    const home = tempDir()
    const ran = await assay(["run", "--benchmark", "bird", "--candidate", "gold", "--task", TASKS[0]!, "--home", home, "--yes"], { ASSAY_DATA_DIR: data })
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout + ran.stderr).toContain("Ran on the real Mini-Dev databases")
    const [attempt] = records(home)
    const recorded = /^([0-9a-f]{64}) {2}debit_card_specializing\//m.exec(sums)?.[1]
    expect(attempt!.evidence).toMatchObject({ databases: "real", sha256: recorded })
    expect(attempt!.verdict.reward).toBe(1)
  }, 120_000)
})
