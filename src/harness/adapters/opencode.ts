/**
 * opencode (`opencode-ai`). Headless: `opencode run --format json -m PROVIDER/MODEL`. An endpoint is a
 * provider `local` passed in OPENCODE_CONFIG_CONTENT (nothing written into the work folder), with a
 * private HOME and XDG dirs. Each `step_finish` on stdout is one model call; the extra title request
 * opencode makes per session is not on stdout and is not counted; stdout does not name the model.
 * opencode takes its project folder from PWD (Run sets it to the work folder). Checked by hand with
 * opencode-ai 1.18.33 against the loopback server (tool call, answer, disjoint token counts); not
 * installed for the tests (354 MB).
 */
import * as path from "node:path"
import { field, type HarnessAdapter, jsonLines, type ModelCall, num, str, transcript } from "../Harness.ts"

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
      return { args: ["run", "--format", "json", ...(model !== undefined ? ["-m", model] : []), prompt], env: quiet, unsetEnv: [], files: [] }
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
      args: ["run", "--format", "json", "-m", `local/${id}`, prompt],
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
  parse: ({ stdout }) => {
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
        calls.push({
          model: str(field(e, "part", "modelID")),
          input: num(field(t, "input")) ?? 0,
          output: num(field(t, "output")) ?? 0,
          cacheRead: num(field(t, "cache", "read")),
          cacheWrite: num(field(t, "cache", "write")),
          reasoning: num(field(t, "reasoning"))
        })
        if (stepText.length > 0) answer = stepText.join("")
      }
    }
    if (answer === undefined && stepText.length > 0) answer = stepText.join("")
    return transcript("opencode", answer, calls)
  }
}
