/**
 * pi (`@mariozechner/pi-coding-agent`). Headless: `pi -p --mode json`. An endpoint is a provider
 * `local` in `models.json` under a private PI_CODING_AGENT_DIR. Every assistant `message_end` on
 * stdout is one model call with its usage.
 */
import * as path from "node:path"
import { field, type HarnessAdapter, isObject, jsonLines, type ModelCall, num, str, transcript } from "../Harness.ts"

const textOf = (message: unknown): string | undefined => {
  const content = field(message, "content")
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return undefined
  const texts = content.flatMap((c) => (isObject(c) && c.type === "text" && typeof c.text === "string" ? [c.text] : []))
  return texts.length > 0 ? texts.join("") : undefined
}

export const pi: HarnessAdapter = {
  name: "pi",
  binary: "pi",
  npmPackage: "@mariozechner/pi-coding-agent",
  vendors: [],
  invocation: ({ endpoint, model, prompt, stateDir }) => {
    const dir = path.join(stateDir, "pi")
    if (endpoint === undefined) {
      return { args: ["-p", "--mode", "json", ...(model !== undefined ? ["--model", model] : []), prompt], env: {}, unsetEnv: [], files: [] }
    }
    const id = model ?? "default"
    const models = {
      providers: {
        local: {
          baseUrl: `${endpoint.baseUrl.replace(/\/$/, "")}/v1`,
          api: "openai-completions",
          apiKey: endpoint.apiKey,
          models: [{ id }]
        }
      }
    }
    return {
      args: ["-p", "--mode", "json", "--model", `local/${id}`, prompt],
      env: { PI_CODING_AGENT_DIR: dir, PI_OFFLINE: "1" },
      unsetEnv: [],
      files: [{ path: path.join(dir, "models.json"), content: JSON.stringify(models, null, 2) }]
    }
  },
  sessionDirs: () => [],
  parse: ({ stdout }) => {
    const calls: Array<ModelCall> = []
    let answer: string | undefined
    for (const e of jsonLines(stdout)) {
      if (e.type !== "message_end" || field(e, "message", "role") !== "assistant") continue
      const u = field(e, "message", "usage")
      calls.push({
        model: str(field(e, "message", "model")),
        input: num(field(u, "input")) ?? 0,
        output: num(field(u, "output")) ?? 0,
        cacheRead: num(field(u, "cacheRead")),
        cacheWrite: num(field(u, "cacheWrite")),
        reasoning: undefined
      })
      answer = textOf(field(e, "message")) ?? answer
    }
    return transcript("pi", answer, calls)
  }
}
