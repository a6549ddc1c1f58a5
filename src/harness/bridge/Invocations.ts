/**
 * How each CLI is started under the bridge: its model endpoint pointed at the Attempt's proxy (with
 * a placeholder key), the Attempt's MCP server as its only MCP server, its own tools off where the
 * task is not a folder (as far as the CLI allows: see docs/harnesses.md's table), its config, session and
 * home folders private to the Attempt, and a way to go on with its own session (resume).
 *
 * Facts per CLI are in ../shared/harnesses.md; each was checked against the pinned versions in
 * tools/harnesses by the tests in test/harness/bridge*.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { HarnessName, Invocation } from "../Harness.ts"

export interface BridgedInput {
  readonly prompt: string
  /** the model id the CLI is told (the proxy makes the call with the candidate's model) */
  readonly model: string
  /** http://127.0.0.1:PORT: the proxy's root */
  readonly proxyUrl: string
  readonly mcpUrl: string
  /** the Attempt's placeholder key: the user's key never reaches the CLI */
  readonly apiKey: string
  readonly workDir: string
  readonly stateDir: string
  /** go on with the session started before (a user's next message) */
  readonly resume: boolean
  /** a UUID naming the session, for the CLIs that take one */
  readonly sessionId: string
  /** keep the CLI's own file and shell tools (a task that is a folder) */
  readonly ownTools: boolean
  /** the CLI runs on the user's own login (its credentials, not `apiKey`) */
  readonly subscription?: boolean
}

const toml = (s: string): string => JSON.stringify(s)

const claude = (i: BridgedInput): Invocation => {
  const mcp = { mcpServers: { assay: { type: "http", url: i.mcpUrl } } }
  const args = [
    "-p",
    i.prompt,
    "--output-format",
    "stream-json",
    "--verbose",
    "--model",
    i.model,
    "--mcp-config",
    JSON.stringify(mcp),
    "--strict-mcp-config",
    "--permission-mode",
    "bypassPermissions",
    ...(i.ownTools ? [] : ["--tools", ""]),
    "--allowedTools",
    "mcp__assay__*",
    ...(i.resume ? ["--resume", i.sessionId] : ["--session-id", i.sessionId])
  ]
  return {
    args,
    env: {
      ANTHROPIC_BASE_URL: i.proxyUrl,
      ANTHROPIC_API_KEY: i.apiKey,
      CLAUDE_CONFIG_DIR: path.join(i.stateDir, "claude"),
      // As root, bypassing permissions is refused unless the CLI is told it is sandboxed.
      IS_SANDBOX: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      // Wait for the MCP server before the first turn (otherwise the turn may go out without the tools).
      MCP_CONNECTION_NONBLOCKING: "false",
      MCP_CONNECT_TIMEOUT_MS: "300000",
      MCP_TIMEOUT: "300000",
      // Every tool offered in the request itself, none deferred behind a search.
      ENABLE_TOOL_SEARCH: "false",
      MCP_TOOL_TIMEOUT: "600000"
    },
    unsetEnv: [],
    files: []
  }
}

const codex = (i: BridgedInput): Invocation => {
  const home = path.join(i.stateDir, "codex")
  const config = [
    `model = ${toml(i.model)}`,
    `model_provider = "assay"`,
    ``,
    `[model_providers.assay]`,
    `name = "assay"`,
    `base_url = ${toml(`${i.proxyUrl}/v1`)}`,
    // On the user's ChatGPT login codex sends its own token (and account id) to this provider.
    i.subscription === true ? `requires_openai_auth = true` : `env_key = "ASSAY_PROXY_KEY"`,
    `wire_api = "responses"`,
    // assay's proxy retries a fault by the built-in agent's rule and answers only its outcome:
    // codex's own retries would be tries of its own, counted and faulted unlike the built-in's.
    `request_max_retries = 0`,
    `stream_max_retries = 0`,
    ``,
    `[mcp_servers.assay]`,
    `url = ${toml(i.mcpUrl)}`,
    // Not required, a server gets ~1 s to start and is then left out silently (codex #38689).
    `required = true`,
    `startup_timeout_sec = 300`,
    `tool_timeout_sec = 600`,
    // Headless, an unapproved MCP call is cancelled as "user cancelled" (codex #24135).
    `default_tools_approval_mode = "approve"`,
    ``
  ].join("\n")
  const common = [
    "--json",
    "--skip-git-repo-check",
    "--dangerously-bypass-approvals-and-sandbox",
    ...(i.ownTools ? [] : ["--disable", "shell_tool"]),
    // On a ChatGPT login codex would also connect to ChatGPT's apps (an MCP server of its own).
    ...(i.subscription === true ? ["--disable", "apps"] : [])
  ]
  return {
    args: i.resume ? ["exec", ...common, "resume", "--last", i.prompt] : ["exec", ...common, i.prompt],
    env: { CODEX_HOME: home, ASSAY_PROXY_KEY: i.apiKey },
    unsetEnv: [],
    files: [{ path: path.join(home, "config.toml"), content: config }]
  }
}

// The Gemini CLI's built-in tools, excluded on a task that is not a folder.
const geminiBuiltins = [
  "read_file",
  "write_file",
  "replace",
  "run_shell_command",
  "glob",
  "search_file_content",
  "list_directory",
  "read_many_files",
  "web_fetch",
  "google_web_search",
  "save_memory",
  "write_todos",
  "update_topic",
  "list_background_processes",
  "read_background_output",
  "enter_plan_mode",
  "exit_plan_mode",
  "invoke_agent",
  "activate_skill"
]

