/**
 * Decoding a model's output into calls, as upstream's handlers do before checking
 * (`model_handler/utils.py`: `default_decode_ast_prompting`, `ast_parse`, `resolve_ast_call`,
 * `resolve_ast_by_type`; the OpenAI-style handlers' `decode_ast` in function-calling mode).
 *
 * Prompt mode parses Python call syntax (`[f(a=1, b="x"), g.h(c=[1, 2])]`) with a parser for
 * the expression subset that upstream's AST resolver gives a value to; every other construct
 * fails the way upstream's resolver fails (a decode error), though the message text differs
 * from CPython's.
 */
import type { DecodeOutcome } from "./checker.ts"
import { parsePyJson, PyFloat, pyFloatRepr, pyRepr, pyStrRepr, PyTuple, pyType, type PyValue } from "./pyjson.ts"

/** A tool call as a function-calling API returns it: a name and JSON-text arguments. */
export interface ToolCall {
  readonly name: string
  readonly arguments: string
}

/**
 * Function-calling mode: `[{name: json.loads(arguments)}]`. Arguments keep Python's int/float
 * distinction, as `json.loads` does.
 */
export const decodeToolCalls = (calls: ReadonlyArray<ToolCall>): DecodeOutcome => {
  const out: Array<PyValue> = []
  for (const c of calls) {
    const parsed = parsePyJson(c.arguments)
    if (!parsed.ok) return { _tag: "DecodeError", message: `${parsed.error.message}: char ${parsed.error.offset}` }
    out.push(new Map([[c.name, parsed.value]]))
  }
  return { _tag: "Decoded", value: out }
}

/**
 * Function-calling mode, from a chat reply: upstream's OpenAI-style handler keeps the tool calls
 * when the reply has them (even none), else the reply's text, and decoding that text fails
 * unless it is empty (iterating a string yields no call dicts).
 */
export const decodeFunctionCallingReply = (toolCalls: ReadonlyArray<ToolCall> | null, content: string | null): DecodeOutcome => {
  if (toolCalls !== null) return decodeToolCalls(toolCalls)
  if (content === null) return { _tag: "DecodeError", message: "'NoneType' object is not iterable" }
  if (content === "") return { _tag: "Decoded", value: [] }
  return { _tag: "DecodeError", message: "'str' object has no attribute 'keys'" }
}

/** Prompt mode: upstream's `default_decode_ast_prompting` for Python output. */
export const decodePromptOutput = (text: string): DecodeOutcome => {
  let s = stripChars(text, "`\n ")
  if (!s.startsWith("[")) s = "[" + s
  if (!s.endsWith("]")) s = s + "]"
  s = stripChars(s.trim(), "'")
  try {
    const body = new Parser(tokenize(s)).parseEval()
    const calls: Array<PyValue> = []
    if (body.kind === "Call") calls.push(resolveCall(body))
    else if (body.kind === "List" || body.kind === "Tuple" || body.kind === "Set") {
      for (const elem of body.elts) {
        if (elem.kind !== "Call") throw new DecodeFailure("")
        calls.push(resolveCall(elem))
      }
    } else throw new DecodeFailure(`'${body.kind}' object has no attribute 'elts'`)
    return { _tag: "Decoded", value: calls }
  } catch (e) {
    if (e instanceof DecodeFailure) return { _tag: "DecodeError", message: e.message }
    throw e
  }
}

const stripChars = (s: string, chars: string): string => {
  let a = 0
  let b = s.length
  while (a < b && chars.includes(s[a] as string)) a++
  while (b > a && chars.includes(s[b - 1] as string)) b--
  return s.slice(a, b)
}

// Raised inside the parser and resolver; turned into a DecodeError at the entry point.
class DecodeFailure extends Error {}
const fail = (message: string): never => {
  throw new DecodeFailure(message)
}

// ---------------------------------------------------------------------------------------------
// Tokens

type Token =
  | { readonly t: "name"; readonly v: string }
  | { readonly t: "num"; readonly v: PyValue }
  | { readonly t: "str"; readonly v: string }
  | { readonly t: "op"; readonly v: string }
  | { readonly t: "end" }

const OPS = ["**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", "...", "(", ")", "[", "]", "{", "}", ",", ":", ".", "=", "+", "-", "*", "/", "%", "~", "<", ">", "&", "|", "^", "@", ";"]
const identStart = /[\p{L}\p{Nl}_]/u
const identPart = /[\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}_]/u

