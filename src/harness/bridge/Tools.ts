/**
 * The protocol's tools as each CLI can take them over MCP: names within the CLIs' 64-character
 * limit (a CLI prefixes its server's name: claude and codex `mcp__assay__`, opencode `assay_`),
 * and, for the CLIs that refuse them (gemini, qwen), JSON Schemas with `$ref`/`$defs` inlined and
 * the keywords they reject dropped. The adaptation is named in the candidate's registry entry, so
 * it is part of the inputs id.
 */
import { createHash } from "node:crypto"
import type { ToolSpec } from "../../world/Tool.ts"
import type { HarnessName } from "../Harness.ts"
import type { McpTool } from "./Mcp.ts"

/** What the CLI puts before an MCP tool's name when it offers the tool to its model. */
export const cliPrefix: Readonly<Record<HarnessName, string>> = {
  claude: "mcp__assay__",
  codex: "mcp__assay__",
  opencode: "assay_",
  gemini: "mcp_assay_",
  qwen: "mcp__assay__",
  pi: ""
}

/** Schemas as the CLI takes them: `strict` for the Gemini family. */
export const adaptation: Readonly<Record<HarnessName, "plain" | "gemini">> = {
  claude: "plain",
  codex: "plain",
  opencode: "plain",
  gemini: "gemini",
  qwen: "gemini",
  pi: "plain"
}

/**
 * The version of this adaptation, named in the inputs id: a change here is a new candidate.
 * 2: a folder task (coding-repair) is the CLI's work folder, with its own tools.
 */
export const ADAPTATION_VERSION = "mcp-bridge/2"

const MAX_NAME = 64

/** A name the CLI accepts: [A-Za-z0-9_-], and short enough with the CLI's prefix (a hash keeps it unique). */
export const mcpNameOf = (harness: HarnessName, name: string): string => {
  const clean = name.replace(/[^A-Za-z0-9_-]/g, "_")
  const room = MAX_NAME - cliPrefix[harness].length
  if (clean.length <= room && clean === name) return clean
  if (clean.length <= room) return clean
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 8)
  return `${clean.slice(0, room - 9)}_${hash}`
}

type Schema = { readonly [key: string]: unknown }

const isObject = (u: unknown): u is Schema => typeof u === "object" && u !== null && !Array.isArray(u)

// Keywords the Gemini API's function declarations reject (gemini-cli #13326 and reports).
const geminiDropped = new Set(["$schema", "$id", "$defs", "definitions", "additionalProperties", "patternProperties", "examples", "$comment", "default", "title"])

/** `$ref`s to `#/$defs/X` or `#/definitions/X` replaced by the definition (cycles cut to `{}`). */
const inline = (node: unknown, defs: Schema, seen: ReadonlyArray<string>, gemini: boolean): unknown => {
  if (Array.isArray(node)) return node.map((n) => inline(n, defs, seen, gemini))
  if (!isObject(node)) return node
  const ref = node["$ref"]
  if (typeof ref === "string") {
    const name = ref.replace(/^#\/(\$defs|definitions)\//, "")
    const target = defs[name]
    if (target === undefined || seen.includes(name)) return {}
    const { $ref: _ref, ...rest } = node
    return inline({ ...(target as Schema), ...rest }, defs, [...seen, name], gemini)
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(node)) {
    if (gemini && geminiDropped.has(k)) continue
    if (!gemini && (k === "$defs" || k === "definitions")) continue
    // `const` is refused by Gemini: a one-value enum says the same.
    if (gemini && k === "const") {
      out["enum"] = [v]
      continue
    }
    // Properties are names, not keywords: keep every one, adapt each schema.
    out[k] = k === "properties" && isObject(v)
      ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, inline(s, defs, seen, gemini)]))
      : inline(v, defs, seen, gemini)
  }
  return out
}

/** A tool's input schema as the CLI takes it. */
export const adaptSchema = (harness: HarnessName, schema: Schema): Schema => {
  const defs = { ...(isObject(schema["definitions"]) ? schema["definitions"] : {}), ...(isObject(schema["$defs"]) ? schema["$defs"] : {}) }
  const adapted = inline(schema, defs, [], adaptation[harness] === "gemini")
  return isObject(adapted) ? adapted : { type: "object" }
}

/** The tools offered over MCP, and the way back from a name the CLI uses to the protocol's. */
export interface ToolNames {
  readonly mcp: ReadonlyArray<McpTool>
  /** the protocol's name of a tool as the CLI (or its model) names it; undefined for the CLI's own tools */
  readonly ours: (cliName: string) => string | undefined
  /** the name the CLI's model must call for one of the protocol's tools */
  readonly theirs: (name: string) => string
}

export const toolNames = (harness: HarnessName, tools: ReadonlyArray<ToolSpec>): ToolNames => {
  const byMcp = new Map<string, string>()
  const toMcp = new Map<string, string>()
  const mcp = tools.map((t) => {
    const name = mcpNameOf(harness, t.name)
    byMcp.set(name, t.name)
    toMcp.set(t.name, name)
    return { name, description: t.description, inputSchema: adaptSchema(harness, t.parameters as Schema) }
  })
  const prefix = cliPrefix[harness]
  return {
    mcp,
    ours: (cliName) => {
      // The CLI's own prefix first, then the other forms CLIs use for a server's tools.
      for (const p of [prefix, "mcp__assay__", "mcp_assay_", "assay__", "assay_"]) {
        if (p.length > 0 && cliName.startsWith(p)) {
          const found = byMcp.get(cliName.slice(p.length))
          if (found !== undefined) return found
        }
      }
      return undefined
    },
    theirs: (name) => `${prefix}${toMcp.get(name) ?? name}`
  }
}
