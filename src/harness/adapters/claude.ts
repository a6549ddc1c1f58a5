/**
 * Claude Code (`@anthropic-ai/claude-code`). Headless: `claude -p --output-format stream-json
 * --verbose`. An endpoint is ANTHROPIC_BASE_URL/ANTHROPIC_API_KEY with a private CLAUDE_CONFIG_DIR.
 * Per-call usage comes from the session file (`message.usage`, one message id per call, repeated
 * for each content block); stdout `assistant` events carry partial usage (output 1), the `result`
 * event the sums. Exercised for real against the loopback server (test/harness/RealCli.test.ts).
 *
 * Subscription windows (read from the 2.1.197 binary, checked against the loopback server in
 * test/cli/harnessClaude.test.ts). Only on a claude.ai subscription login does Claude Code read the
 * `anthropic-ratelimit-unified-*` response headers: OAuth credentials whose scopes include
 * `user:inference` (e.g. `$CLAUDE_CONFIG_DIR/.credentials.json` `claudeAiOauth`), the first-party
 * provider, no ANTHROPIC_API_KEY / apiKeyHelper / ANTHROPIC_AUTH_TOKEN in use. On an API key (our
 * endpoint mode) it ignores them. It prints a `rate_limit_event` line each time what it read
 * changes, and that line is all a headless run shows (the statusline, which is given every
 * window's utilisation, does not run under `-p`):
 * - `allowed_warning` with `rateLimitType` and `utilization` (0..1), only near a limit: when the
 *   server names a surpassed threshold (`…-5h-surpassed-threshold`, likewise 7d, 7d_oi, overage),
 *   or when on pace to run out (five_hour at 90% with at most 72% of the window gone; seven_day at
 *   25/50/75% with at most 15/35/60% gone). This is the only utilisation it reports.
 * - `rejected` (a 429) with `rateLimitType` (the representative claim) and no utilisation: the
 *   window is exhausted, read as 100% used (a rejection naming no window as the `unified` one).
 *   Claude Code then exits 1 with "You've hit your … limit".
 * - `allowed` carries no utilisation: no reading.
 * So readings exist only in the warning regime and on rejection: the allowance's `share` meter can
 * only act on those readings, `pauseAt` on them and on rejections (100%). Below the thresholds a
 * subscription run reports nothing, and the allowance cannot see its use of the window.
 */
import * as path from "node:path"
import {
  field,
  type HarnessAdapter,
  isObject,
  jsonLines,
  type JsonObject,
  type ModelCall,
  num,
  type QuotaReading,
  str,
  transcript
} from "../Harness.ts"

const callOf = (message: unknown): ModelCall => {
  const u = field(message, "usage")
  return {
    model: str(field(message, "model")),
    input: num(field(u, "input_tokens")) ?? 0,
    output: num(field(u, "output_tokens")) ?? 0,
    cacheRead: num(field(u, "cache_read_input_tokens")),
    cacheWrite: num(field(u, "cache_creation_input_tokens")),
    reasoning: undefined
  }
}

/** One call per message id, keeping its last record (usage grows as blocks stream). Messages of
 * model `<synthetic>` are Claude Code's own (e.g. "You've hit your session limit"), not calls. */
const callsByMessage = (lines: ReadonlyArray<unknown>): Array<ModelCall> => {
  const byId = new Map<string, ModelCall>()
  lines.forEach((l, i) => {
    if (!isObject(l) || l.type !== "assistant" || field(l, "message", "model") === "<synthetic>") return
    const id = str(field(l, "message", "id")) ?? `#${i}`
    byId.set(id, callOf(field(l, "message")))
  })
  return [...byId.values()]
}

/** Claude Code's window names (`rateLimitType`) and their lengths, where known. */
const windowMinutes: Readonly<Record<string, number>> = {
  five_hour: 300,
  seven_day: 10_080,
  seven_day_opus: 10_080,
  seven_day_sonnet: 10_080,
  seven_day_overage_included: 10_080
}

