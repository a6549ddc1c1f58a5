import * as fs from "node:fs"
import * as path from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as LoopbackServer from "../../../src/testkit/LoopbackServer.ts"
import { assay, cardOf, tempDir } from "../../cli/support.ts"

describe("assay run --benchmark coding-repair", () => {
  it("gold scores 1 and echo 0 on a JavaScript and a Python task", async () => {
    const home = tempDir()
    const tasks = ["--task", "js-lru-cache", "--task", "py-roman"]
    const ran = await assay(["run", "--benchmark", "coding-repair", "--candidate", "gold", "--candidate", "echo", ...tasks, "--parallel", "2", "--yes", "--json", "--home", home])
    expect(ran.code, ran.stderr).toBe(0)
    const gold = cardOf(ran.stdout, "gold")
    const echo = cardOf(ran.stdout, "echo")
    expect([gold.n, gold.meanReward, gold.failures]).toEqual([2, 1, {}])
    expect([echo.n, echo.meanReward, echo.failures]).toEqual([2, 0, { "fail-to-pass": 2 }])
  })

  it("a model that reads the file, fixes it with a command and answers scores 1; the run replays with the server gone", async () => {
    const home = tempDir()
    const args = ["run", "--benchmark", "coding-repair", "--model", "openai:gpt-4o-mini", "--task", "py-intervals", "--home", home, "--yes", "--json"]
    const { ran, requests } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* LoopbackServer.start([
            { toolCalls: [{ name: "read_file", arguments: { path: "intervals.py" } }], usage: { input: 300, output: 20 } },
            {
              toolCalls: [{ name: "run_command", arguments: { command: "sed -i 's/start < merged/start <= merged/' intervals.py && python3 -m unittest discover -s tests -t ." } }],
              usage: { input: 400, output: 40 }
            },
            { text: "Touching intervals now merge.", usage: { input: 500, output: 10 } }
          ])
          const ran = yield* Effect.promise(() => assay(args, { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" }))
          return { ran, requests: server.requests() }
        })
      )
    )
    expect(ran.code, ran.stderr).toBe(0)
    const card = cardOf(ran.stdout, "openai:gpt-4o-mini")
    expect([card.n, card.meanReward, card.tokens]).toEqual([1, 1, { input: 1200, output: 70 }])
    // The model was offered the four tools, and saw the command's outcome before answering.
    const first = JSON.stringify(requests[0]?.body)
    for (const tool of ["list_files", "read_file", "write_file", "run_command"]) expect(first).toContain(tool)
    expect(JSON.stringify(requests[2]?.body)).toContain("files changed: intervals.py")
    const replayed = await assay(["replay", "--home", home, "--json"])
    expect(replayed.code, replayed.stderr).toBe(0)
    expect(JSON.parse(replayed.stdout)).toMatchObject({ replayed: 1, same: 1, differ: [], missing: [], spendUsd: 0 })
  })

  it("a model's command cannot read the user's key: it reaches neither the model server nor the store", async () => {
    const home = tempDir()
    const key = `sk-assay-leak-probe-${process.pid}-${Date.now()}`
    const args = ["run", "--benchmark", "coding-repair", "--model", "openai:gpt-4o-mini", "--task", "js-slugify", "--home", home, "--yes", "--json"]
    const probe = "cat /proc/$PPID/environ; cat /proc/1/environ; env; grep -rs OPENAI /proc/*/environ; cat /proc/*/cmdline"
    const { ran, requests } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* LoopbackServer.start([
            { toolCalls: [{ name: "run_command", arguments: { command: probe } }], usage: { input: 300, output: 20 } },
            { text: "Done.", usage: { input: 400, output: 10 } }
          ])
          const ran = yield* Effect.promise(() => assay(args, { OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: key }))
          return { ran, requests: server.requests() }
        })
      )
    )
    expect(ran.code, ran.stderr).toBe(0)
    // The command ran (its output went back to the model), and the key was in none of it.
    expect(JSON.stringify(requests[1]?.body)).toContain("exit code")
    expect(JSON.stringify(requests.map((r) => r.body))).not.toContain(key)
    const stored = fs.readdirSync(home, { recursive: true, encoding: "utf8" })
      .map((f) => path.join(home, f))
      .filter((f) => fs.statSync(f).isFile())
    expect(stored.length).toBeGreaterThan(0)
    for (const f of stored) expect([f, fs.readFileSync(f, "latin1").includes(key)]).toEqual([f, false])
  })

  it("without bubblewrap the run is refused with one line naming the package; --unsandboxed runs it and says so", async () => {
    const home = tempDir()
    const args = ["run", "--benchmark", "coding-repair", "--candidate", "gold", "--task", "js-slugify", "--home", home, "--yes", "--json"]
    const missing = { ASSAY_BWRAP: path.join(tempDir(), "no-bwrap") }
    const refused = await assay(args, missing)
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim().split("\n")).toHaveLength(1)
    expect(refused.stderr).toContain("apt-get install bubblewrap")
    expect(refused.stdout).toBe("")
    const accepted = await assay([...args, "--unsandboxed"], missing)
    expect(accepted.code, accepted.stderr).toBe(0)
    expect(cardOf(accepted.stdout, "gold").meanReward).toBe(1)
    expect(accepted.stderr).toContain("--unsandboxed")
  })
})
