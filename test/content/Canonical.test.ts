import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc } from "effect"
import { canonical, canonicalEither, type Json, NotJson } from "../../src/content/Canonical.ts"
import * as ContentId from "../../src/content/ContentId.ts"

/** A double from its IEEE 754 bit pattern, big-endian hex, as RFC 8785 Appendix B writes it. */
const double = (bits: string): number => {
  const view = new DataView(new ArrayBuffer(8))
  view.setBigUint64(0, BigInt(`0x${bits}`))
  return view.getFloat64(0)
}

type Path = ReadonlyArray<string | number>
type JsonObject = { readonly [key: string]: Json }

const isObject = (v: Json): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v)

/** Rebuilds every object with its keys in another order, chosen by `seed`; values stay the same. */
const reorder = (value: Json, seed: number): Json => {
  if (Array.isArray(value)) return value.map((v: Json, i) => reorder(v, seed + i))
  if (!isObject(value)) return value
  const keys = Object.keys(value)
  // A seeded Fisher-Yates shuffle: deterministic, so a failing case shrinks and replays.
  let s = (seed >>> 0) || 1
  for (let i = keys.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    const j = s % (i + 1)
    ;[keys[i], keys[j]] = [keys[j]!, keys[i]!]
  }
  // fromEntries defines own properties, so a "__proto__" key stays a key.
  return Object.fromEntries(keys.map((k) => [k, reorder(value[k]!, seed * 31 + k.length)]))
}

/** Every place a change can be made: each leaf (scalars, empty containers) and each object key. */
type Site = { readonly path: Path; readonly kind: "leaf" } | { readonly path: Path; readonly kind: "key"; readonly key: string }

const sitesOf = (value: Json, path: Path = []): ReadonlyArray<Site> => {
  if (Array.isArray(value)) {
    return value.length === 0 ? [{ path, kind: "leaf" }] : value.flatMap((v: Json, i) => sitesOf(v, [...path, i]))
  }
  if (isObject(value)) {
    const keys = Object.keys(value)
    if (keys.length === 0) return [{ path, kind: "leaf" }]
    return keys.flatMap((k) => [{ path, kind: "key" as const, key: k }, ...sitesOf(value[k]!, [...path, k])])
  }
  return [{ path, kind: "leaf" }]
}

/** A leaf replaced by a different JSON value (as JSON: 0 and -0 are one value, so 0 becomes 1). */
const changedLeaf = (leaf: Json): Json => {
  if (leaf === null) return false
  if (typeof leaf === "boolean") return !leaf
  if (typeof leaf === "number") return leaf === 0 ? 1 : -leaf
  if (typeof leaf === "string") return leaf + "x"
  if (Array.isArray(leaf)) return [null]
  return { added: null }
}

const at = (value: Json, path: Path, change: (v: Json) => Json): Json => {
  if (path.length === 0) return change(value)
  const [head, ...rest] = path
  if (Array.isArray(value)) return value.map((v: Json, i) => (i === head ? at(v, rest, change) : v))
  const obj = value as JsonObject
  return Object.fromEntries(Object.keys(obj).map((k) => [k, k === head ? at(obj[k]!, rest, change) : obj[k]!]))
}

const mutate = (value: Json, site: Site): Json =>
  site.kind === "leaf"
    ? at(value, site.path, changedLeaf)
    : at(value, site.path, (obj) => {
      const o = obj as JsonObject
      let renamed = site.key + "'"
      while (Object.hasOwn(o, renamed)) renamed += "'"
      return Object.fromEntries(Object.keys(o).map((k) => [k === site.key ? renamed : k, o[k]!]))
    })

// Values as JSON.parse gives them: no -0 written as such, no undefined; keys include "__proto__".
const jsonArb: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>

