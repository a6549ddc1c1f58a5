/**
 * Budgets that say what they will do: `--max-output-tokens` bounds what a model call asks for and
 * so what it reserves from `--max-usd`; `plan` says how many calls the cap covers and warns when
 * it cannot cover one; a run whose every cell the cap skipped exits 3, with one line. Against
 * the loopback server, as a user runs the command.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import * as Registry from "../../src/model/Registry.ts"
import { assay, tempDir } from "./support.ts"

const registry = Effect.runSync(Registry.fixture)

/** What the server answered, at gpt-4o-mini's list price from the usage it reported. */
const answeredUsd = (server: LoopbackServer.LoopbackServer): number => {
  const resolved = Registry.resolveIn(registry, "openai:gpt-4o-mini")
  if (Either.isLeft(resolved) || resolved.right.model.cost === undefined) throw new Error("no price for gpt-4o-mini")
  const cost = resolved.right.model.cost
  return server.requests()
    .filter((r) => r.method === "POST" && r.status === 200 && r.usage !== null)
    .reduce((sum, r) => sum + (r.usage!.input * cost.input + r.usage!.output * cost.output) / 1_000_000, 0)
}

/** The output bound a request asked for, in whichever field its wire API has. */
const boundOf = (body: unknown): number | undefined => {
  const b = body as { max_tokens?: number; max_output_tokens?: number; max_completion_tokens?: number }
  return b.max_output_tokens ?? b.max_completion_tokens ?? b.max_tokens
}

const posted = (server: LoopbackServer.LoopbackServer) => server.requests().filter((r) => r.method === "POST")

const envOf = (server: LoopbackServer.LoopbackServer) => ({ OPENAI_BASE_URL: server.openAiBaseUrl, OPENAI_API_KEY: "sk-test" })

const select = ["--benchmark", "ledger", "--model", "openai:gpt-4o-mini"]

describe("a spend cap too small for one call at the default output bound", { timeout: 120_000 }, () => {
  it.live("plan warns that --max-usd 0.001 cannot cover one call; run exits 3 with one line and sends nothing; --max-output-tokens 256 runs cells within the cap", () =>
    Effect.gen(function*() {
      const home = tempDir()
      const server = yield* LoopbackServer.start([{ repeat: true, text: "done", usage: { input: 400, output: 40 } }])
      const plan = yield* Effect.promise(() => assay(["plan", ...select, "--max-usd", "0.001", "--home", home], envOf(server)))
      expect(plan.code, plan.stderr).toBe(0)
      expect(plan.stdout).toMatch(/a call reserves at least \$0\.00\d+ \(its prompt and tools, output bound 8192 tokens, at list price\); at worst the cap covers 0 calls/)
      expect(plan.stdout).toContain("warning: --max-usd 0.001 cannot cover one call of openai:gpt-4o-mini on ledger")

      const run = yield* Effect.promise(() => assay(["run", ...select, "--max-usd", "0.001", "--home", home, "--yes", "--json"], envOf(server)))
      expect(run.code, run.stderr).toBe(3)
      const said = run.stderr.trim().split("\n").filter((l) => l.includes("stopped by budget"))
      expect(said).toHaveLength(1)
      expect(said[0]).toMatch(/^assay: stopped by budget: .*none ran; raise --max-usd or lower --max-output-tokens/)
      expect(run.stderr.trim().split("\n").at(-1)).toBe(said[0])
      expect(JSON.parse(run.stdout).cells.ran).toBe(0)
      expect(posted(server)).toHaveLength(0)

      const bounded = ["--max-output-tokens", "256", "--max-usd", "0.001"]
      const plan256 = yield* Effect.promise(() => assay(["plan", ...select, ...bounded, "--home", home], envOf(server)))
      expect(plan256.stdout).toMatch(/output bound 256 tokens, at list price\); at worst the cap covers 1 call \(/)
      expect(plan256.stdout).not.toContain("warning:")
      const ran = yield* Effect.promise(() => assay(["run", ...select, ...bounded, "--home", home, "--yes", "--json"], envOf(server)))
      expect(ran.code, ran.stderr).toBe(0)
      const report = JSON.parse(ran.stdout)
      expect(report.cells.ran).toBeGreaterThan(0)
      expect(posted(server).length).toBeGreaterThan(0)
      expect(posted(server).map((r) => boundOf(r.body))).toEqual(posted(server).map(() => 256))
      expect(answeredUsd(server)).toBeLessThanOrEqual(0.001)
      expect(report.spend.experimentUsd).toBeLessThanOrEqual(0.001)
    }).pipe(Effect.scoped))

  it.live("the flag at or above the default changes nothing (cells kept); below it the cells run again", () =>
    Effect.gen(function*() {
      const home = tempDir()
      const server = yield* LoopbackServer.start([{ repeat: true, text: "done", usage: { input: 100, output: 10 } }])
      const one = [...select, "--task", "ledger-01", "--home", home, "--yes", "--json"]
      const first = yield* Effect.promise(() => assay(["run", ...one], envOf(server)))
      expect(first.code, first.stderr).toBe(0)
      expect(JSON.parse(first.stdout).cells).toMatchObject({ ran: 1 })
      const same = yield* Effect.promise(() => assay(["run", ...one, "--max-output-tokens", "100000"], envOf(server)))
      expect(JSON.parse(same.stdout).cells).toMatchObject({ ran: 0, kept: 1 })
      const lower = yield* Effect.promise(() => assay(["run", ...one, "--max-output-tokens", "300"], envOf(server)))
      expect(JSON.parse(lower.stdout).cells).toMatchObject({ ran: 1, stale: 1 })
      expect(boundOf(posted(server).at(-1)!.body)).toBe(300)
    }).pipe(Effect.scoped))
})

describe("--max-output-tokens on a harness run", () => {
  it("is refused in one line: an agent CLI sets its own bound", async () => {
    const r = await assay(["plan", "--harness", "codex", "--max-output-tokens", "256", "--home", tempDir()])
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split("\n")).toEqual(["assay: --max-output-tokens bounds the built-in agent's calls (PROVIDER:MODEL); an agent CLI (--harness) sets its own"])
  })
})
