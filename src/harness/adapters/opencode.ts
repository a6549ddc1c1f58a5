/**
 * opencode (`opencode-ai`). Headless: `opencode run --format json --print-logs -m PROVIDER/MODEL`. An
 * endpoint is a provider `local` passed in OPENCODE_CONFIG_CONTENT (nothing written into the work
 * folder), with a private HOME and XDG dirs; its `@ai-sdk/openai-compatible` is bundled in the
 * binary (nothing is fetched at run time). opencode takes its project folder from PWD (Run sets it
 * to the work folder). Run with opencode-ai 1.18.33 against the loopback server in
 * test/harness/RealCli.test.ts.
 *
 * As opencode 1.18.33 reports a run: each `step_finish` on stdout is one model call of the agent,
 * with `tokens {input, output, reasoning, cache {read, write}}` where `input` excludes the cache
 * counts and `output` excludes `reasoning`. stdout names no model; the logs on stderr
 * (`--print-logs`) do, in a `message=stream providerID=P modelID=M ... agent=A` line per call, the
 * per-session title call (`agent=title`, not on stdout, its usage not reported) included.
 */
import * as path from "node:path"
import { distinct, field, type HarnessAdapter, jsonLines, type ModelCall, num, str, transcript } from "../Harness.ts"

export const opencode: HarnessAdapter = {
  name: "opencode",
  binary: "opencode",
  npmPackage: "opencode-ai",
  vendors: [],
  invocation: ({ endpoint, model, prompt, stateDir }) => {
    const quiet = {
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_MODELS_FETCH: "1"
    }
    if (endpoint === undefined) {
      return { args: ["run", "--format", "json", "--print-logs", ...(model !== undefined ? ["-m", model] : []), prompt], env: quiet, unsetEnv: [], files: [] }
    }
    const id = model ?? "default"
    const config = {
      $schema: "https://opencode.ai/config.json",
      provider: {
        local: {
          npm: "@ai-sdk/openai-compatible",
          options: { baseURL: `${endpoint.baseUrl.replace(/\/$/, "")}/v1`, apiKey: endpoint.apiKey },
          models: { [id]: {} }
        }
      }
    }
    const home = path.join(stateDir, "home")
    return {
      args: ["run", "--format", "json", "--print-logs", "-m", `local/${id}`, prompt],
      env: {
        ...quiet,
        HOME: home,
        XDG_DATA_HOME: path.join(home, ".local", "share"),
        XDG_CONFIG_HOME: path.join(home, ".config"),
        XDG_STATE_HOME: path.join(home, ".local", "state"),
        XDG_CACHE_HOME: path.join(home, ".cache"),
        OPENCODE_CONFIG_CONTENT: JSON.stringify(config)
      },
      unsetEnv: [],
      files: []
    }
  },
  sessionDirs: () => [],
  parse: ({ stderr, stdout }) => {
    const streams = streamLines(stderr)
    // Calls on stdout are the agent's, not the title's: name their model when the logs show one.
    const agentModels = distinct(streams.filter((l) => l.agent !== "title").map((l) => l.model))
    const agentModel = agentModels.length === 1 ? agentModels[0] : undefined
    const calls: Array<ModelCall> = []
    let answer: string | undefined
    let stepText: Array<string> = []
    for (const e of jsonLines(stdout)) {
      if (e.type === "step_start") stepText = []
      if (e.type === "text") {
        const t = str(field(e, "part", "text"))
        if (t !== undefined) stepText.push(t)
      }
      if (e.type === "step_finish") {
        const t = field(e, "part", "tokens")
        const reasoning = num(field(t, "reasoning"))
        calls.push({
          model: str(field(e, "part", "modelID")) ?? agentModel,
          input: num(field(t, "input")) ?? 0,
          output: (num(field(t, "output")) ?? 0) + (reasoning ?? 0),
          cacheRead: num(field(t, "cache", "read")),
          cacheWrite: num(field(t, "cache", "write")),
          reasoning
        })
        if (stepText.length > 0) answer = stepText.join("")
      }
    }
    if (answer === undefined && stepText.length > 0) answer = stepText.join("")
    return transcript("opencode", answer, calls, streams.map((l) => l.model))
  }
}

/** The `message=stream` lines of opencode's logs: which model each call went to, for which agent. */
export const streamLines = (logs: string): ReadonlyArray<{ readonly model: string; readonly agent: string | undefined }> => {
  const out: Array<{ readonly model: string; readonly agent: string | undefined }> = []
  for (const line of logs.split("\n")) {
    if (!/(^| )message=stream( |$)/.test(line)) continue
    const model = / modelID=(\S+)/.exec(line)?.[1]
    if (model !== undefined) out.push({ model, agent: / agent=(\S+)/.exec(line)?.[1] })
  }
  return out
}
