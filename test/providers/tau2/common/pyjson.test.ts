import { describe, expect, it } from "@effect/vitest"
import { compareCodePoints, dict, dumps, float, pyEquals, reprFloat, round2, sortedStrings } from "../../../../providers/tau2/common/pyjson.ts"

describe("repr(float)", () => {
  it("prints integral floats with .0 and keeps the sign of zero", () => {
    expect(reprFloat(198)).toBe("198.0")
    expect(reprFloat(0)).toBe("0.0")
    expect(reprFloat(-0)).toBe("-0.0")
    expect(reprFloat(-25)).toBe("-25.0")
  })

  it("uses the shortest round-trip digits", () => {
    expect(reprFloat(0.1 + 0.2)).toBe("0.30000000000000004")
    expect(reprFloat(14.249999999999943)).toBe("14.249999999999943")
    expect(reprFloat(0.04999999999999716)).toBe("0.04999999999999716")
  })

  it("switches to exponent form below 1e-4 and from 1e16, with a signed two-digit exponent", () => {
    expect(reprFloat(0.0001)).toBe("0.0001")
    expect(reprFloat(0.00001)).toBe("1e-05")
    expect(reprFloat(1e16)).toBe("1e+16")
    expect(reprFloat(1234567890123456)).toBe("1234567890123456.0")
    expect(reprFloat(6.1184299744998296e16)).toBe("6.1184299744998296e+16")
    expect(reprFloat(1.5e-300)).toBe("1.5e-300")
    expect(reprFloat(Infinity)).toBe("inf")
    expect(reprFloat(Number.NaN)).toBe("nan")
  })
})

describe("round(x, 2)", () => {
  it("rounds the exact binary value, ties to even", () => {
    expect(round2(0.125)).toBe(0.12)
    expect(round2(0.375)).toBe(0.38)
    expect(round2(-0.125)).toBe(-0.12)
    expect(round2(2.675)).toBe(2.67) // 2.675 is below the tie in binary
    expect(round2(917.015)).toBe(917.01)
    expect(round2(1.005)).toBe(1)
    expect(round2(4079.45 + 49)).toBe(4128.45)
  })

  it("keeps negative zero and huge values", () => {
    expect(Object.is(round2(-0.001), -0)).toBe(true)
    expect(Object.is(round2(-0), -0)).toBe(true)
    expect(round2(6.1184299744998296e16)).toBe(6.1184299744998296e16)
  })
})

describe("json.dumps", () => {
  const value = dict([
    ["b", float(1)],
    ["a", [1, "x", null, true, false]],
    ["é", "\u00e9\u007f\"\\\n\r\t\b\f\u0001/😀"]
  ])

  it("uses Python's default separators and ASCII escapes", () => {
    expect(dumps(value)).toBe(
      '{"b": 1.0, "a": [1, "x", null, true, false], "\\u00e9": "\\u00e9\\u007f\\"\\\\\\n\\r\\t\\b\\f\\u0001/\\ud83d\\ude00"}'
    )
  })

  it("writes non-ASCII raw with ensure_ascii=False, compact separators and sorted keys", () => {
    expect(dumps(value, { ensureAscii: false, sortKeys: true, separators: [",", ":"] })).toBe(
      '{"a":[1,"x",null,true,false],"b":1.0,"é":"é\u007f\\"\\\\\\n\\r\\t\\b\\f\\u0001/😀"}'
    )
  })

  it("keeps dict insertion order even for integer-like keys", () => {
    expect(dumps(dict([["9", 1], ["10", 2]]))).toBe('{"9": 1, "10": 2}')
  })
})

describe("Python string order and equality", () => {
  it("orders by code point, so astral characters sort after U+FFFF", () => {
    expect(compareCodePoints("\uffff", "😀")).toBeLessThan(0)
    expect(sortedStrings(["b", "a", "😀", "\uffee"])).toEqual(["a", "b", "\uffee", "😀"])
  })

  it("compares like Python ==: 1 == 1.0 == True, dicts without order", () => {
    expect(pyEquals({ a: 1, b: [true] }, { b: [1], a: 1 })).toBe(true)
    expect(pyEquals({ a: "1" }, { a: 1 })).toBe(false)
    expect(pyEquals([1, 2], [2, 1])).toBe(false)
  })
})
