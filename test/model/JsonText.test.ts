import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { items, locate, member, stringOf } from "../../src/model/JsonText.ts"

describe("JsonText.locate", () => {
  it("slices a value out of a body as the server wrote it: 5.0, spaces and escapes kept", () => {
    const body = "{\"content\": [{\"type\": \"text\", \"text\": \"a \\\"q\\\" }\"}, {\"type\":\"tool_use\",\"id\":\"t1\",\"input\": {\"x\": 5.0, \"y\": [1e3, -0.0]} }]}"
    const [text, tool] = items(member(locate(body), "content"))
    expect(stringOf(member(text, "text"))).toBe("a \"q\" }")
    expect(stringOf(member(tool, "id"))).toBe("t1")
    const input = member(tool, "input")!
    expect(body.slice(input.start, input.end)).toBe("{\"x\": 5.0, \"y\": [1e3, -0.0]}")
  })

  it("is undefined for text that is not one JSON value", () => {
    for (const bad of ["", "{", "{\"a\":}", "[1,]", "01", "{\"a\":1} x", "\"\u0001\"", "tru", "{'a': 1}"]) {
      expect(locate(bad), bad).toBeUndefined()
    }
  })

  it("spans the whole of any JSON text, and the last of duplicate keys is the member (as JSON.parse)", () => {
    FastCheck.assert(FastCheck.property(FastCheck.jsonValue(), (v) => {
      const text = JSON.stringify(v, null, 1)
      const located = locate(` ${text}\n`)
      expect(located?.start).toBe(1)
      expect(located?.end).toBe(1 + text.length)
    }))
    expect(stringOf(member(locate("{\"a\":\"1\",\"a\":\"2\"}"), "a"))).toBe("2")
  })
})