describe("content ids", () => {
  it.prop(
    "a content id does not depend on the order of object keys",
    [jsonArb, fc.integer()],
    ([value, seed]) => {
      expect(ContentId.ofUnsafe(reorder(value, seed))).toBe(ContentId.ofUnsafe(value))
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.prop(
    "changing any one value or key gives another content id",
    [jsonArb, fc.nat()],
    ([value, pick]) => {
      const sites = sitesOf(value)
      const site = sites[pick % sites.length]!
      expect(ContentId.ofUnsafe(mutate(value, site))).not.toBe(ContentId.ofUnsafe(value))
    },
    { fastCheck: { numRuns: 500 } }
  )

  it.prop(
    "canonical text parses back to the same value",
    [jsonArb],
    ([value]) => {
      const text = Either.getOrThrow(canonicalEither(value))
      expect(Either.getOrThrow(canonicalEither(JSON.parse(text) as Json))).toBe(text)
    }
  )

  it("a content id is sha256: and 64 hex digits of the canonical UTF-8 text", () => {
    const id = ContentId.ofUnsafe({ b: 1, a: "é" })
    expect(id).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(id).toBe(`sha256:${ContentId.sha256Hex(Buffer.from('{"a":"é","b":1}', "utf8"))}`)
  })
})

describe("canonical JSON agrees with RFC 8785", () => {
  // RFC 8785 Appendix B: IEEE 754 bit patterns and the text JCS prescribes for them.
  const appendixB: ReadonlyArray<readonly [string, string]> = [
    ["0000000000000000", "0"],
    ["8000000000000000", "0"],
    ["0000000000000001", "5e-324"],
    ["8000000000000001", "-5e-324"],
    ["7fefffffffffffff", "1.7976931348623157e+308"],
    ["ffefffffffffffff", "-1.7976931348623157e+308"],
    ["4340000000000000", "9007199254740992"],
    ["c340000000000000", "-9007199254740992"],
    ["4430000000000000", "295147905179352830000"],
    ["44b52d02c7e14af5", "9.999999999999997e+22"],
    ["44b52d02c7e14af6", "1e+23"],
    ["44b52d02c7e14af7", "1.0000000000000001e+23"],
    ["444b1ae4d6e2ef4e", "999999999999999700000"],
    ["444b1ae4d6e2ef4f", "999999999999999900000"],
    ["444b1ae4d6e2ef50", "1e+21"],
    ["3eb0c6f7a0b5ed8c", "9.999999999999997e-7"],
    ["3eb0c6f7a0b5ed8d", "0.000001"],
    ["41b3de4355555553", "333333333.3333332"],
    ["41b3de4355555554", "333333333.33333325"],
    ["41b3de4355555555", "333333333.3333333"],
    ["41b3de4355555556", "333333333.3333334"],
    ["41b3de4355555557", "333333333.33333343"],
    ["becbf647612f3696", "-0.0000033333333333333333"],
    ["43143ff3c1cb0959", "1424953923781206.2"]
  ]

  it.each(appendixB)("the double 0x%s is written %s", (bits, expected) => {
    expect(Either.getOrThrow(canonicalEither(double(bits)))).toBe(expected)
    expect(Either.getOrThrow(canonicalEither({ n: double(bits) }))).toBe(`{"n":${expected}}`)
  })

  it("the Appendix B NaN and Infinity patterns are not JSON", () => {
    for (const bits of ["7fffffffffffffff", "7ff0000000000000"]) {
      const result = canonicalEither(double(bits))
      expect(Either.isLeft(result) && result.left.reason).toBe("non-finite-number")
    }
  })

  it("keys sort by UTF-16 code units (the section 3.2.3 example)", () => {
    const input = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }
    expect(Either.getOrThrow(canonicalEither(input))).toBe(
      "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\"," +
        "\"\u20ac\":\"Euro Sign\",\"\ud83d\ude00\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"
    )
  })

  it("numbers, escapes and literals come out as in the section 3.2.2 example", () => {
    const input = JSON.parse(
      "{\"numbers\": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001]," +
        "\"string\": \"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\"," +
        "\"literals\": [null, true, false]}"
    ) as Json
    expect(Either.getOrThrow(canonicalEither(input))).toBe(
      "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27]," +
        "\"string\":\"\u20ac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}"
    )
  })
})

describe("values that are not JSON", () => {
  const cyclic: Record<string, unknown> = { name: "loop" }
  cyclic["self"] = { inner: [cyclic] }
  const cases: ReadonlyArray<readonly [string, unknown, string, NotJson["reason"]]> = [
    ["NaN", { a: [1, Number.NaN] }, "$.a[1]", "non-finite-number"],
    ["Infinity", { "odd key": Number.POSITIVE_INFINITY }, "$[\"odd key\"]", "non-finite-number"],
    ["-Infinity", [Number.NEGATIVE_INFINITY], "$[0]", "non-finite-number"],
    ["undefined inside an array", { xs: [1, undefined, 3] }, "$.xs[1]", "undefined"],
    ["a function", { f: () => 1 }, "$.f", "function"],
    ["a BigInt", { n: { big: 10n } }, "$.n.big", "bigint"],
    ["a cycle", cyclic, "$.self.inner[0]", "cycle"],
    ["a symbol", { tags: ["a", Symbol("b")] }, "$.tags[1]", "symbol"],
    ["a class instance", { when: new Date(0) }, "$.when", "non-plain-object"]
  ]

  it.effect.each(cases)("%s fails with NotJson naming its path and reason", ([, value, path, reason]) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(canonical(value))
      expect(error).toBeInstanceOf(NotJson)
      expect(error).toMatchObject({ _tag: "NotJson", path, reason })
      expect(error.message).toContain(path)
      const id = yield* Effect.flip(ContentId.of(value))
      expect(id).toMatchObject({ path, reason })
    }))

  it("an absent optional property (undefined in an object) is left out, as JSON has no undefined", () => {
    expect(Either.getOrThrow(canonicalEither({ a: 1, b: undefined }))).toBe("{\"a\":1}")
  })

  it("a value met twice without a cycle is not a cycle", () => {
    const shared = { x: 1 }
    expect(Either.getOrThrow(canonicalEither([shared, shared]))).toBe("[{\"x\":1},{\"x\":1}]")
  })
})
