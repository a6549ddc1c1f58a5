/**
 * A model request as an agent CLI sends it to the bridge's proxy, read into assay's own request
 * shape (system, messages, tools), whatever wire API the CLI speaks. What assay's request has no
 * place for is dropped on purpose: images, thinking blocks, cache hints and sampling settings
 * (the model call is assay's, made with the candidate's model and assay's limits).
 */
import type { ModelRequest } from "../../model/Model.ts"
import { asArray, asString, isObject, type JsonObject, textOf, type WireApi } from "../../model/WireServe.ts"

export interface WireRequest {
  readonly api: WireApi
  /** the model id the CLI asked for (informational: the call goes to the candidate's model) */
  readonly model: string
  readonly stream: boolean
  readonly system: string
  readonly messages: ModelRequest["messages"]
  readonly tools: ModelRequest["tools"]
  /** the output bound the CLI asked for, when it named one */
  readonly maxOutputTokens: number | undefined
  /** Responses tools that came in a `namespace` group, by their `<namespace>__<name>` */
  readonly namespaced?: ReadonlyArray<string>
}

type Messages = Array<ModelRequest["messages"][number]>

const jsonText = (u: unknown): string => (typeof u === "string" ? u : JSON.stringify(u ?? null))

const parseArgs = (text: string): Record<string, unknown> => {
  try {
    const parsed: unknown = JSON.parse(text.length === 0 ? "{}" : text)
    return isObject(parsed) ? parsed : {}
  } catch {
    // A CLI replaying a model's malformed arguments: keep the text, the parsed form is empty.
    return {}
  }
}

const num = (u: unknown): number | undefined => (typeof u === "number" && Number.isFinite(u) ? u : undefined)

/** Tool results' content: a string, or text blocks (Anthropic, MCP-shaped results). */
const resultText = (content: unknown): string => (typeof content === "string" ? content : Array.isArray(content) ? textOf(content) : jsonText(content))

const anthropic = (body: JsonObject): Omit<WireRequest, "api" | "model" | "stream"> => {
  const messages: Messages = []
  const names = new Map<string, string>()
  for (const m of asArray(body["messages"]).filter(isObject)) {
    const content = m["content"]
    if (m["role"] === "assistant") {
      const blocks = typeof content === "string" ? [{ type: "text", text: content }] : asArray(content).filter(isObject)
      const text = blocks.filter((b) => b["type"] === "text").map((b) => asString(b["text"])).join("")
      const toolCalls = blocks.filter((b) => b["type"] === "tool_use").map((b) => {
        const id = asString(b["id"])
        const name = asString(b["name"])
        names.set(id, name)
        const args = isObject(b["input"]) ? b["input"] : {}
        return { id, name, arguments: args, argumentsText: JSON.stringify(args) }
      })
      messages.push({ role: "assistant", content: text.length > 0 ? text : null, ...(toolCalls.length > 0 ? { toolCalls } : {}) })
      continue
    }
    if (typeof content === "string") {
      messages.push({ role: "user", content })
      continue
    }
    const blocks = asArray(content).filter(isObject)
    for (const b of blocks.filter((b) => b["type"] === "tool_result")) {
      const id = asString(b["tool_use_id"])
      messages.push({ role: "tool", toolCallId: id, name: names.get(id) ?? "", content: resultText(b["content"]), isError: b["is_error"] === true })
    }
    const text = blocks.filter((b) => b["type"] === "text").map((b) => asString(b["text"])).join("\n")
    if (text.length > 0) messages.push({ role: "user", content: text })
  }
  const tools = asArray(body["tools"]).filter(isObject).filter((t) => typeof t["name"] === "string").map((t) => ({
    name: asString(t["name"]),
    description: asString(t["description"]),
    parameters: isObject(t["input_schema"]) ? t["input_schema"] : { type: "object" }
  }))
  return { system: textOf(body["system"]), messages, tools, maxOutputTokens: num(body["max_tokens"]) }
}

