import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { tasks } from "../../providers/ledger/tasks.ts"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { assay, tempDir } from "../cli/support.ts"

// ---------------------------------------------------------------------------------------------
// A tiny OTLP/HTTP receiver on loopback: it keeps every POST /v1/traces as it arrived.

interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

const receiver = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly server: Server; readonly received: Array<Received> }>((resume) => {
    const received: Array<Received> = []
    const server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        received.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") })
        res.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, received })))
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

/** A port nothing listens on. */
const closedPort = Effect.async<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

interface Span {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly attributes: Readonly<Record<string, unknown>>
  readonly status: { readonly code: number }
}

type AnyValue = { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean; arrayValue?: { values: Array<AnyValue> } }

const valueOf = (v: AnyValue): unknown =>
  v.arrayValue !== undefined
    ? v.arrayValue.values.map(valueOf)
    : v.intValue !== undefined
    ? Number(v.intValue)
    : v.stringValue ?? v.doubleValue ?? v.boolValue

/** Every span of the received OTLP JSON bodies, attributes as a record. */
const spansOf = (received: ReadonlyArray<Received>): ReadonlyArray<Span> =>
  received.flatMap((r) =>
    (JSON.parse(r.body) as {
      resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Omit<Span, "attributes"> & { attributes: Array<{ key: string; value: AnyValue }> }> }> }>
    }).resourceSpans.flatMap((rs) =>
      rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => ({ ...s, attributes: Object.fromEntries(s.attributes.map((a) => [a.key, valueOf(a.value)])) })))
    )
  )

/** Prose a model was sent (system prompt, instructions, messages, tool descriptions and outputs). */
const proseOf = (value: unknown): ReadonlyArray<string> =>
  typeof value === "string"
    ? value.length >= 20 && value.includes(" ") ? [value] : []
    : Array.isArray(value)
    ? value.flatMap(proseOf)
    : typeof value === "object" && value !== null
    ? Object.values(value).flatMap(proseOf)
    : []

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const picked = tasks.filter((t) => t.id === "ledger-01" || t.id === "ledger-02")

/** The loopback model plays each picked task's gold actions, then answers. */
const goldScript = picked.flatMap((task) => {
  const match = { lastUser: `^${escape(task.instruction)}$` }
  return [
    ...task.gold.map((action) => ({ match, toolCalls: [{ name: action.name, arguments: action.arguments }], usage: { input: 300, output: 25 } })),
    { match, text: task.answer ?? "Done.", usage: { input: 400, output: 10 } }
  ]
})

const KEY = "sk-secret-7f3a9c1e5b2d4f60"
const MODEL = "openai:gpt-4o-mini"

