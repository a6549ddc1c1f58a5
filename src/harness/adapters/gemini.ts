/**
 * gemini-cli (`@google/gemini-cli`). Headless: `gemini -p --skip-trust --output-format json --yolo`.
 * An endpoint is GOOGLE_GEMINI_BASE_URL + GEMINI_API_KEY with a private HOME whose
 * `~/.gemini/settings.json` selects API-key auth (else exit 41). Run with gemini-cli 0.61.0 against
 * the loopback server in test/harness/RealCli.test.ts.
 *
 * Usage, as gemini-cli 0.61.0 writes it:
 * - the session file (`~/.gemini/tmp/<project>/chats/session-*.jsonl`) has a `gemini` record per
 *   main-agent call, written again under the same `id` when its tool calls are attached (so records
 *   are keyed by id, the last one kept); its `tokens` are the API's usage as they come:
 *   `input` = promptTokenCount (cached included), `output` = candidatesTokenCount (thoughts not
 *   included), `thoughts`, `tool` (tool-use prompt tokens, beside the prompt), `cached`;
 * - stdout's `stats.models.<m>.tokens` sums every call per model, side calls included (the router
 *   that picks a model when none is given is not in the session file): `prompt`, `cached`,
 *   `candidates`, `thoughts`, `tool`. What the sums hold beyond the session's calls is counted as
 *   one more call of that model.
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

/** Gemini's counts as gemini-cli reports them: the prompt includes the cached tokens; thoughts and
 * tool-use prompt tokens are counted beside the candidates and the prompt. */
interface GeminiCounts {
  readonly prompt: number
  readonly cached: number
  readonly candidates: number
  readonly thoughts: number
  readonly tool: number
}

const callOf = (model: string | undefined, c: GeminiCounts): ModelCall => ({
  model,
  input: Math.max(0, c.prompt - c.cached) + c.tool,
  output: c.candidates + c.thoughts,
  cacheRead: c.cached,
  cacheWrite: undefined,
  reasoning: c.thoughts
})

const countsOf = (tokens: unknown, promptKey: "input" | "prompt", outputKey: "output" | "candidates"): GeminiCounts => ({
  prompt: num(field(tokens, promptKey)) ?? 0,
  cached: num(field(tokens, "cached")) ?? 0,
  candidates: num(field(tokens, outputKey)) ?? 0,
  thoughts: num(field(tokens, "thoughts")) ?? 0,
  tool: num(field(tokens, "tool")) ?? 0
})

const minus = (a: GeminiCounts, b: GeminiCounts): GeminiCounts => ({
  prompt: Math.max(0, a.prompt - b.prompt),
  cached: Math.max(0, a.cached - b.cached),
  candidates: Math.max(0, a.candidates - b.candidates),
  thoughts: Math.max(0, a.thoughts - b.thoughts),
  tool: Math.max(0, a.tool - b.tool)
})

const plus = (a: GeminiCounts, b: GeminiCounts): GeminiCounts => ({
  prompt: a.prompt + b.prompt,
  cached: a.cached + b.cached,
  candidates: a.candidates + b.candidates,
  thoughts: a.thoughts + b.thoughts,
  tool: a.tool + b.tool
})

const none: GeminiCounts = { prompt: 0, cached: 0, candidates: 0, thoughts: 0, tool: 0 }

const isNone = (c: GeminiCounts): boolean => c.prompt + c.cached + c.candidates + c.thoughts + c.tool === 0

/** The session's calls in order, one per record id (the last record of an id wins). */
const sessionCalls = (sessionFiles: ReadonlyArray<string>): ReadonlyArray<{ readonly model: string | undefined; readonly counts: GeminiCounts }> => {
  const byId = new Map<string, { readonly model: string | undefined; readonly counts: GeminiCounts }>()
  let anonymous = 0
  for (const r of sessionFiles.flatMap(jsonLines)) {
    if (r.type !== "gemini" || !isObject(r.tokens)) continue
    byId.set(str(r.id) ?? `#${anonymous++}`, { model: str(r.model), counts: countsOf(r.tokens, "input", "output") })
  }
  return [...byId.values()]
}

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
    const session = sessionCalls(sessionFiles)
    const calls: Array<ModelCall> = session.map((c) => callOf(c.model, c.counts))
    const perModel = field(out, "stats", "models")
    if (isObject(perModel)) {
      for (const [model, m] of Object.entries(perModel)) {
        const seen = session.filter((c) => c.model === model).reduce((sum, c) => plus(sum, c.counts), none)
        const rest = minus(countsOf(field(m, "tokens"), "prompt", "candidates"), seen)
        if (!isNone(rest)) calls.push(callOf(model, rest))
      }
    }
    return transcript("gemini", answer, calls, isObject(perModel) ? Object.keys(perModel) : [])
  }
}