const responses = (body: JsonObject): Omit<WireRequest, "api" | "model" | "stream"> => {
  const messages: Messages = []
  const system: Array<string> = asString(body["instructions"]).length > 0 ? [asString(body["instructions"])] : []
  const names = new Map<string, string>()
  const input = body["input"]
  const items = typeof input === "string" ? [{ type: "message", role: "user", content: input }] : asArray(input).filter(isObject)
  for (const item of items) {
    const type = item["type"] ?? "message"
    if (type === "message") {
      const role = item["role"]
      const text = textOf(item["content"])
      if (role === "system" || role === "developer") system.push(text)
      else if (role === "assistant") messages.push({ role: "assistant", content: text })
      else messages.push({ role: "user", content: text })
    } else if (type === "function_call") {
      const id = asString(item["call_id"])
      // A call of a namespaced tool (codex's MCP tools) is named `<namespace>__<name>`, as its tool is.
      const name = typeof item["namespace"] === "string" ? `${item["namespace"]}__${asString(item["name"])}` : asString(item["name"])
      names.set(id, name)
      const argumentsText = asString(item["arguments"])
      const call = { id, name, arguments: parseArgs(argumentsText), argumentsText }
      // Consecutive calls of one response are one assistant message, as the built-in agent keeps them.
      const last = messages.at(-1)
      if (last !== undefined && last.role === "assistant" && (last.toolCalls !== undefined || last.content === null || last.content === "")) {
        messages[messages.length - 1] = { role: "assistant", content: last.content, toolCalls: [...(last.toolCalls ?? []), call] }
      } else messages.push({ role: "assistant", content: null, toolCalls: [call] })
    } else if (type === "function_call_output") {
      const id = asString(item["call_id"])
      messages.push({ role: "tool", toolCallId: id, name: names.get(id) ?? "", content: resultText(item["output"]) })
    }
  }
  // Tools grouped in a `namespace` (codex puts each MCP server's tools in one) are named `<namespace>__<name>`.
  const flat = asArray(body["tools"]).filter(isObject).flatMap((t) =>
    t["type"] === "namespace"
      ? asArray(t["tools"]).filter(isObject).map((inner) => ({ ...inner, name: `${asString(t["name"])}__${asString(inner["name"])}` }))
      : [t]
  )
  const tools = flat.filter((t) => t["type"] === "function").map((t) => ({
    name: asString(t["name"]),
    description: asString(t["description"]),
    parameters: isObject(t["parameters"]) ? t["parameters"] : { type: "object" }
  }))
  const namespaced = flat.filter((t) => t !== undefined && asArray(body["tools"]).includes(t) === false).map((t) => asString(t["name"]))
  return { system: system.join("\n"), messages, tools, maxOutputTokens: num(body["max_output_tokens"]), namespaced }
}

const chat = (body: JsonObject): Omit<WireRequest, "api" | "model" | "stream"> => {
  const messages: Messages = []
  const system: Array<string> = []
  const names = new Map<string, string>()
  for (const m of asArray(body["messages"]).filter(isObject)) {
    const role = m["role"]
    if (role === "system" || role === "developer") system.push(textOf(m["content"]))
    else if (role === "assistant") {
      const toolCalls = asArray(m["tool_calls"]).filter(isObject).map((c) => {
        const fn = isObject(c["function"]) ? c["function"] : {}
        const id = asString(c["id"])
        const name = asString(fn["name"])
        names.set(id, name)
        const argumentsText = asString(fn["arguments"])
        return { id, name, arguments: parseArgs(argumentsText), argumentsText }
      })
      const text = textOf(m["content"])
      messages.push({ role: "assistant", content: text.length > 0 ? text : null, ...(toolCalls.length > 0 ? { toolCalls } : {}) })
    } else if (role === "tool") {
      const id = asString(m["tool_call_id"])
      messages.push({ role: "tool", toolCallId: id, name: names.get(id) ?? asString(m["name"]), content: resultText(m["content"]) })
    } else messages.push({ role: "user", content: textOf(m["content"]) })
  }
  const tools = asArray(body["tools"]).filter(isObject).filter((t) => t["type"] === "function" && isObject(t["function"])).map((t) => {
    const fn = t["function"] as JsonObject
    return { name: asString(fn["name"]), description: asString(fn["description"]), parameters: isObject(fn["parameters"]) ? fn["parameters"] : { type: "object" } }
  })
  return { system: system.join("\n"), messages, tools, maxOutputTokens: num(body["max_completion_tokens"]) ?? num(body["max_tokens"]) }
}

