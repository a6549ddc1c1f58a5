/**
 * Upstream's long-context constants (`func_source_code/long_context.py`: extension texts, cities,
 * watch lists, extension cards...), read from the pinned file in the data folder rather than kept in
 * the repo (upstream's text). The module is a run of top-level `NAME = <Python literal>` assignments;
 * this reads those: str (all quote forms, implicit concatenation, escapes), int, float, True, False,
 * None, `...` / Ellipsis, lists, tuples, dicts, sets, comments.
 */
import { readFile } from "node:fs/promises"
import { Data, Effect, Either } from "effect"
import { PinnedData } from "../../../src/index.ts"
import type { LongContext } from "./api.ts"
import { type Py, PyDict, PyFloat, PyOpaque, PySet, PyTuple } from "./py.ts"
import { type DataOptions, LONG_CONTEXT_PATH, readerAt } from "../data.ts"

/** The module text is not a run of literal assignments; `offset` is where reading stopped. */
export class LongContextSyntaxError extends Data.TaggedError("LongContextSyntaxError")<{
  readonly reason: "syntax"
  readonly offset: number
  readonly detail: string
}> {
  override get message() {
    return `long_context.py at offset ${this.offset}: ${this.detail}`
  }
}

const ELLIPSIS = new PyOpaque("Ellipsis", "ellipsis")
const NAMES: Readonly<Record<string, Py>> = { True: true, False: false, None: null, Ellipsis: ELLIPSIS }

