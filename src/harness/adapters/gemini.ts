/**
 * gemini-cli (`@google/gemini-cli`). Headless: `gemini -p --skip-trust --output-format json --yolo`.
 * An endpoint is GOOGLE_GEMINI_BASE_URL + GEMINI_API_KEY with a private HOME whose
 * `~/.gemini/settings.json` selects API-key auth (else exit 41). Per-call usage is read from the
 * session file's `gemini` records (`tokens`); stdout `stats.models` gives per-model sums otherwise.
 * Not exercised against a live binary here; parser tested on constructed transcripts.
 */
import * as path from "node:path"
import { field, type HarnessAdapter, isObject, jsonLines, lastJsonValue, type ModelCall, num, str, transcript } from "../Harness.ts"

export const gemini: HarnessAdapter = {
  name: "gemini",
  binary: "gemini",
  npmPackage: "@google/gemini-cli",
  vendors: ["google", "gemini"],
  invocation: ({ endpoint, model, prompt, stateDir }) => {
    const args = ["-p", prompt, "--skip-trust", "--output-format", "json", "--yolo"]
    if (model !== undefined) args.push("-m", model)
    if (endpoint === undefined) return { args, env: { GEMINI_CLI_TRUST_WORKSPACE: "true" }, unsetEnv: [], files: [] }
    const home = path.join(stateDir, "home")
    return {
      args,
      env: {
        HOME: home,
        GEMINI_CLI_TRUST_WORKSPACE: "true",
        GOOGLE_GEMINI_BASE_URL: endpoint.baseUrl.replace(/\/$/, ""),
        GEMINI_API_KEY: endpoint.apiKey
      },
      unsetEnv: ["GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"],
      files: [
        {
          path: path.join(home, ".gemini", "settings.json"),
          content: JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }, null, 2)
        }
      ]
    }
  },
  sessionDirs: (stateDir) => [path.join(stateDir, "home", ".gemini", "tmp")],
  parse: ({ sessionFiles, stdout }) => {
    const out = lastJsonValue(stdout)
    const answer = str(field(out, "response"))
    const calls: Array<ModelCall> = []
    for (const r of sessionFiles.flatMap(jsonLines)) {
      if (r.type !== "gemini" || !isObject(r.tokens)) continue
      calls.push({
        model: str(r.model),
        input: Math.max(0, (num(field(r.tokens, "input")) ?? 0) - (num(field(r.tokens, "cached")) ?? 0)),
        output: num(field(r.tokens, "output")) ?? 0,
        cacheRead: num(field(r.tokens, "cached")),
        cacheWrite: undefined,
        reasoning: num(field(r.tokens, "thoughts"))
      })
    }
    const perModel = field(out, "stats", "models")
    if (calls.length === 0 && isObject(perModel)) {
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
    return transcript("gemini", answer, calls, isObject(perModel) ? Object.keys(perModel) : [])
  }
}