const gemini = (body: JsonObject): Omit<WireRequest, "api" | "model" | "stream"> => {
  const messages: Messages = []
  // Gemini's calls carry no id where the CLI gives none: calls and responses pair by order.
  const pending: Array<{ id: string; name: string }> = []
  let n = 0
  for (const c of asArray(body["contents"]).filter(isObject)) {
    const parts = asArray(c["parts"]).filter(isObject)
    if (c["role"] === "model") {
      const text = parts.filter((p) => typeof p["text"] === "string" && p["thought"] !== true).map((p) => asString(p["text"])).join("")
      const toolCalls = parts.filter((p) => isObject(p["functionCall"])).map((p) => {
        const fc = p["functionCall"] as JsonObject
        const id = asString(fc["id"]).length > 0 ? asString(fc["id"]) : `gcall_${++n}`
        const name = asString(fc["name"])
        pending.push({ id, name })
        const args = isObject(fc["args"]) ? fc["args"] : {}
        return { id, name, arguments: args, argumentsText: JSON.stringify(args) }
      })
      messages.push({ role: "assistant", content: text.length > 0 ? text : null, ...(toolCalls.length > 0 ? { toolCalls } : {}) })
      continue
    }
    for (const p of parts.filter((p) => isObject(p["functionResponse"]))) {
      const fr = p["functionResponse"] as JsonObject
      const name = asString(fr["name"])
      const at = pending.findIndex((q) => (asString(fr["id"]).length > 0 ? q.id === fr["id"] : q.name === name))
      const id = at >= 0 ? pending.splice(at, 1)[0]!.id : asString(fr["id"])
      const response = fr["response"]
      // An MCP result comes back as {output} or {content:[{text}]}; the text is what the tool said.
      const content = isObject(response) && typeof response["output"] === "string"
        ? response["output"]
        : isObject(response) && Array.isArray(response["content"])
        ? textOf(response["content"])
        : jsonText(response)
      messages.push({ role: "tool", toolCallId: id, name, content, ...(isObject(response) && response["error"] !== undefined ? { isError: true } : {}) })
    }
    const text = parts.filter((p) => typeof p["text"] === "string").map((p) => asString(p["text"])).join("")
    if (text.length > 0) messages.push({ role: "user", content: text })
  }
  const tools = asArray(body["tools"]).filter(isObject).flatMap((t) => asArray(t["functionDeclarations"]).filter(isObject)).map((d) => ({
    name: asString(d["name"]),
    description: asString(d["description"]),
    parameters: isObject(d["parametersJsonSchema"]) ? d["parametersJsonSchema"] : isObject(d["parameters"]) ? d["parameters"] : { type: "object" }
  }))
  const system = isObject(body["systemInstruction"]) ? textOf(body["systemInstruction"]["parts"]) : ""
  const config = isObject(body["generationConfig"]) ? body["generationConfig"] : {}
  return { system, messages, tools, maxOutputTokens: num(config["maxOutputTokens"]) }
}

/** The request read from a body the router sent to `api`; the model and streaming may come from the path (Gemini). */
export const readRequest = (api: WireApi, body: JsonObject, route: { readonly model?: string; readonly stream?: boolean }): WireRequest => {
  const read = api === "anthropic-messages" ? anthropic(body) : api === "openai-responses" ? responses(body) : api === "openai-chat" ? chat(body) : gemini(body)
  return { api, model: route.model ?? asString(body["model"]), stream: route.stream ?? body["stream"] === true, ...read }
}
