/**
 * A small scripted model server on 127.0.0.1 for the real-CLI tests, until src/model/LoopbackServer.ts
 * lands. Speaks OpenAI Responses (`POST /v1/responses`) and chat completions
 * (`POST /v1/chat/completions`), both streamed as SSE. Each request pops the next scripted reply;
 * when the script is exhausted the last reply repeats (CLIs make extra calls: titles, memory).
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export type Reply =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "tool"; readonly name: string; readonly arguments: Record<string, unknown> }

export interface Usage {
  readonly input: number
  readonly output: number
  readonly cached: number
}

export interface RecordedRequest {
  readonly path: string
  readonly body: unknown
}

export interface Loopback {
  readonly baseUrl: string
  readonly requests: Array<RecordedRequest>
  readonly close: () => Promise<void>
}

const sse = (res: http.ServerResponse, events: ReadonlyArray<{ event?: string; data: unknown }>) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  for (const e of events) {
    if (e.event !== undefined) res.write(`event: ${e.event}\n`)
    res.write(`data: ${typeof e.data === "string" ? e.data : JSON.stringify(e.data)}\n\n`)
  }
  res.end()
}

const responsesEvents = (reply: Reply, usage: Usage, model: string, n: number) => {
  const id = `resp_${n}`
  const item =
    reply.kind === "text"
      ? {
          type: "message",
          id: `msg_${n}`,
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: reply.text, annotations: [] }]
        }
      : {
          type: "function_call",
          id: `fc_${n}`,
          call_id: `call_${n}`,
          name: reply.name,
          arguments: JSON.stringify(reply.arguments),
          status: "completed"
        }
  const base = { id, object: "response", created_at: 1, model, status: "in_progress", output: [] }
  const events: Array<{ event: string; data: unknown }> = [
    { event: "response.created", data: { type: "response.created", response: base } },
    { event: "response.output_item.added", data: { type: "response.output_item.added", output_index: 0, item } }
  ]
  if (reply.kind === "text") {
    events.push({
      event: "response.output_text.delta",
      data: { type: "response.output_text.delta", item_id: item.id, output_index: 0, content_index: 0, delta: reply.text }
    })
  }
  events.push(
    { event: "response.output_item.done", data: { type: "response.output_item.done", output_index: 0, item } },
    {
      event: "response.completed",
      data: {
        type: "response.completed",
        response: {
          ...base,
          status: "completed",
          output: [item],
          usage: {
            input_tokens: usage.input,
            input_tokens_details: { cached_tokens: usage.cached },
            output_tokens: usage.output,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: usage.input + usage.output
          }
        }
      }
    }
  )
  return events
}

const chatEvents = (reply: Reply, usage: Usage, model: string, n: number) => {
  const base = { id: `chatcmpl_${n}`, object: "chat.completion.chunk", created: 1, model }
  const delta =
    reply.kind === "text"
      ? { role: "assistant", content: reply.text }
      : {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              index: 0,
              id: `call_${n}`,
              type: "function",
              function: { name: reply.name, arguments: JSON.stringify(reply.arguments) }
            }
          ]
        }
  return [
    { data: { ...base, choices: [{ index: 0, delta, finish_reason: null }] } },
    {
      data: {
        ...base,
        choices: [{ index: 0, delta: {}, finish_reason: reply.kind === "text" ? "stop" : "tool_calls" }]
      }
    },
    {
      data: {
        ...base,
        choices: [],
        usage: {
          prompt_tokens: usage.input,
          completion_tokens: usage.output,
          total_tokens: usage.input + usage.output,
          prompt_tokens_details: { cached_tokens: usage.cached }
        }
      }
    },
    { data: "[DONE]" }
  ]
}

export const startLoopback = (
  script: ReadonlyArray<Reply>,
  usage: Usage = { input: 100, output: 20, cached: 0 }
): Promise<Loopback> => {
  const requests: Array<RecordedRequest> = []
  let n = 0
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8")
      let body: unknown = raw
      try {
        body = raw === "" ? undefined : JSON.parse(raw)
      } catch {
        body = raw
      }
      const path = (req.url ?? "/").split("?")[0] ?? "/"
      requests.push({ path, body })
      const model =
        typeof body === "object" && body !== null && "model" in body && typeof body.model === "string"
          ? body.model
          : "scripted"
      const reply = script[Math.min(n, script.length - 1)]
      if (req.method === "POST" && reply !== undefined && path.endsWith("/responses")) {
        n++
        return sse(res, responsesEvents(reply, usage, model, n))
      }
      if (req.method === "POST" && reply !== undefined && path.endsWith("/chat/completions")) {
        n++
        return sse(res, chatEvents(reply, usage, model, n))
      }
      if (req.method === "GET" && path.endsWith("/models")) {
        res.writeHead(200, { "content-type": "application/json" })
        return res.end(JSON.stringify({ object: "list", data: [{ id: model, object: "model" }] }))
      }
      res.writeHead(404, { "content-type": "application/json" })
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }))
    })
  })
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resolve({
        baseUrl: `http://127.0.0.1:${port}`,
        requests,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
}
