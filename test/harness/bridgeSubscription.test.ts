/**
 * A bridged harness on the user's subscription login (`harness:claude:subscription,…`), run for
 * real (the pinned Claude Code in tools/harnesses) from the command: the CLI runs on a fake
 * claude.ai login in a test HOME, the proxy forwards its own Authorization unchanged to the
 * "vendor" (a small server here in front of the loopback model server), reads the vendor's
 * quota headers on each answer, and starts no cell past `pause-at`. The credential is never kept.
 */
import { randomBytes } from "node:crypto"
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { assay, tempDir } from "../cli/support.ts"

const TOKEN = `sk-ant-oat01-assay-test-${randomBytes(12).toString("hex")}`

/** A claude.ai login as Claude Code stores it, in a test HOME (never the user's ~/.claude). */
const fakeHome = (): string => {
  const home = tempDir("assay-subscription-home-")
  mkdirSync(join(home, ".claude"), { recursive: true })
  const claudeAiOauth = {
    accessToken: TOKEN,
    refreshToken: "sk-ant-ort01-loopback",
    // Far ahead: an expiring token would be refreshed against claude.ai.
    expiresAt: 4_102_444_800_000,
    // Inference only: Claude Code then asks claude.ai for no profile.
    scopes: ["user:inference"],
    subscriptionType: "max"
  }
  writeFileSync(join(home, ".claude", ".credentials.json"), JSON.stringify({ claudeAiOauth }), { mode: 0o600 })
  return home
}

interface Seen {
  readonly authorization: string | undefined
  readonly apiKey: string | undefined
  readonly account: string | undefined
  readonly utilization: number
}

/** Anthropic's unified-limit headers: the session window at `utilization` (0..1). */
const anthropicQuota = (utilization: number): Record<string, string> => {
  const reset = String(Math.floor(Date.now() / 1000) + 3600)
  return {
    "anthropic-ratelimit-unified-status": "allowed",
    "anthropic-ratelimit-unified-representative-claim": "five_hour",
    "anthropic-ratelimit-unified-5h-utilization": String(utilization),
    "anthropic-ratelimit-unified-5h-reset": reset,
    "anthropic-ratelimit-unified-7d-utilization": "0.05",
    "anthropic-ratelimit-unified-7d-reset": reset
  }
}

/** codex's ChatGPT quota headers: the primary window at `utilization` (0..1), in percent. */
const codexQuota = (utilization: number): Record<string, string> => ({
  "x-codex-primary-used-percent": String(utilization * 100),
  "x-codex-primary-window-minutes": "300",
  "x-codex-secondary-used-percent": "5",
  "x-codex-secondary-window-minutes": "10080"
})

/**
 * The vendor: takes each call's credential (as received), passes the call on to the loopback
 * model server, and answers with the session window's utilization rising 10 points a call from 30%.
 */
const vendor = (upstream: string, quota: (utilization: number) => Record<string, string> = anthropicQuota) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly seen: Array<Seen>; readonly close: () => void }>((resume) => {
      const seen: Array<Seen> = []
      const read = (req: IncomingMessage) =>
        new Promise<string>((done) => {
          const chunks: Array<Buffer> = []
          req.on("data", (c: Buffer) => chunks.push(c))
          req.on("end", () => done(Buffer.concat(chunks).toString("utf8")))
        })
      const server = createServer((req, res) => {
        void (async () => {
          const body = await read(req)
          const utilization = Math.round((0.3 + 0.1 * seen.length) * 100) / 100
          const header = (name: string) => (typeof req.headers[name] === "string" ? (req.headers[name] as string) : undefined)
          seen.push({ authorization: header("authorization"), apiKey: header("x-api-key"), account: header("chatgpt-account-id"), utilization })
          const answered = await fetch(`${upstream}${req.url ?? "/"}`, {
            method: req.method ?? "POST",
            headers: { "content-type": "application/json", "anthropic-version": header("anthropic-version") ?? "2023-06-01", "x-api-key": "loopback", authorization: "Bearer loopback" },
            ...(body.length > 0 ? { body } : {})
          })
          res.writeHead(answered.status, { "content-type": answered.headers.get("content-type") ?? "application/json", ...quota(utilization) }).end(await answered.text())
        })()
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, seen, close: () => server.close() }))
      })
    }),
    (v) => Effect.sync(() => v.close())
  )

/** Every file under a folder, recursively. */
const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? filesUnder(p) : [p]
  })

