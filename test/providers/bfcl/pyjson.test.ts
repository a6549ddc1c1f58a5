import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import {
  parsePyJson,
  parsePyJsonFields,
  pyEq,
  PyFloat,
  pyFloatRepr,
  pyJsonDumps,
  pyRepr,
  PyTuple,
  pyType,
  toPlainJson,
  type PyValue
} from "../../../providers/bfcl/pyjson.ts"

const parse = (text: string): PyValue => {
  const r = parsePyJson(text)
  if (!r.ok) throw new Error(r.error.message)
  return r.value
}

describe("pyjson", () => {
  it("keeps Python's int/float distinction that JSON.parse loses", () => {
    const v = parse("[5, 5.0, 1e-09, 1E3, -0.5, 0]") as ReadonlyArray<PyValue>
    expect(v.map(pyType)).toEqual(["int", "float", "float", "float", "float", "int"])
    expect(pyRepr(v)).toBe("[5, 5.0, 1e-09, 1000.0, -0.5, 0]")
  })

  // What Python 3.11's json.loads gives for each (its error offsets are its `char` figures).
  it("reads numbers as Python's json does: a leading 0 is the whole integer part, NaN and ±Infinity are floats", () => {
    expect(pyRepr(parse("[0, -0, 0.5, 0e1, -0.0]"))).toBe("[0, 0, 0.5, 0.0, -0.0]")
    const special = parse("[NaN, Infinity, -Infinity]") as ReadonlyArray<PyValue>
    expect(special.map(pyType)).toEqual(["float", "float", "float"])
    expect(pyRepr(special)).toBe("[nan, inf, -inf]")
    const offset = (text: string) => {
      const r = parsePyJson(text)
      return r.ok ? `parsed ${pyRepr(r.value)}` : r.error.offset
    }
    expect(offset('{"a": 01}')).toBe(7)
    expect(offset("[01]")).toBe(2)
    expect(offset("00")).toBe(1)
    expect(offset("-01")).toBe(2)
    expect(offset("[-Infinity1]")).toBe(10)
    expect(offset("Infinityx")).toBe(8)
    expect(parsePyJson("-").ok).toBe(false)
    // Unread members are checked as strictly, and NaN there is no error.
    const line = parsePyJsonFields('{"valid": NaN, "id": 1, "n": -Infinity}', new Set(["id"]))
    expect(line.ok && pyRepr(line.value)).toBe("{'id': 1}")
    expect(parsePyJsonFields('{"valid": 01, "id": 1}', new Set(["id"])).ok).toBe(false)
  })

  it("keeps integers beyond 2^53 exact", () => {
    const v = parse("579838452023959405")
    expect(typeof v).toBe("bigint")
    expect(pyRepr(v)).toBe("579838452023959405")
    expect(pyEq(v, new PyFloat(579838452023959405))).toBe(false)
  })

  it("reads {\"__tuple__\": [...]} as a tuple, which equals no list", () => {
    const v = parse('{"__tuple__": [1.0, 3.0]}')
    expect(v).toBeInstanceOf(PyTuple)
    expect(pyRepr(v)).toBe("(1.0, 3.0)")
    expect(pyEq(v, [new PyFloat(1), new PyFloat(3)])).toBe(false)
    expect(pyEq(v, new PyTuple([1, 3]))).toBe(true)
    expect(pyRepr(new PyTuple(["a"]))).toBe("('a',)")
  })

  it("keeps dict key order, including integer-like keys", () => {
    expect(pyRepr(parse('{"b": 1, "10": 2, "a": null}'))).toBe("{'b': 1, '10': 2, 'a': None}")
  })

  it("has Python's equality: True == 1 == 1.0, False == 0, no str/number mixing", () => {
    expect(pyEq(true, 1)).toBe(true)
    expect(pyEq(true, new PyFloat(1))).toBe(true)
    expect(pyEq(false, 0)).toBe(true)
    expect(pyEq("1", 1)).toBe(false)
    expect(pyEq(null, 0)).toBe(false)
    expect(pyEq([1, [2]], [new PyFloat(1), [new PyFloat(2)]])).toBe(true)
    expect(pyEq(parse('{"a": [1]}'), parse('{"a": [1.0]}'))).toBe(true)
  })

  it("prints reprs as Python does", () => {
    expect(pyRepr("x")).toBe("'x'")
    expect(pyRepr("it's")).toBe('"it\'s"')
    expect(pyRepr("a'b\"c")).toBe("'a\\'b\"c'")
    expect(pyRepr("\u00a0")).toBe("'\\xa0'")
    expect(pyRepr("\t\n")).toBe("'\\t\\n'")
    expect(pyRepr("é中")).toBe("'é中'")
    expect(pyRepr([null, true, false, ""])).toBe("[None, True, False, '']")
    expect(pyFloatRepr(1e16)).toBe("1e+16")
    expect(pyFloatRepr(1e15)).toBe("1000000000000000.0")
    expect(pyFloatRepr(0.0001)).toBe("0.0001")
    expect(pyFloatRepr(0.00001)).toBe("1e-05")
    expect(pyFloatRepr(-0.15000000000000002)).toBe("-0.15000000000000002")
    expect(pyFloatRepr(-0)).toBe("-0.0")
    expect(pyFloatRepr(2.5e-10)).toBe("2.5e-10")
  })

  it("dumps JSON as Python's json.dumps (ascii, float reprs, indent)", () => {
    expect(pyJsonDumps(parse('{"a": [5.0, 1], "b": "é"}'))).toBe('{"a": [5.0, 1], "b": "\\u00e9"}')
    expect(pyJsonDumps(parse('{"a": [], "b": {}}'), 2)).toBe('{\n  "a": [],\n  "b": {}\n}')
  })

  it("reports malformed JSON with an offset", () => {
    const r = parsePyJson('{"a": }')
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.error.offset).toBe(6)
  })

  it.prop("reads any JSON to the same plain value JSON.parse gives", [fc.json()], ([text]) => {
    expect(toPlainJson(parse(text))).toEqual(JSON.parse(text))
  })

  it.prop("a float's repr reads back as the same float", [fc.double({ noNaN: true, noDefaultInfinity: true })], ([x]) => {
    const repr = pyFloatRepr(x)
    expect(Object.is(Number(repr), x)).toBe(true)
    expect(repr).toMatch(/\.|e|^-?0\.0$/)
  })
})

