#!/usr/bin/env node
// A stand-in for codex under assay's bridge (test/harness/bridgeFaults.test.ts): it reads the
// config.toml assay writes (base_url, the MCP server, request_max_retries), lists the MCP tools
// and runs a Responses tool loop; like codex, a 429 or 5xx answer is retried
// `request_max_retries` times, then the run fails. What it does besides is read from
// `standin.json` beside it (a test copies it into a folder of its own with one):
//   files:   { path: text } written into its work folder first, as a CLI's own file tool would;
//   aux:     true: one side request (no tools) after its first turn's answer, as a CLI's title request;
//   retries: N: retries of its own whatever the config says (a CLI whose retries are fixed);
//   turns:   N: exits (code 3) without replying once it has made N turns.
//   after:   true: once it has answered in words, one more request with the tools (as qwen's memory
//            note on a task with no tools, which nothing tells from a turn), waited on before it exits.
// Each answer's status is printed on stderr as `status N` (a test reads what the CLI saw).
import * as fs from "node:fs"
import * as path from "node:path"

const args = process.argv.slice(2)
if (args[0] === "--version") {
  console.log("codex-cli 0.0.0-standin")
  process.exit(0)
}
const optionsFile = new URL("./standin.json", import.meta.url)
const options = fs.existsSync(optionsFile) ? JSON.parse(fs.readFileSync(optionsFile, "utf8")) : {}
const config = fs.readFileSync(path.join(process.env.CODEX_HOME, "config.toml"), "utf8")
const baseUrl = JSON.parse(/^base_url = (.*)$/m.exec(config)[1])
const mcpUrl = JSON.parse(/\[mcp_servers\.assay\]\nurl = (.*)$/m.exec(config)[1])
const retries = options.retries ?? Number(/^request_max_retries = (\d+)$/m.exec(config)[1])
const key = process.env.ASSAY_PROXY_KEY
const prompt = args[args.length - 1]
const log = (line) => process.stderr.write(line + "\n")

for (const [p, text] of Object.entries(options.files ?? {})) {
  fs.mkdirSync(path.dirname(path.join(process.cwd(), p)), { recursive: true })
  fs.writeFileSync(path.join(process.cwd(), p), text)
}

let rpcId = 0
const mcp = async (method, params) => {
  const res = await fetch(mcpUrl, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params })
  })
  const body = JSON.parse(await res.text())
  if (body.error) throw new Error(JSON.stringify(body.error))
  return body.result
}

/** One request to the model endpoint, retried on 429 and 5xx as codex does; null once it gives up. */
const respond = async (body) => {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${baseUrl}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body)
    })
    log(`status ${res.status}`)
    if (res.status === 200) return await res.json()
    const text = await res.text()
    if (![429, 500, 502, 503, 504].includes(res.status) || attempt >= retries) {
      process.stdout.write(JSON.stringify({ type: "turn.failed", error: { message: text } }) + "\n")
      return null
    }
  }
}

await mcp("initialize", { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "standin", version: "0" } })
const { tools } = await mcp("tools/list", {})
const offered = tools.map((t) => ({ type: "function", name: `mcp__assay__${t.name}`, description: t.description, parameters: t.inputSchema }))
const input = [{ type: "message", role: "user", content: [{ type: "input_text", text: prompt }] }]
const usage = { input: 0, output: 0 }
for (let turn = 0; turn < 50; turn++) {
  if (options.turns !== undefined && turn >= options.turns) process.exit(3)
  const body = await respond({ model: "standin", instructions: "You are codex.", input, tools: offered, stream: false })
  if (body === null) process.exit(1)
  if (turn === 0 && options.aux === true) {
    // Whether it is answered or not, it goes on: a title is not the CLI's work.
    await respond({ model: "standin", instructions: "Write a title.", input: "a title, please", tools: [], stream: false })
  }
  usage.input += body.usage?.input_tokens ?? 0
  usage.output += body.usage?.output_tokens ?? 0
  const calls = body.output.filter((o) => o.type === "function_call")
  if (calls.length === 0) {
    const text = body.output.filter((o) => o.type === "message").flatMap((m) => m.content).map((c) => c.text ?? "").join("")
    process.stdout.write(JSON.stringify({ type: "item.completed", item: { id: "item_1", type: "agent_message", text } }) + "\n")
    process.stdout.write(JSON.stringify({ type: "turn.completed", usage: { input_tokens: usage.input, cached_input_tokens: 0, output_tokens: usage.output } }) + "\n")
    if (options.after === true) {
      const res = await fetch(`${baseUrl}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: "standin", instructions: "Note what to remember.", input, tools: offered, stream: false })
      })
      log(`status ${res.status}`)
    }
    process.exit(0)
  }
  for (const c of calls) input.push({ type: "function_call", call_id: c.call_id, name: c.name, arguments: c.arguments })
  for (const c of calls) {
    const result = await mcp("tools/call", { name: c.name.replace(/^mcp__assay__/, ""), arguments: JSON.parse(c.arguments || "{}") })
    input.push({ type: "function_call_output", call_id: c.call_id, output: result.content.map((x) => x.text).join("") })
  }
}
process.exit(2)
