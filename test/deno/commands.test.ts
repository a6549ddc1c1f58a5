/**
 * The command under Deno (`deno task assay`, i.e. `deno run -A src/cli/main.ts` with the deno binary
 * of the `deno` npm package) and under Node (bin/assay.js run by `node`) on one home: the same
 * store file is written and read by both, and `report --json` prints the same document.
 */
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { bin, type Card, cardOf, type Result, root, tempDir } from "../cli/support.ts"

const deno = join(root, "node_modules", "deno", "deno")

const run = (command: string, args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}): Promise<Result> =>
  new Promise((done, fail) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ASSAY_DATA_DIR: process.env["ASSAY_DATA_DIR"] ?? "", NO_COLOR: "1", ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", fail)
    child.on("close", (code) => done({ code, stdout, stderr }))
  })

/** `deno task assay ARGS`, exactly as a user types it. */
const denoAssay = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => run(deno, ["task", "assay", ...args], env)
/** The command under Node: `node` from PATH, even when this suite itself runs under Deno. */
const nodeAssay = (args: ReadonlyArray<string>) => run("node", [bin, ...args])

interface RunJson {
  readonly cells: { readonly total: number; readonly ran: number; readonly kept: number; readonly stale: number }
  readonly scorecards: ReadonlyArray<Card>
}

const ledger = ["run", "--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--yes"]

describe("assay under Deno and Node on one home", { timeout: 300_000 }, () => {
  it("deno task assay run: gold 1, echo 0; again keeps every cell; report --json is the same under Deno and Node", async () => {
    const home = tempDir("assay-deno-")
    const first = await denoAssay([...ledger, "--home", home])
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toMatch(/^gold +20 +20 +1\.000 /m)
    expect(first.stdout).toMatch(/^echo +20 +20 +0\.000 /m)

    const again = await denoAssay([...ledger, "--json", "--home", home])
    expect(again.code, again.stderr).toBe(0)
    const doc = JSON.parse(again.stdout) as RunJson
    expect(doc.cells).toMatchObject({ total: 40, ran: 0, kept: 40, stale: 0 })
    expect(cardOf(again.stdout, "gold")).toMatchObject({ n: 20, meanReward: 1 })
    expect(cardOf(again.stdout, "echo")).toMatchObject({ n: 20, meanReward: 0 })

    const [underDeno, underNode] = await Promise.all([denoAssay(["report", "--home", home, "--json"]), nodeAssay(["report", "--home", home, "--json"])])
    expect(underDeno.code, underDeno.stderr).toBe(0)
    expect(underNode.code, underNode.stderr).toBe(0)
    expect(underDeno.stdout).toBe(underNode.stdout)
    expect(JSON.parse(underDeno.stdout)).toMatchObject({ cells: { total: 40 } })
  })

  it("a home Node ran is resumed under Deno, and replay and plan read it there", async () => {
    const home = tempDir("assay-deno-")
    const byNode = await nodeAssay([...ledger, "--json", "--home", home])
    expect(byNode.code, byNode.stderr).toBe(0)
    expect((JSON.parse(byNode.stdout) as RunJson).cells).toMatchObject({ total: 40, ran: 40 })

    const byDeno = await denoAssay([...ledger, "--json", "--home", home])
    expect(byDeno.code, byDeno.stderr).toBe(0)
    expect((JSON.parse(byDeno.stdout) as RunJson).cells).toMatchObject({ total: 40, ran: 0, kept: 40 })

    const replay = await denoAssay(["replay", "--home", home, "--json"])
    expect(replay.code, replay.stderr).toBe(0)
    const plan = await denoAssay(["plan", "--benchmark", "ledger", "--candidate", "gold", "--candidate", "echo", "--home", home])
    expect(plan.code, plan.stderr).toBe(0)
    expect(plan.stdout).toContain("cells: 40 (0 new, 40 kept, 0 stale)")
  })

  it("a harness run under Deno: the agent CLI (the fake codex, run by node) is spawned, judged and stored", async () => {
    const home = tempDir("assay-deno-")
    // The fake CLI as an installed agent CLI is: an executable in a bin folder, run by node.
    const binDir = tempDir("assay-deno-bin-")
    const fake = join(root, "test", "harness", "fake-harness.mjs")
    writeFileSync(join(binDir, "codex"), `#!/bin/sh\nexec node '${fake}' "$@"\n`, { mode: 0o755 })
    const script = join(tempDir("assay-deno-script-"), "script.json")
    writeFileSync(script, JSON.stringify({
      byPrompt: [
        { match: "You are grading", answer: "Right and to the point.\nSCORE: 8", usage: [{ input: 500, cached: 0, output: 20 }] },
        { match: "TCP port", answer: "Port 8443", usage: [{ input: 1000, cached: 0, output: 100 }] }
      ]
    }))
    const env = { PATH: "/usr/bin:/bin", ASSAY_HARNESS_BIN_DIRS: binDir, FAKE_HARNESS_SCRIPT: script }
    const model = "codex:gpt-4o-mini-2024-07-18"
    const r = await denoAssay(["run", "--harness", "codex", "--model", model, "--task", "config-port", "--yes", "--json", "--home", home], env)
    expect(r.code, r.stderr).toBe(0)
    // correctness 1 and the judge's 8 of 10: 0.9, as under Node (test/cli/harness.test.ts).
    expect(cardOf(r.stdout, `harness:${model}`)).toMatchObject({ n: 1, tokens: { input: 1000, output: 100 } })
    expect(cardOf(r.stdout, `harness:${model}`).meanReward).toBeCloseTo(0.9, 10)
    const [underDeno, underNode] = await Promise.all([denoAssay(["report", "--home", home, "--json"], env), nodeAssay(["report", "--home", home, "--json"])])
    expect(underDeno.code, underDeno.stderr).toBe(0)
    expect(underDeno.stdout).toBe(underNode.stdout)
  })

  it("a benchmark given by path runs under Deno, its import of \"assay\" resolved to the sources (deno.json)", async () => {
    const home = tempDir("assay-deno-")
    const r = await denoAssay(["run", "--benchmark", "./examples/counter/index.ts", "--candidate", "gold", "--yes", "--json", "--home", home])
    expect(r.code, r.stderr).toBe(0)
    expect((JSON.parse(r.stdout) as RunJson).cells).toMatchObject({ ran: 4 })
    expect(cardOf(r.stdout, "gold")).toMatchObject({ n: 4, meanReward: 1 })
  })
})