describe("a harness on the user's subscription login", { timeout: 600_000 }, () => {
  it("harness:claude:subscription: the vendor gets exactly the CLI's login, the quota headers meter the allowance, the cell past pause-at is skipped, and the token is kept nowhere", async () => {
    const home = tempDir()
    const login = fakeHome()
    const script = [
      { match: { system: "User Simulation Guidelines", lastUser: "Hello, how can I help" }, text: "###STOP###", usage: { input: 1000, output: 5 }, repeat: true },
      { match: { system: "User Simulation Guidelines" }, text: "Hi, I want to return something.", usage: { input: 1000, output: 20 }, repeat: true },
      { text: "Hello, how can I help?", usage: { input: 4000, output: 14 }, repeat: true }
    ]
    const { run, seen, requests } = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const server = yield* LoopbackServer.start(script)
      const v = yield* vendor(server.anthropicBaseUrl)
      const run = yield* Effect.promise(() =>
        assay([
          "run", "--benchmark", "tau2-retail", "--candidate", "harness:claude:subscription,share=0.9,pause-at=0.45",
          "--task", "0", "--task", "1", "--task", "2", "--task", "3", "--task", "4", "--task", "5",
          "--parallel", "1", "--yes", "--json", "--home", home
        ], {
          // The user's login (HOME/.claude), their ANTHROPIC_BASE_URL (the vendor); no Anthropic key at all.
          HOME: login,
          ANTHROPIC_BASE_URL: v.url,
          OPENAI_BASE_URL: server.openAiBaseUrl,
          OPENAI_API_KEY: "sk-test-not-a-key"
        })
      )
      return { run, seen: [...v.seen], requests: server.requests() }
    })))
    expect(run.code, run.stderr.slice(-2000)).toBe(0)
    // Every call the vendor got carried the CLI's login, unchanged, and no key.
    expect(seen.length, run.stderr.slice(-2000)).toBeGreaterThan(0)
    for (const s of seen) expect({ authorization: s.authorization, apiKey: s.apiKey }).toEqual({ authorization: `Bearer ${TOKEN}`, apiKey: undefined })
    // The agent's calls reached the model server only through the vendor.
    expect(requests.filter((r) => r.api === "anthropic-messages" && r.status === 200).length).toBe(seen.length)

    const doc = JSON.parse(run.stdout) as { runId: string; cells: { ran: number; skipped: number }; skipped: ReadonlyArray<{ task: string; reason: string }> }
    // Metered from what the proxy saw: the newest reading past 45% stopped the cells after it.
    const last = seen.at(-1)!.utilization * 100
    expect(last).toBeGreaterThanOrEqual(45)
    expect(seen.slice(0, -1).every((s) => s.utilization * 100 < 45) || seen.length === 1).toBe(true)
    expect(doc.cells.ran).toBeGreaterThan(0)
    expect(doc.cells.skipped).toBeGreaterThan(0)
    expect(doc.cells.ran + doc.cells.skipped).toBe(6)
    for (const s of doc.skipped) expect(s.reason).toContain(`quota: the five_hour window is ${last}% used (pause at 45%)`)

    const report = await assay(["report", "--json", "--cells", "--home", home])
    expect(report.code, report.stderr).toBe(0)
    const cells = (JSON.parse(report.stdout) as { cellResults: ReadonlyArray<{ candidate: string }> }).cellResults
    expect(cells.map((c) => c.candidate)).toEqual(Array.from({ length: doc.cells.ran }, () => "harness:claude:subscription"))
    // The credential is nowhere assay keeps or prints: the store, results.jsonl (the recorded
    // effects), the report, the run's output.
    const kept = filesUnder(home)
    expect(kept.some((f) => f.endsWith("results.jsonl"))).toBe(true)
    for (const f of kept) expect(readFileSync(f).includes(TOKEN), f).toBe(false)
    for (const text of [run.stdout, run.stderr, report.stdout, report.stderr]) expect(text.includes(TOKEN)).toBe(false)
    // The recorded model calls name the model as a subscription's (no list price).
    const results = kept.filter((f) => f.endsWith("results.jsonl")).map((f) => readFileSync(f, "utf8")).join("")
    expect(results).toContain("@subscription")
    // The scorecard counts the tokens and leaves the cost unknown: a subscription's call has no list price.
    expect((JSON.parse(run.stdout) as { scorecards: ReadonlyArray<{ costUsd: number | null }> }).scorecards.map((c) => c.costUsd)).toEqual([null])

    // Offline: no vendor, no login, no CLI; the recording answers.
    const replay = await assay(["replay", "--json", "--home", home], { ASSAY_HARNESS_BIN_DIRS: "", PATH: "/usr/bin:/bin" })
    expect(replay.code, replay.stderr).toBe(0)
    expect(JSON.parse(replay.stdout)).toMatchObject({ replayed: doc.cells.ran, same: doc.cells.ran, differ: [], missing: [] })
  })

  it("a login given as CLAUDE_CODE_OAUTH_TOKEN reaches the vendor unchanged too, is kept nowhere, and spends nothing of --max-usd", async () => {
    const home = tempDir()
    const empty = tempDir("assay-subscription-home-")
    const token = `sk-ant-oat01-assay-env-${randomBytes(12).toString("hex")}`
    // BFCL's irrelevance task: no user simulator, one answer in words scores 1.
    const script = [{ text: "None of the functions fits this request.", usage: { input: 4000, output: 14 }, repeat: true }]
    // A cap below what one call of the same model reserves at list price.
    const command = (candidate: string) => ["run", "--benchmark", "bfcl", "--candidate", candidate, "--task", "irrelevance_0", "--max-usd", "0.01", "--yes", "--json", "--home", home]
    const { run, seen, priced } = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const server = yield* LoopbackServer.start(script)
      const v = yield* vendor(server.anthropicBaseUrl)
      const run = yield* Effect.promise(() =>
        assay(command("harness:claude:subscription"), { HOME: empty, CLAUDE_CODE_OAUTH_TOKEN: token, ANTHROPIC_BASE_URL: v.url })
      )
      const seen = [...v.seen]
      // The same CLI on assay's key: its call is priced, and the cap refuses it.
      const priced = yield* Effect.promise(() =>
        assay(command("harness:claude"), { HOME: empty, ANTHROPIC_BASE_URL: server.anthropicBaseUrl, ANTHROPIC_API_KEY: "sk-ant-test-not-a-key" })
      )
      return { run, seen, priced }
    })))
    expect(run.code, run.stderr.slice(-2000)).toBe(0)
    expect(seen.length).toBeGreaterThan(0)
    for (const s of seen) expect({ authorization: s.authorization, apiKey: s.apiKey }).toEqual({ authorization: `Bearer ${token}`, apiKey: undefined })
    const doc = JSON.parse(run.stdout) as { cells: { ran: number }; scorecards: ReadonlyArray<{ meanReward: number; costUsd: number | null }> }
    expect(doc.cells.ran).toBe(1)
    expect(doc.scorecards.map((c) => [c.meanReward, c.costUsd])).toEqual([[1, null]])
    expect(priced.code).toBe(3)
    expect((JSON.parse(priced.stdout) as { skipped: ReadonlyArray<{ reason: string }> }).skipped.map((s) => s.reason)).toEqual([expect.stringMatching(/^spend cap/)])
    for (const f of filesUnder(home)) expect(readFileSync(f).includes(token), f).toBe(false)
    expect(run.stdout.includes(token) || run.stderr.includes(token)).toBe(false)
  })

  it("harness:codex:subscription: codex's ChatGPT login (token and account id) reaches the vendor unchanged, its x-codex-* headers meter the allowance, and the token is kept nowhere", async () => {
    const home = tempDir()
    const login = tempDir("assay-subscription-home-")
    const token = `codex-access-assay-test-${randomBytes(12).toString("hex")}`
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url")
    // An id token codex can read (its claims name the plan and the account); never sent anywhere real.
    const idToken = `${b64({ alg: "none", typ: "JWT" })}.${b64({ email: "t@example.com", "https://api.openai.com/auth": { chatgpt_plan_type: "plus", chatgpt_account_id: "acct-test" } })}.sig`
    mkdirSync(join(login, ".codex"), { recursive: true })
    writeFileSync(
      join(login, ".codex", "auth.json"),
      JSON.stringify({ OPENAI_API_KEY: null, tokens: { id_token: idToken, access_token: token, refresh_token: "r", account_id: "acct-test" }, last_refresh: new Date().toISOString() }),
      { mode: 0o600 }
    )
    const script = [{ text: "None of the functions fits this request.", usage: { input: 4000, output: 14 }, repeat: true }]
    const { run, seen } = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const server = yield* LoopbackServer.start(script)
      const v = yield* vendor(server.openAiBaseUrl, codexQuota)
      const run = yield* Effect.promise(() =>
        assay([
          "run", "--benchmark", "bfcl", "--candidate", "harness:codex:subscription,share=0.9,pause-at=0.45",
          "--task", "irrelevance_0", "--task", "irrelevance_1", "--task", "irrelevance_2", "--task", "irrelevance_3", "--task", "irrelevance_4",
          "--parallel", "1", "--yes", "--json", "--home", home
        ], { HOME: login, ASSAY_CHATGPT_BASE_URL: v.url })
      )
      return { run, seen: [...v.seen] }
    })))
    expect(run.code, run.stderr.slice(-2000)).toBe(0)
    expect(seen.length).toBeGreaterThan(0)
    for (const s of seen) expect({ authorization: s.authorization, account: s.account }).toEqual({ authorization: `Bearer ${token}`, account: "acct-test" })
    const doc = JSON.parse(run.stdout) as { cells: { ran: number; skipped: number }; skipped: ReadonlyArray<{ reason: string }> }
    const last = Math.round(seen.at(-1)!.utilization * 100)
    expect(last).toBeGreaterThanOrEqual(45)
    expect(doc.cells.ran).toBeGreaterThan(0)
    expect(doc.cells.skipped).toBeGreaterThan(0)
    for (const s of doc.skipped) expect(s.reason).toContain(`quota: the primary window is ${last}% used (pause at 45%)`)
    for (const f of filesUnder(home)) expect(readFileSync(f).includes(token), f).toBe(false)
    expect(run.stdout.includes(token) || run.stderr.includes(token)).toBe(false)
  })
})