describe("tracing over OTLP/HTTP", { timeout: 300_000 }, () => {
  it("a model run sends assay.run, assay.attempt, assay.model and assay.tool spans with the cell, candidate, tokens and cost, and neither the key nor any prompt text", async () => {
    const home = tempDir("assay-otlp-")
    const { run, received, requests } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const collector = yield* receiver
          const model = yield* LoopbackServer.start(goldScript)
          const run = yield* Effect.promise(() =>
            assay(["run", "--benchmark", "ledger", ...picked.flatMap((t) => ["--task", t.id]), "--model", MODEL, "--yes", "--json", "--home", home], {
              OPENAI_BASE_URL: model.openAiBaseUrl,
              OPENAI_API_KEY: KEY,
              OTEL_EXPORTER_OTLP_ENDPOINT: collector.url
            })
          )
          // Read once the command has exited: what arrived was flushed before its exit.
          return { run, received: [...collector.received], requests: model.requests() }
        })
      )
    )
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    const card = report.scorecards.find((s: { stratum: string | null }) => s.stratum === null)
    expect(card).toMatchObject({ candidate: MODEL, n: 2, meanReward: 1 })

    expect(received.length).toBeGreaterThan(0)
    for (const r of received) {
      expect(r.path).toBe("/v1/traces")
      expect(r.headers["content-type"]).toMatch(/^application\/json/)
    }
    const spans = spansOf(received)
    // Only assay's own spans leave the process.
    expect(new Set(spans.map((s) => s.name))).toEqual(new Set(["assay.run", "assay.attempt", "assay.model", "assay.tool"]))
    const named = (name: string) => spans.filter((s) => s.name === name)
    const [runSpan, ...otherRuns] = named("assay.run")
    expect(otherRuns).toEqual([])
    const attempts = named("assay.attempt")
    const models = named("assay.model")
    const tools = named("assay.tool")

    // One trace: the run, its Attempts under it, each Attempt's model and tool calls under that.
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1)
    expect(runSpan!.parentSpanId ?? "").toBe("")
    for (const a of attempts) expect(a.parentSpanId).toBe(runSpan!.spanId)
    const attemptIds = new Set(attempts.map((a) => a.spanId))
    for (const s of [...models, ...tools]) expect(attemptIds.has(s.parentSpanId ?? "")).toBe(true)
    for (const s of spans) expect(s.status.code, s.name).not.toBe(2)

    expect(runSpan!.attributes).toMatchObject({
      "assay.run_id": report.runId,
      "assay.experiment_id": report.experimentId,
      "assay.benchmarks": ["ledger"],
      "assay.candidates": [MODEL],
      "assay.cells.total": 2,
      "assay.cells.ran": 2,
      "assay.cells.skipped": 0,
      "assay.spend.calls": requests.length
    })
    expect(runSpan!.attributes["assay.spend.run_usd"]).toBeCloseTo(card.costUsd, 10)

    expect(attempts.map((a) => a.attributes["assay.task"]).sort()).toEqual(["ledger-01", "ledger-02"])
    for (const a of attempts) {
      expect(a.attributes).toMatchObject({ "assay.benchmark": "ledger", "assay.candidate": MODEL, "assay.repetition": 0, "assay.reward": 1, "assay.ended": "finished", "assay.cost_known": true })
      expect(a.attributes["assay.environment_id"]).toMatch(/^sha256:[0-9a-f]{64}$/)
    }
    const sum = (xs: ReadonlyArray<Span>, key: string) => xs.reduce((n, s) => n + (s.attributes[key] as number), 0)
    const input = requests.reduce((n, r) => n + (r.usage?.input ?? 0), 0)
    const output = requests.reduce((n, r) => n + (r.usage?.output ?? 0), 0)
    expect(sum(attempts, "assay.tokens.input") + sum(attempts, "assay.tokens.cache_read")).toBe(input)
    expect(sum(attempts, "assay.tokens.output")).toBe(output)
    expect(sum(attempts, "assay.cost_usd")).toBeCloseTo(card.costUsd, 10)

    // One span per model call the server answered, each with what that call used and cost.
    expect(models.length).toBe(requests.length)
    for (const m of models) {
      expect(m.attributes).toMatchObject({ "assay.model.provider": "openai", "assay.model.role": "agent", "assay.error": false })
      // The model as sent: the registry's id for the alias.
      expect(m.attributes["assay.model.name"]).toMatch(/^gpt-4o-mini/)
      expect(m.attributes["assay.cost_usd"]).toBeGreaterThan(0)
    }
    expect(models.map((m) => m.attributes["assay.tokens.output"]).sort()).toEqual(requests.map((r) => r.usage?.output).sort())
    expect(sum(models, "assay.cost_usd")).toBeCloseTo(card.costUsd, 10)

    // One span per tool call of the gold actions.
    const gold = picked.flatMap((t) => t.gold.map((a) => a.name))
    expect(tools.map((t) => t.attributes["assay.tool.name"]).sort()).toEqual([...gold].sort())
    for (const t of tools) {
      expect(t.attributes["assay.tool.kind"]).toBe(t.attributes["assay.tool.name"] === "find_accounts" ? "tool/read" : "tool/write")
      expect(t.attributes["assay.tool.error"]).toBe(false)
    }

    // Neither the key nor a word the model was sent, anywhere in what the collector received.
    const everything = received.map((r) => JSON.stringify(r.headers) + r.body).join("\n")
    expect(everything).not.toContain(KEY)
    expect(everything).not.toContain("sk-secret")
    const prose = [...new Set(requests.flatMap((r) => proseOf(r.body)))]
    expect(prose.length).toBeGreaterThan(0)
    for (const task of picked) expect(prose).toContain(task.instruction)
    for (const text of prose) {
      expect(everything.includes(text) || everything.includes(JSON.stringify(text).slice(1, -1)), text).toBe(false)
    }
  })

  it("a model call the server refuses, quoting the key, is an assay.model span named by the failure's tag and reason: the key is still nowhere", async () => {
    const home = tempDir("assay-otlp-")
    const { run, received } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const collector = yield* receiver
          const model = yield* LoopbackServer.start([{ repeat: true, status: 401, text: `Incorrect API key provided: ${KEY}` }])
          const run = yield* Effect.promise(() =>
            assay(["run", "--benchmark", "ledger", "--task", "ledger-01", "--model", MODEL, "--yes", "--json", "--home", home], {
              OPENAI_BASE_URL: model.openAiBaseUrl,
              OPENAI_API_KEY: KEY,
              OTEL_EXPORTER_OTLP_ENDPOINT: collector.url
            })
          )
          return { run, received: [...collector.received] }
        })
      )
    )
    expect(run.code, run.stderr).toBe(0)
    const spans = spansOf(received)
    // A refused key is an outage, not retried: one call, one span.
    const [model, ...more] = spans.filter((s) => s.name === "assay.model")
    expect(more).toEqual([])
    expect(model!.attributes).toMatchObject({ "assay.model.role": "agent", "assay.error": true })
    expect(model!.status).toMatchObject({ code: 2, message: "EffectFault: unreachable" })
    const [attempt] = spans.filter((s) => s.name === "assay.attempt")
    expect(attempt!.attributes).toMatchObject({ "assay.reward": 0, "assay.ended": "fault" })
    const everything = received.map((r) => JSON.stringify(r.headers) + r.body).join("\n")
    expect(everything).not.toContain(KEY)
    expect(everything).not.toContain("Incorrect API key")
  })

  it("a collector that cannot be reached, or that takes the spans and never answers, costs the command at most the flush's 3-second timeout: it runs, prints, exits 0 and says nothing of it", async () => {
    const args = () => ["run", "--benchmark", "ledger", "--task", "ledger-01", "--candidate", "gold", "--yes", "--json", "--home", tempDir("assay-otlp-")]
    const timed = async (env: Record<string, string>) => {
      const started = Date.now()
      const run = await assay(args(), env)
      return { run, ms: Date.now() - started }
    }
    // A collector that accepts the connection and the request, and never answers.
    const sockets = new Set<Socket>()
    const silent = createNetServer((socket) => {
      sockets.add(socket)
      socket.on("data", () => {})
      socket.on("close", () => sockets.delete(socket))
    })
    const silentPort = await new Promise<number>((ok) => silent.listen(0, "127.0.0.1", () => ok((silent.address() as AddressInfo).port)))
    let connections = 0
    silent.on("connection", () => connections++)
    try {
      // The same run untraced, just before: what the command costs on this machine now.
      const baseline = await timed({})
      expect(baseline.run.code, baseline.run.stderr).toBe(0)
      const closed = await Effect.runPromise(closedPort)
      for (const endpoint of [`http://127.0.0.1:${closed}`, `http://127.0.0.1:${silentPort}`]) {
        const { run, ms } = await timed({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })
        expect(run.code, run.stderr).toBe(0)
        expect(JSON.parse(run.stdout).cells).toMatchObject({ total: 1, ran: 1 })
        expect(run.stderr).not.toMatch(/otlp|trace|ECONNREFUSED/i)
        // Beyond the untraced run, the flush's 3 s timeout at most, with room for a loaded machine's
        // noise: a flush that waited on the silent collector for its answer would not end at all.
        expect(ms - baseline.ms, `${endpoint}: ${ms} ms against ${baseline.ms} ms untraced`).toBeLessThan(3_000 + 7_000)
      }
      // The silent collector was tried: its wait is what the bound above is about.
      expect(connections).toBeGreaterThan(0)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((ok) => silent.close(() => ok()))
    }
  })

  it("an endpoint that is not a URL is said in one line, and the command runs untraced", async () => {
    const home = tempDir("assay-otlp-")
    const run = await assay(["run", "--benchmark", "ledger", "--task", "ledger-01", "--candidate", "gold", "--yes", "--json", "--home", home], {
      OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:4318"
    })
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout).cells).toMatchObject({ total: 1, ran: 1 })
    expect(run.stderr).toContain(`assay: the OTLP endpoint "localhost:4318/v1/traces" is not an http(s) URL: no traces are sent\n`)
  })
})