const gemini = (i: BridgedInput): Invocation => {
  const home = path.join(i.stateDir, "home")
  const settings = {
    security: { auth: { selectedType: "gemini-api-key" } },
    mcpServers: { assay: { httpUrl: i.mcpUrl, trust: true, timeout: 600_000 } },
    ...(i.ownTools ? {} : { tools: { exclude: geminiBuiltins } })
  }
  return {
    args: ["-p", i.prompt, "--skip-trust", "--output-format", "json", "--yolo", "-m", i.model, "--allowed-mcp-server-names", "assay", ...(i.resume ? ["--resume", "latest"] : [])],
    env: {
      HOME: home,
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      GOOGLE_GEMINI_BASE_URL: i.proxyUrl,
      GEMINI_API_KEY: i.apiKey
    },
    unsetEnv: [],
    files: [{ path: path.join(home, ".gemini", "settings.json"), content: JSON.stringify(settings, null, 2) }]
  }
}

// qwen's tools that would hide the MCP tools behind a search, or start agents of its own.
const qwenDeferring = ["tool_search", "agent", "skill", "todo_write", "task_stop", "send_message", "ask_user_question"]

const qwen = (i: BridgedInput): Invocation => {
  const home = path.join(i.stateDir, "home")
  const settings = { mcpServers: { assay: { httpUrl: i.mcpUrl, trust: true, timeout: 600_000 } } }
  return {
    args: [
      "--auth-type",
      "openai",
      "-o",
      "json",
      "--yolo",
      "-m",
      i.model,
      "--allowed-mcp-server-names",
      "assay",
      // Repeated, not listed after one flag: an array option takes every word that follows it.
      // Without tool_search, qwen offers MCP tools directly instead of deferring them behind a search.
      ...[...(i.ownTools ? [] : geminiBuiltins), ...qwenDeferring].flatMap((t) => ["--exclude-tools", t]),
      ...(i.resume ? ["--continue"] : []),
      "-p",
      i.prompt
    ],
    env: { HOME: home, OPENAI_BASE_URL: `${i.proxyUrl}/v1`, OPENAI_API_KEY: i.apiKey, OPENAI_MODEL: i.model },
    unsetEnv: [],
    files: [{ path: path.join(home, ".qwen", "settings.json"), content: JSON.stringify(settings, null, 2) }]
  }
}

// opencode's built-in tools, turned off on a task that is not a folder.
const opencodeBuiltins = ["bash", "edit", "write", "read", "grep", "glob", "list", "patch", "todowrite", "todoread", "webfetch", "task"]

const opencode = (i: BridgedInput): Invocation => {
  const home = path.join(i.stateDir, "home")
  const config = {
    $schema: "https://opencode.ai/config.json",
    provider: {
      assay: {
        npm: "@ai-sdk/openai-compatible",
        options: { baseURL: `${i.proxyUrl}/v1`, apiKey: i.apiKey },
        models: { [i.model]: {} }
      }
    },
    mcp: { assay: { type: "remote", url: i.mcpUrl, enabled: true } },
    permission: { edit: "allow", bash: "allow", webfetch: "allow" },
    ...(i.ownTools ? {} : { tools: Object.fromEntries(opencodeBuiltins.map((t) => [t, false])) })
  }
  return {
    // A title given: no extra model call to make one.
    args: ["run", "--format", "json", "-m", `assay/${i.model}`, "--title", "assay", ...(i.resume ? ["--continue"] : []), i.prompt],
    env: {
      HOME: home,
      XDG_DATA_HOME: path.join(home, ".local", "share"),
      XDG_CONFIG_HOME: path.join(home, ".config"),
      XDG_STATE_HOME: path.join(home, ".local", "state"),
      XDG_CACHE_HOME: path.join(home, ".cache"),
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_MODELS_FETCH: "1"
    },
    unsetEnv: [],
    files: []
  }
}

/** How the CLI is started for one turn of a bridged Attempt. pi takes no MCP server (see docs/harnesses.md). */
export const bridgedInvocation = (harness: HarnessName, input: BridgedInput): Invocation => {
  switch (harness) {
    case "claude":
      return claude(input)
    case "codex":
      return codex(input)
    case "gemini":
      return gemini(input)
    case "qwen":
      return qwen(input)
    case "opencode":
      return opencode(input)
    case "pi":
      throw new Error("pi has no MCP client in its pinned version; it is not bridged")
  }
}

/** The CLIs the bridge runs. */
export const bridged: ReadonlyArray<HarnessName> = ["claude", "codex", "gemini", "qwen", "opencode"]

/**
 * The program to start for a CLI where no Node runs it: in a task's container, whose image need
 * not have Node. codex's npm entry is a Node launcher of a static (musl) binary shipped beside it,
 * which runs in any image; claude and opencode are native already; gemini and qwen are Node
 * programs, which providers/harbor/agent.ts runs on the host's Node bound into the container.
 */
export const nativeEntry = (harness: HarnessName, binary: string): { readonly command: string; readonly env: Readonly<Record<string, string>> } => {
  if (harness !== "codex") return { command: binary, env: {} }
  let real: string
  try {
    real = fs.realpathSync(binary)
  } catch {
    // Not there: the start fails and says so.
    return { command: binary, env: {} }
  }
  const triple = process.arch === "arm64" ? "aarch64-unknown-linux-musl" : "x86_64-unknown-linux-musl"
  // node_modules/@openai/codex/bin/codex.js -> node_modules/@openai/codex-linux-<arch>/vendor/<triple>/bin/codex
  const scope = path.dirname(path.dirname(path.dirname(real)))
  const native = path.join(scope, `codex-linux-${process.arch}`, "vendor", triple, "bin", "codex")
  // What the launcher tells the binary: installed by npm (it then leaves updates to npm).
  return fs.existsSync(native) ? { command: native, env: { CODEX_MANAGED_BY_NPM: "1" } } : { command: binary, env: {} }
}
