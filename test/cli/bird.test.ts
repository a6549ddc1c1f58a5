/**
 * `bird` through the command: gold scores EX 1 and echo 0 on the fixtures, and a model in each
 * protocol (one step, tool loop) against the loopback server leaves its SQL in the recording and
 * replays to the same verdicts with the server gone.
 */
import { createHash } from "node:crypto"
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { createRequire } from "node:module"
import { join } from "node:path"
import { crc32, deflateRawSync } from "node:zlib"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
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

const DB_IDS = [
  "california_schools", "card_games", "codebase_community", "debit_card_specializing", "european_football_2", "financial",
  "formula_1", "student_club", "superhero", "thrombosis_prediction", "toxicology"
]
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** A zip of `entries` (deflated, no zip64), written here so the test needs no zip tool. */
const zipOf = (entries: ReadonlyArray<readonly [string, Uint8Array]>): Buffer => {
  const locals: Array<Buffer> = []
  const centrals: Array<Buffer> = []
  let offset = 0
  for (const [name, data] of entries) {
    const packed = deflateRawSync(data)
    const fileName = Buffer.from(name, "utf8")
    const head = Buffer.alloc(30)
    head.writeUInt32LE(0x04034b50, 0), head.writeUInt16LE(20, 4), head.writeUInt16LE(8, 8), head.writeUInt16LE(0x21, 12)
    head.writeUInt32LE(crc32(data), 14), head.writeUInt32LE(packed.length, 18), head.writeUInt32LE(data.length, 22), head.writeUInt16LE(fileName.length, 26)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0), central.writeUInt16LE(20, 4), central.writeUInt16LE(20, 6), central.writeUInt16LE(8, 10), central.writeUInt16LE(0x21, 14)
    central.writeUInt32LE(crc32(data), 16), central.writeUInt32LE(packed.length, 20), central.writeUInt32LE(data.length, 24)
    central.writeUInt16LE(fileName.length, 28), central.writeUInt32LE(offset, 42)
    locals.push(head, fileName, packed)
    centrals.push(central, fileName)
    offset += head.length + fileName.length + packed.length
  }
  const directory = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0), end.writeUInt16LE(entries.length, 8), end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(directory.length, 12), end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, directory, end])
}

/** Tiny stand-ins for the 11 databases: one table each; debit_card_specializing's answers question 0 (0.5 EUR per CZK). */
const tinyDatabases = (dir: string): ReadonlyMap<string, Uint8Array> => {
  type Db = { exec(sql: string): void; close(): void }
  const Database = createRequire(import.meta.url)("better-sqlite3") as new (path: string) => Db
  return new Map(DB_IDS.map((id) => {
    const path = join(dir, `${id}.sqlite`)
    const db = new Database(path)
    db.exec(id === "debit_card_specializing"
      ? "CREATE TABLE customers (CustomerID integer, Segment text, Currency text); INSERT INTO customers VALUES (1, 'SME', 'EUR'), (2, 'LAM', 'CZK'), (3, 'KAM', 'CZK')"
      : `CREATE TABLE tiny_${id} (x integer)`)
    db.close()
    return [id, new Uint8Array(readFileSync(path))] as const
  }))
}

/** Every file under `dir` with its sha256: what "the data folder is unchanged" compares. */
const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (sub: string) => {
    for (const name of readdirSync(join(dir, sub))) {
      const rel = sub === "" ? name : `${sub}/${name}`
      if (statSync(join(dir, rel)).isDirectory()) walk(rel)
      else out[rel] = sha256(new Uint8Array(readFileSync(join(dir, rel))))
    }
  }
  walk("")
  return out
}

/** A loopback HTTP server answering `routes` (path to body), for the length of `use`. */
const serving = async <A>(routes: Readonly<Record<string, Buffer>>, use: (base: string) => Promise<A>): Promise<A> => {
  const server = createServer((req, res) => {
    const body = routes[req.url ?? ""]
    if (body === undefined) {
      res.writeHead(404).end()
      return
    }
    res.writeHead(200, { "content-type": "application/zip", "content-length": String(body.length) }).end(body)
  })
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok))
  try {
    return await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  } finally {
    await new Promise<void>((ok) => server.close(() => ok()))
  }
}

