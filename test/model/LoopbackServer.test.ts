import { describe, expect, it } from "@effect/vitest"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"
import { tempDir } from "../support/tempDirs.ts"
import { sseData } from "../../src/model/Clients.ts"

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body)
    })
    return { status: response.status, headers: response.headers, text: await response.text() }
  })

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "m1",
  messages: [{ role: "system", content: "You are terse." }, { role: "user", content }],
  ...extra
})

const contentOf = (text: string): unknown => (JSON.parse(text) as { choices: Array<{ message: { content: unknown } }> }).choices[0]?.message.content

describe("LoopbackServer", () => {
  it.scopedLive("turns are consumed in order among those that match; a repeat turn answers every time", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start({
        turns: [
          { match: { lastUser: "^weather" }, text: "first weather" },
          { match: { lastUser: "^weather" }, text: "second weather" },
          { text: "fallback", repeat: true }
        ]
      })
      const url = `${server.openAiBaseUrl}/chat/completions`
      const answers: Array<unknown> = []
      for (const q of ["hello", "weather?", "weather again", "weather thrice"]) {
        answers.push(contentOf((yield* post(url, chat(q))).text))
      }
      expect(answers).toEqual(["fallback", "first weather", "second weather", "fallback"])
      expect(server.pendingTurns()).toEqual([])
      expect(server.requests().map((r) => r.turn)).toEqual([2, 0, 1, 2])
    }))

  it.scopedLive("a default turn answers only when no other turn matches, wherever it stands", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([
        { default: true, text: "default" },
        { match: { model: "gpt-4o-mini" }, text: "scripted" }
      ])
      const url = `${server.openAiBaseUrl}/chat/completions`
      const first = contentOf((yield* post(url, { ...chat("hi"), model: "gpt-4o-mini-2024-07-18" })).text)
      const second = contentOf((yield* post(url, { ...chat("hi"), model: "gpt-4o-mini-2024-07-18" })).text)
      expect([first, second]).toEqual(["scripted", "default"])
    }))

  it.scopedLive("the log records the usage the server reported for each answered request", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([
        { text: "a", usage: { input: 12, output: 3, cacheRead: 1 } },
        { status: 500 }
      ])
      yield* post(`${server.openAiBaseUrl}/responses`, { model: "m", input: "hi" })
      yield* post(`${server.openAiBaseUrl}/responses`, { model: "m", input: "hi" })
      expect(server.requests().map((r) => r.usage)).toEqual([{ input: 12, output: 3, cacheRead: 1, cacheWrite: 0 }, null])
    }))

  it.scopedLive("Claude Code's token count endpoint is answered", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([])
      const response = yield* post(`${server.anthropicBaseUrl}/v1/messages/count_tokens?beta=true`, { model: "c", messages: [] })
      expect(response.status).toBe(200)
      expect((JSON.parse(response.text) as { input_tokens: number }).input_tokens).toBeGreaterThan(0)
    }))

  it.scopedLive("a turn can be matched by model, system prompt regex and wire API", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([
        { match: { model: "other" }, text: "for other" },
        { match: { system: "terse", api: "openai-chat" }, text: "for terse chat" }
      ])
      const response = yield* post(`${server.openAiBaseUrl}/chat/completions`, chat("hi"))
      expect(contentOf(response.text)).toBe("for terse chat")
      expect(server.pendingTurns()).toEqual([0])
    }))

  it.scopedLive("a request no turn matches gets a 400 that names it, so clients do not retry", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([{ match: { lastUser: "never" }, text: "x" }])
      const response = yield* post(`${server.openAiBaseUrl}/chat/completions`, chat("hello"))
      expect(response.status).toBe(400)
      expect(response.text).toContain("no turn")
      expect(server.requests()[0]).toMatchObject({ turn: null, status: 400 })
    }))

  it.scopedLive("scripted status and extra headers are answered as given", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([
        { status: 429, text: "slow down", headers: { "retry-after": "3" } },
        { text: "ok", headers: { "x-codex-primary-used-percent": "42" } }
      ])
      const limited = yield* post(`${server.anthropicBaseUrl}/v1/messages`, { model: "c", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
      expect(limited.status).toBe(429)
      expect(limited.headers.get("retry-after")).toBe("3")
      expect(JSON.parse(limited.text)).toEqual({ type: "error", error: { type: "rate_limit_error", message: "slow down" } })
      const ok = yield* post(`${server.openAiBaseUrl}/responses`, { model: "m", input: "hi" })
      expect(ok.headers.get("x-codex-primary-used-percent")).toBe("42")
    }))

  it.scopedLive("Claude Code's HEAD / probe is answered and logged", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([])
      const status = yield* Effect.promise(() => fetch(server.url, { method: "HEAD" }).then((r) => r.status))
      expect(status).toBe(200)
      expect(server.requests()[0]).toMatchObject({ method: "HEAD", path: "/" })
    }))

  it.scopedLive("the Responses body has every field @effect/ai-openai decodes, and OpenAI-style usage", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([{ text: "hi", usage: { input: 10, output: 2, cacheRead: 6 } }])
      const response = yield* post(`${server.openAiBaseUrl}/responses`, { model: "gpt-4o-mini", input: "hello", instructions: "be kind" })
      const body = JSON.parse(response.text) as Record<string, unknown>
      for (const field of ["id", "object", "created_at", "model", "output", "error", "incomplete_details", "instructions", "parallel_tool_calls", "tools", "tool_choice", "metadata", "temperature", "top_p", "usage"]) {
        expect(body, field).toHaveProperty(field)
      }
      expect(body["instructions"]).toBe("be kind")
      // OpenAI counts cached tokens inside input_tokens.
      expect(body["usage"]).toMatchObject({ input_tokens: 16, input_tokens_details: { cached_tokens: 6 }, output_tokens: 2, total_tokens: 18 })
    }))

  it.scopedLive("a Responses stream ends with response.completed carrying the usage", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([{ text: "streamed", usage: { input: 5, output: 4 } }])
      const response = yield* post(`${server.openAiBaseUrl}/responses`, { model: "m", input: "hi", stream: true })
      const events = sseData(response.text).map((d) => JSON.parse(d) as { type: string; sequence_number: number; response?: { usage: unknown } })
      expect(events[0]?.type).toBe("response.created")
      const last = events[events.length - 1]
      expect(last?.type).toBe("response.completed")
      expect(last?.response?.usage).toMatchObject({ input_tokens: 5, output_tokens: 4 })
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    }))

  it.scopedLive("a chat stream reports usage only when stream_options.include_usage asks, as OpenAI does", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([{ text: "a", repeat: true, usage: { input: 5, output: 1 } }])
      const url = `${server.openAiBaseUrl}/chat/completions`
      const without = yield* post(url, chat("hi", { stream: true }))
      const withUsage = yield* post(url, chat("hi", { stream: true, stream_options: { include_usage: true } }))
      expect(without.text.trim().endsWith("data: [DONE]")).toBe(true)
      expect(without.text).not.toContain("prompt_tokens")
      const last = JSON.parse(sseData(withUsage.text).at(-1) ?? "{}") as { usage?: unknown }
      expect(last.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 })
    }))

  it.scopedLive("scripted reasoning tokens are part of output for OpenAI, and counted beside the candidates for Gemini", () =>
    Effect.gen(function*() {
      const usage = { input: 10, output: 7, cacheRead: 4, reasoning: 5 }
      const server = yield* LoopbackServer.start([{ text: "ok", repeat: true, usage }])
      const chatBody = JSON.parse((yield* post(`${server.openAiBaseUrl}/chat/completions`, chat("hi"))).text) as { usage: unknown }
      expect(chatBody.usage).toMatchObject({ prompt_tokens: 14, completion_tokens: 7, completion_tokens_details: { reasoning_tokens: 5 } })
      const responses = JSON.parse((yield* post(`${server.openAiBaseUrl}/responses`, { model: "m1", input: "hi" })).text) as { usage: unknown }
      expect(responses.usage).toMatchObject({ output_tokens: 7, output_tokens_details: { reasoning_tokens: 5 } })
      const gemini = yield* post(`${server.googleBaseUrl}/models/g1:streamGenerateContent?alt=sse`, { contents: [{ role: "user", parts: [{ text: "hi" }] }] })
      const last = JSON.parse(sseData(gemini.text).at(-1) ?? "{}") as { usageMetadata?: unknown }
      expect(last.usageMetadata).toEqual({ promptTokenCount: 14, candidatesTokenCount: 2, cachedContentTokenCount: 4, thoughtsTokenCount: 5, totalTokenCount: 21 })
      expect(server.requests().map((r) => r.usage)).toEqual([0, 1, 2].map(() => ({ input: 10, output: 7, cacheRead: 4, cacheWrite: 0 })))
    }))

  it.scopedLive("an Anthropic stream has input usage in message_start and output usage in message_delta", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([{ text: "hey", usage: { input: 9, output: 3, cacheRead: 2, cacheWrite: 1 } }])
      const response = yield* post(`${server.anthropicBaseUrl}/v1/messages?beta=true`, { model: "c", max_tokens: 10, stream: true, messages: [{ role: "user", content: "hi" }] })
      expect(response.text).toContain("event: message_start")
      const events = sseData(response.text).map((d) => JSON.parse(d) as Record<string, unknown>)
      const start = events.find((e) => e["type"] === "message_start") as { message: { usage: unknown } }
      const delta = events.find((e) => e["type"] === "message_delta") as { usage: unknown }
      expect(start.message.usage).toMatchObject({ input_tokens: 9, cache_read_input_tokens: 2, cache_creation_input_tokens: 1 })
      expect(delta.usage).toEqual({ output_tokens: 3 })
      expect(events.at(-1)?.["type"]).toBe("message_stop")
    }))

  it.scopedLive("without scripted usage the counts are a deterministic function of the request and the reply", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([{ text: "twelve chars", repeat: true }])
      const url = `${server.openAiBaseUrl}/chat/completions`
      const a = JSON.parse((yield* post(url, chat("same"))).text) as { usage: unknown }
      const b = JSON.parse((yield* post(url, chat("same"))).text) as { usage: unknown }
      expect(a.usage).toEqual(b.usage)
      expect(a.usage).toMatchObject({ completion_tokens: 3 })
    }))

  it.scopedLive("the request log redacts credentials", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.start([{ text: "ok", repeat: true }])
      yield* post(`${server.openAiBaseUrl}/responses`, { model: "m", input: "hi" }, { authorization: "Bearer sk-test-SECRET123" })
      yield* post(`${server.anthropicBaseUrl}/v1/messages`, { model: "c", max_tokens: 5, messages: [] }, { "x-api-key": "sk-test-SECRET123" })
      const log = server.requests()
      expect(log[0]?.headers["authorization"]).toBe("[redacted]")
      expect(log[1]?.headers["x-api-key"]).toBe("[redacted]")
      expect(JSON.stringify(log)).not.toContain("SECRET123")
    }))

  it.scopedLive("a script can be a JSON file; a malformed script fails with LoopbackError", () =>
    Effect.gen(function*() {
      const dir = tempDir("assay-loopback-")
      const file = join(dir, "script.json")
      writeFileSync(file, JSON.stringify([{ text: "from file" }]))
      const server = yield* LoopbackServer.start(file)
      expect(contentOf((yield* post(`${server.openAiBaseUrl}/chat/completions`, chat("hi"))).text)).toBe("from file")
      const bad = yield* Effect.flip(LoopbackServer.start({ turns: [{ usage: { input: "many" } }] } as never))
      expect(bad).toMatchObject({ _tag: "LoopbackError", reason: "script-invalid" })
      const missing = yield* Effect.flip(LoopbackServer.start(join(dir, "none.json")))
      expect(missing).toMatchObject({ _tag: "LoopbackError", reason: "script-unreadable" })
    }))

  it.effect("the shipped demo script decodes", () =>
    Effect.gen(function*() {
      const script = yield* LoopbackServer.loadScript("fixtures/loopback/demo.json")
      expect(script.turns.length).toBe(3)
    }))

  it.live("closing the scope stops the server", () =>
    Effect.gen(function*() {
      const url = yield* Effect.scoped(Effect.map(LoopbackServer.start([]), (s) => s.url))
      const refused = yield* Effect.promise(() => fetch(url, { method: "HEAD" }).then(() => false, () => true))
      expect(refused).toBe(true)
    }))
})
