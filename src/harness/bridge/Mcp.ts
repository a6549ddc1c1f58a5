/**
 * The world's tools as an MCP server, for one Attempt, on the official SDK's low-level `Server`
 * (raw JSON Schemas, no zod) over its streamable HTTP transport in stateless mode: since SDK 1.26 a
 * transport serves one request and a server connects once, so each POST gets its own pair, and
 * every pair answers from the same Attempt's tool list and call handler.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import type { JsonObject } from "../../model/WireServe.ts"

export interface McpTool {
  /** the name the CLI sees (within its 64-character limit) */
  readonly name: string
  readonly description: string
  readonly inputSchema: JsonObject
}

export interface McpToolResult {
  readonly text: string
  readonly isError: boolean
}

export interface McpEndpoint {
  readonly tools: ReadonlyArray<McpTool>
  /** A `tools/list` was answered: the CLI has the tools. */
  readonly onListed: () => void
  /** A `tools/call`: answered when the Attempt has the tool's result. */
  readonly call: (name: string, args: Record<string, unknown>) => Promise<McpToolResult>
}

const serverFor = (endpoint: McpEndpoint): Server => {
  const server = new Server({ name: "assay", version: "1" }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => {
    endpoint.onListed()
    return { tools: endpoint.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: { ...t.inputSchema, type: "object" as const } })) }
  })
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const result = await endpoint.call(request.params.name, request.params.arguments ?? {})
    return { content: [{ type: "text" as const, text: result.text }], isError: result.isError }
  })
  return server
}

/** Answers one HTTP request to the MCP route (POST; GET and DELETE are refused as a stateless server does). */
export const handleMcp = async (endpoint: McpEndpoint, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
  const server = serverFor(endpoint)
  // No session id generator: the stateless mode.
  const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true })
  res.on("close", () => {
    void transport.close()
    void server.close()
  })
  await server.connect(transport)
  await transport.handleRequest(req, res, body)
}
