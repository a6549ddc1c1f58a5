/**
 * Claude Code (`@anthropic-ai/claude-code`). Headless: `claude -p --output-format stream-json
 * --verbose`. An endpoint is ANTHROPIC_BASE_URL/ANTHROPIC_API_KEY with a private CLAUDE_CONFIG_DIR.
 * Per-call usage comes from the session file (`message.usage`, one message id per call, repeated
 * for each content block); stdout `assistant` events carry partial usage, the `result` event the sums.
 * Not exercised against a live binary here (245 MB); parser tested on constructed transcripts.
 */
import * as path from "node:path"
import { field, type HarnessAdapter, isObject, jsonLines, type ModelCall, num, str, transcript } from "../Harness.ts"

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

/** One call per message id, keeping its last record (usage grows as blocks stream). */
const callsByMessage = (lines: ReadonlyArray<unknown>): Array<ModelCall> => {
  const byId = new Map<string, ModelCall>()
  lines.forEach((l, i) => {
    if (!isObject(l) || l.type !== "assistant") return
    const id = str(field(l, "message", "id")) ?? `#${i}`
    byId.set(id, callOf(field(l, "message")))
  })
  return [...byId.values()]
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
  parse: ({ sessionFiles, stdout }) => {
    const events = jsonLines(stdout)
    let result: unknown
    for (const e of events) if (e.type === "result") result = e
    const answer = str(field(result, "result"))
    let calls = callsByMessage(sessionFiles.flatMap(jsonLines))
    if (calls.length === 0) calls = callsByMessage(events)
    const modelUsage = field(result, "modelUsage")
    return transcript("claude", answer, calls, isObject(modelUsage) ? Object.keys(modelUsage) : [])
  }
}
