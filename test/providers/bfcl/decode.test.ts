import { describe, expect, it } from "@effect/vitest"
import { decodeFunctionCallingReply, decodePromptOutput, decodeToolCalls } from "../../../providers/bfcl/decode.ts"
import { pyRepr } from "../../../providers/bfcl/pyjson.ts"

// Expected values are what upstream's default_decode_ast_prompting returns (checked with upstream's
// own code at 6ea57973 on these inputs).
const decoded = (text: string): string => {
  const r = decodePromptOutput(text)
  return r._tag === "Decoded" ? pyRepr(r.value) : `error`
}

describe("bfcl decoding", () => {
  it("prompt mode reads Python call syntax, with or without the surrounding brackets", () => {
    expect(decoded(`[get_weather(city="Paris", unit='celsius')]`)).toBe("[{'get_weather': {'city': 'Paris', 'unit': 'celsius'}}]")
    expect(decoded(`get_weather(city="Paris")`)).toBe("[{'get_weather': {'city': 'Paris'}}]")
    expect(decoded("`[f(a=1)]`")).toBe("[{'f': {'a': 1}}]")
    expect(decoded(`[math.factorial(n=5), a.b.c(x=[1, 2.0, -3], y={'k': (1,)})]`)).toBe(
      "[{'math.factorial': {'n': 5}}, {'a.b.c': {'x': [1, 2.0, -3], 'y': {'k': (1,)}}}]"
    )
  })

  it("prompt mode resolves values as upstream: names as text, calls without keywords as text, arithmetic evaluated", () => {
    expect(decoded(`[f(x=datetime.now(), y=g(1, 2), z=h(a=1), w=lst[0], v=d['k'])]`)).toBe(
      "[{'f': {'x': 'datetime.now()', 'y': 'g(1, 2)', 'z': {'h': {'a': 1}}, 'w': 'lst[0]', 'v': \"d['k']\"}}]"
    )
    expect(decoded(`[f(x=1+2, y=2**-1, z=7//2, w=-7//2, v=7%-3, u="a"+"b", t=[1]*3, s=10/4)]`)).toBe(
      "[{'f': {'x': 3, 'y': 0.5, 'z': 3, 'w': -4, 'v': -2, 'u': 'ab', 't': [1, 1, 1], 's': 2.5}}]"
    )
    expect(decoded(`[f(x=+5, y=not True, z=None, w=..., v=CONST)]`)).toBe("[{'f': {'x': -5, 'y': -1, 'z': None, 'w': '...', 'v': 'CONST'}}]")
  })

  it("prompt mode fails where upstream's decoder fails", () => {
    for (const text of ["I cannot help with that.", "[f(a=1), 5]", "[f(x=lambda y: y)]", "[f(x=a if b else c)]", "[f(x=-name)]", "[f(a=-2**2)]", "[f(x=unknown + 1)]", "```python\n[f(a=1)]\n```"])
      expect(decoded(text)).toBe("error")
  })

  it("function-calling mode keeps ints and floats of the JSON arguments apart", () => {
    const r = decodeToolCalls([{ name: "f", arguments: '{"a": 5, "b": 5.0}' }, { name: "g", arguments: "{}" }])
    expect(r._tag === "Decoded" ? pyRepr(r.value) : r.message).toBe("[{'f': {'a': 5, 'b': 5.0}}, {'g': {}}]")
    expect(decodeToolCalls([{ name: "f", arguments: "{" }])._tag).toBe("DecodeError")
  })

  it("function-calling mode reads arguments as json.loads does: a leading zero fails, NaN and Infinity are floats", () => {
    expect(decodeToolCalls([{ name: "f", arguments: '{"month": 01}' }])._tag).toBe("DecodeError")
    const r = decodeToolCalls([{ name: "f", arguments: '{"low": -Infinity, "x": NaN}' }])
    expect(r._tag === "Decoded" ? pyRepr(r.value) : r.message).toBe("[{'f': {'low': -inf, 'x': nan}}]")
  })

  it("function-calling mode: a text reply without tool calls is a decode failure, an empty one no call", () => {
    expect(decodeFunctionCallingReply(null, "I can't do that.")._tag).toBe("DecodeError")
    expect(decodeFunctionCallingReply(null, "")).toEqual({ _tag: "Decoded", value: [] })
    expect(decodeFunctionCallingReply([], "text")).toEqual({ _tag: "Decoded", value: [] })
  })
})
