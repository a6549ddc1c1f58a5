import { describe, expect, it } from "@effect/vitest"
import { projectSlug } from "../../src/harness/adapters/claude.ts"
import { adapters, claude, codex, gemini, opencode, pi, qwen } from "../../src/harness/adapters/index.ts"
import { type CapturedOutput, harnessNames, type InvocationInput, isTranscriptError } from "../../src/harness/Harness.ts"

const input: InvocationInput = {
  prompt: "Do the thing",
  model: "m-1",
  endpoint: { baseUrl: "http://127.0.0.1:4000/", apiKey: "sk-secret" },
  workDir: "/tmp/run/work",
  stateDir: "/tmp/run/state"
}
const out = (stdout: string, sessionFiles: ReadonlyArray<string> = []): CapturedOutput => ({ stdout, stderr: "", sessionFiles })
const lines = (...xs: ReadonlyArray<unknown>) => xs.map((x) => JSON.stringify(x)).join("\n")

describe("adapter invocations", () => {
  it("every adapter passes the prompt, writes config only under the state folder, never into the work folder", () => {
    for (const name of harnessNames) {
      const inv = adapters[name].invocation(input)
      expect(inv.args, name).toContain("Do the thing")
      for (const f of inv.files) expect(f.path.startsWith("/tmp/run/state/"), `${name} ${f.path}`).toBe(true)
      expect(JSON.stringify(inv).includes("/tmp/run/work"), name).toBe(false)
    }
  })

  it("codex gets a private CODEX_HOME with a Responses provider; the key only in the environment", () => {
    const inv = codex.invocation(input)
    expect(inv.args).toEqual(["exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", "-m", "m-1", "Do the thing"])
    expect(inv.env.CODEX_HOME).toBe("/tmp/run/state/codex")
    expect(inv.files[0]?.content).toContain('base_url = "http://127.0.0.1:4000/v1"')
    expect(inv.files[0]?.content).toContain('wire_api = "responses"')
    expect(inv.files[0]?.content).not.toContain("sk-secret")
  })

  it("each CLI is pointed at the endpoint the way it reads one", () => {
    expect(pi.invocation(input).env).toMatchObject({ PI_CODING_AGENT_DIR: "/tmp/run/state/pi", PI_OFFLINE: "1" })
    expect(pi.invocation(input).args).toContain("local/m-1")
    expect(qwen.invocation(input).env).toMatchObject({ OPENAI_BASE_URL: "http://127.0.0.1:4000/v1", OPENAI_MODEL: "m-1", HOME: "/tmp/run/state/home" })
    expect(claude.invocation(input).env).toMatchObject({ ANTHROPIC_BASE_URL: "http://127.0.0.1:4000", CLAUDE_CONFIG_DIR: "/tmp/run/state/claude", IS_SANDBOX: "1" })
    const g = gemini.invocation(input)
    expect(g.env).toMatchObject({ GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:4000", GEMINI_API_KEY: "sk-secret" })
    expect(g.args).toContain("--skip-trust")
    expect(JSON.parse(g.files[0]?.content ?? "{}")).toEqual({ security: { auth: { selectedType: "gemini-api-key" } } })
    const o = opencode.invocation(input)
    expect(o.args).toEqual(["run", "--format", "json", "--print-logs", "-m", "local/m-1", "Do the thing"])
    expect(JSON.parse(o.env.OPENCODE_CONFIG_CONTENT ?? "{}").provider.local.options.baseURL).toBe("http://127.0.0.1:4000/v1")
  })

  it("without an endpoint the CLI keeps its own configuration and login", () => {
    const inv = codex.invocation({ ...input, endpoint: undefined, model: undefined })
    expect(inv.env).toEqual({})
    expect(inv.files).toEqual([])
    expect(inv.args).not.toContain("-m")
  })
})

describe("transcript parsers on constructed transcripts", () => {
  it("claude: the result event's answer; one call per message id from the session file, cache counts kept", () => {
    const stdout = lines(
      { type: "system", subtype: "init", model: "claude-sonnet-4-5" },
      { type: "assistant", message: { id: "msg_1", model: "claude-sonnet-4-5", usage: { input_tokens: 3, output_tokens: 1 } } },
      { type: "result", subtype: "success", result: "Done: 8443", modelUsage: { "claude-sonnet-4-5": {} } }
    )
    const session = lines(
      { type: "user", message: { role: "user" } },
      { type: "assistant", message: { id: "msg_1", model: "claude-sonnet-4-5", usage: { input_tokens: 3, output_tokens: 1, cache_read_input_tokens: 500, cache_creation_input_tokens: 40 } } },
      { type: "assistant", message: { id: "msg_1", model: "claude-sonnet-4-5", usage: { input_tokens: 3, output_tokens: 25, cache_read_input_tokens: 500, cache_creation_input_tokens: 40 } } },
      { type: "assistant", message: { id: "msg_2", model: "claude-haiku-4-5", usage: { input_tokens: 7, output_tokens: 2 } } }
    )
    const t = claude.parse(out(stdout, [session]))
    if (isTranscriptError(t)) throw t
    expect(t.finalAnswer).toBe("Done: 8443")
    expect(t.calls).toEqual([
      { model: "claude-sonnet-4-5", input: 3, output: 25, cacheRead: 500, cacheWrite: 40, reasoning: undefined },
      { model: "claude-haiku-4-5", input: 7, output: 2, cacheRead: undefined, cacheWrite: undefined, reasoning: undefined }
    ])
    expect(t.models).toEqual(["claude-sonnet-4-5", "claude-haiku-4-5"])
  })

  it("claude: rate_limit_event lines are quota readings: utilisation in percent, a rejection is 100% of its window, `allowed` alone is no reading", () => {
    const limit = (rate_limit_info: Record<string, unknown>) => ({ type: "rate_limit_event", rate_limit_info, session_id: "s" })
    const stdout = lines(
      limit({ status: "allowed", isUsingOverage: false }),
      limit({ status: "allowed_warning", resetsAt: 1796033233, rateLimitType: "five_hour", utilization: 0.85, isUsingOverage: false, surpassedThreshold: 0.8 }),
      limit({ status: "allowed_warning", rateLimitType: "seven_day", utilization: 0.5, isUsingOverage: false }),
      limit({ status: "allowed_warning", rateLimitType: "overage", utilization: 0.123456 }),
      limit({ status: "rejected", resetsAt: 1796040000, rateLimitType: "seven_day_opus", isUsingOverage: false }),
      limit({ status: "rejected", isUsingOverage: false }),
      limit({ status: "allowed_warning", utilization: 0.9 }),
      { type: "result", subtype: "success", result: "ok", modelUsage: {} }
    )
    const t = claude.parse(out(stdout))
    if (isTranscriptError(t)) throw t
    expect(t.quota).toEqual([
      { window: "five_hour", usedPercent: 85, windowMinutes: 300 },
      { window: "seven_day", usedPercent: 50, windowMinutes: 10080 },
      { window: "overage", usedPercent: 12.35, windowMinutes: undefined },
      { window: "seven_day_opus", usedPercent: 100, windowMinutes: 10080 },
      { window: "unified", usedPercent: 100, windowMinutes: undefined }
    ])
    const quiet = claude.parse(out(lines(limit({ status: "allowed", isUsingOverage: false }), { type: "result", result: "ok" })))
    if (isTranscriptError(quiet)) throw quiet
    expect(quiet.quota).toBeUndefined()
    // Refused: Claude Code writes its own "<synthetic>" message, which is no model call.
    const refused = claude.parse(
      out(
        lines(limit({ status: "rejected", rateLimitType: "five_hour" }), { type: "result", is_error: true, api_error_status: 429, result: "You've hit your session limit" }),
        [lines({ type: "assistant", message: { id: "d0dfd5dd", model: "<synthetic>", usage: { input_tokens: 0, output_tokens: 0 } } })]
      )
    )
    if (isTranscriptError(refused)) throw refused
    expect([refused.calls, refused.models, refused.quota]).toEqual([[], [], [{ window: "five_hour", usedPercent: 100, windowMinutes: 300 }]])
  })

  it("claude on the user's login: the session file is projects/<cwd slug>/<session id>.jsonl under CLAUDE_CONFIG_DIR, else ~/.claude", () => {
    const stdout = lines({ type: "system", subtype: "init", cwd: "/tmp/assay-claude-x_1/work", session_id: "c00df042-2b90-425c-9fac-48d3a76009c4" })
    const now = new Date()
    expect(claude.loginSessions?.(stdout, { CLAUDE_CONFIG_DIR: "/cfg", HOME: "/home/u" }, now)).toEqual({
      dirs: ["/cfg/projects/-tmp-assay-claude-x-1-work"],
      suffix: "c00df042-2b90-425c-9fac-48d3a76009c4.jsonl"
    })
    expect(claude.loginSessions?.(stdout, { HOME: "/home/u" }, now)?.dirs).toEqual(["/home/u/.claude/projects/-tmp-assay-claude-x-1-work"])
    expect(claude.loginSessions?.(lines({ type: "system", subtype: "init", cwd: "/w", session_id: "../x" }), {}, now)).toBeUndefined()
    // Long paths are cut at 200 and suffixed with the path's 32-bit string hash in base 36 (computed independently).
    const long = "/tmp/" + "a".repeat(120) + "/" + "b".repeat(120) + "/work"
    expect(projectSlug(long)).toBe(long.replace(/[^a-zA-Z0-9]/g, "-").slice(0, 200) + "-jmt4go")
  })

  it("gemini: one call per session record id (the last record wins), thoughts and tool-use prompt counted in, cached split out", () => {
    // As gemini-cli 0.61.0 writes them: a call's record is written again once its tool calls are attached.
    const session = lines(
      { sessionId: "s", kind: "main" },
      { id: "u1", type: "user", content: [{ text: "q" }] },
      { id: "g1", type: "gemini", content: "", tokens: { input: 250, output: 30, cached: 50, thoughts: 0, tool: 0, total: 280 }, model: "gemini-2.5-flash" },
      { $set: { lastUpdated: "2026-11-30T09:43:06.808Z" } },
      { id: "g1", type: "gemini", content: "", tokens: { input: 250, output: 30, cached: 50, thoughts: 0, tool: 0, total: 280 }, model: "gemini-2.5-flash", toolCalls: [{ name: "run_shell_command" }] },
      { id: "g2", type: "gemini", content: "8443", tokens: { input: 300, output: 9, cached: 0, thoughts: 3, tool: 5, total: 317 }, model: "gemini-2.5-flash" }
    )
    const stdout = JSON.stringify({
      session_id: "s",
      response: "8443",
      stats: { models: { "gemini-2.5-flash": { tokens: { input: 500, prompt: 550, candidates: 39, total: 597, cached: 50, thoughts: 3, tool: 5 } } } }
    })
    const t = gemini.parse(out(stdout, [session]))
    if (isTranscriptError(t)) throw t
    expect(t.finalAnswer).toBe("8443")
    expect(t.calls).toEqual([
      { model: "gemini-2.5-flash", input: 200, output: 30, cacheRead: 50, cacheWrite: undefined, reasoning: 0 },
      { model: "gemini-2.5-flash", input: 305, output: 12, cacheRead: 0, cacheWrite: undefined, reasoning: 3 }
    ])
    expect(t.models).toEqual(["gemini-2.5-flash"])
  })

  it("gemini: stdout's per-model sums beyond the session's calls (the router's, or all without a session) are one more call", () => {
    const stdout = JSON.stringify({
      response: "8443",
      stats: {
        models: {
          "gemini-2.5-flash-lite": { tokens: { input: 530, prompt: 580, candidates: 42, cached: 50, thoughts: 3, tool: 0 } },
          "gemini-2.5-pro": { tokens: { input: 10, prompt: 10, candidates: 1, cached: 0, thoughts: 0, tool: 0 } }
        }
      }
    })
    const session = lines({ id: "g1", type: "gemini", tokens: { input: 10, output: 1, cached: 0, thoughts: 0, tool: 0 }, model: "gemini-2.5-pro" })
    const t = gemini.parse(out(`Loaded cached credentials.\n${stdout}`, [session]))
    if (isTranscriptError(t)) throw t
    expect(t.calls).toEqual([
      { model: "gemini-2.5-pro", input: 10, output: 1, cacheRead: 0, cacheWrite: undefined, reasoning: 0 },
      { model: "gemini-2.5-flash-lite", input: 530, output: 45, cacheRead: 50, cacheWrite: undefined, reasoning: 3 }
    ])
    expect(t.models).toEqual(["gemini-2.5-pro", "gemini-2.5-flash-lite"])
    const alone = gemini.parse(out(stdout))
    if (isTranscriptError(alone)) throw alone
    expect(alone.calls.map((c) => [c.model, c.input, c.output])).toEqual([["gemini-2.5-flash-lite", 530, 45], ["gemini-2.5-pro", 10, 1]])
  })

  it("opencode: the text of the last step; each step_finish is one call, reasoning counted into output; models from the logs", () => {
    const stdout = lines(
      { type: "step_start", part: {} },
      { type: "tool_use", part: { tool: "bash" } },
      { type: "step_finish", part: { reason: "tool-calls", tokens: { total: 280, input: 200, output: 30, reasoning: 0, cache: { read: 50, write: 0 } } } },
      { type: "step_start", part: {} },
      { type: "text", part: { text: "It is " } },
      { type: "text", part: { text: "8443." } },
      { type: "step_finish", part: { reason: "stop", tokens: { total: 312, input: 300, output: 9, reasoning: 3, cache: { read: 0, write: 0 } } } }
    )
    const log = (agent: string, model: string) =>
      `timestamp=2026-11-30T09:52:50.885Z level=INFO run=06767e39 message=stream providerID=local modelID=${model} session.id=ses_1 small=${agent === "title"} agent=${agent} mode=primary`
    const stderr = [
      "timestamp=2026-11-30T09:52:39.348Z level=INFO run=06767e39 message=init",
      log("title", "small-1"),
      log("build", "m-1"),
      "timestamp=2026-11-30T09:52:52.465Z level=INFO run=06767e39 message=\"llm runtime selected\" llm.runtime=ai-sdk llm.provider=local llm.model=m-1",
      log("build", "m-1")
    ].join("\n")
    const t = opencode.parse({ stdout, stderr, sessionFiles: [] })
    if (isTranscriptError(t)) throw t
    expect(t.finalAnswer).toBe("It is 8443.")
    expect(t.calls).toEqual([
      { model: "m-1", input: 200, output: 30, cacheRead: 50, cacheWrite: 0, reasoning: 0 },
      { model: "m-1", input: 300, output: 12, cacheRead: 0, cacheWrite: 0, reasoning: 3 }
    ])
    expect(t.models).toEqual(["m-1", "small-1"])
    const quiet = opencode.parse(out(stdout))
    if (isTranscriptError(quiet)) throw quiet
    expect([quiet.calls[0]?.model, quiet.models]).toEqual([undefined, []])
  })

  it("qwen without a session file falls back to the result's per-model sums", () => {
    const stdout = JSON.stringify([
      { type: "system", subtype: "init", model: "qwen3-coder" },
      { type: "result", result: "8443", stats: { models: { "qwen3-coder": { tokens: { prompt: 200, candidates: 40, cached: 50, thoughts: 0 } } } } }
    ])
    const t = qwen.parse(out(stdout))
    if (isTranscriptError(t)) throw t
    expect(t.calls).toEqual([{ model: "qwen3-coder", input: 150, output: 40, cacheRead: 50, cacheWrite: undefined, reasoning: 0 }])
  })

  it("a run that printed no answer is a transcript error naming the harness", () => {
    for (const name of harnessNames) {
      const t = adapters[name].parse(out("panic: something broke\n"))
      expect(isTranscriptError(t) && t.reason, name).toBe("no-answer")
    }
  })

  it("codex without a rollout file takes per-turn usage from stdout", () => {
    const t = codex.parse(
      out(
        lines(
          { type: "item.completed", item: { type: "agent_message", text: "first" } },
          { type: "item.completed", item: { type: "agent_message", text: "final" } },
          { type: "turn.completed", usage: { input_tokens: 120, cached_input_tokens: 100, output_tokens: 9, reasoning_output_tokens: 3 } }
        )
      )
    )
    if (isTranscriptError(t)) throw t
    expect(t.finalAnswer).toBe("final")
    expect(t.calls).toEqual([{ model: undefined, input: 20, output: 9, cacheRead: 100, cacheWrite: undefined, reasoning: 3 }])
  })
})

