import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { loadCategory } from "../../../providers/bfcl/data.ts"
import { parsePyJson, pyJsonDumps, type PyDict } from "../../../providers/bfcl/pyjson.ts"
import { promptMessages, promptSystemPrompt, toolSchemas } from "../../../providers/bfcl/tools.ts"

const fn = (text: string): PyDict => {
  const r = parsePyJson(text)
  if (!r.ok) throw new Error(r.error.message)
  return r.value as PyDict
}

describe("bfcl tools", () => {
  it("converts function docs as upstream's convert_to_tool does for OpenAI-style models", () => {
    const [tool] = toolSchemas([
      fn(`{"name": "geo.distance", "description": "Distance.", "parameters": {"type": "dict", "required": ["a"], "properties": {
        "a": {"type": "float", "description": "A."}, "b": {"type": "tuple", "items": {"type": "integer"}, "description": "B."},
        "c": {"type": "dict", "properties": {"d": {"type": "any", "description": "D."}}, "description": "C."}, "e": {"description": "E."}}}}`)
    ])
    expect(tool?.name).toBe("geo_distance")
    expect(tool?.functionName).toBe("geo.distance")
    expect(tool?.description).toBe("Distance. Note that the provided function is in Python 3 syntax.")
    expect(pyJsonDumps(tool!.parameters)).toBe(
      '{"type": "object", "required": ["a"], "properties": {"a": {"type": "number", "description": "A. This is a float type value.", "format": "float"}, ' +
        '"b": {"type": "array", "items": {"type": "integer"}, "description": "B."}, "c": {"type": "object", "properties": {"d": {"type": "string", "description": "D."}}, "description": "C."}, ' +
        '"e": {"description": "E.", "type": "string"}}}'
    )
  })

  it("leaves the task's own function docs unchanged", () => {
    const f = fn(`{"name": "f", "description": "x", "parameters": {"type": "dict", "properties": {"a": {"type": "float", "description": "A."}}}}`)
    toolSchemas([f])
    expect(pyJsonDumps(f)).toBe('{"name": "f", "description": "x", "parameters": {"type": "dict", "properties": {"a": {"type": "float", "description": "A."}}}}')
  })

  it.effect("prompt mode puts upstream's system prompt with the docs as indented JSON before the question", () =>
    Effect.gen(function*() {
      const [task] = yield* loadCategory("simple_python")
      const messages = promptMessages(task!)
      expect(messages[0]?.role).toBe("system")
      expect(messages[0]?.content).toBe(promptSystemPrompt(task!.functions))
      expect(messages[0]?.content.startsWith("You are an expert in composing functions.You are given a question")).toBe(true)
      expect(messages[0]?.content).toContain('Here is a list of functions in json format that you can invoke.\n[\n    {\n        "name": "calculate_triangle_area"')
      expect(messages.slice(1)).toEqual(task!.question[0])
    }))
})