describe("toPlainJson", () => {
  it("keeps a key named __proto__ as an own key, and every other key in JSON.parse's order", () => {
    const text = '{"b": 1, "__proto__": {"x": 2.5}, "10": [true, null], "a": "s"}'
    const plain = toPlainJson(parse(text)) as Record<string, unknown>
    expect(Object.keys(plain)).toEqual(["10", "b", "__proto__", "a"])
    expect(Object.getPrototypeOf(plain)).toBe(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(plain, "__proto__")).toEqual({ value: { x: 2.5 }, enumerable: true, writable: true, configurable: true })
    expect(JSON.stringify(plain)).toBe(JSON.stringify(JSON.parse(text)))
  })
})

describe("pyStrRepr", () => {
  // Python's repr of a str, character by character: the reference the native-replace path must equal.
  const reference = (s: string): string => {
    const quote = s.includes("'") && !s.includes('"') ? '"' : "'"
    let out = quote
    for (const ch of s) out += ch === quote || ch === "\\" ? "\\" + ch : ch
    return out + quote
  }
  const printable = fc.string({ unit: fc.constantFrom(..."ab '\"\\\\x~ ".split("")) })
  it.prop("equals the character-by-character repr on printable ASCII with quotes and backslashes", [printable], ([s]) => {
    expect(pyRepr(s)).toBe(reference(s))
  })
  it("picks Python's quote", () => {
    expect(pyRepr("it's")).toBe('"it\'s"')
    expect(pyRepr("a'b\"c\\")).toBe("'a\\'b\"c\\\\'")
    expect(pyRepr("\\")).toBe("'\\\\'")
    expect(pyRepr("'\\'")).toBe('"\'\\\\\'"')
  })

  it("parsePyJsonFields builds only the members asked for, with the full parse's values and failures", () => {
    const wanted = new Set(["id", "answer"])
    // Texts with escapes, controls, floats, tuples, nesting and repeated keys, whole and cut short.
    const texts = [
      '{"category": "x", "id": "a\\"b", "answer": [{"f": {"x": 5.0, "t": {"__tuple__": [1, "\\u00e9"]}}}], "errors": ["q\\n", {"k": [1e-09, null]}], "valid": false}',
      '{"answer": 1, "skip": {"a": [true, false, -0, 123456789012345678901234567890]}, "answer": 2.5}',
      '{"id": "z", "skip": "tab\there"}',
      '{"skip": [1, 2,], "answer": 1}',
      '{"skip": 01, "answer": 1}',
      '{"skip": "\\x", "answer": 1}',
      '[1, 2]',
      '{"__tuple__": [1]}'
    ]
    for (const text of texts) {
      for (const cut of [text.length, text.length - 1, Math.floor(text.length / 2)]) {
        const t = text.slice(0, cut)
        const full = parsePyJson(t)
        const part = parsePyJsonFields(t, wanted)
        expect(part.ok, t).toBe(full.ok)
        if (!full.ok || !part.ok) {
          expect(part, t).toEqual(full)
          continue
        }
        const v = full.value
        const expected = v instanceof Map ? new Map([...v].filter(([k]) => wanted.has(k))) : v instanceof PyTuple && t.startsWith("{") ? new Map() : v
        expect(pyRepr(part.value), t).toBe(pyRepr(expected))
      }
    }
  })
})