/** The values of a module's top-level `NAME = literal` assignments, in order (a later one wins). */
export const parseModuleConstants = (text: string): Either.Either<PyDict, LongContextSyntaxError> => {
  let i = 0
  const fail = (detail: string): never => {
    throw new LongContextSyntaxError({ reason: "syntax", offset: i, detail })
  }
  // Whitespace, newlines, comments and line continuations carry no meaning between literal tokens
  const skip = () => {
    for (;;) {
      const c = text[i]
      if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f") i++
      else if (c === "\\" && (text[i + 1] === "\n" || text[i + 1] === "\r")) i += 2
      else if (c === "#") {
        while (i < text.length && text[i] !== "\n") i++
      } else return
    }
  }
  const name = (): string | undefined => {
    const m = /[A-Za-z_][A-Za-z0-9_]*/y
    m.lastIndex = i
    const r = m.exec(text)
    if (r === null) return undefined
    i += r[0].length
    return r[0]
  }
  const escape = (quote: string): string => {
    const e = text[i + 1]
    i += 2
    switch (e) {
      case "\n":
        return ""
      case "\\":
      case "'":
      case '"':
        return e
      case "n":
        return "\n"
      case "t":
        return "\t"
      case "r":
        return "\r"
      case "a":
        return "\x07"
      case "b":
        return "\b"
      case "f":
        return "\f"
      case "v":
        return "\v"
      case "x":
      case "u":
      case "U": {
        const n = e === "x" ? 2 : e === "u" ? 4 : 8
        const hex = text.slice(i, i + n)
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== n) fail(`bad \\${e} escape in a ${quote} string`)
        i += n
        return String.fromCodePoint(parseInt(hex, 16))
      }
      default: {
        if (e !== undefined && e >= "0" && e <= "7") {
          const m = /[0-7]{1,3}/y
          m.lastIndex = i - 1
          const r = m.exec(text) as RegExpExecArray
          i += r[0].length - 1
          return String.fromCodePoint(parseInt(r[0], 8))
        }
        if (e === "N") fail("\\N{...} escapes are not read")
        // Python keeps an unknown escape as written
        return "\\" + (e ?? "")
      }
    }
  }
  const string = (raw: boolean): string => {
    const triple = text.startsWith(text[i]!.repeat(3), i) ? text.slice(i, i + 3) : null
    const quote = triple ?? (text[i] as string)
    i += quote.length
    let out = ""
    for (;;) {
      if (i >= text.length) fail("unterminated string")
      if (text.startsWith(quote, i)) {
        i += quote.length
        return out
      }
      const c = text[i] as string
      if (triple === null && c === "\n") fail("newline in a string")
      if (c === "\\") {
        if (raw) {
          out += c + (text[i + 1] ?? "")
          i += 2
        } else out += escape(quote)
      } else {
        out += c
        i++
      }
    }
  }
  const stringAt = (): boolean => {
    const m = /([rRuU]?)(['"])/y
    m.lastIndex = i
    return m.exec(text) !== null
  }
  const number = (): Py => {
    const m = /(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+)|((?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d[\d_]*)?|\d[\d_]*\.)/y
    m.lastIndex = i
    const r = m.exec(text)
    if (r === null || r[0] === "") return fail("expected a value")
    i += r[0].length
    const digits = r[0].replace(/_/g, "")
    if (r[1] !== undefined) return intValue(BigInt(digits))
    if (/[.eE]/.test(digits)) return new PyFloat(Number(digits))
    return intValue(BigInt(digits))
  }
  const sequence = (close: string): Array<Py> => {
    const items: Array<Py> = []
    for (;;) {
      skip()
      if (text[i] === close) {
        i++
        return items
      }
      items.push(value())
      skip()
      if (text[i] === ",") i++
      else if (text[i] !== close) fail(`expected , or ${close}`)
    }
  }
  const braces = (): Py => {
    // `{` was read: a dict (or `{}`), else a set
    skip()
    if (text[i] === "}") {
      i++
      return PyDict.empty
    }
    const first = value()
    skip()
    if (text[i] !== ":") {
      const rest = text[i] === "," ? (i++, sequence("}")) : (text[i] === "}" ? (i++, []) : fail("expected , or }"))
      return PySet.of([first, ...rest])
    }
    const entries: Array<readonly [Py, Py]> = []
    let key = first
    for (;;) {
      i++ // the colon
      entries.push([key, value()])
      skip()
      if (text[i] === ",") {
        i++
        skip()
      }
      if (text[i] === "}") {
        i++
        return PyDict.of(entries)
      }
      key = value()
      skip()
      if (text[i] !== ":") fail("expected :")
    }
  }
  const value = (): Py => {
    skip()
    const c = text[i]
    if (c === "[") {
      i++
      return sequence("]")
    }
    if (c === "(") {
      i++
      skip()
      if (text[i] === ")") {
        i++
        return new PyTuple([])
      }
      const first = value()
      skip()
      if (text[i] === ")") {
        i++
        return first
      }
      if (text[i] !== ",") fail("expected , or )")
      i++
      return new PyTuple([first, ...sequence(")")])
    }
    if (c === "{") {
      i++
      return braces()
    }
    if (text.startsWith("...", i)) {
      i += 3
      return ELLIPSIS
    }
    if (c === "-" || c === "+") {
      i++
      const v = value()
      if (c === "+") return v
      if (typeof v === "number") return v === 0 ? 0 : -v
      if (v instanceof PyFloat) return new PyFloat(-v.value)
      if (v instanceof PyOpaque && v.typeName === "int") return intValue(-BigInt(v.repr))
      return fail("unary - on a non-number")
    }
    if (stringAt()) {
      let out = ""
      // Adjacent string literals are one string
      do {
        const prefix = /[rRuU]/.test(text[i] as string) ? (text[i++] as string) : ""
        out += string(prefix === "r" || prefix === "R")
        skip()
      } while (stringAt())
      return out
    }
    if (c !== undefined && /[A-Za-z_]/.test(c)) {
      const at = i
      const n = name() as string
      const v = NAMES[n]
      if (v === undefined) {
        i = at
        fail(`name ${n} is not a literal`)
      }
      return v as Py
    }
    return number()
  }

  try {
    const entries: Array<readonly [string, Py]> = []
    for (;;) {
      skip()
      if (i >= text.length) return Either.right(PyDict.of(entries))
      const n = name()
      if (n === undefined) fail("expected NAME = value")
      skip()
      if (text[i] !== "=" || text[i + 1] === "=") fail("expected =")
      i++
      entries.push([n as string, value()])
    }
  } catch (e) {
    if (e instanceof LongContextSyntaxError) return Either.left(e)
    throw e
  }
}

// Ints beyond 2^53 are kept as their digits, as the executor's arithmetic keeps them
const intValue = (n: bigint): Py => (n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : new PyOpaque(n.toString(), "int"))

/** The environment variable naming a `long_context.py` to use instead of the pinned one. */
export const LONG_CONTEXT_ENV = "ASSAY_BFCL_LONG_CONTEXT"

/**
 * Upstream's long-context constants: the pinned `long_context.py` under the data folder (its sha256
 * checked), or the file `override` (default: `ASSAY_BFCL_LONG_CONTEXT`; "" for none) names, read as it is.
 */
export const loadLongContext = (options?: DataOptions & { readonly override?: string }): Effect.Effect<LongContext, PinnedData.DataError> =>
  Effect.gen(function*() {
    const override = options?.override ?? process.env[LONG_CONTEXT_ENV]
    // long_context.py comes with the multi-turn benchmark's pull (bfcl's leaves it out).
    const read = readerAt(options, "bfcl-multi-turn")
    const text = override !== undefined && override !== ""
      ? yield* Effect.tryPromise({
        try: () => readFile(override, "utf8"),
        catch: (e) => new PinnedData.DataError({ benchmark: "bfcl", file: override, reason: "missing", detail: `${LONG_CONTEXT_ENV}=${override} cannot be read: ${e instanceof Error ? e.message : String(e)}` })
      })
      : yield* read.text(LONG_CONTEXT_PATH)
    const parsed = parseModuleConstants(text)
    if (Either.isLeft(parsed)) {
      return yield* Effect.fail(override !== undefined && override !== ""
        ? new PinnedData.DataError({ benchmark: "bfcl", file: override, reason: "invalid", detail: parsed.left.message })
        : read.invalid(LONG_CONTEXT_PATH, parsed.left.message))
    }
    return parsed.right
  })
