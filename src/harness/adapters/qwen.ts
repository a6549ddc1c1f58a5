/**
 * qwen-code (`@qwen-code/qwen-code`). Headless: `qwen --auth-type openai -o json --yolo`; the
 * endpoint goes in OPENAI_* variables, HOME is private so `~/.qwen` (sessions) is too. Per-call
 * usage is in the session file's `qwen-code.api_response` telemetry (including the extra memory
 * extractor call); stdout's `result` holds only per-model sums, used when no session is readable.
 */
import * as path from "node:path"
import {
  field,
  type HarnessAdapter,
  isObject,
  jsonLines,
  lastJsonValue,
  type ModelCall,
  num,
  str,
  transcript
} from "../Harness.ts"

const events = (stdout: string): ReadonlyArray<unknown> => {
  const v = lastJsonValue(stdout)
  return Array.isArray(v) ? v : jsonLines(stdout)
}

export const qwen: HarnessAdapter = {
  name: "qwen",
  binary: "qwen",
  npmPackage: "@qwen-code/qwen-code",
  vendors: ["qwen", "alibaba", "dashscope"],
  invocation: ({ endpoint, model, prompt, stateDir }) => {
    const args = ["--auth-type", "openai", "-o", "json", "--yolo"]
    if (model !== undefined) args.push("-m", model)
    args.push(prompt)
    if (endpoint === undefined) return { args, env: {}, unsetEnv: [], files: [] }
    return {
      args,
      env: {
        HOME: path.join(stateDir, "home"),
        OPENAI_BASE_URL: `${endpoint.baseUrl.replace(/\/$/, "")}/v1`,
        OPENAI_API_KEY: endpoint.apiKey,
        ...(model !== undefined ? { OPENAI_MODEL: model } : {})
      },
      unsetEnv: ["DASHSCOPE_API_KEY"],
      files: []
    }
  },
  sessionDirs: (stateDir) => [path.join(stateDir, "home", ".qwen", "projects")],
  parse: ({ sessionFiles, stdout }) => {
    const evs = events(stdout)
    let result: unknown
    for (const e of evs) if (isObject(e) && e.type === "result") result = e
    const answer = str(field(result, "result"))
    const calls: Array<ModelCall> = []
    for (const line of sessionFiles.flatMap(jsonLines)) {
      const ui = field(line, "systemPayload", "uiEvent")
      if (field(ui, "event.name") !== "qwen-code.api_response") continue
      calls.push({
        model: str(field(ui, "model")),
        input: Math.max(0, (num(field(ui, "input_token_count")) ?? 0) - (num(field(ui, "cached_content_token_count")) ?? 0)),
        output: num(field(ui, "output_token_count")) ?? 0,
        cacheRead: num(field(ui, "cached_content_token_count")),
        cacheWrite: undefined,
        reasoning: num(field(ui, "thoughts_token_count"))
      })
    }
    const perModel = field(result, "stats", "models")
    if (calls.length === 0 && isObject(perModel)) {
      // Sums per model: the finest grain stdout offers.
      for (const [model, m] of Object.entries(perModel)) {
        calls.push({
          model,
          input: Math.max(0, (num(field(m, "tokens", "prompt")) ?? 0) - (num(field(m, "tokens", "cached")) ?? 0)),
          output: num(field(m, "tokens", "candidates")) ?? 0,
          cacheRead: num(field(m, "tokens", "cached")),
          cacheWrite: undefined,
          reasoning: num(field(m, "tokens", "thoughts"))
        })
      }
    }
    const initModel = str(field(evs.find((e) => isObject(e) && e.type === "system"), "model"))
    return transcript("qwen", answer, calls, [initModel])
  }
}