describe("bird: assay data pull bird --real (minidev.zip from a loopback server)", () => {
  it("prints the sha256 it got; a wrong --sha256 or a zip without all 11 changes nothing; unpinned it installs and says how to pin; pinned, the run reads them", async () => {
    const parent = tempDir("assay-bird-real-")
    const data = join(parent, "data")
    const pulled = await assay(["data", "pull", "bird", "--from", process.env["ASSAY_DATA_DIR"]!], { ASSAY_DATA_DIR: data })
    expect(pulled.code, pulled.stderr).toBe(0)
    const tiny = tinyDatabases(tempDir("assay-bird-tiny-"))
    const entries = DB_IDS.map((id) => [`minidev/MINIDEV/dev_databases/${id}/${id}.sqlite`, tiny.get(id)!] as const)
    // What else minidev.zip holds is left where it is: other dialects, macOS resource forks.
    const decoys = [
      ["minidev/MINIDEV_mysql/BIRD_dev.sql", new TextEncoder().encode("-- mysql dump")],
      ["__MACOSX/minidev/MINIDEV/dev_databases/formula_1/._formula_1.sqlite", new Uint8Array([0, 5, 22, 7])]
    ] as const
    const zip = zipOf([...entries, ...decoys])
    const zipSha = sha256(zip)
    const partial = zipOf(entries.filter(([name]) => !name.includes("/toxicology/")))
    const before = snapshot(data)

    await serving({ "/minidev.zip": zip, "/partial.zip": partial }, async (base) => {
      const wrong = "0".repeat(64)
      const mismatch = await assay(["data", "pull", "bird", "--real", "--url", `${base}/minidev.zip`, "--sha256", wrong], { ASSAY_DATA_DIR: data })
      expect(mismatch.code).not.toBe(0)
      const errorLines = mismatch.stderr.split("\n").filter((l) => l.includes(zipSha))
      expect(errorLines).toHaveLength(1)
      expect(errorLines[0]).toContain(wrong)
      expect(errorLines[0]).toContain("the data folder is unchanged")
      expect(snapshot(data)).toEqual(before)

      const incomplete = await assay(["data", "pull", "bird", "--real", "--url", `${base}/partial.zip`], { ASSAY_DATA_DIR: data })
      expect(incomplete.code).not.toBe(0)
      expect(incomplete.stderr).toContain("toxicology")
      expect(snapshot(data)).toEqual(before)
      // Nothing half-written is left beside the data folder either.
      expect(readdirSync(parent)).toEqual(["data"])

      const unpinned = await assay(["data", "pull", "bird", "--real", "--url", `${base}/minidev.zip`], { ASSAY_DATA_DIR: data })
      expect(unpinned.code, unpinned.stderr).toBe(0)
      expect(unpinned.stdout).toContain(`sha256 ${zipSha}`)
      expect(unpinned.stdout).toContain("installed UNPINNED")
      expect(unpinned.stdout).toContain(`assay data pull bird --real --sha256 ${zipSha}`)
      expect(unpinned.stderr).toMatch(/downloaded: .* MiB \(100%\)/)
      expect(JSON.parse(readFileSync(join(data, "bird", "databases", "ORIGIN.json"), "utf8"))).toEqual({
        source: "download",
        url: `${base}/minidev.zip`,
        sha256: zipSha,
        pinned: false
      })

      const pinned = await assay(["data", "pull", "bird", "--real", "--url", `${base}/minidev.zip`, "--sha256", zipSha.toUpperCase()], { ASSAY_DATA_DIR: data })
      expect(pinned.code, pinned.stderr).toBe(0)
      expect(pinned.stdout).toContain(`pinned: minidev.zip matched --sha256 ${zipSha}`)
      expect(JSON.parse(readFileSync(join(data, "bird", "databases", "ORIGIN.json"), "utf8"))).toMatchObject({ sha256: zipSha, pinned: true })
    })

    const after = snapshot(data)
    expect(Object.keys(after).filter((p) => !(p in before)).sort()).toEqual(
      [...DB_IDS.map((id) => `bird/databases/${id}/${id}.sqlite`), "bird/databases/ORIGIN.json", "bird/databases/SHA256SUMS"].sort()
    )
    for (const id of DB_IDS) expect(after[`bird/databases/${id}/${id}.sqlite`]).toBe(sha256(tiny.get(id)!))
    expect(readFileSync(join(data, "bird", "databases", "SHA256SUMS"), "utf8")).toContain(`${sha256(tiny.get("debit_card_specializing")!)}  debit_card_specializing/debit_card_specializing.sqlite`)

    const home = tempDir()
    const ran = await assay(["run", "--benchmark", "bird", "--candidate", "gold", "--task", TASKS[0]!, "--home", home, "--yes"], { ASSAY_DATA_DIR: data })
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout + ran.stderr).toContain(`Ran on the real Mini-Dev databases (bird/databases/SHA256SUMS; downloaded from`)
    expect(ran.stdout + ran.stderr).toContain(`archive sha256 ${zipSha}, pinned by --sha256`)
    const [attempt] = records(home)
    expect(attempt!.evidence).toMatchObject({ databases: "real", sha256: sha256(tiny.get("debit_card_specializing")!) })
    expect(attempt!.verdict.reward).toBe(1)
  }, 180_000)

  it("--sha256 and --url without --real are a usage error, and --real with --from too", async () => {
    const data = tempDir("assay-bird-data-")
    const lone = await assay(["data", "pull", "bird", "--sha256", "0".repeat(64)], { ASSAY_DATA_DIR: data })
    expect(lone.code).toBe(2)
    expect(lone.stderr).toContain("--sha256 and --url go with --real")
    const both = await assay(["data", "pull", "bird", "--real", "--from", data], { ASSAY_DATA_DIR: data })
    expect(both.code).toBe(2)
    expect(readdirSync(data)).toEqual([])
  }, 60_000)
})