const tokenize = (src: string): Array<Token> => {
  const out: Array<Token> = []
  let i = 0
  while (i < src.length) {
    const c = src[i] as string
    if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f") {
      i++
      continue
    }
    if (c === "\\" && src[i + 1] === "\n") {
      i += 2
      continue
    }
    if (c === "#") {
      while (i < src.length && src[i] !== "\n") i++
      continue
    }
    // String literal, with an optional prefix.
    const prefix = /^([rRbBuUfF]{0,2})(['"])/.exec(src.slice(i, i + 3))
    if (prefix !== null && (prefix[1] === "" || /^(r|u|b|f|br|rb|fr|rf)$/i.test(prefix[1] as string))) {
      const p = (prefix[1] as string).toLowerCase()
      if (p.includes("b")) fail("bytes literals are not supported")
      if (p.includes("f")) fail("Unsupported AST type: <class 'ast.JoinedStr'>")
      const q = prefix[2] as string
      let j = i + (prefix[1] as string).length
      const triple = src.startsWith(q + q + q, j)
      const delim = triple ? q + q + q : q
      j += delim.length
      let raw = ""
      for (;;) {
        if (j >= src.length) fail("unterminated string literal")
        if (src.startsWith(delim, j)) break
        const d = src[j] as string
        if (!triple && d === "\n") fail("unterminated string literal")
        if (d === "\\") {
          raw += d + (src[j + 1] ?? "")
          j += 2
          continue
        }
        raw += d
        j++
      }
      const value = p.includes("r") ? raw : unescape(raw)
      i = j + delim.length
      const last = out[out.length - 1]
      // Adjacent literals are one constant.
      if (last !== undefined && last.t === "str") out[out.length - 1] = { t: "str", v: last.v + value }
      else out.push({ t: "str", v: value })
      continue
    }
    if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(src[i + 1] ?? ""))) {
      const m = /^(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:[0-9][0-9_]*)?\.?[0-9_]*(?:[eE][+-]?[0-9_]+)?)([jJ])?/.exec(src.slice(i)) as RegExpExecArray
      const lit = m[1] as string
      if (m[2] !== undefined) fail("complex literals are not supported")
      i += m[0].length
      const clean = lit.replace(/_/g, "")
      if (/^0[xXoObB]/.test(clean)) {
        const n = BigInt(clean.toLowerCase().replace(/^0o/, "0o"))
        out.push({ t: "num", v: Number.isSafeInteger(Number(n)) ? Number(n) : n })
      } else if (/[.eE]/.test(clean)) {
        out.push({ t: "num", v: new PyFloat(Number(clean)) })
      } else {
        if (clean.length > 1 && clean.startsWith("0") && /[1-9]/.test(clean)) fail("leading zeros in decimal integer literals are not permitted")
        const r = parsePyJson(clean)
        if (!r.ok) fail(`invalid number ${lit}`)
        out.push({ t: "num", v: (r as { value: PyValue }).value })
      }
      continue
    }
    if (identStart.test(c)) {
      let j = i + 1
      while (j < src.length && identPart.test(src[j] as string)) j++
      out.push({ t: "name", v: src.slice(i, j) })
      i = j
      continue
    }
    const op = OPS.find((o) => src.startsWith(o, i))
    if (op === undefined) fail(`invalid character '${c}'`)
    out.push({ t: "op", v: op as string })
    i += (op as string).length
  }
  out.push({ t: "end" })
  return out
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\", "'": "'", '"': '"', a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\n": ""
}