/** The reading one `rate_limit_event` gives, if any (see the module comment). */
export const quotaReadingOf = (event: JsonObject): QuotaReading | undefined => {
  if (event.type !== "rate_limit_event") return undefined
  const info = field(event, "rate_limit_info")
  const status = str(field(info, "status"))
  const window = str(field(info, "rateLimitType")) ?? (status === "rejected" ? "unified" : undefined)
  if (window === undefined) return undefined
  const utilization = num(field(info, "utilization"))
  // Percent to two decimals: 0.85 * 100 is 85.00000000000001 in floating point.
  const usedPercent = status === "rejected" ? 100 : utilization === undefined ? undefined : Math.round(utilization * 10_000) / 100
  return usedPercent === undefined ? undefined : { window, usedPercent, windowMinutes: windowMinutes[window] }
}

/** Claude Code's folder name for a working directory under `projects/` (non-alphanumerics become
 * "-"; past 200 characters, cut and suffixed with a 32-bit string hash in base 36). */
export const projectSlug = (cwd: string): string => {
  const slug = cwd.replace(/[^a-zA-Z0-9]/g, "-")
  if (slug.length <= 200) return slug
  let h = 0
  for (let i = 0; i < cwd.length; i++) h = ((h << 5) - h + cwd.charCodeAt(i)) | 0
  return `${slug.slice(0, 200)}-${Math.abs(h).toString(36)}`
}

export const claude: HarnessAdapter = {
  name: "claude",
  binary: "claude",
  npmPackage: "@anthropic-ai/claude-code",
  vendors: ["anthropic"],
  invocation: ({ endpoint, model, prompt, stateDir }) => {
    const args = ["-p", prompt, "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"]
    if (model !== undefined) args.push("--model", model)
    // As root, --dangerously-skip-permissions is refused unless the CLI is told it is sandboxed.
    const sandbox = { IS_SANDBOX: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" }
    if (endpoint === undefined) return { args, env: sandbox, unsetEnv: [], files: [] }
    return {
      args,
      env: {
        ...sandbox,
        ANTHROPIC_BASE_URL: endpoint.baseUrl.replace(/\/$/, ""),
        ANTHROPIC_API_KEY: endpoint.apiKey,
        CLAUDE_CONFIG_DIR: path.join(stateDir, "claude")
      },
      unsetEnv: ["ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"],
      files: []
    }
  },
  sessionDirs: (stateDir) => [path.join(stateDir, "claude", "projects")],
  // On the user's login the session is $CLAUDE_CONFIG_DIR (default ~/.claude)/projects/<cwd slug>/
  // <session id>.jsonl; the init event names both.
  loginSessions: (stdout, env) => {
    const init = jsonLines(stdout).find((e) => e.type === "system" && e.subtype === "init")
    const cwd = str(field(init, "cwd"))
    const session = str(field(init, "session_id"))
    if (cwd === undefined || session === undefined || !/^[\w-]+$/.test(session)) return undefined
    const config = env.CLAUDE_CONFIG_DIR ?? path.join(env.HOME ?? "", ".claude")
    return { dirs: [path.join(config.normalize("NFC"), "projects", projectSlug(cwd))], suffix: `${session}.jsonl` }
  },
  parse: ({ sessionFiles, stdout }) => {
    const events = jsonLines(stdout)
    let result: unknown
    const quota: Array<QuotaReading> = []
    for (const e of events) {
      if (e.type === "result") result = e
      const reading = quotaReadingOf(e)
      if (reading !== undefined) quota.push(reading)
    }
    const answer = str(field(result, "result"))
    let calls = callsByMessage(sessionFiles.flatMap(jsonLines))
    if (calls.length === 0) calls = callsByMessage(events)
    const modelUsage = field(result, "modelUsage")
    return transcript("claude", answer, calls, isObject(modelUsage) ? Object.keys(modelUsage) : [], quota)
  }
}
