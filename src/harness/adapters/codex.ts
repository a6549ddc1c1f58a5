/**
 * Codex CLI (`@openai/codex`). Headless: `codex exec --json`, stdin closed. An endpoint is set
 * through a private CODEX_HOME holding `config.toml` (`OPENAI_BASE_URL` is ignored by codex).
 * Per-call usage comes from the rollout file (`token_usage_record`, one per model response);
 * stdout only has per-turn sums, used when no rollout is readable.
 */
import * as path from "node:path"
import {
  field,
  type HarnessAdapter,
  jsonLines,
  type ModelCall,
  num,
  type QuotaReading,
  str,
  transcript
} from "../Harness.ts"

const tomlString = (s: string): string => JSON.stringify(s)

// Codex reports OpenAI's convention: input_tokens includes the cached ones.
const usageCall = (u: unknown, model: string | undefined): ModelCall => ({
  model,
  input: Math.max(0, (num(field(u, "input_tokens")) ?? 0) - (num(field(u, "cached_input_tokens")) ?? 0)),
  output: num(field(u, "output_tokens")) ?? 0,
  cacheRead: num(field(u, "cached_input_tokens")),
  cacheWrite: num(field(u, "cache_write_input_tokens")),
  reasoning: num(field(u, "reasoning_output_tokens"))
})

/** Codex turns its `x-codex-{primary,secondary}-used-percent` response headers into `rate_limits`. */
const quotaReadings = (limits: unknown): ReadonlyArray<QuotaReading> =>
  ["primary", "secondary"].flatMap((window) => {
    const usedPercent = num(field(limits, window, "used_percent"))
    return usedPercent === undefined ? [] : [{ window, usedPercent, windowMinutes: num(field(limits, window, "window_minutes")) }]
  })

export const codex: HarnessAdapter = {
  name: "codex",
  binary: "codex",
  npmPackage: "@openai/codex",
  vendors: ["openai"],
  invocation: ({ endpoint, model, prompt, stateDir }) => {
    const args = ["exec", "--json", "--skip-git-repo-check", "-s", "workspace-write"]
    if (model !== undefined) args.push("-m", model)
    args.push(prompt)
    if (endpoint === undefined) return { args, env: {}, unsetEnv: [], files: [] }
    const home = path.join(stateDir, "codex")
    const config = [
      ...(model !== undefined ? [`model = ${tomlString(model)}`] : []),
      `model_provider = "local"`,
      ``,
      `[model_providers.local]`,
      `name = "local"`,
      `base_url = ${tomlString(`${endpoint.baseUrl.replace(/\/$/, "")}/v1`)}`,
      `env_key = "ASSAY_LOCAL_API_KEY"`,
      `wire_api = "responses"`,
      ``
    ].join("\n")
    return {
      args,
      env: { CODEX_HOME: home, ASSAY_LOCAL_API_KEY: endpoint.apiKey },
      unsetEnv: [],
      files: [{ path: path.join(home, "config.toml"), content: config }]
    }
  },
  sessionDirs: (stateDir) => [path.join(stateDir, "codex", "sessions")],
  // On the user's login the rollout (per-call usage, quota windows) is under $CODEX_HOME (default
  // ~/.codex)/sessions/YYYY/MM/DD (local date), named ...-<thread id>.jsonl.
  loginSessions: (stdout, env, now) => {
    const thread = jsonLines(stdout).map((e) => (e.type === "thread.started" ? str(e.thread_id) : undefined)).find((t) => t !== undefined)
    if (thread === undefined || !/^[\w-]+$/.test(thread)) return undefined
    const home = env.CODEX_HOME ?? path.join(env.HOME ?? "", ".codex")
    const day = (d: Date) =>
      path.join(home, "sessions", String(d.getFullYear()), String(d.getMonth() + 1).padStart(2, "0"), String(d.getDate()).padStart(2, "0"))
    // A run may cross midnight.
    return { dirs: [...new Set([day(now), day(new Date(now.getTime() - 86_400_000))])], suffix: `-${thread}.jsonl` }
  },
  parse: ({ sessionFiles, stdout }) => {
    const events = jsonLines(stdout)
    let answer: string | undefined
    for (const e of events) {
      if (e.type === "item.completed" && field(e, "item", "type") === "agent_message") {
        answer = str(field(e, "item", "text")) ?? answer
      }
    }
    const rollout = sessionFiles.flatMap(jsonLines)
    let model: string | undefined
    const models: Array<string | undefined> = []
    const calls: Array<ModelCall> = []
    const quota: Array<QuotaReading> = []
    for (const r of rollout) {
      if (r.type === "event_msg" && field(r, "payload", "type") === "token_count") quota.push(...quotaReadings(field(r, "payload", "rate_limits")))
      if (r.type === "turn_context") {
        model = str(field(r, "payload", "model")) ?? model
        models.push(model)
      }
      if (r.type === "token_usage_record") calls.push(usageCall(field(r, "payload", "usage"), model))
      if (answer === undefined && r.type === "event_msg" && field(r, "payload", "type") === "task_complete") {
        answer = str(field(r, "payload", "last_agent_message"))
      }
    }
    if (calls.length === 0) {
      // No rollout: per-turn sums are the finest grain stdout offers.
      for (const e of events) if (e.type === "turn.completed") calls.push(usageCall(e.usage, model))
    }
    return transcript("codex", answer, calls, models, quota)
  }
}