const unescape = (raw: string): string => {
  if (!raw.includes("\\")) return raw
  let out = ""
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string
    if (c !== "\\") {
      out += c
      continue
    }
    const e = raw[i + 1] ?? ""
    const simple = SIMPLE_ESCAPES[e]
    if (simple !== undefined) {
      out += simple
      i++
    } else if (/[0-7]/.test(e)) {
      const m = /^[0-7]{1,3}/.exec(raw.slice(i + 1)) as RegExpExecArray
      out += String.fromCodePoint(parseInt(m[0], 8))
      i += m[0].length
    } else if (e === "x" || e === "u" || e === "U") {
      const n = e === "x" ? 2 : e === "u" ? 4 : 8
      const hex = raw.slice(i + 2, i + 2 + n)
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) fail(`truncated \\${e} escape`)
      const cp = parseInt(hex, 16)
      if (cp > 0x10ffff) fail("illegal Unicode character")
      out += String.fromCodePoint(cp)
      i += 1 + n
    } else if (e === "N") fail("\\N{...} escapes are not supported")
    else out += c // Python keeps an unknown escape's backslash
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Syntax tree (the node kinds upstream's resolver distinguishes)

type Node =
  | { readonly kind: "Constant"; readonly value: PyValue; readonly ellipsis?: true }
  | { readonly kind: "Name"; readonly id: string }
  | { readonly kind: "Attribute"; readonly value: Node; readonly attr: string }
  | { readonly kind: "Call"; readonly func: Node; readonly args: ReadonlyArray<Node>; readonly keywords: ReadonlyArray<{ readonly arg: string | null; readonly value: Node }> }
  | { readonly kind: "List" | "Tuple" | "Set"; readonly elts: ReadonlyArray<Node> }
  | { readonly kind: "Dict"; readonly keys: ReadonlyArray<Node | null>; readonly values: ReadonlyArray<Node> }
  | { readonly kind: "UnaryOp"; readonly op: string; readonly operand: Node }
  | { readonly kind: "BinOp"; readonly op: string; readonly left: Node; readonly right: Node }
  | { readonly kind: "Subscript"; readonly value: Node; readonly slice: Node }
  | { readonly kind: "Slice"; readonly lower: Node | null; readonly upper: Node | null; readonly step: Node | null }
  | { readonly kind: "Starred"; readonly value: Node }
  | { readonly kind: "Other"; readonly pyClass: string }

const BINARY_LEVELS: ReadonlyArray<ReadonlyArray<string>> = [["|"], ["^"], ["&"], ["<<", ">>"], ["+", "-"], ["*", "/", "//", "%", "@"]]

class Parser {
  private i = 0
  constructor(private readonly tokens: ReadonlyArray<Token>) {}

  private peek(): Token {
    return this.tokens[this.i] as Token
  }
  private isOp(v: string): boolean {
    const t = this.peek()
    return t.t === "op" && t.v === v
  }
  private isName(v: string): boolean {
    const t = this.peek()
    return t.t === "name" && t.v === v
  }
  private expectOp(v: string): void {
    if (!this.isOp(v)) fail("invalid syntax")
    this.i++
  }

  parseEval(): Node {
    const e = this.exprList()
    if (this.peek().t !== "end") fail("invalid syntax")
    return e
  }

  // A bare comma-separated sequence is a tuple.
  private exprList(): Node {
    const first = this.expr()
    if (!this.isOp(",")) return first
    const elts = [first]
    while (this.isOp(",")) {
      this.i++
      if (this.startsExpr()) elts.push(this.expr())
      else break
    }
    return { kind: "Tuple", elts }
  }

  private startsExpr(): boolean {
    const t = this.peek()
    if (t.t === "end") return false
    if (t.t === "op") return ["(", "[", "{", "-", "+", "~", "...", "*"].includes(t.v)
    return true
  }

  private expr(): Node {
    if (this.isOp("*")) {
      this.i++
      return { kind: "Starred", value: this.orTest() }
    }
    if (this.isName("lambda")) {
      // Upstream's resolver always fails on a lambda; its body is not needed.
      let depth = 0
      while (this.peek().t !== "end") {
        const t = this.peek()
        if (t.t === "op" && ["(", "[", "{"].includes(t.v)) depth++
        if (t.t === "op" && [")", "]", "}"].includes(t.v)) {
          if (depth === 0) break
          depth--
        }
        if (t.t === "op" && t.v === "," && depth === 0) break
        this.i++
      }
      return { kind: "Other", pyClass: "Lambda" }
    }
    const e = this.orTest()
    if (this.isName("if")) {
      this.i++
      this.orTest()
      if (!this.isName("else")) fail("expected 'else' after 'if' expression")
      this.i++
      this.expr()
      return { kind: "Other", pyClass: "IfExp" }
    }
    return e
  }

  private orTest(): Node {
    let e = this.andTest()
    while (this.isName("or")) {
      this.i++
      this.andTest()
      e = { kind: "Other", pyClass: "BoolOp" }
    }
    return e
  }

  private andTest(): Node {
    let e = this.notTest()
    while (this.isName("and")) {
      this.i++
      this.notTest()
      e = { kind: "Other", pyClass: "BoolOp" }
    }
    return e
  }

  private notTest(): Node {
    if (this.isName("not")) {
      this.i++
      return { kind: "UnaryOp", op: "not", operand: this.notTest() }
    }
    return this.comparison()
  }

  private comparison(): Node {
    let e = this.binary(0)
    for (;;) {
      const t = this.peek()
      const isCmp = (t.t === "op" && ["<", ">", "==", ">=", "<=", "!="].includes(t.v)) || (t.t === "name" && (t.v === "in" || t.v === "is" || (t.v === "not" && this.tokens[this.i + 1]?.t === "name")))
      if (!isCmp) return e
      this.i++
      if (this.isName("not") || this.isName("in")) this.i++
      this.binary(0)
      e = { kind: "Other", pyClass: "Compare" }
    }
  }

  private binary(level: number): Node {
    if (level >= BINARY_LEVELS.length) return this.unary()
    let left = this.binary(level + 1)
    const ops = BINARY_LEVELS[level] as ReadonlyArray<string>
    for (;;) {
      const t = this.peek()
      if (t.t !== "op" || !ops.includes(t.v)) return left
      this.i++
      left = { kind: "BinOp", op: t.v, left, right: this.binary(level + 1) }
    }
  }

  private unary(): Node {
    const t = this.peek()
    if (t.t === "op" && (t.v === "-" || t.v === "+" || t.v === "~")) {
      this.i++
      return { kind: "UnaryOp", op: t.v, operand: this.unary() }
    }
    return this.power()
  }

  private power(): Node {
    const base = this.primary()
    if (this.isOp("**")) {
      this.i++
      return { kind: "BinOp", op: "**", left: base, right: this.unary() }
    }
    return base
  }

  private primary(): Node {
    let e = this.atom()
    for (;;) {
      if (this.isOp(".")) {
        this.i++
        const t = this.peek()
        if (t.t !== "name") fail("invalid syntax")
        this.i++
        e = { kind: "Attribute", value: e, attr: (t as { v: string }).v }
      } else if (this.isOp("(")) {
        this.i++
        e = this.callArgs(e)
      } else if (this.isOp("[")) {
        this.i++
        const slice = this.subscript()
        this.expectOp("]")
        e = { kind: "Subscript", value: e, slice }
      } else return e
    }
  }

  private subscript(): Node {
    const part = (): Node => {
      const lower = this.isOp(":") ? null : this.expr()
      if (!this.isOp(":")) return lower as Node
      this.i++
      const upper = this.isOp(":") || this.isOp("]") || this.isOp(",") ? null : this.expr()
      let step: Node | null = null
      if (this.isOp(":")) {
        this.i++
        step = this.isOp("]") || this.isOp(",") ? null : this.expr()
      }
      return { kind: "Slice", lower, upper, step }
    }
    const first = part()
    if (!this.isOp(",")) return first
    const elts = [first]
    while (this.isOp(",")) {
      this.i++
      if (this.isOp("]")) break
      elts.push(part())
    }
    return { kind: "Tuple", elts }
  }

  private callArgs(func: Node): Node {
    const args: Array<Node> = []
    const keywords: Array<{ arg: string | null; value: Node }> = []
    while (!this.isOp(")")) {
      const t = this.peek()
      const next = this.tokens[this.i + 1]
      if (t.t === "name" && next !== undefined && next.t === "op" && next.v === "=") {
        this.i += 2
        keywords.push({ arg: t.v, value: this.expr() })
      } else if (this.isOp("**")) {
        this.i++
        keywords.push({ arg: null, value: this.expr() })
      } else {
        if (keywords.length > 0 && !this.isOp("*")) fail("positional argument follows keyword argument")
        args.push(this.expr())
      }
      if (this.isOp(",")) this.i++
      else if (!this.isOp(")")) fail("invalid syntax. Perhaps you forgot a comma?")
    }
    this.i++
    return { kind: "Call", func, args, keywords }
  }

  private atom(): Node {
    const t = this.peek()
    this.i++
    switch (t.t) {
      case "num":
        return { kind: "Constant", value: t.v }
      case "str":
        return { kind: "Constant", value: t.v }
      case "name":
        if (t.v === "True") return { kind: "Constant", value: true }
        if (t.v === "False") return { kind: "Constant", value: false }
        if (t.v === "None") return { kind: "Constant", value: null }
        if (["and", "or", "not", "if", "else", "in", "is", "lambda", "for", "def", "class", "return", "import", "from", "while", "with", "yield", "await", "async", "del", "pass", "break", "continue", "global", "nonlocal", "raise", "try", "except", "finally", "assert", "elif", "as"].includes(t.v))
          fail("invalid syntax")
        return { kind: "Name", id: t.v }
      case "op":
        if (t.v === "...") return { kind: "Constant", value: "...", ellipsis: true }
        if (t.v === "(") {
          if (this.isOp(")")) {
            this.i++
            return { kind: "Tuple", elts: [] }
          }
          const inner = this.exprList()
          if (this.isName("for")) fail("Unsupported AST type: <class 'ast.GeneratorExp'>")
          this.expectOp(")")
          return inner
        }
        if (t.v === "[") {
          const elts: Array<Node> = []
          while (!this.isOp("]")) {
            elts.push(this.expr())
            if (this.isName("for")) fail("Unsupported AST type: <class 'ast.ListComp'>")
            if (this.isOp(",")) this.i++
            else if (!this.isOp("]")) fail("invalid syntax. Perhaps you forgot a comma?")
          }
          this.i++
          return { kind: "List", elts }
        }
        if (t.v === "{") {
          if (this.isOp("}")) {
            this.i++
            return { kind: "Dict", keys: [], values: [] }
          }
          const keys: Array<Node | null> = []
          const values: Array<Node> = []
          const elts: Array<Node> = []
          let isDict: boolean | null = null
          while (!this.isOp("}")) {
            if (this.isOp("**")) {
              this.i++
              isDict = true
              keys.push(null)
              values.push(this.binary(0))
            } else {
              const k = this.expr()
              if (this.isName("for")) fail("Unsupported AST type: <class 'ast.DictComp'>")
              if (this.isOp(":")) {
                if (isDict === false) fail("invalid syntax")
                isDict = true
                this.i++
                keys.push(k)
                values.push(this.expr())
              } else {
                if (isDict === true) fail("':' expected after dictionary key")
                isDict = false
                elts.push(k)
              }
            }
            if (this.isOp(",")) this.i++
            else if (!this.isOp("}")) fail("invalid syntax. Perhaps you forgot a comma?")
          }
          this.i++
          return isDict === false ? { kind: "Set", elts } : { kind: "Dict", keys, values }
        }
        return fail("invalid syntax")
      case "end":
        return fail("unexpected EOF while parsing")
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Resolution: upstream's resolve_ast_call / resolve_ast_by_type

const resolveCall = (call: Node & { kind: "Call" }): PyValue => {
  const parts: Array<string> = []
  let f: Node = call.func
  while (f.kind === "Attribute") {
    parts.push(f.attr)
    f = f.value
  }
  if (f.kind === "Name") parts.push(f.id)
  const name = parts.reverse().join(".")
  const args = new Map<string, PyValue>()
  for (const kw of call.keywords) {
    const v = resolve(kw.value)
    if (kw.arg === null) fail("**kwargs in a call give a non-string key, which is not supported")
    args.set(kw.arg as string, v)
  }
  return new Map([[name, args]])
}

const resolve = (node: Node): PyValue => {
  switch (node.kind) {
    case "Constant":
      return node.value
    case "UnaryOp": {
      // Upstream negates `operand.value` whatever the operator, so `+5` gives -5.
      const operand = node.operand
      if (operand.kind !== "Constant") {
        if (operand.kind === "Attribute" || operand.kind === "Subscript" || operand.kind === "Starred")
          return fail(`bad operand type for unary -: '${operand.kind}'`)
        return fail(`'${operand.kind}' object has no attribute 'value'`)
      }
      return negate(operand.value)
    }
    case "List":
      return node.elts.map(resolve)
    case "Dict": {
      const m = new Map<string, PyValue>()
      node.keys.forEach((k, i) => {
        if (k === null) fail("Unsupported AST type: <class 'NoneType'>")
        const key = resolve(k as Node)
        const value = resolve(node.values[i] as Node)
        if (typeof key !== "string") fail(`a dict key of type ${pyType(key)} is not supported`)
        m.set(key as string, value)
      })
      return m
    }
    case "BinOp":
      return evaluate(node)
    case "Name":
      return node.id
    case "Call":
      return node.keywords.length === 0 ? unparse(node) : resolveCall(node)
    case "Tuple":
      return new PyTuple(node.elts.map(resolve))
    case "Subscript":
      return `${unparse(node.value)}[${unparse(node.slice)}]`
    case "Other":
      if (node.pyClass === "Lambda") return fail("'Lambda' object is not subscriptable")
      return fail(`Unsupported AST type: <class 'ast.${node.pyClass}'>`)
    default:
      return fail(`Unsupported AST type: <class 'ast.${node.kind}'>`)
  }
}

const negate = (v: PyValue): PyValue => {
  if (typeof v === "number") return v === 0 ? 0 : -v
  if (typeof v === "bigint") return normInt(-v)
  if (typeof v === "boolean") return v ? -1 : 0
  if (v instanceof PyFloat) return new PyFloat(-v.value)
  return fail(`bad operand type for unary -: '${pyType(v)}'`)
}

// ---------------------------------------------------------------------------------------------
// Evaluation of BinOp (upstream: `eval(ast.unparse(node))`), for literal operands

const normInt = (n: bigint): PyValue => (n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n)
const asBig = (v: PyValue): bigint | undefined => (typeof v === "number" ? BigInt(v) : typeof v === "bigint" ? v : typeof v === "boolean" ? (v ? 1n : 0n) : undefined)

const evaluate = (node: Node): PyValue => {
  switch (node.kind) {
    case "Constant":
      return node.value
    case "Name":
      return fail(`name '${node.id}' is not defined`)
    case "List":
      return node.elts.map(evaluate)
    case "Tuple":
      return new PyTuple(node.elts.map(evaluate))
    case "UnaryOp": {
      const v = evaluate(node.operand)
      if (node.op === "-") return negate(v)
      if (node.op === "+") {
        if (typeof v === "boolean") return v ? 1 : 0
        if (typeof v === "number" || typeof v === "bigint" || v instanceof PyFloat) return v
        return fail(`bad operand type for unary +: '${pyType(v)}'`)
      }
      if (node.op === "~") {
        const b = asBig(v)
        return b === undefined ? fail(`bad operand type for unary ~: '${pyType(v)}'`) : normInt(~b)
      }
      return fail("Unsupported expression in evaluation")
    }
    case "BinOp":
      return binop(node.op, evaluate(node.left), evaluate(node.right))
    default:
      return fail("expression not supported in evaluation")
  }
}

const binop = (op: string, a: PyValue, b: PyValue): PyValue => {
  const ai = asBig(a)
  const bi = asBig(b)
  if (ai !== undefined && bi !== undefined) {
    switch (op) {
      case "+":
        return normInt(ai + bi)
      case "-":
        return normInt(ai - bi)
      case "*":
        return normInt(ai * bi)
      case "/":
        if (bi === 0n) fail("division by zero")
        return new PyFloat(Number(ai) / Number(bi))
      case "//": {
        if (bi === 0n) fail("integer division or modulo by zero")
        const q = ai / bi
        return normInt(q * bi !== ai && (ai < 0n) !== (bi < 0n) ? q - 1n : q)
      }
      case "%": {
        if (bi === 0n) fail("integer division or modulo by zero")
        const r = ai % bi
        return normInt(r !== 0n && (r < 0n) !== (bi < 0n) ? r + bi : r)
      }
      case "**":
        if (bi < 0n) return new PyFloat(Number(ai) ** Number(bi))
        if (bi > 100000n) fail("exponent too large")
        return normInt(ai ** bi)
      case "|":
        return normInt(ai | bi)
      case "&":
        return normInt(ai & bi)
      case "^":
        return normInt(ai ^ bi)
      case "<<":
        if (bi < 0n) fail("negative shift count")
        if (bi > 100000n) fail("shift count too large")
        return normInt(ai << bi)
      case ">>":
        if (bi < 0n) fail("negative shift count")
        return normInt(ai >> bi)
    }
  }
  const an = ai !== undefined ? Number(ai) : a instanceof PyFloat ? a.value : undefined
  const bn = bi !== undefined ? Number(bi) : b instanceof PyFloat ? b.value : undefined
  if (an !== undefined && bn !== undefined) {
    switch (op) {
      case "+":
        return new PyFloat(an + bn)
      case "-":
        return new PyFloat(an - bn)
      case "*":
        return new PyFloat(an * bn)
      case "/":
        if (bn === 0) fail("float division by zero")
        return new PyFloat(an / bn)
      case "//":
        if (bn === 0) fail("float floor division by zero")
        return new PyFloat(Math.floor(an / bn))
      case "%": {
        if (bn === 0) fail("float modulo")
        const r = an % bn
        return new PyFloat(r !== 0 && r < 0 !== bn < 0 ? r + bn : r)
      }
      case "**":
        return new PyFloat(an ** bn)
    }
  }
  if (op === "+" && typeof a === "string" && typeof b === "string") return a + b
  if (op === "+" && Array.isArray(a) && Array.isArray(b)) return [...a, ...b]
  if (op === "+" && a instanceof PyTuple && b instanceof PyTuple) return new PyTuple([...a.items, ...b.items])
  if (op === "*") {
    const [seq, n] = bi !== undefined ? [a, Number(bi)] : ai !== undefined ? [b, Number(ai)] : [null, 0]
    if (typeof seq === "string") return seq.repeat(Math.max(0, n))
    if (Array.isArray(seq)) return Array.from({ length: Math.max(0, n) }, () => seq).flat()
  }
  return fail(`unsupported operand type(s) for ${op}: '${pyType(a)}' and '${pyType(b)}'`)
}

// ---------------------------------------------------------------------------------------------
// ast.unparse, for the nodes upstream turns back into text (calls without keywords, subscripts)

const PRECEDENCE: Readonly<Record<string, number>> = { "|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "*": 6, "/": 6, "//": 6, "%": 6, "@": 6, "**": 8 }

const unparse = (node: Node, outer = 0): string => {
  switch (node.kind) {
    case "Constant":
      if (node.ellipsis === true) return "..."
      if (node.value instanceof PyFloat) return pyFloatRepr(node.value.value)
      return typeof node.value === "string" ? pyStrRepr(node.value) : pyRepr(node.value)
    case "Name":
      return node.id
    case "Attribute":
      return `${unparse(node.value, 9)}.${node.attr}`
    case "Call": {
      const parts = [...node.args.map((a) => unparse(a)), ...node.keywords.map((k) => (k.arg === null ? `**${unparse(k.value)}` : `${k.arg}=${unparse(k.value)}`))]
      return `${unparse(node.func, 9)}(${parts.join(", ")})`
    }
    case "List":
      return `[${node.elts.map((e) => unparse(e)).join(", ")}]`
    case "Set":
      return `{${node.elts.map((e) => unparse(e)).join(", ")}}`
    case "Tuple":
      return node.elts.length === 1 ? `(${unparse(node.elts[0] as Node)},)` : `(${node.elts.map((e) => unparse(e)).join(", ")})`
    case "Dict":
      return `{${node.keys.map((k, i) => (k === null ? `**${unparse(node.values[i] as Node)}` : `${unparse(k)}: ${unparse(node.values[i] as Node)}`)).join(", ")}}`
    case "UnaryOp": {
      const text = node.op === "not" ? `not ${unparse(node.operand, 7)}` : `${node.op}${unparse(node.operand, 7)}`
      return outer > 7 ? `(${text})` : text
    }
    case "BinOp": {
      const p = PRECEDENCE[node.op] ?? 5
      const right = node.op === "**" ? p : p + 1
      const left = node.op === "**" ? p + 1 : p
      const text = `${unparse(node.left, left)} ${node.op} ${unparse(node.right, right)}`
      return outer > p ? `(${text})` : text
    }
    case "Subscript": {
      const s = node.slice.kind === "Tuple" && node.slice.elts.length > 0 ? node.slice.elts.map((e) => unparse(e)).join(", ") : unparse(node.slice)
      return `${unparse(node.value, 9)}[${s}]`
    }
    case "Slice":
      return `${node.lower ? unparse(node.lower) : ""}:${node.upper ? unparse(node.upper) : ""}${node.step ? `:${unparse(node.step)}` : ""}`
    case "Starred":
      return `*${unparse(node.value)}`
    case "Other":
      return fail(`Unsupported AST type: <class 'ast.${node.pyClass}'>`)
  }
}
